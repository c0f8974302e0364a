"""The runner: an agent on tasks, live, recorded or replayed, each task rolled back,
every result kept in SQLite so that a rerun picks up where the last one stopped.

For each task (and each trial of it):

1. a ``Runtime`` in the run's mode, with the task's own cassette: the oracle replays the
   suite's task cassettes; recordings go under ``<run dir>/cassettes``. The
   cassette also takes in the model's HTTP traffic, so a recorded run of a model
   replays with no network and no key;
2. for real-time and open tasks, the reference: the oracle runs the gold chain just
   before the agent (in its own rollback scope), so the answer is scored against what
   the app returns at run time;
3. the agent works in a ``RollbackScope`` over the apps of the tools it was offered:
   the gold APIs, all APIs of the task's apps, or the retriever's top k; an
   operational task's state checks are read before and after it;
4. the scope undoes every write and verifies the apps' state; an LLM judge, if one is
   given, rules on an open answer (its traffic in the same cassette); then ``score_run``.

Several workers: live, they are threads, and a task waits while another holds one of
the apps it touches (its own and those of its offered tools), so each task sees the
apps as the seed left them. A replay touches no app and is mostly Python work, so its
workers are processes (forked where the platform can, threads where it cannot); each
executes tasks, the runner scores and stores them in task order, and two replays of
the same cassettes write the same results. On a Ray cluster (``_cluster.py``) the
workers are actors, each with apps of its own, in every mode; the runner here still
offers the tools, scores and stores, in task order.

Each result is a ``ResultRow`` in the run folder (``_runlog.py`` owns its format).
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, Runtime, parse_mode, tool_name
from toolbed.errors import TaskError, ToolbedError
from toolbed.retriever import metadata_filter
from toolbed.rollback import RollbackScope
from toolbed.tasks._suite import TASK_CASSETTES, task_cassette
from toolbed.tasks._task import Task

from ._oracle import TaskRun, check_state, run_oracle
from ._runlog import ResultRow, RunLog, RunSpec
from ._trajectory import VIA, Call, ToolBox, Trajectory, calls_via, excerpt, note_undos
from .agents import Agent
from .metrics import Judge, Rater, judge_tooleyes
from .scoring import Reference, filled_references, score_run

__all__ = ["SCOPES", "TOOL_CHOICES", "Cluster", "Runner", "TaskResult", "offered_tools"]

TOOL_CHOICES = ("gold", "apps", "retriever")


@dataclass
class Executed:
    """What running one task gave, before scoring."""

    trajectory: Trajectory
    reference: Reference
    problems: list[str]
    seconds: float


@dataclass
class TaskResult:
    task: Task
    trial: int
    trajectory: Trajectory
    scores: dict[str, float]
    errors: dict[str, int]
    success: bool
    problems: list[str] = field(default_factory=list)
    seconds: float | None = 0.0
    """Wall time of the task; None in a replay (see ``ResultRow.seconds``)."""

    def row(self, catalog: Catalog) -> ResultRow:
        return ResultRow(
            task=self.task.id, trial=self.trial, app=self.task.apps[0],
            domain=catalog.app(self.task.apps[0]).domain, scenario=self.task.scenario,
            type=self.task.type, category=self.task.category, split=self.task.split,
            lang=self.task.lang, success=self.success,
            completion=self.scores.get("completion", 0.0),
            tool_match=self.scores.get("tool_match", 0.0), scores=self.scores,
            errors=self.errors, problems=self.problems, answer=self.trajectory.answer,
            trajectory=self.trajectory.model_dump(mode="json"),
            seconds=None if self.seconds is None else round(self.seconds, 3))


SCOPES = ("tier", "all", "apps")
"""What the retriever may offer: APIs of the task's tier (the default: a self-hosted task
needs no network), of the whole catalog, or of the task's own apps only."""


def offered_tools(catalog: Catalog, task: Task, tools: str, k: int = 5,
                  index: Any = None, scope: str = "tier") -> list[str]:
    """The API ids an agent is offered on ``task``: the gold chain's (``gold``), all of
    its apps' (``apps``), or the index's top ``k`` within ``scope`` (``retriever``)."""
    if tools == "gold":
        return list(dict.fromkeys(s.api for s in task.chain))
    if tools == "apps":
        return [api.id for app in task.apps for api in catalog.app(app).apis]
    where: dict[str, Any] | None = None
    if scope == "tier":
        where = metadata_filter(tier=catalog.app(task.apps[0]).tier)
    elif scope == "apps":
        where = metadata_filter(task.apps)
    elif scope != "all":
        raise TaskError(f"retriever scope {scope!r}: choose one of {', '.join(SCOPES)}")
    return [h.api for h in index.search(task.query, k, where)]


