"""What the metrics share: one way to say that two argument values are the same."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical"]


def canonical(value: Any) -> str:
    """``value`` as JSON with sorted keys: equal for equal values, whatever the key order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
