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

With a simulated user the agent's turns no longer line up with the dialogue's, so the
dialogue is judged by its outcome, as tau-bench judges one (``goal_met``): each request
of the goal is met when, at the end, its state checks read as they do at the end of the
gold run (and, where the gold run left none of them holding, the agent called that
turn's write APIs), or, for a question, when one of the agent's replies answers it (any
reply, as tau-bench looks for a required output in any agent message). The
``goal`` score is the share of requests met; tool matching, TN and TO are over all calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolbed.tasks._dialogue import Dialogue, Turn

from .._trajectory import Call, Trajectory
from ..metrics import (
    averaged_turn_success,
    error_taxonomy,
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

__all__ = ["goal_met", "score_dialogue", "score_simulated", "turn_errors", "turn_right"]


def turn_right(turn: Turn, trajectory: Trajectory, expected: Any, before: Sequence[bool],
               after: Sequence[bool], similarity: Callable[[str, str], float] | None = None
               ) -> bool:
    """Whether the agent's turn did what the user asked (see the module's docstring)."""
    text = trajectory.answer or ""
    if turn.asks is not None:
        return not any(c.valid for c in trajectory.calls) and ("?" in text or "？" in text)
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


def goal_met(dialogue: Dialogue, calls: Sequence[Call], replies: Sequence[str],
             final: Sequence[bool], gold_final: Sequence[bool], expected: Sequence[Any],
             is_write: Callable[[str], bool],
             similarity: Callable[[str, str], float] | None = None) -> list[bool]:
    """For each turn of ``dialogue`` that is not an ``asks`` turn, whether a simulated
    dialogue met it (see the module's docstring). ``calls``: the agent's calls;
    ``replies``: its text replies; ``final`` and ``gold_final``: the state checks of
    every operational turn (``end_checks``) at the end of the agent's and of the gold
    run; ``expected``: each turn's expected value in the gold run."""
    called = {c.api for c in calls if c.valid}
    met, at = [], 0
    for turn, value in zip(dialogue.turns, expected, strict=True):
        if turn.asks is not None:
            continue
        assert turn.answer is not None
        if turn.answer.type == "operational":
            n = len(turn.answer.state)
            mine, gold = list(final[at:at + n]), list(gold_final[at:at + n])
            at += n
            writes = {s.api for s in turn.chain if is_write(s.api)}
            met.append(mine == gold and (any(gold) or writes <= called))
        else:
            met.append(any(turn_right(turn, Trajectory(answer=r), value, [], [], similarity)
                           for r in replies))
    return met


def score_simulated(dialogue: Dialogue, calls: Sequence[Call], met: Sequence[bool]
                    ) -> dict[str, float]:
    """A simulated dialogue's scores: the share of its goal met, and the call metrics
    over all its calls against the whole gold sequence."""
    valid = [c.api for c in calls if c.valid]
    gold = [api for api, _ in gold_calls(dialogue.chain, list(calls))]
    scores = {"goal": sum(met) / len(met) if met else 0.0,
              "tool_match": tool_matching_rate(valid, gold),
              "tn": tool_number(valid, gold), "to": tool_order(valid, gold)}
    return {name: round(value, 4) for name, value in scores.items()}


def turn_errors(turn: Turn, trajectory: Trajectory, right: bool) -> dict[str, int]:
    """The error taxonomy (``metrics.error_taxonomy``) of one turn against its own gold
    calls, and ``did_not_ask``: a turn that ``asks`` where the agent did not ask."""
    calls = trajectory.calls
    errors = error_taxonomy(
        calls, gold_calls(turn.chain, list(calls)), trajectory.format_errors,
        trajectory.hallucinated_observations,
        unfinished=turn.answer is not None and turn.answer.type == "operational" and not right)
    errors["did_not_ask"] = int(turn.asks is not None and not right)
    return errors
