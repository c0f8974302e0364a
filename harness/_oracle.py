"""The oracle: run a task's gold chain for real, check its reference, roll it back.

This is how a task earns its place in the suite (`toolbed tasks validate --live`) and
how its cassette is made (`toolbed tasks record`): every call of the chain must
succeed, a fixed label must equal what the API returned, an open reference must
mention the facts the API returned, an operational change must show in the app's
state (and must not have been there before), and after rollback the apps' state
probes must equal their state before the task. The oracle's own answer is then
scored by the rules an agent's answer will be scored by, so the suite is known to
be passable at 100%.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jmespath.exceptions import JMESPathError

from toolbed.connectors import (
    Caller,
    RunningApp,
    Runtime,
    StepResult,
    evaluate,
    run_steps,
)
from toolbed.errors import TaskError
from toolbed.rollback import Journal, RollbackReport, RollbackScope, Snapshot, diff, snapshot
from toolbed.tasks._task import StateCheck, Task

from .scoring import answer_matches, filled_references, mentions, render, same_value

__all__ = ["GOLD_CAP", "TaskRun", "check_state", "run_oracle", "truthy"]

GOLD_CAP = 50_000_000
"""Characters of a response body the gold chain keeps (an agent's calls keep 32,000)."""


@dataclass
class TaskRun:
    """What the oracle did on one task, and whether the task holds up."""

    task: Task
    steps: list[StepResult] = field(default_factory=list)
    answer: str = ""
    expected: Any = None
    passed: bool = False
    problems: list[str] = field(default_factory=list)
    report: RollbackReport | None = None

    @property
    def ok(self) -> bool:
        """The task is sound: nothing wrong with it and the oracle scores on it."""
        return self.passed and not self.problems

    def summary(self) -> str:
        head = f"{self.task.id}: {'ok' if self.ok else 'FAILED'} ({len(self.steps)} calls)"
        return "\n".join([head] + [f"  {p}" for p in self.problems] +
                         ([] if self.passed or self.problems else ["  the answer scored wrong"]))


def truthy(value: Any) -> bool:
    """JMESPath's truth: false, null, and empty strings, lists and objects are false
    (0 is true: a dry day's rain total is a fact, not a missing one)."""
    return value is not False and value is not None and \
        not (isinstance(value, str | list | dict) and not value)


def check_state(caller: Caller, checks: list[StateCheck]) -> list[bool]:
    """Each state check's read, made now: does its ``expect`` hold?

    An expression that cannot apply to what the read returned (``contains()`` on the
    null body of a 404) does not hold.
    """
    held = []
    for check in checks:
        view = caller.observe(check.api, check.args).bindable()
        try:
            held.append(truthy(evaluate(check.expect, view)))
        except JMESPathError:
            held.append(False)
    return held


def run_oracle(
    runtime: Runtime, task: Task, journal: Journal | None = None,
    restart: Callable[[RunningApp], RunningApp] | None = None,
) -> TaskRun:
    """Run ``task``'s gold chain through a rollback scope and judge the task.

    A task with ``reset`` has its apps restarted by ``restart`` (e.g. ``restart_app``)
    after the rollback; their state is then compared with the state before the task.
    """
    catalog = runtime.catalog
    writes = any(catalog.api(s.api).effect == "write" for s in task.chain)
    run = TaskRun(task)
    if task.reset and restart is None and runtime.can_restart:
        raise TaskError(f"task {task.id} restarts its apps afterwards; run it where toolbed "
                        "can restart them (`toolbed tasks validate --live` does)")
    # the gold chain reads whole answers: the size cap protects an agent's context, and a
    # reference cut at 32,000 characters would miss what a question asks about
    cap, runtime.max_chars = runtime.max_chars, GOLD_CAP
    try:
        before = {app: _probe(runtime, app) for app in task.apps} if task.reset else {}
        return _run(runtime, task, journal, restart, run, writes, before)
    finally:
        runtime.max_chars = cap


def _run(runtime: Runtime, task: Task, journal: Journal | None,
         restart: Callable[[RunningApp], RunningApp] | None, run: TaskRun, writes: bool,
         before: dict[str, Snapshot]) -> TaskRun:
    scope = RollbackScope(runtime, journal, task_id=task.id, allow_irreversible=task.irreversible,
                          verify=task.apps if writes and not task.reset else ())
    with scope:
        if task.answer.type == "operational":
            for check, held in zip(task.answer.state, check_state(scope, task.answer.state),
                                   strict=True):
                if held:
                    run.problems.append(f"state check {check.expect!r} on {check.api} holds "
                                        "before the chain: the task would pass with no action")
        saved: dict[str, Any] = {}
        run.steps = run_steps(scope, None, task.chain, saved)
        for result in run.steps:
            if not result.ok:
                obs = result.observation
                reason = obs.error.message if obs.error else f"status {obs.status}"
                run.problems.append(f"gold call {result.api_id} failed: {reason}")
        if not run.problems:
            _judge(scope, run, saved)
    run.report = scope.report
    if run.report is not None and not run.report.clean:
        run.problems.append(run.report.summary())
    for app, state in before.items():
        if restart is not None and runtime.can_restart:
            runtime.apps[app] = restart(runtime.apps[app])
        for change in diff(state, _probe(runtime, app)):
            run.problems.append(f"after the restart: {change}")
    return run


def _probe(runtime: Runtime, app: str) -> Snapshot:
    return snapshot(runtime.call, runtime.catalog.app(app))


def _judge(scope: RollbackScope, run: TaskRun, saved: dict[str, Any]) -> None:
    answer = run.task.answer
    if answer.type == "operational":
        after = check_state(scope, answer.state)
        for check, held in zip(answer.state, after, strict=True):
            if not held:
                run.problems.append(f"state check {check.expect!r} on {check.api} does not "
                                    "hold after the chain")
        run.answer, run.passed = "Done.", all(after)
        return
    if answer.type == "open":
        run.expected = [_extract(f, saved, run) for f in answer.facts]
        references = filled_references(answer, run.expected)
        for expression, value in zip(answer.facts, run.expected, strict=True):
            if not truthy(value):
                run.problems.append(f"fact {expression!r} is empty on the live app")
            for reference in references:
                if truthy(value) and not mentions(reference, value):
                    run.problems.append(f"reference {reference[:60]!r}... does not mention "
                                        f"{render(value)!r} (fact {expression!r})")
        run.answer = references[0]
        run.passed = all(mentions(run.answer, v) for v in run.expected)
        return
    got = _extract(answer.source, saved, run)
    if not truthy(got) and got != 0 and got is not False:
        run.problems.append(f"source {answer.source!r} is empty on the live app")
    run.answer = render(got)
    if answer.type == "fixed":
        run.expected = answer.value
        if not same_value(got, answer.value, answer):
            run.problems.append(f"the label is {render(answer.value)!r}, but the app returned "
                                f"{render(got)!r} (source {answer.source!r})")
    else:
        run.expected = got
    run.passed = answer_matches(run.answer, run.expected, answer)


def _extract(expression: str, saved: dict[str, Any], run: TaskRun) -> Any:
    """``expression`` over the chain's observations; a type error is the task's problem."""
    try:
        return evaluate(expression, saved)
    except JMESPathError as exc:
        run.problems.append(f"{expression!r} cannot be evaluated on what the app returned: {exc}")
        return None
