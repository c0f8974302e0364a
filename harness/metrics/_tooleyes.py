"""ToolEyes' rule-based scores (Ye et al., arXiv:2401.00741).

- Format alignment: ``N_valid / N``, the rounds whose output is a well-formed ReAct step
  (keywords present, the input one object, no sentences after it) over all rounds.
- Tool reality of a round: 1 when the tool exists among those offered, the arguments
  are ones it takes, and every required argument is given.

Its other three dimensions (intent, planning, answer organisation) and the thought-
tool fit are judged by an LLM; they are scored only when a judge is configured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..agents._react import ReactFormatError, parse_react

__all__ = ["format_alignment", "tool_reality"]


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
