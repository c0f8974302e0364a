"""An LLM judge for open answers (CToolEval scores them by similarity to references by
default; with a judge configured, a chat model decides whether the answer says what a
reference says).

The judge sees the request, one reference and the answer, and replies yes or no: 1.0
or 0.0. The runner asks it inside the task's cassette, so a recorded run replays its
verdicts with no network and no key.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage

__all__ = ["JUDGE_PROMPT", "Judge", "llm_judge"]

Judge = Callable[[str, str, str], float]
"""``judge(request, answer, reference)``: 1.0 when the answer says what the reference
says, else 0.0."""

JUDGE_PROMPT = """You check an assistant's answer against a reference answer.

Request: {request}
Reference answer: {reference}
Assistant's answer: {answer}

Does the assistant's answer give the same information as the reference answer (wording,
order and extra politeness aside)? Reply with one word: yes or no."""


def llm_judge(model: Any) -> Judge:
    """A judge backed by a LangChain chat model (``chat_model(...)`` builds one)."""

    def judge(request: str, answer: str, reference: str) -> float:
        reply = model.invoke([HumanMessage(JUDGE_PROMPT.format(
            request=request, reference=reference, answer=answer))])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        return 1.0 if re.match(r"\W*yes\b", text, re.IGNORECASE) else 0.0

    return judge
