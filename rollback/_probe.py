"""Snapshots of an app's state, and what changed between two of them.

An app's catalog entry declares a ``state_probe``: the reads that list everything a
task could change (every bucket, collection and record; every calendar with its
events). A snapshot runs them and keeps each answer, with the app's ``volatile`` keys
(timestamps, etags) dropped and lists of objects keyed by their id, so that a record
re-created by an undo compares equal to the one that was deleted. ``diff`` names each
object that differs, which is how rollback reports collateral damage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from toolbed.apis import App
from toolbed.connectors import Observation, bind_args, evaluate

__all__ = ["Difference", "diff", "snapshot"]

Snapshot = dict[str, Any]
_ID_KEYS = ("id", "uri", "href")


class Difference(BaseModel):
    """One object that is not as it was: added, removed or changed."""

    where: str
    """The probe read and the path inside its answer, e.g. ``kinto.list_records(...) > id=r1``."""
    change: str
    """``added``, ``removed`` or ``changed``."""
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.change == "changed":
            return f"{self.where}: changed from {_short(self.before)} to {_short(self.after)}"
        value = self.after if self.change == "added" else self.before
        return f"{self.where}: {self.change} {_short(value)}"


def snapshot(call: Callable[[str, dict[str, Any]], Observation], app: App) -> Snapshot:
    """Run ``app``'s state probe through ``call``; return its normalised answers by read."""
    saved: dict[str, Any] = {}
    state: Snapshot = {}
    volatile = frozenset(app.volatile)
    for step in app.state_probe:
        api_id = f"{app.app}.{step.api}"
        items = [None] if step.each is None else (evaluate(step.each, saved) or [])
        seen = []
        for item in items:
            args = bind_args(step.bind, {**saved, "item": item}, step.args)
            obs = call(api_id, args)
            shown = ", ".join(f"{k}={v}" for k, v in sorted(args.items()))
            state[f"{api_id}({shown})"] = {
                "status": obs.status, "body": _normalise(obs.body, volatile),
            }
            seen.append(obs.bindable())
        if step.save:
            saved[step.save] = seen[0] if step.each is None else seen
    return state


def diff(before: Snapshot, after: Snapshot) -> list[Difference]:
    """Every object that differs between two snapshots, named."""
    out: list[Difference] = []
    _walk(before, after, [], out)
    return out


def _walk(a: Any, b: Any, path: list[str], out: list[Difference]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            where = [*path, str(key)]
            if key not in b:
                out.append(Difference(where=_where(where), change="removed", before=a[key]))
            elif key not in a:
                out.append(Difference(where=_where(where), change="added", after=b[key]))
            else:
                _walk(a[key], b[key], where, out)
    elif a != b:
        out.append(Difference(where=_where(path), change="changed", before=a, after=b))


def _where(path: list[str]) -> str:
    return " > ".join(path)


def _normalise(value: Any, volatile: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _normalise(v, volatile) for k, v in value.items() if k not in volatile}
    if isinstance(value, list):
        items = [_normalise(v, volatile) for v in value]
        for key in _ID_KEYS:
            if items and all(isinstance(i, Mapping) and key in i for i in items):
                return {f"{key}={i[key]}": i for i in items}
        return sorted(items, key=lambda i: json.dumps(i, sort_keys=True, default=str))
    return value


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
