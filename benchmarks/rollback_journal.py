"""How much a rollback scope adds to each write, against a raw call in the same run.

    python -m benchmarks.rollback_journal [--writes 300]

Starts a fresh Kinto on 127.0.0.1 and creates buckets three ways, interleaved in
rounds so that drift of the machine hits all alike:

- raw: ``Runtime.call`` (no journal; the baseline);
- scoped: ``RollbackScope.call`` (the ``before`` read its undo declares, a journal row
  before sending, the answer and bound undo after);
- journal only: the two journal writes alone, on the same file, no HTTP.

It prints the median and p95 per write, the overhead over raw, and the time to undo.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from toolbed.apis import CATALOG_DIR, load_catalog
from toolbed.connectors import Runtime
from toolbed.launchers import launch
from toolbed.rollback import Journal, RollbackScope, Status

from ._table import Row, pct


def measure(n: int) -> tuple[list[float], list[float], list[float], float]:
    """Seconds per write: raw, in a scope, journal rows only; and undo per write."""
    catalog = load_catalog(CATALOG_DIR / "selfhosted")
    raw, scoped, journal_only = [], [], []
    with tempfile.TemporaryDirectory() as tmp, launch("kinto", catalog) as kinto, \
            Runtime(catalog, apps={"kinto": kinto}) as rt:
        journal = Journal(Path(tmp) / "journal.db")
        scope = RollbackScope(rt, journal, run_id="bench")
        for i in range(n):
            t = time.perf_counter()
            rt.call("kinto.create_bucket", {"bucket": f"raw{i}"})
            raw.append(time.perf_counter() - t)

            t = time.perf_counter()
            scope.call("kinto.create_bucket", {"bucket": f"scoped{i}"})
            scoped.append(time.perf_counter() - t)

            t = time.perf_counter()
            seq = journal.begin(run_id="journal-only", task_id=None, app="kinto",
                                api="kinto.create_bucket", mode="live",
                                args={"bucket": f"j{i}"}, compensation={"api": "x", "args": {}})
            journal.update(seq, Status.APPLIED, http_status=201,
                           response={"status": 201, "headers": {}, "body": {"data": {}}})
            journal_only.append(time.perf_counter() - t)
        t = time.perf_counter()
        report = scope.rollback()
        undo = (time.perf_counter() - t) / n
        assert len(report.compensated) == n, report.summary()
    return raw, scoped, journal_only, undo


def bench(quick: bool = False) -> list[Row]:
    raw, scoped, journal_only, undo = measure(100 if quick else 300)
    ms = 1000
    ratio = statistics.median(scoped) / statistics.median(raw)
    return [
        Row("write in a rollback scope (kinto.create_bucket)", "ms",
            statistics.median(scoped) * ms, "raw call", statistics.median(raw) * ms,
            "<= 1.3x", ratio <= 1.3),
        Row("undo at rollback, per write", "ms", undo * ms, "raw call",
            statistics.median(raw) * ms, "<= 8 ms", undo * ms <= 8),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=300)
    n = parser.parse_args().writes
    raw, scoped, journal_only, undo = measure(n)
    ms = 1000
    print(f"kinto.create_bucket, {n} writes each, interleaved")
    for name, values in (("raw call", raw), ("in a rollback scope", scoped),
                         ("journal rows only", journal_only)):
        print(f"  {name:<22} median {statistics.median(values) * ms:6.2f} ms"
              f"   p95 {pct(values, 0.95) * ms:6.2f} ms")
    extra = statistics.median(scoped) - statistics.median(raw)
    print(f"  overhead per write: {extra * ms:.2f} ms "
          f"({statistics.median(scoped) / statistics.median(raw):.2f}x raw), of which "
          f"journal {statistics.median(journal_only) * ms:.2f} ms; "
          f"undo at rollback {undo * ms:.2f} ms per write")


if __name__ == "__main__":
    main()