class Cluster(Protocol):
    """Machines that execute a runner's runs (``RayCluster``): what executing each of
    ``todo`` (task, trial, offered tools) gave, in the order of ``todo``."""

    def execute(self, runner: Runner, todo: Sequence[tuple[Task, int, list[str]]]
                ) -> Iterator[Executed]: ...


_forked: tuple[Runner, list[tuple[Task, int, list[str]]]] | None = None
"""The runner and tasks a forked replay worker inherits from its parent."""


def _execute_forked(n: int) -> Executed:
    """In a forked worker: execute the parent's ``n``-th task."""
    assert _forked is not None
    runner, todo = _forked
    return runner.execute(*todo[n])


class Runner:
    """Runs ``agent`` on tasks and keeps the results in ``run_dir``."""

    def __init__(
        self, catalog: Catalog, agent: Agent, run_dir: str | Path, mode: Mode | str = Mode.LIVE,
        tools: str = "gold", k: int = 5, trials: int = 1,
        cassettes: str | Path | None = None, apps: dict[str, RunningApp] | None = None,
        index: Any = None, restart: Callable[[RunningApp], RunningApp] | None = None,
        similarity: Callable[[str, str], float] | None = None, judge: Judge | None = None,
        scope: str = "tier", unavailable: dict[str, str] | None = None,
        spec: RunSpec | None = None, via: str = "direct",
    ):
        if tools not in TOOL_CHOICES:
            raise TaskError(f"--tools {tools!r}: choose one of {', '.join(TOOL_CHOICES)}")
        if agent.name == "oracle":
            tools = "gold"                    # the oracle runs the gold chain, nothing else
        self.catalog, self.agent, self.mode = catalog, agent, parse_mode(mode)
        self.run_dir = Path(run_dir)
        self.tools, self.k, self.trials = tools, k, trials
        self.oracle = agent.name == "oracle"
        # the oracle replays the suite's cassettes; every recording goes into the run
        default = TASK_CASSETTES if self.oracle and self.mode.offline \
            else self.run_dir / "cassettes"
        self.cassettes = Path(cassettes) if cassettes else default
        self.apps, self.index, self.restart = apps, index, restart
        self._similarity, self.judge = similarity, judge
        if scope not in SCOPES:
            raise TaskError(f"retriever scope {scope!r}: choose one of {', '.join(SCOPES)}")
        self.scope = scope
        if via not in VIA:
            raise TaskError(f"--via {via!r}: choose one of {', '.join(VIA)}")
        self.via = via
        """How calls reach the apps: ``direct``, or over an MCP session (``calls_via``)."""
        self.unavailable = dict(unavailable or {})
        """Apps that could not be started, with why: their tasks fail with the reason."""
        self.log = RunLog(self.run_dir)
        self.spec = spec
        """What the run folder records as asked for (default: what this runner knows)."""

    # -- what to run ------------------------------------------------------------------

    def done(self) -> set[tuple[str, int]]:
        return self.log.done()

    def pending(self, tasks: Sequence[Task]) -> list[tuple[Task, int]]:
        """The (task, trial) pairs not yet in the results: a rerun resumes."""
        done = self.done()
        return [(t, n) for n in range(self.trials) for t in tasks if (t.id, n) not in done]

    def run(self, tasks: Sequence[Task], workers: int = 1, cluster: Cluster | None = None
            ) -> Iterator[TaskResult]:
        """Run what is pending, yielding each result as it is stored.

        With ``workers`` > 1, live tasks run in threads, but never two that touch the
        same app at once: each task's writes are rolled back in its own scope, and no
        other task can see them meanwhile. Replayed tasks run in worker processes. On a
        ``cluster``, every mode runs on its workers, each with apps of its own."""
        if cluster is None and workers > 1 and not self.mode.concurrent:
            raise TaskError(f"--workers {workers} needs --mode live or replay: a recording "
                            "patches httpx for the whole process; record with --workers 1")
        self.log.start(self.spec or RunSpec(
            agent=self.agent.name, mode=self.mode.value, tools=self.tools,
            k=self.k if self.tools == "retriever" else None, trials=self.trials,
            via=self.via, tasks=[t.id for t in tasks]))
        todo = [(task, trial, self.offered(task)) for task, trial in self.pending(tasks)]
        if cluster is not None:
            for (task, trial, _), run in zip(todo, cluster.execute(self, todo), strict=True):
                yield self._store(self._score(task, trial, run))
            return
        if workers <= 1:
            for task, trial, offered in todo:
                yield self._store(self._score(task, trial, self.execute(task, trial, offered)))
            return
        if self.mode.offline:
            yield from self._replay_in_processes(todo, workers)
            return
        busy: set[str] = set()
        running: dict[Future[Executed], tuple[Task, int, set[str]]] = {}
        with ThreadPoolExecutor(workers, thread_name_prefix="toolbed-task") as pool:
            while todo or running:
                for item in list(todo):
                    if len(running) >= workers:
                        break
                    task, trial, offered = item
                    apps = self.touches(task, offered)
                    if apps & busy:
                        continue                    # another task has one of its apps
                    todo.remove(item)
                    busy |= apps
                    running[pool.submit(self.execute, task, trial, offered)] = \
                        (task, trial, apps)
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    task, trial, apps = running.pop(future)
                    busy -= apps
                    yield self._store(self._score(task, trial, future.result()))

    def _replay_in_processes(self, todo: list[tuple[Task, int, list[str]]], workers: int
                             ) -> Iterator[TaskResult]:
        """Execute replayed tasks in ``workers`` processes; score and store them here, in
        the order of ``todo``. The workers are forked, so they start with this runner
        (agent, catalog, tasks) and nothing is pickled but a task's number and what
        executing it gave. An agent that is not ``fork_safe`` (a model running on
        threads in this process) gets threads instead, as does a platform with no fork."""
        global _forked
        work: Callable[[Any], Executed]
        items: Sequence[Any]
        if "fork" in multiprocessing.get_all_start_methods() and \
                getattr(self.agent, "fork_safe", True):
            _forked = (self, todo)
            pool: Executor = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("fork"))
            work, items = _execute_forked, range(len(todo))
        else:                                # threads share this runner
            pool = ThreadPoolExecutor(workers, thread_name_prefix="toolbed-replay")
            work, items = self._execute_item, todo
        with pool:
            try:
                chunk = max(1, min(16, len(todo) // (workers * 8)))
                executed = pool.map(work, items, chunksize=chunk)
                for (task, trial, _), run in zip(todo, executed, strict=True):
                    yield self._store(self._score(task, trial, run))
            finally:
                _forked = None

    def _execute_item(self, item: tuple[Task, int, list[str]]) -> Executed:
        return self.execute(*item)

    def touches(self, task: Task, offered: list[str]) -> set[str]:
        """The apps a task may read or write: its own and those of its offered tools."""
        return set(task.apps) | {self.catalog.app_of(self.catalog.api(a)).app for a in offered}

    def _store(self, result: TaskResult) -> TaskResult:
        self.log.add(result.row(self.catalog))
        return result

    # -- one task ---------------------------------------------------------------------

    def cassette(self, task: Task, trial: int) -> Path | None:
        if not self.mode.uses_cassette:
            return None
        if self.oracle:
            return task_cassette(task, self.cassettes)
        return self.cassettes / f"{task.id}.{trial}.yaml"

    def offered(self, task: Task) -> list[str]:
        if self.tools == "retriever" and self.index is None:
            raise TaskError("--tools retriever needs a built index (`toolbed retriever build`)")
        return offered_tools(self.catalog, task, self.tools, self.k, self.index, self.scope)

    def run_one(self, task: Task, trial: int = 0) -> TaskResult:
        """One task (and trial), run and scored; not stored."""
        return self._score(task, trial, self.execute(task, trial, self.offered(task)))

    def execute(self, task: Task, trial: int, offered: list[str]) -> Executed:
        """The agent's (or the oracle's) run, with its reference, not yet scored; safe
        in a thread, and what a Ray worker runs.

        Whatever goes wrong with this task (an app that would not start or is down, a
        cassette that is missing or damaged) fails it with the reason; the run goes on."""
        started = time.perf_counter()
        down = sorted(self.touches(task, offered) & set(self.unavailable))
        if down:
            return Executed(Trajectory(), Reference(),
                            [f"{app} could not be started: {self.unavailable[app]}"
                             for app in down], time.perf_counter() - started)
        try:
            with Runtime(self.catalog, mode=self.mode, cassette=self.cassette(task, trial),
                         apps=self.apps) as runtime:
                if self.oracle:
                    trajectory, reference, problems = self._oracle(runtime, task)
                else:
                    trajectory, reference, problems = self._agent(runtime, task, offered)
        except ToolbedError as exc:         # an app down, a cassette missing or damaged...
            trajectory, reference, problems = Trajectory(), Reference(), [str(exc)]
        return Executed(trajectory, reference, problems, time.perf_counter() - started)

    def _score(self, task: Task, trial: int, run: Executed) -> TaskResult:
        score = score_run(task, run.trajectory, run.reference, self.catalog, self.similarity)
        return TaskResult(task, trial, run.trajectory, score.scores, score.errors,
                          score.success, run.problems,
                          None if self.mode.offline else run.seconds)

    @property
    def similarity(self) -> Callable[[str, str], float]:
        if self._similarity is None:
            from .metrics import embedding_similarity

            self._similarity = embedding_similarity()
        return self._similarity

    def _judge(self, task: Task, trajectory: Trajectory, reference: Reference) -> list[str]:
        """The judge's verdict on an open answer, against its best reference."""
        assert self.judge is not None and task.answer.type == "open"
        if not trajectory.answer:
            reference.judged = 0.0
            return []
        try:
            reference.judged = max(self.judge(task.query, trajectory.answer, r)
                                   for r in filled_references(task.answer, reference.expected))
        except Exception as exc:  # the judge's server failed: similarity scores it instead
            return [f"the judge failed ({type(exc).__name__}: {exc}); scored by similarity"]
        return []

    def _rate(self, rate: Rater, task: Task, trajectory: Trajectory, reference: Reference
              ) -> list[str]:
        """The judge's ratings of ToolEyes' judged capabilities, in the task's cassette."""
        def describe(api: str) -> str:
            spec = self.catalog.api(api)
            args = json.dumps(spec.parameters.get("properties", {}), ensure_ascii=False)
            return f"{tool_name(api)}: {' '.join(spec.description.split())} Arguments: {args}"

        try:
            reference.ratings = judge_tooleyes(
                rate, task.query,
                "\n".join(f"- {describe(a)}" for a in trajectory.offered),
                trajectory.calls, trajectory.thoughts, trajectory.answer, describe)
        except Exception as exc:  # the judge's server failed: the judged parts are absent
            return [f"the judge failed to rate ToolEyes' capabilities ({type(exc).__name__}: "
                    f"{exc}); they are left out"]
        return []

    def _restart(self) -> Callable[[RunningApp], RunningApp] | None:
        return self.restart if self.mode.can_restart else None

    def _oracle(self, runtime: Runtime, task: Task) -> tuple[Trajectory, Reference, list[str]]:
        run = run_oracle(runtime, task, restart=self._restart(), via=self.via)
        trajectory = Trajectory(
            calls=[Call(api=s.api_id, args=s.args, status=s.observation.status,
                        ok=s.observation.ok, excerpt=excerpt(s.observation.body))
                   for s in run.steps],
            answer=run.answer, steps=len(run.steps),
            offered=list(dict.fromkeys(s.api for s in task.chain)))
        if run.report is not None:
            note_undos(trajectory, run.report.entries)
        checks = len(task.answer.state) if task.answer.type == "operational" else 0
        reference = Reference(expected=run.expected, state_before=[False] * checks,
                              state_after=[run.passed] * checks,
                              problem="; ".join(run.problems) or None)
        return trajectory, reference, list(run.problems)

    def _agent(self, runtime: Runtime, task: Task, offered: list[str]
               ) -> tuple[Trajectory, Reference, list[str]]:
        reference, problems = Reference(), []
        if task.answer.type in ("realtime", "open"):
            gold: TaskRun = run_oracle(runtime, task, restart=self._restart())
            reference.expected = gold.expected
            if not gold.ok:
                reference.problem = "the reference run failed: " + "; ".join(gold.problems)
                problems.append(reference.problem)
        apps = sorted({self.catalog.app_of(self.catalog.api(a)).app for a in offered} |
                      set(task.apps))
        trajectory = Trajectory()
        scope = RollbackScope(runtime, task_id=task.id, allow_irreversible=task.irreversible,
                              verify=[a for a in apps if self.catalog.app(a).local])
        with scope:
            checks = task.answer.state if task.answer.type == "operational" else []
            reference.state_before = check_state(scope, checks) if checks else []
            try:
                with calls_via(self.via, scope, offered) as caller:
                    self.agent.run(task, ToolBox(caller, offered, trajectory))
            except Exception as exc:
                # the agent (its model server, its parser) failed: this task fails with
                # the reason, its writes are still rolled back, and the run goes on
                problems.append(f"the agent failed: {type(exc).__name__}: {exc}")
            reference.state_after = check_state(scope, checks) if checks else []
        if self.judge is not None and task.answer.type == "open":
            problems += self._judge(task, trajectory, reference)     # in the task's cassette
        rate: Rater | None = getattr(self.judge, "rate", None)     # ToolEyes' judged parts
        if rate is not None:
            problems += self._rate(rate, task, trajectory, reference)
        if scope.report is not None:
            note_undos(trajectory, scope.report.entries)
            if not scope.report.clean:
                problems.append(scope.report.summary())
        restart = self._restart()
        if task.reset and restart is not None:
            for app in task.apps:
                runtime.apps[app] = restart(runtime.apps[app])
        return trajectory, reference, problems
