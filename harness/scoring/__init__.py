"""Scoring one run of one task: ``_answers`` compares an answer with what was
expected (the match rules a task states, shared with task validation), ``_runs``
scores a whole run with the seeds' metrics (``toolbed.harness.metrics``), and
``_dialogues`` a dialogue's turns with MTU-Bench's."""

from ._answers import (
    answer_matches,
    filled_references,
    mentions,
    normalise,
    numbers_in,
    render,
    same_value,
    spelled_numbers,
)
from ._dialogues import goal_met, score_dialogue, score_simulated, turn_errors, turn_right
from ._runs import OPEN_PASS, Reference, TaskScore, gold_calls, score_run

__all__ = [
    "OPEN_PASS",
    "Reference",
    "TaskScore",
    "answer_matches",
    "filled_references",
    "goal_met",
    "gold_calls",
    "mentions",
    "normalise",
    "numbers_in",
    "render",
    "same_value",
    "spelled_numbers",
    "score_dialogue",
    "score_simulated",
    "turn_errors",
    "score_run",
    "turn_right",
]
