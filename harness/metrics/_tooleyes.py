"""ToolEyes' five capabilities (Ye et al., arXiv:2401.00741).

- Format alignment: ``N_valid / N``, the rounds whose output is a well-formed ReAct step
  (keywords present, the input one object, no sentences after it) over all rounds.
- Tool reality of a round: 1 when the tool exists among those offered, the arguments
  are ones it takes, and every required argument is given.

Its other three dimensions (intent, planning, answer organisation) and the thought-
tool fit are judged by an LLM (``judge_tooleyes``, with ``RUBRICS``); ``tooleyes_scores``
puts the rule-based and the judged parts together as the paper's Eq. 1-6, and leaves the
judged ones out when there is no judge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..agents._react import ReactFormatError, parse_react

__all__ = ["CAPABILITIES", "RUBRICS", "Rater", "format_alignment", "judge_tooleyes",
           "thought_chain", "tool_reality", "tooleyes_scores"]


def format_alignment(outputs: Sequence[str]) -> float:
    """The share of a run's model outputs that parse as strict ReAct steps."""
    if not outputs:
        return 0.0
    valid = 0
    for text in outputs:
        try:
            step = parse_react(text, strict=True)
        except ReactFormatError:
            continue
        valid += not step.hallucinated_observation
    return valid / len(outputs)


def tool_reality(tool: str, args: Mapping[str, Any],
                 offered: Mapping[str, Mapping[str, Any]]) -> float:
    """1 when ``tool`` is offered and ``args`` fit its JSON Schema's names: only known
    properties, every required one present. ``offered``: tool name -> JSON Schema."""
    schema = offered.get(tool)
    if schema is None:
        return 0.0
    known = set(schema.get("properties", {}))
    required = set(schema.get("required", []))
    return float(set(args) <= known and required <= set(args))


# -- all five capabilities -------------------------------------------------------------

Rater = Callable[[str], "float | None"]
"""A judge's score in [0, 1] for a prompt that asks for "Evaluation Score: <1-10>"."""

_ASK = ("\n\nReply in exactly two lines:\nScoring Reason: <why, in one or two sentences>\n"
        "Evaluation Score: <a whole number from 1 to 10>")

_CONTEXT = ("Tools the assistant had:\n{document}\n\nUser request: {query}\n\n"
            "What the assistant thought and did, round by round:\n{chain}")

RUBRICS = {
    "ic": "You are grading how well an AI assistant that uses tools understood its user. "
          "Judge two things: whether its reasoning stays on what the user actually asked "
          "for, and whether it took in new information from the tools' results as it went. "
          "10 means it understood the request fully and kept adjusting to what it learned; "
          "1 means its reasoning had nothing to do with the request.\n\n" + _CONTEXT + _ASK,
    "b_validity": "You are grading the planning of an AI assistant that uses tools. Judge "
                  "whether its plan is valid: it sums up where it stands sensibly, it decides "
                  "the next action at the right moment, and it tries something else when an "
                  "approach fails rather than repeating it. 10 means every step is well "
                  "planned; 1 means there is no sensible plan.\n\n" + _CONTEXT + _ASK,
    "b_integrity": "You are grading the reasoning of an AI assistant that uses tools. Judge "
                   "whether it is sound: well-formed sentences, no contradictions between "
                   "steps, and corrections when it notices a mistake. 10 means flawless "
                   "reasoning; 1 means broken or self-contradicting reasoning.\n\n"
                   + _CONTEXT + _ASK,
    "t_match": "You are grading whether an AI assistant picked the right tool. THOUGHT is "
               "what it said it needed; Tool is the tool it then called (with its "
               "description). 10 means the tool does exactly what the thought needs; 1 "
               "means it has nothing to do with it.\n\nTHOUGHT: {thought}\n\nTool: {tool}"
               + _ASK,
    "a_quality": "You are grading the final answer of an AI assistant that used tools. "
                 "Judge whether the answer addresses the user's request and whether what it "
                 "states agrees with what the tools returned. 10 means a relevant, accurate, "
                 "complete answer; 1 means irrelevant or wrong.\n\n" + _CONTEXT
                 + "\n\nFinal answer: {answer}" + _ASK,
}
"""The judged parts' rubrics, after ToolEyes' Tables 10-14, in toolbed's words. The
paper prints the same prompt for a-quality as for IC (Table 14 repeats Table 10); the
a-quality rubric here follows the paper's definition in its text instead: relevance to
the request and accuracy of the information."""

