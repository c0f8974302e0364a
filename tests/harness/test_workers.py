"""Several workers: tasks on different apps run at once, two tasks on the same app never
do, and every task's writes are still rolled back."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from toolbed.errors import TaskError
from toolbed.harness import OracleAgent, Runner, ToolBox, Trajectory
from toolbed.tasks import Task, TaskSuite, load_tasks

from ..conftest import AppPool


class TimedChain(OracleAgent):
    """Runs the gold chain through the tool box, as an agent would (so its writes are
    journalled and undone), and notes when each task held its app."""

    name = "timed-chain"

    def __init__(self) -> None:
        self.spans: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def run(self, task: Task, tools: ToolBox) -> Trajectory:
        start = time.monotonic()
        trajectory = super().run(task, tools)
        time.sleep(0.3)                          # long enough for an overlap to show
        with self.lock:
            self.spans.append((task.apps[0], start, time.monotonic()))
        return trajectory


def overlap(a: tuple[str, float, float], b: tuple[str, float, float]) -> bool:
    return a[1] < b[2] and b[1] < a[2]


@pytest.fixture(scope="module")
def suite() -> TaskSuite:
    return load_tasks()


def test_workers_run_apps_side_by_side_but_never_one_app_twice(
    tmp_path: Path, suite: TaskSuite, pool: AppPool
) -> None:
    apps = pool.only("kinto", "radicale")
    tasks: list[Task] = []
    for app in ("kinto", "radicale"):
        tasks += [t for t in suite.filter(apps=[app], types=["operational"])
                  if t.apps == [app] and not t.reset][:3]
    agent = TimedChain()
    runner = Runner(suite.catalog, agent, tmp_path / "run", "live", tools="gold", apps=apps)
    results = list(runner.run(tasks, workers=3))

    assert sorted(r.task.id for r in results) == sorted(t.id for t in tasks)
    assert all(r.problems == [] for r in results)        # every write undone and verified
    assert runner.done() == {(t.id, 0) for t in tasks}
    spans = agent.spans
    same = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:] if a[0] == b[0]]
    assert len(same) == 6 and not any(overlap(a, b) for a, b in same)
    assert any(overlap(a, b) for i, a in enumerate(spans) for b in spans[i + 1:]
               if a[0] != b[0])                           # kinto and radicale did overlap


def test_a_recording_runs_one_task_at_a_time(tmp_path: Path, suite: TaskSuite) -> None:
    runner = Runner(suite.catalog, OracleAgent(), tmp_path / "run", "record")
    with pytest.raises(TaskError, match="--workers 2 needs --mode live or replay"):
        list(runner.run(suite.filter(apps=["kinto"])[:2], workers=2))
    assert runner.done() == set()
