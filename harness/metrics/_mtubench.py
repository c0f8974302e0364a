"""MTU-Bench's metrics: per call (TS, PS), per dialogue of turns (SR, ATS, SATS, TPR)
and per multi-tool turn (TN, TO).

The paper's formula bodies were lost in its text; these follow its worked examples
and the authors' evaluation code (MTU-Bench, Wang et al., arXiv:2410.11710):

- PS counts only when the tool is right, so PS <= TS; the argument names must be the
  same, and each gold value (lower-cased) must appear in the predicted value.
- SATS gives a correct turn after an error ``1 - e^-(i-j)``, j the last wrong turn:
  turns [1, 1, 0, 1, 1] score 0.6994, the paper's example.
- TPR is the share of turns before the first wrong one.
- TN is the Jaccard index of the tool sets (the paper's example: 1/4).
- TO is 1 for the same sequence, else ``cos(pi/2 * i/|pred|) * L/|gold|`` with L the
  longest run of consecutive tools the prediction shares with the gold sequence and
  i where that run starts in the prediction (0-based).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "averaged_turn_success", "parameter_selection", "soft_averaged_turn_success",
    "success_rate", "task_process_rate", "tool_number", "tool_order", "tool_selection",
]


def tool_selection(predicted: str | None, gold: str) -> float:
    """TS: 1 when the predicted tool is the gold one."""
    return float(predicted == gold)


def parameter_selection(predicted: str | None, args: Mapping[str, Any] | None, gold: str,
                        gold_args: Mapping[str, Any]) -> float:
    """PS: 1 when the tool is right, the argument names are the gold ones, and every gold
    value, lower-cased, is contained in the predicted value."""
    if predicted != gold or args is None or set(args) != set(gold_args):
        return 0.0
    return float(all(_text(gold_args[k]) in _text(args[k]) for k in gold_args))


def _text(value: Any) -> str:
    return str(value).strip().lower()


def success_rate(turns: Sequence[bool]) -> float:
    """SR of one dialogue: 1 when no turn went wrong."""
    return float(all(turns))


def averaged_turn_success(turns: Sequence[bool]) -> float:
    """ATS of one dialogue: the share of its turns that are right."""
    return sum(turns) / len(turns) if turns else 0.0


def soft_averaged_turn_success(turns: Sequence[bool]) -> float:
    """SATS of one dialogue: a right turn counts 1 before any error and ``1 - e^-(i-j)``
    after one, j being the last wrong turn; a wrong turn counts 0."""
    if not turns:
        return 0.0
    total, last_wrong = 0.0, None
    for i, right in enumerate(turns):
        if not right:
            last_wrong = i
        elif last_wrong is None:
            total += 1.0
        else:
            total += 1.0 - math.exp(-(i - last_wrong))
    return total / len(turns)


def task_process_rate(turns: Sequence[bool]) -> float:
    """TPR of one dialogue: the share of turns done before the first wrong one."""
    if not turns:
        return 0.0
    leading = next((i for i, right in enumerate(turns) if not right), len(turns))
    return leading / len(turns)


def tool_number(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """TN: |predicted ∩ gold| / |predicted ∪ gold| over the sets of tool names."""
    pred, want = set(predicted), set(gold)
    union = pred | want
    return len(pred & want) / len(union) if union else 1.0


def tool_order(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """TO: 1 for the gold sequence; else the longest shared run of tools over the gold
    length, decayed by a cosine of where the run starts in the prediction."""
    if list(predicted) == list(gold):
        return 1.0
    if not predicted or not gold:
        return 0.0
    match = difflib.SequenceMatcher(None, list(predicted), list(gold), autojunk=False) \
        .find_longest_match(0, len(predicted), 0, len(gold))
    decay = math.cos(math.pi / 2 * match.a / len(predicted))
    return decay * match.size / len(gold)
