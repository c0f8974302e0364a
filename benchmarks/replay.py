"""Replay: the index against vcrpy's player, per call and per task, in the same run.

    python benchmarks/replay.py [--tasks N]

Per call: every app's exercise cassette (``cassettes/exercise``) replayed through a
``Runtime``, the index and vcrpy alternating app by app; milliseconds per call.
Per task: the oracle replaying the suite's committed task cassettes through the
runner ``toolbed eval`` uses (loading, matching, rolling back, scoring, storing),
vcrpy with one worker (all it can do), the index with one and with two worker
processes; tasks per second. Target (issue 22): >= 50 tasks/s on 2 cores.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from toolbed.connectors import Runtime, run_exercise
from toolbed.harness import OracleAgent, Runner
from toolbed.tasks import load_tasks

from ._table import Row, median
from ._vcrpy import vcrpy_replay

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "cassettes" / "exercise"


def per_call(catalog, rounds: int) -> tuple[float, float]:
    """Milliseconds per replayed call: (index, vcrpy)."""
    index, vcrpy = [], []
    for _ in range(rounds):
        for cassette in sorted(EXERCISES.glob("*.yaml")):
            app = cassette.stem
            for times, player in ((index, None), (vcrpy, vcrpy_replay)):
                start = time.perf_counter()
                if player is None:
                    with Runtime(catalog, mode="replay", cassette=cassette, env={}) as rt:
                        steps = run_exercise(rt, app)
                else:
                    with player(), Runtime(catalog, mode="replay", cassette=cassette,
                                           env={}) as rt:
                        steps = run_exercise(rt, app)
                times.append((time.perf_counter() - start) * 1000 / max(1, len(steps)))
    return median(index), median(vcrpy)


def per_task(tasks, catalog, workers: int, vcrpy: bool = False) -> float:
    """Tasks per second of the oracle replaying ``tasks``."""
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(catalog, OracleAgent(), Path(tmp) / "run", "replay")
        start = time.perf_counter()
        if vcrpy:
            with vcrpy_replay():
                results = list(runner.run(tasks, workers=1))
        else:
            results = list(runner.run(tasks, workers=workers))
        seconds = time.perf_counter() - start
    assert all(r.success for r in results), [r.problems for r in results if not r.success]
    return len(results) / seconds


def bench(quick: bool = False, tasks: int | None = None) -> list[Row]:
    suite = load_tasks()
    recorded = [t for t in suite if t.verified]
    if tasks or quick:
        recorded = recorded[:: max(1, len(recorded) // (tasks or 100))]
    index_call, vcrpy_call = per_call(suite.catalog, rounds=1 if quick else 3)
    vcrpy_rate = per_task(recorded, suite.catalog, 1, vcrpy=True)
    one = per_task(recorded, suite.catalog, 1)
    two = per_task(recorded, suite.catalog, 2)
    n = len(recorded)
    return [
        Row("replay, per call (exercise cassettes)", "ms", index_call, "vcrpy", vcrpy_call),
        Row(f"replay, {n} oracle tasks, 1 worker", "tasks/s", one, "vcrpy", vcrpy_rate),
        Row(f"replay, {n} oracle tasks, 2 worker processes", "tasks/s", two, "vcrpy",
            vcrpy_rate, ">= 50 tasks/s", two >= 50),
    ]


def main() -> None:
    from ._table import markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=None, help="a spread sample of N tasks")
    print(markdown(bench(tasks=parser.parse_args().tasks)))


if __name__ == "__main__":
    main()
