"""An error taxonomy counted per run, after MTU-Bench (missed / excessive / incorrect
action, parameter and format errors), GTA (format vs argument-format errors) and
ToolEyes (tool and parameter hallucinations).

Calls are compared with the gold chain as multisets of API ids. A gold call the agent
never made and a call outside the gold chain pair up as one ``wrong_tool`` (a call
made instead of the right one); what is left over is ``missing_tool`` or
``excess_tool``. Among calls to a gold API, one without a gold argument counts
``missing_argument``, one with another value ``wrong_argument``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .._trajectory import Call
from ._common import gives

__all__ = ["ERRORS", "error_taxonomy"]

ERRORS = ("wrong_tool", "missing_tool", "excess_tool", "wrong_argument", "missing_argument",
          "format_error", "invalid_api", "hallucinated_observation", "unfinished_operation")


def error_taxonomy(
    calls: Sequence[Call], gold: Sequence[tuple[str, Mapping[str, Any]]],
    format_errors: int = 0, hallucinated_observations: int = 0, unfinished: bool = False,
) -> dict[str, int]:
    """Counts of each error in ``ERRORS`` for one run. ``gold``: the chain's calls as
    ``(api, args)`` with the arguments the oracle sent; ``unfinished``: the run ended
    without an answer, or an operational task's state does not show the change."""
    counts = dict.fromkeys(ERRORS, 0)
    counts["format_error"] = format_errors
    counts["hallucinated_observation"] = hallucinated_observations
    counts["unfinished_operation"] = int(unfinished)
    counts["invalid_api"] = sum(1 for c in calls if not c.valid)
    made = Counter(c.api for c in calls if c.valid)
    wanted = Counter(api for api, _ in gold)
    not_made = sum((wanted - made).values())
    not_wanted = sum((made - wanted).values())
    counts["wrong_tool"] = min(not_made, not_wanted)
    counts["missing_tool"] = not_made - counts["wrong_tool"]
    counts["excess_tool"] = not_wanted - counts["wrong_tool"]
    for api, gold_args in gold:
        tries = [c for c in calls if c.valid and c.api == api]
        if not tries:
            continue
        if any(gives(c.args, gold_args) for c in tries):
            continue
        if all(set(gold_args) - set(c.args) for c in tries):
            counts["missing_argument"] += 1
        else:
            counts["wrong_argument"] += 1
    return counts
