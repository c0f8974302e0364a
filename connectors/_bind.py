"""Fill arguments from earlier observations with JMESPath expressions.

One mechanism for every place that needs it: an app's exercise (``rec.body.data.id``),
an undo (``response.headers.etag``), and later a task's gold chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError

from toolbed.errors import ArgumentError

__all__ = ["bind_args"]


def bind_args(
    bind: Mapping[str, str], context: Mapping[str, Any], base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``base`` plus each ``name: expression`` of ``bind`` evaluated over ``context``."""
    args = dict(base or {})
    for name, expression in bind.items():
        try:
            value = jmespath.search(expression, dict(context))
        except JMESPathError as exc:
            raise ArgumentError(f"binding {name!r} = {expression!r} failed: {exc}") from None
        if value is None:
            known = ", ".join(sorted(context)) or "nothing"
            raise ArgumentError(
                f"binding {name!r} = {expression!r} found nothing (bindable: {known})"
            )
        args[name] = value
    return args
