"""One evaluation, as ``toolbed eval`` runs it: the policy between the options and the
runner, kept out of the command so a script or a notebook runs the same thing.

    evaluation = Evaluation(catalog, make_agent("oracle"), tasks, run_dir, mode="replay")
    summary = evaluation.run()

In order: the run folder is claimed (``RunLog.start`` refuses a folder of another
format before anything else happens); unless the run is offline, the self-hosted apps
its tasks can reach (their own, and those of every tool the retriever may offer) are
started if no ``toolbed apps up`` runs them, and an app that will not start fails only
its tasks (on a Ray ``cluster``, each worker starts its own instead); the runner runs
what is not done yet (a rerun resumes); the apps it started are stopped, also when the
run is interrupted; the report is written from the run log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from toolbed.apis import Catalog
from toolbed.connectors import (
    Mode,
    RunningApp,
    forget_running,
    own,
    parse_mode,
    running_apps,
    stop_app,
)
from toolbed.errors import AppError, TaskError
from toolbed.launchers import get_launcher, restart_recorded
from toolbed.paths import home_dir
from toolbed.retriever import model_name
from toolbed.tasks._task import Task

from ._report import write_report
from ._runlog import RunLog, RunSpec
from ._runner import Cluster, Runner, TaskResult, offered_tools
from .agents import Agent
from .metrics import Judge

__all__ = ["Evaluation", "default_run_dir", "start_missing", "stop_started"]


def start_missing(catalog: Catalog, names: Iterable[str], started: dict[str, RunningApp],
                  unavailable: dict[str, str], say: Callable[[str], None]
                  ) -> dict[str, RunningApp]:
    """The running apps, with those of ``names`` that no `toolbed apps up` runs started
    (noted in ``started``, for the caller to stop) or, when one will not start, noted in
    ``unavailable`` with why."""
    apps = running_apps(owned=False)       # not the apps another run started
    for name in sorted(set(names) - set(apps)):
        say(f"starting {name}")
        try:
            apps[name] = started[name] = own(get_launcher(name, catalog).start())
        except AppError as exc:
            unavailable[name] = str(exc)
            say(f"{name} could not be started: {exc}")
    return apps


def stop_started(started: dict[str, RunningApp]) -> None:
    """Stop the apps ``start_missing`` started, and forget them."""
    for app in started.values():
        stop_app(app)
        forget_running(app)
    started.clear()


def default_run_dir(agent: Agent) -> Path:
    """``$TOOLBED_HOME/runs/<agent>-<time>``."""
    return home_dir() / "runs" / f"{agent.name}-{time.strftime('%Y%m%d-%H%M%S')}"


class Evaluation:
    """An agent on a list of tasks: apps up, run, apps down, report."""

    def __init__(
        self, catalog: Catalog, agent: Agent, tasks: Sequence[Task], run_dir: str | Path,
        *, mode: Mode | str = Mode.LIVE, tools: str = "retriever", k: int = 5,
        trials: int = 1, cassettes: str | Path | None = None, index: Any = None,
        scope: str = "tier", judge: Judge | None = None, judge_name: str | None = None,
        via: str = "direct", cluster: Cluster | None = None,
    ):
        if not tasks:
            raise TaskError("no task matches these filters (`toolbed tasks list` shows them)")
        self.catalog, self.agent, self.tasks = catalog, agent, list(tasks)
        self.run_dir, self.mode = Path(run_dir), parse_mode(mode)
        self.tools = "gold" if agent.name == "oracle" else tools
        self.index = index if self.tools == "retriever" else None
        self.k, self.trials, self.cassettes, self.scope = k, trials, cassettes, scope
        self.judge, self.via = judge, via
        self.cluster = cluster
        """A Ray cluster whose workers run the tasks, each with apps of its own."""
        retriever = {"k": k, "retriever": model_name(self.index.model),
                     "retriever_stages": self.index.pipeline.name,
                     "retriever_scope": scope} if self.index else {}
        self.spec = RunSpec(
            agent=agent.name, model=getattr(agent, "model_name", None), mode=self.mode.value,
            tools=self.tools, judge=judge_name, via=via, trials=trials,
            tasks=[t.id for t in self.tasks], **retriever)
        self.log = RunLog(self.run_dir)
        self.started: dict[str, RunningApp] = {}
        """Apps this evaluation started (and stops)."""
        self.unavailable: dict[str, str] = {}
        """Apps that would not start, and why: their tasks fail with it."""

    def needed_apps(self) -> list[str]:
        """The self-hosted apps the tasks can reach: their own, and every app whose
        tools the retriever may offer them."""
        touched = {a for t in self.tasks for a in t.apps}
        if self.index is not None:
            touched |= {self.catalog.app_of(self.catalog.api(api)).app for t in self.tasks
                        for api in offered_tools(self.catalog, t, self.tools, self.k,
                                                 self.index, self.scope)}
        return sorted(a for a in touched if self.catalog.app(a).local)

    def pending(self) -> int:
        """How many (task, trial) runs are still to do (all of them in a new folder)."""
        done = self.log.done() if self.log.spec() is not None else set()
        return sum((t.id, n) not in done for n in range(self.trials) for t in self.tasks)

    def run(self, workers: int = 1, *, advance: Callable[[TaskResult], None] | None = None,
            say: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run what is pending and return the summary; ``advance`` is called with each
        run's result as it is stored, ``say`` with each app started or refused. On
        KeyboardInterrupt the apps are stopped and the interrupt goes on to the caller;
        what finished is kept, and running again with the same folder resumes."""
        say = say or (lambda _: None)
        self.log.start(self.spec)        # refuses a folder of another format, before any app
        try:
            on_driver = not self.mode.offline and self.cluster is None
            apps = self._start_apps(say) if on_driver else None
            runner = Runner(self.catalog, self.agent, self.run_dir, self.mode, self.tools,
                            self.k, self.trials, self.cassettes, apps, self.index,
                            self._restart, judge=self.judge, scope=self.scope,
                            unavailable=self.unavailable, spec=self.spec, via=self.via)
            for result in runner.run(self.tasks, workers, self.cluster):
                if advance is not None:
                    advance(result)
        finally:
            self.stop_apps()
        return self.report()

    def report(self) -> dict[str, Any]:
        """Write the run's reports from its log; the summary."""
        return write_report(self.run_dir)

    def stop_apps(self) -> None:
        stop_started(self.started)

    def _start_apps(self, say: Callable[[str], None]) -> dict[str, RunningApp]:
        return start_missing(self.catalog, self.needed_apps(), self.started,
                             self.unavailable, say)

    def _restart(self, app: RunningApp) -> RunningApp:
        new = restart_recorded(app, self.catalog)
        if app.app in self.started:
            self.started[app.app] = new
        return new
