"""What a user waits for before a ``toolbed`` command does anything, against Python itself.

    python -m benchmarks.startup [--runs 7] [--json]

Each command runs as a whole new process, as a user's shell runs it, alternating with
its baselines in the same round so that a busy machine slows both alike; the table
gives the median wall time of each over the rounds. Baselines: ``python -c pass``
(the interpreter alone) and ``python -c "import httpx, vcr, yaml"`` (the libraries a
replayed call cannot do without). The catalog cache is warmed first (one
``toolbed apis list``), as it is for every command after a user's first.

Targets (issue 28): ``import toolbed`` <= 0.3 s, ``toolbed --help`` <= 0.5 s,
``toolbed apis show`` <= 1.0 s, one replayed ``toolbed call`` <= 1.0 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ._table import Row

ROOT = Path(__file__).resolve().parent.parent
TOOLBED = shutil.which("toolbed") or "toolbed"
CASSETTE = ROOT / "cassettes" / "exercise" / "kinto.yaml"

BASELINES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import httpx, vcr, yaml'": [sys.executable, "-c", "import httpx, vcr, yaml"],
}
COMMANDS = {
    "python -c 'import toolbed'": ([sys.executable, "-c", "import toolbed"], 0.3),
    "toolbed --help": ([TOOLBED, "--help"], 0.5),
    "toolbed apis show kinto.create_record": ([TOOLBED, "apis", "show", "kinto.create_record"],
                                              1.0),
    "toolbed call kinto.list_buckets --mode replay": (
        [TOOLBED, "call", "kinto.list_buckets", "--mode", "replay", "--cassette", str(CASSETTE)],
        1.0),
}


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   cwd=ROOT)
    return time.perf_counter() - start


def medians(runs: int) -> dict[str, float]:
    """Median wall seconds of every command and baseline over ``runs`` rounds."""
    wall([TOOLBED, "apis", "list", "--app", "kinto"])          # warm the catalog cache
    every = {**BASELINES, **{name: cmd for name, (cmd, _) in COMMANDS.items()}}
    times: dict[str, list[float]] = {name: [] for name in every}
    for _ in range(runs):
        for name, cmd in every.items():
            times[name].append(wall(cmd))
    return {name: statistics.median(values) for name, values in times.items()}


def bench(quick: bool = False) -> list[Row]:
    median = medians(3 if quick else 7)
    base = "python -c 'import httpx, vcr, yaml'"
    return [Row(f"`{name}`", "s", median[name], base, median[base], f"<= {target} s",
                median[name] <= target) for name, (_, target) in COMMANDS.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    median = medians(args.runs)
    every = {**BASELINES, **COMMANDS}
    base = median["python -c 'import httpx, vcr, yaml'"]
    rows = [{"command": name, "median_s": round(median[name], 3),
             "vs_import_baseline": round(median[name] / base, 2),
             "target_s": COMMANDS[name][1] if name in COMMANDS else None,
             "met": median[name] <= COMMANDS[name][1] if name in COMMANDS else None}
            for name in every]
    if args.json:
        print(json.dumps({"runs": args.runs, "rows": rows}, indent=2))
        return
    print(f"median of {args.runs} runs, each a new process\n")
    print("| command | median | vs `import httpx, vcr, yaml` | target |")
    print("|---|---|---|---|")
    for row in rows:
        target = "" if row["target_s"] is None else (
            f"<= {row['target_s']} s: {'met' if row['met'] else 'missed'}")
        print(f"| `{row['command']}` | {row['median_s']:.2f} s | "
              f"{row['vs_import_baseline']:.2f}x | {target} |")


if __name__ == "__main__":
    main()
