"""Wall time of a run on a local Ray cluster of N workers, against one process.

    python -m benchmarks.ray [--workers 2] [--live 12]

Two runs of the oracle, each timed from the first call to the report written, the
cluster's start and each worker's (its catalog, its agent) included: the replay of the
whole self-hosted suite (every split, both languages), and a live sample of test tasks
over Kinto, Radicale and buku, for which one process starts the apps once and each
Ray worker starts its own. The baseline is the same run in one process, in the same
benchmark run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from toolbed.harness import Evaluation, OracleAgent, RayCluster
from toolbed.tasks import Task, load_tasks

from ._table import Row

APPS = ("kinto", "radicale", "buku")


def seconds(tasks: list[Task], catalog, mode: str, workers: int | None) -> float:
    """One oracle run of ``tasks``: in this process, or on ``workers`` Ray workers."""
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        if workers is None:
            Evaluation(catalog, OracleAgent(), tasks, Path(tmp) / "run", mode=mode).run()
        else:
            with RayCluster("local", workers=workers, agent="oracle") as cluster:
                Evaluation(catalog, OracleAgent(), tasks, Path(tmp) / "run", mode=mode,
                           cluster=cluster).run()
        return time.perf_counter() - start


def bench(quick: bool = False, workers: int = 2, live: int | None = None) -> list[Row]:
    suite = load_tasks()
    replay = suite.filter(tier="selfhosted", lang="all")
    if quick:
        replay = replay[:200]
    pool = [t for t in suite.filter(splits=["test"], apps=list(APPS))
            if len(t.apps) == 1 and not t.reset]
    sample = random.Random(0).sample(pool, min(len(pool), live or (6 if quick else 24)))
    rows = []
    for name, tasks, mode in ((f"replay of {len(replay)} tasks", replay, "replay"),
                              (f"{len(sample)} live tasks over {', '.join(APPS)}", sample,
                               "live")):
        one = seconds(tasks, suite.catalog, mode, None)
        ray = seconds(tasks, suite.catalog, mode, workers)
        rows.append(Row(f"eval --ray local, {workers} workers: {name}", "s", ray,
                        "one process", one))
    return rows


def main() -> None:
    from ._table import markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--live", type=int, default=24)
    args = parser.parse_args()
    print(markdown(bench(workers=args.workers, live=args.live)))


if __name__ == "__main__":
    main()
