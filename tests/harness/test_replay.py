"""Replaying the suite's cassettes from the index: the same result rows as vcrpy's
player gave, the same bytes from worker processes as from one, and threads for a model
that a fork would hang."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from benchmarks._vcrpy import vcrpy_replay
from toolbed.harness import LangChainAgent, OracleAgent, Runner, write_report
from toolbed.tasks import Task, load_tasks

from ..conftest import AppPool, block_network

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


class ThreadOnlyModel(BaseChatModel):
    """Stands in for a model that runs on threads of this process (the embedded one):
    its reply depends only on the conversation, as a real model's does."""

    fork_safe: bool = False
    scripts: dict[str, list[AIMessage]]

    @property
    def _llm_type(self) -> str:
        return "thread-only"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        query = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        said = sum(isinstance(m, AIMessage) for m in messages)
        return ChatResult(generations=[ChatGeneration(message=self.scripts[query][said])])


def test_a_model_that_cannot_be_forked_replays_in_threads(
        tmp_path: Path, pool: AppPool, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [SUITE.task("kinto-packing-left"), SUITE.task("kinto-unread-books")]
    reads = [{"bucket": "trips", "collection": "packing"},
             {"bucket": "library", "collection": "books"}]
    scripts = {task.query: [AIMessage("", tool_calls=[{"id": "1", "name": "kinto__list_records",
                                                       "args": args}]), AIMessage(answer)]
               for task, args, answer in zip(tasks, reads, ["2 left.", "Middlemarch."],
                                             strict=True)}

    def model() -> ThreadOnlyModel:
        return ThreadOnlyModel(scripts=scripts)

    cassettes = tmp_path / "cassettes"
    recorded = list(Runner(SUITE.catalog, LangChainAgent(model()), tmp_path / "rec", "record",
                           tools="gold", cassettes=cassettes,
                           apps=pool.only("kinto")).run(tasks))

    def no_processes(*args: object, **kwargs: object) -> None:
        raise AssertionError("forked a model that cannot be forked")

    monkeypatch.setattr("toolbed.harness._runner.ProcessPoolExecutor", no_processes)
    block_network(monkeypatch)
    agent = LangChainAgent(model())
    assert agent.fork_safe is False
    replayed = list(Runner(SUITE.catalog, agent, tmp_path / "rep", "replay", tools="gold",
                           cassettes=cassettes).run(tasks, workers=2))
    assert [r.trajectory for r in replayed] == [r.trajectory for r in recorded]
    assert [r.scores for r in replayed] == [r.scores for r in recorded]
