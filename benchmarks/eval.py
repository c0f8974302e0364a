"""Seconds per task of the embedded default model, against the oracle on the same tasks.

    python -m benchmarks.eval [--tasks 8]

Starts fresh Kinto and Radicale on 127.0.0.1 and runs a seeded sample of their test
tasks live through the runner ``toolbed eval`` uses, offered the gold tools (so the
retriever's cost is not in it): the oracle (the apps, the rollback and the scoring:
what any agent pays) then the embedded model (SmolLM2-135M on the CPU, grammar-bound
tool calls). Seconds per task, the model's loading (under a second) included.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from toolbed.harness import OracleAgent, Runner, make_agent
from toolbed.launchers import launch
from toolbed.tasks import load_tasks

from ._table import Row

APPS = ("kinto", "radicale")


def seconds_per_task(agent, tasks, catalog, apps) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(catalog, agent, Path(tmp) / "run", "live", tools="gold", apps=apps)
        start = time.perf_counter()
        results = list(runner.run(tasks))
        return (time.perf_counter() - start) / len(results)


def bench(quick: bool = False, tasks: int | None = None) -> list[Row]:
    suite = load_tasks()
    pool = [t for t in suite.filter(splits=["test"], apps=list(APPS))
            if set(t.apps) <= set(APPS) and not t.reset]
    sample = random.Random(0).sample(pool, min(len(pool), tasks or (3 if quick else 8)))
    embedded = make_agent("embedded")
    with ExitStack() as stack:
        apps = {app: stack.enter_context(launch(app, suite.catalog)) for app in APPS}
        oracle = seconds_per_task(OracleAgent(), sample, suite.catalog, apps)
        model = seconds_per_task(embedded, sample, suite.catalog, apps)
    return [Row(f"eval, embedded model, {len(sample)} live tasks (gold tools)", "s/task",
                model, "the oracle", oracle)]


def main() -> None:
    from ._table import markdown

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    print(markdown(bench(tasks=parser.parse_args().tasks)))


if __name__ == "__main__":
    main()