CAPABILITIES = ("fa", "ic", "bp", "ts", "ao")


def thought_chain(calls: Sequence[Any], thoughts: Sequence[str], answer: str | None) -> str:
    """The rounds as the judge reads them: thought, action, input, how the call went."""
    lines = []
    for n, call in enumerate(calls):
        thought = thoughts[n] if n < len(thoughts) else ""
        result = f"status {call.status}" if call.status is not None else (call.error or "-")
        lines.append(f"Thought: {thought or '(none)'}\nAction: {call.api}\n"
                     f"Action Input: {json.dumps(call.args, ensure_ascii=False)[:500]}\n"
                     f"Result: {result}")
    lines.append(f"Final answer: {answer}" if answer is not None else "(no final answer)")
    return "\n\n".join(lines)


def judge_tooleyes(rate: Rater, query: str, document: str, calls: Sequence[Any],
                   thoughts: Sequence[str], answer: str | None,
                   describe: Callable[[str], str]) -> dict[str, Any]:
    """The judged parts of one run: IC, b-validity, b-integrity and a-quality once, and
    t-match for each call (0.5 without a thought, as the paper scores an empty THOUGHT
    5 of 10; a call of no offered tool is not rated, its reality is 0 anyway).
    ``describe(api)``: the tool as the t-match rubric shows it."""
    chain = thought_chain(calls, thoughts, answer)
    context = {"document": document, "query": query, "chain": chain}
    ratings: dict[str, Any] = {name: rate(RUBRICS[name].format(**context))
                               for name in ("ic", "b_validity", "b_integrity")}
    ratings["a_quality"] = rate(RUBRICS["a_quality"].format(**context, answer=answer)) \
        if answer else 0.0
    ratings["t_match"] = [
        (0.5 if not (thoughts[n] if n < len(thoughts) else "") else
         rate(RUBRICS["t_match"].format(thought=thoughts[n], tool=describe(call.api))))
        if call.valid else 0.0 for n, call in enumerate(calls)]
    return ratings


def tooleyes_scores(calls: Sequence[Any], rounds: int, format_errors: int,
                    outputs: Sequence[str], answer: str | None,
                    schemas: Mapping[str, Mapping[str, Any]],
                    ratings: Mapping[str, Any] | None = None) -> dict[str, float]:
    """ToolEyes' scores of one run (Eq. 1-6), by name ``tooleyes_<part>``.

    Rule-based, always: ``fa`` (Eq. 1: a ReAct agent's well-formed outputs, or a
    tool-calling agent's rounds without a malformed call, over all rounds),
    ``t_reality`` (the mean over calls of ``tool_reality``) and ``a_pass`` (an answer
    came within the agent's round limit). With ``ratings`` (``judge_tooleyes``): ``ic``,
    ``bp`` = b-validity x b-integrity, ``ts`` = sum of reality x t-match over the calls
    / their number, ``ao`` = a-pass x a-quality, and ``overall``, their mean with
    ``fa``. A judged part whose rating the judge did not give is left out, and so is
    the overall."""
    fa = format_alignment(outputs) if outputs else \
        (max(0, rounds - format_errors) / rounds if rounds else 0.0)
    reality = [tool_reality(c.api, c.args, schemas) if c.valid else 0.0 for c in calls]
    a_pass = float(answer is not None)
    scores = {"fa": fa, "t_reality": sum(reality) / len(reality) if reality else 0.0,
              "a_pass": a_pass}
    if ratings is not None:
        parts = {
            "ic": ratings.get("ic"),
            "bp": None if None in (ratings.get("b_validity"), ratings.get("b_integrity"))
            else ratings["b_validity"] * ratings["b_integrity"],
            "ts": None if None in ratings.get("t_match", []) else (
                sum(r * m for r, m in zip(reality, ratings["t_match"], strict=True))
                / len(reality) if reality else 0.0),
            "ao": None if ratings.get("a_quality") is None else a_pass * ratings["a_quality"],
        }
        scores |= {k: v for k, v in parts.items() if v is not None}
        if all(v is not None for v in parts.values()):
            scores["overall"] = sum(scores[c] for c in CAPABILITIES) / len(CAPABILITIES)
    return {f"tooleyes_{k}": round(v, 4) for k, v in scores.items()}
