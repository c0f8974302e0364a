"""Step-by-step mode, as T-Eval and GTA score it: the model is given the gold steps
before step i, with what each returned on the live app (read back from the task's
cassette), and predicts step i: a tool call, or after the last call the final answer.
Nothing is executed, so no app runs and the prediction of a step never depends on the
model's earlier predictions.

Per task it scores GTA's InstAcc, ToolAcc, ArgAcc and SummAcc (``step_metrics``) and
T-Eval's retrieve (the tool is the gold one) and understand (the arguments' similarity
to the gold ones). The model's HTTP traffic can be recorded and replayed like a run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from toolbed.apis import Catalog
from toolbed.connectors import Mode, Runtime, StepResult, api_id_of, openai_tool, tool_name

from ._agents import SYSTEM_PROMPT, _text
from ._oracle import TaskRun, run_oracle
from ._runner import offered_tools
from ._score import answer_matches
from ._scoring import OPEN_PASS
from ._suite import TASK_CASSETTES, task_cassette
from ._task import Task
from .metrics import StepPrediction, canonical, step_metrics

__all__ = ["StepCase", "predict_step", "run_stepwise", "step_cases"]


@dataclass(frozen=True)
class StepCase:
    """Predict step ``index`` of ``task`` from the gold ``steps`` before it (``index ==
    len(steps)``: the final answer, which should be ``expected``)."""

    task: Task
    index: int
    steps: tuple[StepResult, ...]
    expected: Any = None

    @property
    def prefix(self) -> tuple[StepResult, ...]:
        return self.steps[:self.index]

    @property
    def gold(self) -> StepResult | None:
        return self.steps[self.index] if self.index < len(self.steps) else None


def step_cases(task: Task, run: TaskRun) -> list[StepCase]:
    """One case per gold call, and one for the answer (operational tasks have none)."""
    steps = tuple(run.steps)
    last = len(steps) + (task.answer.type != "operational")
    return [StepCase(task, i, steps, run.expected) for i in range(last)]


def _messages(case: StepCase, observation_cap: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT), HumanMessage(case.task.query)]
    for n, done in enumerate(case.prefix):
        call_id = f"call_{n}"
        messages += [
            AIMessage("", tool_calls=[{"id": call_id, "name": tool_name(done.api_id),
                                       "args": done.args}]),
            ToolMessage(done.observation.model_dump_json()[:observation_cap],
                        tool_call_id=call_id)]
    return messages


def predict_step(model: BaseChatModel, case: StepCase, catalog: Catalog,
                 offered: Sequence[str], observation_cap: int = 6000) -> AIMessage:
    """The model's next message after the gold prefix, with ``offered`` as its tools."""
    bound = model.bind_tools([openai_tool(catalog.api(a)) for a in offered])
    reply = bound.invoke(_messages(case, observation_cap))
    if not isinstance(reply, AIMessage):
        raise TypeError(f"the model answered with a {type(reply).__name__}")
    return reply


def _prediction(case: StepCase, reply: AIMessage | None,
                similarity: Callable[[str, str], float] | None) -> StepPrediction:
    gold = case.gold
    gold_tool, gold_args = (gold.api_id, gold.args) if gold else (None, {})
    if reply is None or reply.invalid_tool_calls:
        return StepPrediction(gold_tool, gold_args, error=True)
    if reply.tool_calls:
        call = reply.tool_calls[0]
        return StepPrediction(gold_tool, gold_args, tool=api_id_of(call["name"]),
                              args=call["args"])
    answer = _text(reply.content)
    rule = case.task.answer
    if rule.type == "open":
        assert similarity is not None
        right = max(similarity(answer, r) for r in rule.references) >= OPEN_PASS
    elif rule.type in ("fixed", "realtime"):
        expected = rule.value if rule.type == "fixed" else case.expected
        right = answer_matches(answer, expected, rule)
    else:
        right = False
    return StepPrediction(gold_tool, gold_args, answer_right=right)


def run_stepwise(
    catalog: Catalog, tasks: Sequence[Task], model: BaseChatModel, mode: Mode | str = "live",
    cassettes: str | Path | None = None, task_cassettes: str | Path = TASK_CASSETTES,
    tools: str = "gold", similarity: Callable[[str, str], float] | None = None,
) -> list[dict[str, Any]]:
    """Score ``model`` step by step on each task; one row of scores per task.

    The prefixes come from the tasks' cassettes (offline). In ``record`` / ``replay``
    mode the model's own traffic goes to / comes from ``cassettes/<task>.steps.yaml``."""
    mode = Mode(mode)
    rows = []
    for task in tasks:
        with Runtime(catalog, mode=Mode.REPLAY,
                     cassette=task_cassette(task, Path(task_cassettes))) as replay:
            run = run_oracle(replay, task)
        offered = offered_tools(catalog, task, tools)
        cassette = Path(cassettes) / f"{task.id}.steps.yaml" if cassettes else None
        predictions = []
        with Runtime(catalog, mode=mode, cassette=cassette, apps={}):
            for case in step_cases(task, run):
                try:
                    reply: AIMessage | None = predict_step(model, case, catalog, offered)
                except Exception:  # the model's server failed: an error step
                    reply = None
                predictions.append(_prediction(case, reply, similarity))
        calls = [p for p in predictions if p.gold_tool is not None]
        scores = step_metrics(predictions)
        scores["retrieve"] = sum(p.tool == p.gold_tool for p in calls) / len(calls)
        if similarity is not None:
            scores["understand"] = sum(
                similarity(canonical(p.args), canonical(p.gold_args))
                if p.args is not None else 0.0 for p in calls) / len(calls)
        rows.append({"task": task.id, "type": task.type, "scenario": task.scenario,
                     **{k: round(v, 4) for k, v in scores.items()}})
    return rows
