"""Fill arguments from earlier observations with JMESPath expressions.

One mechanism for every place that needs it: an app's exercise (``rec.body.data.id``),
an undo (``response.headers.etag``), a state probe, and later a task's gold chain.

Expressions are plain JMESPath plus a few functions registered through JMESPath's own
extension API, because the standard set cannot express them:

- ``difference(a, b)``: the items of array ``a`` that are not in ``b`` (what a write
  added to a listing, e.g. the id of a record whose creation response was lost);
- ``split(s, sep)``: a string cut at each ``sep`` (the name in a WebDAV href);
- ``unquote(s)``: a percent-encoded string decoded (a WebDAV href names a folder
  ``%E5%AE%B6%E5%BA%AD`` or ``My%20files``; the runtime encodes a path argument itself,
  so the name must go back as the app showed it to people: ``家庭``, ``My files``);
- ``pick(obj, keys)``: ``obj`` with only the ``keys`` it has (the properties a write
  changed, as they were before it: an undo that writes back only those);
- ``now()``, ``at(days, 'HH:MM')``, ``iso(seconds)`` and ``day(seconds)``: times relative
  to the run's clock (``_clock.py``), so a task says "tomorrow at 09:00" and never
  carries a date that expires: ``now()`` is the clock in seconds since the epoch,
  ``at(`1`, '09:00')`` 09:00 UTC on the day after the clock's, ``iso`` and ``day`` a
  time written as ``2026-11-27T09:00:00Z`` and ``2026-11-27``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import jmespath
from jmespath import functions
from jmespath.exceptions import JMESPathError

from toolbed.errors import ArgumentError

from . import _clock

__all__ = ["NULL", "bind_args", "evaluate"]

NULL = "`null`"
"""A binding that ends in this literal may evaluate to null: it sends null on purpose."""


class _Functions(functions.Functions):
    @functions.signature({"types": ["array"]}, {"types": ["array"]})
    def _func_difference(self, a: list[Any], b: list[Any]) -> list[Any]:
        return [item for item in a if item not in b]

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_split(self, text: str, sep: str) -> list[str]:
        return text.split(sep)

    @functions.signature({"types": ["string"]})
    def _func_unquote(self, text: str) -> str:
        return unquote(text)

    @functions.signature({"types": ["object"]}, {"types": ["array"]})
    def _func_pick(self, obj: dict[str, Any], keys: list[Any]) -> dict[str, Any]:
        return {key: obj[key] for key in keys if key in obj}

    @functions.signature()
    def _func_now(self) -> int:
        return _clock.now()

    @functions.signature({"types": ["number"]}, {"types": ["string"]})
    def _func_at(self, days: float, hh_mm: str) -> int:
        return _clock.at(int(days), hh_mm)

    @functions.signature({"types": ["number"]})
    def _func_iso(self, seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    @functions.signature({"types": ["number"]})
    def _func_day(self, seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


_OPTIONS = jmespath.Options(custom_functions=_Functions())


def evaluate(expression: str, data: Any) -> Any:
    """Evaluate one JMESPath expression (with toolbed's extra functions) over ``data``.

    A function handed the wrong kind of value (``merge`` over a list, when an app
    answered a write made with odd arguments in an unexpected shape) fails inside
    jmespath with Python's own ValueError or TypeError; it is raised as a JMESPathError,
    so that callers see one error type for an expression that does not fit the data."""
    try:
        return jmespath.search(expression, data, options=_OPTIONS)
    except JMESPathError:
        raise
    except (ValueError, TypeError) as exc:
        raise JMESPathError(f"{expression!r} does not fit the data ({exc})") from None


def bind_args(
    bind: Mapping[str, str], context: Mapping[str, Any], base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``base`` plus each ``name: expression`` of ``bind`` evaluated over ``context``.

    An expression that finds nothing is an error (a misspelt path must not send a
    request without its argument), unless the expression ends in the literal ``NULL``
    (`` `null` `` or ``a.b || `null` ``): then it sends a JSON null on purpose, for an
    undo that must clear a field the write set (a channel's category)."""
    args = dict(base or {})
    for name, expression in bind.items():
        try:
            value = evaluate(expression, dict(context))
        except JMESPathError as exc:
            raise ArgumentError(f"binding {name!r} = {expression!r} failed: {exc}") from None
        if value is None and not "".join(expression.split()).endswith(NULL):
            known = ", ".join(sorted(context)) or "nothing"
            raise ArgumentError(
                f"binding {name!r} = {expression!r} found nothing (bindable: {known})"
            )
        args[name] = value
    return args
