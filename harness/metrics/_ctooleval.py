"""CToolEval's two capabilities (its section 4.3 and 4.4).

- Tool invocation: the tool matching rate, the gold calls the agent made (as a
  multiset of API ids) over the gold calls.
- Task completion, by answer type: fixed and real-time answers are right or wrong
  (real-time ones against the value extracted from the live observation when the
  run is scored); open answers score by similarity to the references (or an LLM
  judge); operational tasks score the share of gold calls the agent made with a
  successful status, and toolbed also requires the app's state to show the change.
- The tables: the mean of each score per scenario (single / multi tool) and answer
  type, and over everything (its Tables 3 and 4).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

__all__ = ["ANSWER_TYPES", "by_scenario_and_type", "operational_completion",
           "tool_matching_rate"]

ANSWER_TYPES = ("fixed", "open", "operational", "realtime")


def tool_matching_rate(called: Sequence[str], gold: Sequence[str]) -> float:
    """Gold calls the agent made (each counted as often as the gold chain has it) over
    the number of gold calls."""
    if not gold:
        return 1.0
    made = Counter(called) & Counter(gold)
    return sum(made.values()) / len(gold)


def operational_completion(succeeded: Sequence[str], gold_writes: Sequence[str],
                           state_changed: bool) -> float:
    """Gold write calls the agent made with a successful status over the gold writes;
    0 when the state probe does not show the change (a claim without the operation)."""
    if not state_changed:
        return 0.0
    return tool_matching_rate(succeeded, gold_writes)


def by_scenario_and_type(
    rows: Iterable[tuple[str, str, float]],
) -> dict[str, dict[str, float]]:
    """``(scenario, answer type, score)`` rows -> the mean per scenario and type, plus
    ``{"all": {"all": mean}}`` over every row: CToolEval's table layout."""
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    every: list[float] = []
    for scenario, answer_type, score in rows:
        cells[(scenario, answer_type)].append(score)
        every.append(score)
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for (scenario, answer_type), scores in sorted(cells.items()):
        table[scenario][answer_type] = sum(scores) / len(scores)
    table["all"]["all"] = sum(every) / len(every) if every else 0.0
    return dict(table)
