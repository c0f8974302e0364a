"""Run every benchmark against its baseline and print one table.

    python -m benchmarks [--only replay rollback ...] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

from ._table import Row, markdown

BENCHMARKS = {
    "connector": "connector call vs raw httpx",
    "replay": "replay per call and per task vs vcrpy",
    "rollback": "a write in a rollback scope vs a raw call; undo per write",
    "retriever": "index build vs raw encode; search vs raw encode + chroma",
    "eval": "seconds per task of the embedded model vs the oracle",
    "startup": "commands' start-up vs importing httpx, vcr and yaml",
    "ray": "a run on a local Ray cluster of 2 workers vs one process",
}
MODULES = {"rollback": "rollback_journal"}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows: list[Row] = []
    for name in args.only or BENCHMARKS:
        start = time.perf_counter()
        module = importlib.import_module(f"benchmarks.{MODULES.get(name, name)}")
        rows += module.bench(quick=args.quick)
        print(f"{name}: {BENCHMARKS[name]} ({time.perf_counter() - start:.0f} s)",
              file=sys.stderr)
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=2))
    else:
        print(markdown(rows))


if __name__ == "__main__":
    main()
