"""Score one agent's dialogue, turn by turn, with MTU-Bench's dialogue metrics.

A turn is right when what it asked for is true afterwards:

- a turn that ``asks`` for a value the user left out: the agent made no call and
  asked (its reply holds a question mark), rather than inventing the value;
- an operational turn: its state checks hold after the turn and did not before;
- a fixed or real-time turn: the reply matches the expected value by the answer's
  rule (real-time: what the oracle's run of the same dialogue read at that turn);
- an open turn: the reply is at least ``OPEN_PASS`` similar to a reference.

Over the turns: SR (every turn right), ATS, SATS and TPR (MTU-Bench's, in
``metrics/_mtubench.py``); over the calls: tool matching, TN and TO against the whole
gold sequence, and TS / PS averaged over the turns with exactly one gold call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolbed.tasks._dialogue import Dialogue, Turn

from .._trajectory import Trajectory
from ..metrics import (
    averaged_turn_success,
    parameter_selection,
    soft_averaged_turn_success,
    success_rate,
    task_process_rate,
    tool_matching_rate,
    tool_number,
    tool_order,
    tool_selection,
)
from ._answers import answer_matches, filled_references
from ._runs import OPEN_PASS, gold_calls

__all__ = ["score_dialogue", "turn_right"]


def turn_right(turn: Turn, trajectory: Trajectory, expected: Any, before: Sequence[bool],
               after: Sequence[bool], similarity: Callable[[str, str], float] | None = None
               ) -> bool:
    """Whether the agent's turn did what the user asked (see the module's docstring)."""
    text = trajectory.answer or ""
    if turn.asks is not None:
        return not any(c.valid for c in trajectory.calls) and "?" in text
    answer = turn.answer
    assert answer is not None
    if answer.type == "operational":
        return bool(after) and all(after) and not any(before)
    if answer.type == "open":
        if similarity is None:
            raise ValueError("open answers need a similarity (e.g. embedding_similarity())")
        return max((similarity(text, r) for r in filled_references(answer, expected)),
                   default=0.0) >= OPEN_PASS
    return answer_matches(text, answer.value if answer.type == "fixed" else expected, answer)


def score_dialogue(dialogue: Dialogue, turns: Sequence[Trajectory], right: Sequence[bool]
                   ) -> dict[str, float]:
    """MTU-Bench's scores of one dialogue, by name (see the module's docstring)."""
    calls = [c for t in turns for c in t.calls]
    valid = [c.api for c in calls if c.valid]
    gold = [api for api, _ in gold_calls(dialogue.chain, calls)]
    scores = {
        "sr": success_rate(right), "ats": averaged_turn_success(right),
        "sats": soft_averaged_turn_success(right), "tpr": task_process_rate(right),
        "tool_match": tool_matching_rate(valid, gold),
        "tn": tool_number(valid, gold), "to": tool_order(valid, gold),
    }
    single = [(turn, trajectory) for turn, trajectory in zip(dialogue.turns, turns, strict=False)
              if len(turn.chain) == 1]
    if single:
        ts = ps = 0.0
        for turn, trajectory in single:
            [(api, args)] = gold_calls(turn.chain, trajectory.calls)
            first = next((c for c in trajectory.calls if c.valid), None)
            ts += tool_selection(first.api if first else None, api)
            ps += parameter_selection(first.api if first else None,
                                      first.args if first else None, api, args)
        scores.update(ts=ts / len(single), ps=ps / len(single))
    return {name: round(value, 4) for name, value in scores.items()}
