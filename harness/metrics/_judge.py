"""An LLM judge for open answers (CToolEval scores them by similarity to references by
default; with a judge configured, a chat model decides whether the answer says what a
reference says), and for ToolEyes' judged capabilities.

The judge sees the request, one reference and the answer, and replies yes or no: 1.0
or 0.0. ``rate`` asks it for a score on a rubric instead (ToolEyes' prompts ask for
"Evaluation Score: 1-10"; the score is divided by 10, as the authors' code does). The
runner asks it inside the task's cassette, so a recorded run replays its verdicts with
no network and no key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage

__all__ = ["JUDGE_PROMPT", "SCORE_TOOL", "Judge", "LLMJudge", "llm_judge"]

Judge = Callable[[str, str, str], float]
"""``judge(request, answer, reference)``: 1.0 when the answer says what the reference
says, else 0.0."""

JUDGE_PROMPT = """You check an assistant's answer against a reference answer.

Request: {request}
Reference answer: {reference}
Assistant's answer: {answer}

Does the assistant's answer give the same information as the reference answer (wording,
order and extra politeness aside)? Reply with one word: yes or no."""


SCORE_TOOL = {"type": "function", "function": {
    "name": "give_score",
    "description": "Give your score from 1 (worst) to 10 (best), with the reason.",
    "parameters": {"type": "object", "properties": {
        "score": {"type": "integer", "enum": list(range(1, 11))},
        "reason": {"type": "string"}}, "required": ["score", "reason"]}}}
"""The tool a judge may call to give a rating (the rubric's "Evaluation Score")."""


class LLMJudge:
    """A judge backed by a LangChain chat model: called, a yes/no verdict on an answer
    (a ``Judge``); ``rate``, a score on a rubric."""

    def __init__(self, model: Any):
        self.model = model

    def __call__(self, request: str, answer: str, reference: str) -> float:
        text = self._ask(JUDGE_PROMPT.format(request=request, reference=reference,
                                             answer=answer))
        return 1.0 if re.match(r"\W*yes\b", text, re.IGNORECASE) else 0.0

    def rate(self, prompt: str) -> float | None:
        """The score the judge gives under ``prompt`` (which asks for "Evaluation Score:
        <1-10>"), divided by 10. A model with tool calling is also offered a
        ``give_score`` tool (a small model keeps to its schema better than to a text
        format); a reply that is a bare number is read as the score. None when its reply
        holds no score."""
        model = self.model.bind_tools([SCORE_TOOL]) if hasattr(self.model, "bind_tools") \
            else self.model
        reply = model.invoke([HumanMessage(prompt)])
        for call in getattr(reply, "tool_calls", None) or []:
            if call["name"] == "give_score" and isinstance(call["args"].get("score"), int | float):
                return min(10.0, max(1.0, float(call["args"]["score"]))) / 10
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        found = re.search(r"Evaluation Score\W*(\d+(?:\.\d+)?)", text, re.IGNORECASE) or \
            re.fullmatch(r"\W*(\d+(?:\.\d+)?)\W*", text)
        return min(10.0, max(1.0, float(found.group(1)))) / 10 if found else None

    def _ask(self, prompt: str) -> str:
        reply = self.model.invoke([HumanMessage(prompt)])
        return reply.content if isinstance(reply.content, str) else str(reply.content)


def llm_judge(model: Any) -> LLMJudge:
    """A judge backed by a LangChain chat model (``chat_model(...)`` builds one)."""
    return LLMJudge(model)
