"""Score one agent run on one task with the seeds' metrics.

What the run is compared with (``Reference``):

- the gold calls: the chain's APIs, with the arguments the query fixes (an argument
  the chain binds from an earlier observation, such as a created id, is judged only
  by being given, since its value is new on every run);
- the expected answer: a fixed task's label; for real-time and open tasks, what the
  gold chain returned on the live app just before the agent ran (the oracle run);
- for operational tasks, the state checks before and after the agent.

Completion per answer type follows CToolEval: fixed and real-time answers are right
or wrong by the task's match rule; an open answer scores its best similarity to the
references (or, when one is configured, an LLM judge's verdict); an operational task
scores its successful gold writes when the state shows the change. A run succeeds
when completion is full (open: at least ``OPEN_PASS``). The other scores are
MTU-Bench's (TS/PS on single-tool tasks, TN/TO and the turn scores SR/ATS/SATS/TPR
over the chain's steps on multi-tool ones), ToolEyes' format alignment for
text-protocol agents, and the error taxonomy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbed.apis import Catalog, Step
from toolbed.tasks._task import Task

from .._trajectory import Call, Trajectory
from ..metrics import (
    averaged_turn_success,
    error_taxonomy,
    format_alignment,
    gives,
    operational_completion,
    parameter_selection,
    soft_averaged_turn_success,
    success_rate,
    task_process_rate,
    tool_matching_rate,
    tool_number,
    tool_order,
    tool_selection,
    tooleyes_scores,
)
from ._answers import answer_matches, filled_references

__all__ = ["OPEN_PASS", "Reference", "TaskScore", "gold_calls", "score_run"]

OPEN_PASS = 0.8
"""An open answer at least this similar to a reference counts as a success."""


@dataclass
class Reference:
    """What a run on ``task`` is scored against (see the module's docstring)."""

    expected: Any = None
    state_before: list[bool] = field(default_factory=list)
    state_after: list[bool] = field(default_factory=list)
    problem: str | None = None
    """Why the reference could not be taken (the app failed the gold chain, ...)."""
    judged: float | None = None
    """An LLM judge's verdict on an open answer (1.0 or 0.0), when one is configured."""
    ratings: dict[str, Any] | None = None
    """The judge's ratings of ToolEyes' judged parts (``judge_tooleyes``), when a judge
    is configured."""


@dataclass
class TaskScore:
    scores: dict[str, float]
    errors: dict[str, int]
    success: bool


def gold_calls(chain: Sequence[Step], calls: list[Call]) -> list[tuple[str, dict[str, Any]]]:
    """The chain's calls with the arguments the query fixes; a bound argument takes the
    value the agent gave it in its call of that API with the same rank (the second
    ``get_bookmark`` of the chain, the agent's second ``get_bookmark``), when it made one
    (see the module's docstring)."""
    gold = []
    seen: dict[str, int] = {}
    for step in chain:
        args = dict(step.args)
        nth = seen[step.api] = seen.get(step.api, -1) + 1   # the n-th call of this API
        made = next((c for i, c in enumerate(c for c in calls if c.valid and c.api == step.api)
                     if i == nth), None)
        for name in step.bind:
            if made is not None and name in made.args:
                args[name] = made.args[name]
        gold.append((step.api, args))
    return gold


def _turns(calls: list[Call], gold: list[tuple[str, dict[str, Any]]]) -> list[bool]:
    """Step i of the chain is right when the agent's i-th valid call has its API and
    arguments."""
    valid = [c for c in calls if c.valid]
    return [i < len(valid) and valid[i].api == api and gives(valid[i].args, args)
            for i, (api, args) in enumerate(gold)]


def score_run(
    task: Task, trajectory: Trajectory, reference: Reference, catalog: Catalog,
    similarity: Callable[[str, str], float] | None = None,
) -> TaskScore:
    """Every metric that applies to this run, by name, and its error counts."""
    calls = trajectory.calls
    valid = [c.api for c in calls if c.valid]
    gold = gold_calls(task.chain, calls)
    gold_apis = [api for api, _ in gold]
    scores: dict[str, float] = {"tool_match": tool_matching_rate(valid, gold_apis)}
    completion = _completion(task, trajectory, reference, catalog, similarity)
    scores["completion"] = completion
    if task.answer.type != "operational":
        scores["ans_acc"] = completion
    if task.scenario == "single":
        first = next((c for c in calls if c.valid), None)
        api, args = gold[0]
        scores["ts"] = tool_selection(first.api if first else None, api)
        scores["ps"] = parameter_selection(first.api if first else None,
                                           first.args if first else None, api, args)
    else:
        scores["tn"] = tool_number(valid, gold_apis)
        scores["to"] = tool_order(valid, gold_apis)
        turns = _turns(calls, gold)
        scores.update(sr=success_rate(turns), ats=averaged_turn_success(turns),
                      sats=soft_averaged_turn_success(turns), tpr=task_process_rate(turns))
    if trajectory.outputs:
        scores["format_alignment"] = format_alignment(trajectory.outputs)
    if trajectory.offered or trajectory.steps:     # ToolEyes' five capabilities
        scores.update(tooleyes_scores(
            calls, trajectory.steps, trajectory.format_errors, trajectory.outputs,
            trajectory.answer, {a: catalog.api(a).parameters for a in trajectory.offered},
            reference.ratings))
    if trajectory.offered:      # how much of the gold chain the agent could reach at all
        chain = {step.api for step in task.chain}
        scores["gold_offered"] = len(chain & set(trajectory.offered)) / len(chain)
    unfinished = trajectory.answer is None or (
        task.answer.type == "operational" and not _state_changed(reference))
    errors = error_taxonomy(calls, gold, trajectory.format_errors,
                            trajectory.hallucinated_observations, unfinished)
    threshold = OPEN_PASS if task.answer.type == "open" else 1.0
    rounded = {name: round(value, 4) for name, value in scores.items()}
    return TaskScore(rounded, errors, reference.problem is None and
                     rounded["completion"] >= threshold)


def _state_changed(reference: Reference) -> bool:
    return bool(reference.state_after) and all(reference.state_after) and \
        not any(reference.state_before)


def _completion(task: Task, trajectory: Trajectory, reference: Reference, catalog: Catalog,
                similarity: Callable[[str, str], float] | None) -> float:
    answer = task.answer
    if reference.problem is not None:
        return 0.0
    if answer.type == "operational":
        writes = [s.api for s in task.chain if catalog.api(s.api).effect == "write"]
        succeeded = [c.api for c in trajectory.calls if c.valid and c.ok]
        if not writes:       # a state reached by reads alone: the state decides
            return float(_state_changed(reference))
        return operational_completion(succeeded, writes, _state_changed(reference))
    text = trajectory.answer or ""
    if answer.type == "open":
        if reference.judged is not None:
            return reference.judged
        if similarity is None:
            raise ValueError("open answers need a similarity (e.g. embedding_similarity())")
        return max((max(0.0, similarity(text, r))
                    for r in filled_references(answer, reference.expected)), default=0.0)
    expected = answer.value if answer.type == "fixed" else reference.expected
    return float(answer_matches(text, expected, answer))
