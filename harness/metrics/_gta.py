"""GTA's metrics (Wang et al., arXiv:2407.08713).

Step-by-step mode: the agent is given the gold steps before step n and predicts step
n, either a tool call or the final answer. Over a task's gold steps:

- InstAcc: steps whose prediction has the gold kind (call or answer) and parsed
  without error, over all gold steps;
- ToolAcc: calls with the gold tool, over the gold calls;
- ArgAcc: calls with the gold tool and exactly the gold arguments, over the gold calls;
- SummAcc: right final answers, over the answer steps.

End to end: AnsAcc (phrase whitelist/blacklist for objective answers, the best
similarity to the references for subjective ones) and a tool-selection F1 per
category: precision = gold tools of the category that the agent called / calls the
agent made in the category; recall = the same / gold calls of the category. GTA's
categories group its 14 tools (perception, operation, logic, creativity); toolbed
groups APIs by their app's domain.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._common import canonical

__all__ = ["StepPrediction", "category_f1", "step_metrics", "subjective_accuracy"]


@dataclass(frozen=True)
class StepPrediction:
    """One step-by-step item: the gold step and what the agent predicted for it.

    ``gold_tool``/``tool`` are None for an answer step (the final answer) and for a
    predicted answer; ``error`` marks a prediction that did not parse."""

    gold_tool: str | None
    gold_args: Mapping[str, Any] = field(default_factory=dict)
    tool: str | None = None
    args: Mapping[str, Any] | None = None
    answer_right: bool = False
    error: bool = False


def _same_args(a: Mapping[str, Any] | None, b: Mapping[str, Any]) -> bool:
    return a is not None and canonical(dict(a)) == canonical(dict(b))


def step_metrics(steps: Sequence[StepPrediction]) -> dict[str, float]:
    """InstAcc, ToolAcc, ArgAcc and SummAcc over step-by-step predictions."""
    calls = [s for s in steps if s.gold_tool is not None]
    answers = [s for s in steps if s.gold_tool is None]
    followed = sum(1 for s in steps if not s.error and (s.tool is None) == (s.gold_tool is None))
    tool_right = [s for s in calls if not s.error and s.tool == s.gold_tool]

    def share(n: int, d: int) -> float:
        return n / d if d else 0.0

    return {
        "inst_acc": share(followed, len(steps)),
        "tool_acc": share(len(tool_right), len(calls)),
        "arg_acc": share(sum(1 for s in tool_right if _same_args(s.args, s.gold_args)),
                         len(calls)),
        "summ_acc": share(sum(1 for s in answers if not s.error and s.tool is None
                              and s.answer_right), len(answers)),
    }


def subjective_accuracy(answer: str, references: Sequence[str],
                        similarity: Callable[[str, str], float]) -> float:
    """The best similarity (clipped at 0) of the answer to any of the references."""
    return max((max(0.0, similarity(answer, r)) for r in references), default=0.0)


def category_f1(called: Sequence[str], gold: Sequence[str],
                category: Callable[[str], str]) -> dict[str, float]:
    """Tool-selection F1 per category, for the categories of the gold and called tools."""
    made: dict[str, list[str]] = defaultdict(list)
    wanted: dict[str, list[str]] = defaultdict(list)
    for api in called:
        made[category(api)].append(api)
    for api in gold:
        wanted[category(api)].append(api)
    scores = {}
    for cat in sorted(set(made) | set(wanted)):
        hit = sum(1 for api in wanted[cat] if api in made[cat])
        precision = hit / len(made[cat]) if made[cat] else 0.0
        recall = hit / len(wanted[cat]) if wanted[cat] else 0.0
        scores[cat] = 2 * precision * recall / (precision + recall) if hit else 0.0
    return scores
