"""Replaying the suite's cassettes from the index: the same result rows as vcrpy's
player gave, and the same bytes from worker processes as from one."""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks._vcrpy import vcrpy_replay
from toolbed.harness import OracleAgent, Runner, write_report
from toolbed.tasks import Task, load_tasks

SUITE = load_tasks()


def sample(per_app: int, seed: int = 7) -> list[Task]:
    """A seeded sample of the tasks that have cassettes, ``per_app`` of each app."""
    rng, tasks = random.Random(seed), []
    for app in sorted({t.apps[0] for t in SUITE if t.verified}):
        recorded = [t for t in SUITE if t.verified and t.apps[0] == app]
        tasks += rng.sample(recorded, min(per_app, len(recorded)))
    return tasks


def replay(run_dir: Path, tasks: list[Task], workers: int = 1) -> list[dict]:
    runner = Runner(SUITE.catalog, OracleAgent(), run_dir, "replay")
    return [r.row(SUITE.catalog).model_dump() for r in runner.run(tasks, workers=workers)]


def test_the_index_gives_every_sampled_task_the_row_vcrpy_gave(tmp_path: Path) -> None:
    tasks = sample(per_app=3)
    indexed = replay(tmp_path / "index", tasks)
    with vcrpy_replay():
        assert replay(tmp_path / "vcrpy", tasks) == indexed
    assert all(row["success"] for row in indexed)
    assert {row["seconds"] for row in indexed} == {None}     # a replay's time is no result


def test_worker_processes_write_the_same_bytes_as_one(tmp_path: Path) -> None:
    tasks = sample(per_app=4, seed=11)
    runs = {"one": 1, "two": 2, "two again": 2}
    for name, workers in runs.items():
        rows = replay(tmp_path / name, tasks, workers)
        assert [r["task"] for r in rows] == [t.id for t in tasks]   # stored in task order
        write_report(tmp_path / name)
    results = {name: (tmp_path / name / "results.jsonl").read_bytes() for name in runs}
    assert results["two"] == results["one"] == results["two again"]
    assert results["one"].count(b"\n") == len(tasks)
