"""Every task of the suite, run by the oracle: live on fresh apps, and from its cassette.

Live, this is `toolbed tasks validate --live` in CI: each gold chain runs against the
real app, its reference is checked against what the app returned, every write is
undone and the app's state is verified as before. From the cassette, it runs with
the network blocked through the runner `toolbed eval` uses, and must succeed with
every metric at 1.0 and no error counted, real-time answers extracted from the
replayed observations. A task that fails here is a bug in the task, to be fixed.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolbed.apis import Catalog
from toolbed.connectors import Mode, Runtime
from toolbed.harness import OracleAgent, Runner, run_oracle
from toolbed.tasks import Task, load_tasks

from ..conftest import AppPool

SUITE = load_tasks()


def _ids(tasks: list[Task]) -> list[Any]:
    """Task ids to run; a task marked stale (`cassettes drift --update`) is skipped with
    its reason, as every run skips it."""
    return [pytest.param(t.id, marks=pytest.mark.skip(reason=f"stale: {t.stale}"))
            if t.stale else t.id for t in tasks]


LOCAL = _ids([t for t in SUITE if SUITE.tier(t) != "hosted"])
"""The tasks over apps toolbed starts here: self-hosted apps and MCP servers."""


@pytest.mark.parametrize("task_id", LOCAL)
def test_task_passes_live(task_id: str, catalog: Catalog, pool: AppPool) -> None:
    task = SUITE.task(task_id)
    with Runtime(catalog, apps=pool.only(*task.apps)) as runtime:
        run = run_oracle(runtime, task, restart=pool.restart)
    assert run.ok, run.summary()


@pytest.fixture(scope="module")
def replayer(catalog: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(catalog, OracleAgent(), tmp_path_factory.mktemp("oracle"), Mode.REPLAY)


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("task_id", _ids([t for t in SUITE if t.verified]))
def test_task_replays_offline_and_scores_100(task_id: str, replayer: Runner) -> None:
    result = replayer.run_one(SUITE.task(task_id))
    assert result.success and result.problems == [], result.problems
    assert set(result.scores.values()) == {1.0}, result.scores
    assert not any(result.errors.values()), result.errors
