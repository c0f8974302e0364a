"""Step-by-step mode, as T-Eval and GTA score it: the model is given the gold steps
before step i, with what each returned on the live app (read back from the task's
cassette), and predicts step i: a tool call, or after the last call the final answer.
Nothing is executed, so no app runs and the prediction of a step never depends on the
model's earlier predictions.

Per task it scores GTA's InstAcc, ToolAcc, ArgAcc and SummAcc (``step_metrics``) and
T-Eval's six abilities (Chen et al., arXiv:2312.14033):

- plan: the model writes its whole plan first; plan F1 against the gold chain;
- reason: the sentence the model says with each call, against the gold tool's own
  description (toolbed's tasks carry no annotated thoughts, so the gold thought is
  what the gold call is for);
- retrieve: the predicted tool is the gold one; understand: the similarity of the
  predicted arguments to the gold ones;
- instruct: told which tool to call with which values, the model makes that call;
- review: the model classifies each real tool response (success, internal error,
  input error, irrelevant, unable); the gold class comes from the response the app
  returned (``review_class``: its 4xx errors are input errors, empty results
  "unable"), and one response from another task's app per task is "irrelevant";
- teval: their mean, T-Eval's overall.

The model's HTTP traffic can be recorded and replayed like a run's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from toolbed.apis import Catalog
from toolbed.connectors import (
    Mode,
    Runtime,
    StepResult,
    api_id_of,
    openai_tool,
    running_at,
    tool_name,
)
from toolbed.tasks._suite import TASK_CASSETTES, task_cassette
from toolbed.tasks._task import Task

from ._oracle import TaskRun, run_oracle
from ._runner import offered_tools
from .agents._agents import SYSTEM_PROMPT, _text, prompt_in
from .metrics import (
    StepPrediction,
    canonical,
    exact_similarity,
    instruct_score,
    overall,
    plan_f1,
    review_class,
    step_metrics,
)
from .scoring import OPEN_PASS, answer_matches, filled_references

__all__ = ["PLAN_PROMPT", "REVIEW_PROMPT", "STEP_PROMPT", "StepCase",
           "run_stepwise", "step_cases", "step_means"]

STEP_PROMPT = SYSTEM_PROMPT + " With each tool call, say in one sentence what the call is for."

PLAN_PROMPT = (
    "Before calling any tool, write your whole plan: a JSON list of the calls you will "
    'make, in order, each as {"name": "<tool name>", "args": {<arguments>}}. Reply with '
    "the list only."
)

REVIEW_PROMPT = """Review the last tool response: what did it give? Choose one:
A. Success: the call did what it was meant to do.
B. Internal error: the tool failed on its own side, or could not be reached.
C. Input error: the tool does not fit the request, or its arguments are wrong or missing.
D. Irrelevant response: the response does not fit the tool's description.
E. Unable to accomplish: the response says it cannot be done, or it is empty.
Do not judge whether ids, dates or names are right. Reply "Answer: " and one letter."""

VERDICTS = dict(zip("ABCDE", ("success", "internal_error", "input_error", "irrelevant",
                              "unable"), strict=True))


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


def _messages(case: StepCase, observation_cap: int, upto: int | None = None
              ) -> list[BaseMessage]:
    """The conversation so far: the query, then the gold calls before step ``upto``
    (default: the case's step) with what each returned."""
    return [SystemMessage(prompt_in(STEP_PROMPT, case.task.lang)), HumanMessage(case.task.query),
            *gold_call_messages(case.steps[:case.index if upto is None else upto],
                                observation_cap)]


def gold_call_messages(steps: Sequence[StepResult], observation_cap: int, prefix: str = "call"
                       ) -> list[BaseMessage]:
    """Gold calls as the model would have made them, each followed by what it returned
    (cut to ``observation_cap`` characters); call ids are ``<prefix>_<n>``."""
    messages: list[BaseMessage] = []
    for n, done in enumerate(steps):
        call_id = f"{prefix}_{n}"
        messages += [
            AIMessage("", tool_calls=[{"id": call_id, "name": tool_name(done.api_id),
                                       "args": done.args}]),
            ToolMessage(done.observation.model_dump_json()[:observation_cap],
                        tool_call_id=call_id)]
    return messages


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
        right = max(similarity(answer, r)
                    for r in filled_references(rule, case.expected)) >= OPEN_PASS
    elif rule.type in ("fixed", "realtime"):
        expected = rule.value if rule.type == "fixed" else case.expected
        right = answer_matches(answer, expected, rule)
    else:
        right = False
    return StepPrediction(gold_tool, gold_args, answer_right=right)


def step_means(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Each metric's mean over the rows of ``run_stepwise``."""
    names = [n for n in rows[0] if n not in ("task", "type", "scenario")] if rows else []
    return {n: round(sum(r[n] for r in rows) / len(rows), 4) for n in names}


def run_stepwise(
    catalog: Catalog, tasks: Sequence[Task], model: BaseChatModel, mode: Mode | str = "live",
    cassettes: str | Path | None = None, task_cassettes: str | Path = TASK_CASSETTES,
    tools: str = "gold", similarity: Callable[[str, str], float] | None = None,
    observation_cap: int = 6000,
) -> list[dict[str, Any]]:
    """Score ``model`` step by step on each task; one row of scores per task.

    The prefixes come from the tasks' cassettes (offline). In ``record`` / ``replay``
    mode the model's own traffic goes to / comes from ``cassettes/<task>.steps.yaml``."""
    mode = Mode(mode)
    sim = similarity or exact_similarity
    runs, clocks = [], []
    for task in tasks:
        with Runtime(catalog, mode=Mode.REPLAY,
                     cassette=task_cassette(task, Path(task_cassettes))) as replay:
            runs.append(run_oracle(replay, task))
            clocks.append(replay.clock)          # the gold chain's "now"
    rows = []
    for n, (task, run) in enumerate(zip(tasks, runs, strict=True)):
        offered = offered_tools(catalog, task, tools)
        bound = model.bind_tools([openai_tool(catalog.api(a)) for a in offered])
        cassette = Path(cassettes) / f"{task.id}.steps.yaml" if cassettes else None
        predictions, reasons, instructs, reviews = [], [], [], []
        with Runtime(catalog, mode=mode, cassette=cassette, apps={}), running_at(clocks[n]):
            plan = _plan(bound, task)
            for case in step_cases(task, run):
                reply = _ask(bound, _messages(case, observation_cap))
                predictions.append(_prediction(case, reply, similarity))
                gold = case.gold
                if gold is None:
                    continue
                thought = _text(reply.content) if reply is not None and reply.tool_calls else ""
                reasons.append(sim(thought, catalog.api(gold.api_id).description)
                               if thought else 0.0)
                instructs.append(_instruct(bound, gold))
                reviews.append(_review(model, case, observation_cap) == review_class(
                    gold.observation.status, gold.observation.body))
            other = _other_app(runs, n)
            if run.steps and other is not None:     # a response from another app's tool
                swapped = StepCase(task, 0, (replace(run.steps[0],
                                                     observation=other.observation),))
                reviews.append(_review(model, swapped, observation_cap) == "irrelevant")
        calls = [p for p in predictions if p.gold_tool is not None]
        scores = step_metrics(predictions)
        abilities = {
            "instruct": _mean(instructs),
            "plan": plan_f1(plan, [(s.api_id, s.args) for s in run.steps], sim),
            "reason": _mean(reasons),
            "retrieve": _mean([float(p.tool == p.gold_tool) for p in calls]),
            "understand": _mean([sim(canonical(p.args), canonical(p.gold_args))
                                 if p.args is not None else 0.0 for p in calls]),
            "review": _mean([float(r) for r in reviews]),
        }
        scores |= abilities | {"teval": overall(abilities)}
        rows.append({"task": task.id, "type": task.type, "scenario": task.scenario,
                     **{k: round(v, 4) for k, v in scores.items()}})
    return rows


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _ask(model: Any, messages: list[BaseMessage]) -> AIMessage | None:
    """The model's reply, or None when its server failed (scored as an error step)."""
    try:
        reply = model.invoke(messages)
    except Exception:  # the model's server, not the task, failed
        return None
    return reply if isinstance(reply, AIMessage) else None


def _plan(bound: Any, task: Task) -> list[tuple[str, Any]]:
    """The model's whole plan, from a JSON list in its text or from its tool calls."""
    reply = _ask(bound, [SystemMessage(prompt_in(STEP_PROMPT, task.lang)), HumanMessage(task.query),
                         HumanMessage(PLAN_PROMPT)])
    if reply is None:
        return []
    if reply.tool_calls:
        return [(api_id_of(c["name"]), c["args"]) for c in reply.tool_calls]
    found = re.search(r"\[.*\]", _text(reply.content), re.S)
    try:
        items = json.loads(found.group(0)) if found else []
    except json.JSONDecodeError:
        return []
    return [(api_id_of(str(i.get("name", ""))), i.get("args") or {})
            for i in items if isinstance(i, dict)]


def _instruct(bound: Any, gold: StepResult) -> float:
    """T-Eval's instruct: told the tool and the values, the model makes the call."""
    name = tool_name(gold.api_id)
    reply = _ask(bound, [SystemMessage(SYSTEM_PROMPT), HumanMessage(
        f"Call the tool {name} with exactly these arguments: "
        f"{json.dumps(gold.args, ensure_ascii=False)}")])
    if reply is None or reply.invalid_tool_calls or not reply.tool_calls:
        return instruct_score(False, None, gold.args)
    call = reply.tool_calls[0]
    return instruct_score(True, call["args"] if call["name"] == name else None, gold.args)


def _review(model: BaseChatModel, case: StepCase, observation_cap: int) -> str | None:
    """The model's verdict on the response to the case's gold call."""
    messages = _messages(case, observation_cap, upto=case.index + 1)
    reply = _ask(model, [*messages, HumanMessage(REVIEW_PROMPT)])
    text = _text(reply.content) if reply is not None else ""
    found = re.search(r"Answer:\s*\(?([A-E])\b", text) or re.search(r"\b([A-E])\b", text)
    return VERDICTS[found.group(1)] if found else None


def _other_app(runs: Sequence[TaskRun], n: int) -> StepResult | None:
    """The first response of the next task (in the run's order) on other apps."""
    apps = set(runs[n].task.apps)
    for run in [*runs[n + 1:], *runs[:n]]:
        if run.steps and not apps & set(run.task.apps):
            return run.steps[0]
    return None
