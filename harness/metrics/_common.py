"""What the metrics share: one way to say that two argument values are the same."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["canonical", "gives"]


def canonical(value: Any) -> str:
    """``value`` as JSON with sorted keys: equal for equal values, whatever the key order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def gives(args: Mapping[str, Any], gold_args: Mapping[str, Any]) -> bool:
    """Does a call with ``args`` give every gold argument its gold value?"""
    return all(k in args and canonical(args[k]) == canonical(v) for k, v in gold_args.items())
