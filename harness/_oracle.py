"""The oracle: run a task's gold chain for real, check its reference, roll it back.

This is how a task earns its place in the suite (`toolbed tasks validate --live`) and
how its cassette is made (`toolbed tasks record`): every call of the chain must
succeed, a fixed label must equal what the API returned, an open reference must
mention the facts the API returned, an operational change must show in the app's
state (and must not have been there before), and after rollback the apps' state
probes must equal their state before the task. The oracle's own answer is then
scored by the rules an agent's answer will be scored by, so the suite is known to
be passable at 100%. A dialogue (``run_dialogue``) is proven the same way, turn by turn,
in one rollback scope, each turn seeing what the turns before it saved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jmespath.exceptions import JMESPathError

from toolbed.apis import Step
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
from toolbed.tasks._dialogue import Dialogue, Turn
from toolbed.tasks._task import Answer, StateCheck, Task

from ._trajectory import calls_via
from .scoring import answer_matches, filled_references, mentions, render, same_value

__all__ = ["GOLD_CAP", "DialogueRun", "TaskRun", "TurnRun", "check_state", "end_checks",
           "run_dialogue", "run_oracle", "truthy"]

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


@dataclass
class TurnRun:
    """What the oracle did on one turn of a dialogue."""

    turn: Turn
    number: int
    """The turn's place in the dialogue, from 1."""
    steps: list[StepResult] = field(default_factory=list)
    answer: str = ""
    expected: Any = None
    passed: bool = False
    problems: list[str] = field(default_factory=list)


@dataclass
class DialogueRun:
    """What the oracle did on a dialogue, turn by turn, and whether it holds up."""

    dialogue: Dialogue
    turns: list[TurnRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """The dialogue's own: its rollback, a turn that could not run."""
    report: RollbackReport | None = None
    final: list[bool] = field(default_factory=list)
    """With ``final=True``: every operational turn's state checks, in order, read once
    more after the last turn (the end state a simulated user's dialogue must reach)."""

    @property
    def ok(self) -> bool:
        return not self.problems and all(t.passed and not t.problems for t in self.turns)

    def summary(self) -> str:
        calls = sum(len(t.steps) for t in self.turns)
        lines = [f"{self.dialogue.id}: {'ok' if self.ok else 'FAILED'} "
                 f"({len(self.turns)} turns, {calls} calls)"]
        for turn in self.turns:
            lines += [f"  turn {turn.number}: {p}" for p in turn.problems]
            if not turn.passed and not turn.problems:
                lines.append(f"  turn {turn.number}: the answer scored wrong")
        return "\n".join(lines + [f"  {p}" for p in self.problems])


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
    restart: Callable[[RunningApp], RunningApp] | None = None, via: str = "direct",
) -> TaskRun:
    """Run ``task``'s gold chain through a rollback scope and judge the task.

    A task with ``reset`` has its apps restarted by ``restart`` (e.g. ``restart_app``)
    after the rollback; their state is then compared with the state before the task.
    ``via``: the chain's calls go to the scope directly or over MCP (``calls_via``).
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
        return _run(runtime, task, journal, restart, run, writes, before, via)
    finally:
        runtime.max_chars = cap


def _run(runtime: Runtime, task: Task, journal: Journal | None,
         restart: Callable[[RunningApp], RunningApp] | None, run: TaskRun, writes: bool,
         before: dict[str, Snapshot], via: str) -> TaskRun:
    scope = RollbackScope(runtime, journal, task_id=task.id, allow_irreversible=task.irreversible,
                          verify=task.apps if writes and not task.reset else ())
    with scope:
        _gold(scope, task.chain, task.answer, run, {}, "the chain: the task", via)
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


def _judge(scope: RollbackScope, answer: Answer, run: TaskRun | TurnRun,
           saved: dict[str, Any]) -> None:
    """Check ``answer`` against what the chain saved, and give the oracle's own answer."""
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


def _extract(expression: str, saved: dict[str, Any], run: TaskRun | TurnRun) -> Any:
    """``expression`` over the chain's observations; a type error is the task's problem."""
    try:
        return evaluate(expression, saved)
    except JMESPathError as exc:
        run.problems.append(f"{expression!r} cannot be evaluated on what the app returned: {exc}")
        return None


def run_dialogue(runtime: Runtime, dialogue: Dialogue, journal: Journal | None = None,
                 skip: Iterable[int] = (), final: bool = False) -> DialogueRun:
    """Run a dialogue's gold turns in order through one rollback scope and judge each.

    Observations a turn saves stay visible to the turns after it. An operational turn's
    state checks must not hold before that turn and must hold after it. ``skip`` leaves
    out turns (numbered from 0): a later turn that builds on one of them then fails.
    ``final`` reads all the state checks once more at the end (``DialogueRun.final``).
    """
    catalog = runtime.catalog
    writes = any(catalog.api(s.api).effect == "write" for s in dialogue.chain)
    run = DialogueRun(dialogue)
    cap, runtime.max_chars = runtime.max_chars, GOLD_CAP
    scope = RollbackScope(runtime, journal, task_id=dialogue.id,
                          allow_irreversible=dialogue.irreversible,
                          verify=dialogue.apps if writes else ())
    skipped = set(skip)
    try:
        with scope:
            saved: dict[str, Any] = {}
            for n, turn in enumerate(dialogue.turns):
                if n in skipped:
                    continue
                run.turns.append(_run_turn(scope, turn, n + 1, saved))
            if final:
                run.final = check_state(scope, end_checks(dialogue))
    finally:
        runtime.max_chars = cap
    run.report = scope.report
    if run.report is not None and not run.report.clean:
        run.problems.append(run.report.summary())
    return run


def end_checks(dialogue: Dialogue) -> list[StateCheck]:
    """Every operational turn's state checks, in turn order."""
    return [c for t in dialogue.turns if t.answer is not None and t.answer.type == "operational"
            for c in t.answer.state]


def _run_turn(scope: RollbackScope, turn: Turn, number: int, saved: dict[str, Any]
              ) -> TurnRun:
    run = TurnRun(turn, number)
    if turn.asks is not None:           # the right move is a question, and no call
        run.answer, run.passed = f"Could you tell me {turn.asks}?", True
        return run
    assert turn.answer is not None
    _gold(scope, turn.chain, turn.answer, run, saved, "the turn: it")
    return run


def _gold(scope: RollbackScope, chain: list[Step], answer: Answer, run: TaskRun | TurnRun,
          saved: dict[str, Any], before: str, via: str = "direct") -> None:
    """Run a gold chain and judge its answer: an operational answer's state checks must
    not hold before it (``before`` names it in the problem), every call must succeed."""
    if answer.type == "operational":
        for check, held in zip(answer.state, check_state(scope, answer.state), strict=True):
            if held:
                run.problems.append(f"state check {check.expect!r} on {check.api} holds "
                                    f"before {before} would pass with no action")
    with calls_via(via, scope, list(dict.fromkeys(s.api for s in chain))) as caller:
        run.steps = run_steps(caller, None, chain, saved)
    for result in run.steps:
        if not result.ok:
            obs = result.observation
            reason = obs.error.message if obs.error else f"status {obs.status}"
            run.problems.append(f"gold call {result.api_id} failed: {reason}")
    if not run.problems:
        _judge(scope, answer, run, saved)
