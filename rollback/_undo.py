"""Bind a journalled write's undo and run it: one code path for a scope and for recovery.

The undo of an ``applied`` write was bound when its answer came back. A ``pending``
write (sent, answer never recorded) is first looked up with its declared ``lookup``: a
stand-in for the lost answer binds the undo, and no stand-in means the write never
took effect. A ``failed`` undo is looked up the same way before it is tried again: an
undo that timed out may still have reached the app, and then nothing is left to undo.
An undo that fails is retried with backoff, then left ``failed`` with the reason, for
``toolbed rollback recover`` to try again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import tenacity
from jmespath.exceptions import JMESPathError

from toolbed.apis import Api
from toolbed.connectors import Observation, Runtime, bind_args, evaluate
from toolbed.errors import ArgumentError, ToolbedError

from ._journal import OPEN, Entry, Journal, Status

__all__ = ["UndoPolicy", "bind_undo", "read_before", "undo_entry"]

_ABSENT = (404, 410)
"""Answers to a DELETE undo that mean the object is already gone: nothing left to undo."""


@dataclass(frozen=True)
class UndoPolicy:
    """How hard rollback tries an undo before leaving it ``failed``."""

    attempts: int = 3
    initial_wait: float = 0.2
    max_wait: float = 2.0


class _Refused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def bind_undo(
    api: Api, args: dict[str, Any], before: Any = None, response: Any = None
) -> dict[str, Any]:
    """The undo call of ``api`` as ``{"api": id, "args": {...}}``; ArgumentError if unbound."""
    undo = api.undo
    assert undo is not None
    context = {"args": args, "before": before, "response": response}
    name, bind = undo.api, undo.bind
    for case in undo.instead:
        try:
            chosen = evaluate(case.when, context)
        except JMESPathError as exc:
            raise ArgumentError(f"undo condition {case.when!r} failed: {exc}") from None
        if chosen:
            name, bind = case.api, case.bind
            break
    return {"api": f"{api.app}.{name}", "args": bind_args(bind, context)}


def undo_entry(
    runtime: Runtime, journal: Journal, entry: Entry, policy: UndoPolicy | None = None
) -> Entry:
    """Undo one open journal entry through ``runtime``; return it as journalled after.
    The entry is read again first: an undo run just before may have carried a new id
    into it (``NewId``)."""
    policy = policy or UndoPolicy()
    entry = journal.get(entry.seq)
    api = runtime.catalog.api(entry.api)
    try:
        compensation = _compensation(runtime, api, entry)
    except ToolbedError as exc:
        journal.update(entry.seq, Status.FAILED, error=f"cannot bind the undo: {exc}")
        return journal.get(entry.seq)
    if compensation is None and entry.status is Status.FAILED:
        journal.update(
            entry.seq, Status.COMPENSATED,
            error="already undone: its lookup finds nothing left (an earlier undo that timed "
            "out reached the app after all)",
        )
        return journal.get(entry.seq)
    if compensation is None:
        journal.update(
            entry.seq, Status.NOOP,
            error="the write never took effect (its lookup found nothing to undo)",
        )
        return journal.get(entry.seq)
    journal.update(entry.seq, entry.status, compensation=compensation)
    redacted = _redacted_values(compensation["args"], runtime.redactor.markers)
    if redacted:
        journal.update(
            entry.seq, Status.FAILED,
            error=f"the undo would write back redacted values ({', '.join(redacted)}); "
            "restore them by hand, then mark the entry done with `toolbed rollback recover`",
        )
        return journal.get(entry.seq)

    tries = 0

    def attempt() -> Observation:
        nonlocal tries
        tries += 1
        try:
            obs = runtime.call(compensation["api"], compensation["args"])
        except ToolbedError as exc:
            raise _Refused(str(exc)) from None
        if obs.ok or (_method(runtime, compensation["api"]) == "DELETE" and obs.status in _ABSENT):
            return obs
        raise _Refused(f"{compensation['api']} answered {obs.status}: {_excerpt(obs.body)}")

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.attempts),
        wait=tenacity.wait_exponential(multiplier=policy.initial_wait, max=policy.max_wait),
        retry=tenacity.retry_if_exception_type(_Refused),
        reraise=True,
    )
    try:
        done = retrying(attempt)
    except _Refused as exc:
        if _back_as_before(runtime, api, entry):
            journal.update(
                entry.seq, Status.COMPENSATED, attempts=entry.attempts + tries,
                error=f"the undo was refused ({exc.message}), but its before read finds "
                "the object as it was before the write: an earlier undo, cut off before "
                "it was journalled, had landed",
            )
            return journal.get(entry.seq)
        journal.update(
            entry.seq, Status.FAILED, attempts=entry.attempts + tries,
            error=f"undo failed after {tries} attempt(s): {exc.message}",
        )
    else:
        journal.update(entry.seq, Status.COMPENSATED, attempts=entry.attempts + tries, error=None)
        if api.undo is not None and api.undo.new_id is not None:
            _carry_new_id(journal, entry, api.undo.new_id.arg,
                          evaluate(api.undo.new_id.value, {"response": done.bindable()}))
    return journal.get(entry.seq)


def _carry_new_id(journal: Journal, entry: Entry, arg: str, new: Any) -> None:
    """The undo of ``entry`` re-created its object as ``new``: older open entries of the
    same run and app that name the old id in ``arg`` now name ``new`` (in their bound
    undo and in their arguments, which a later rebind reads), so they reach it."""
    old = entry.args.get(arg)
    if old is None or new is None or new == old:
        return
    for other in journal.entries(run_id=entry.run_id, statuses=OPEN):
        if other.seq >= entry.seq or other.app != entry.app:
            continue
        fields: dict[str, Any] = {}
        if other.args.get(arg) == old:
            fields["args"] = {**other.args, arg: new}
        if other.compensation is not None and other.compensation["args"].get(arg) == old:
            fields["compensation"] = {**other.compensation,
                                      "args": {**other.compensation["args"], arg: new}}
        if fields:
            journal.update(other.seq, other.status, **fields)


def _compensation(runtime: Runtime, api: Api, entry: Entry) -> dict[str, Any] | None:
    undo = api.undo
    if undo is None:
        raise ArgumentError(f"{api.id} has no undo in the catalog")
    if entry.status in (Status.PENDING, Status.FAILED) and undo.lookup is not None:
        # a pending write's answer was lost; a failed undo may have timed out on our side
        # and still landed: either way, ask the app what is there now
        lookup = undo.lookup
        context = {"args": entry.args, "before": entry.before}
        obs = runtime.call(f"{api.app}.{lookup.api}", bind_args(lookup.bind, context))
        stand_in = evaluate(lookup.response, {**context, "lookup": obs.bindable()})
        if stand_in is None:
            return None
        if entry.status is Status.FAILED and entry.compensation is not None:
            return entry.compensation
        return bind_undo(api, entry.args, entry.before, stand_in)
    if entry.compensation is not None:
        return entry.compensation
    if entry.status is Status.PENDING:
        raise ArgumentError(
            f"{api.id} was sent but its answer was never recorded, and its undo needs that "
            f"answer while the catalog declares no undo.lookup; check {api.app} by hand for "
            f"what it created from {json.dumps(entry.args)[:200]}"
        )
    return bind_undo(api, entry.args, entry.before, entry.response)


def _back_as_before(runtime: Runtime, api: Api, entry: Entry) -> bool:
    """Whether the write's ``before`` read now answers exactly as it did before the write.

    A run killed while its undo was in flight leaves the entry ``applied``; the undo
    sent again is then refused (a stale If-Match gets 412). If the object already reads
    as it did before the write, the undo did its job and nothing is left to undo.
    """
    if entry.before is None:
        return False
    try:
        now = read_before(runtime, api, entry.args)
    except ToolbedError:
        return False
    return now is not None and now["status"] in range(200, 300) and (
        now["status"], now["body"]) == (entry.before.get("status"), entry.before.get("body"))


def read_before(runtime: Runtime, api: Api, args: dict[str, Any]) -> dict[str, Any] | None:
    """The observation of the write's ``undo.before`` read (None if it declares none)."""
    read = api.undo.before if api.undo else None
    if read is None:
        return None
    return runtime.call(f"{api.app}.{read.api}", bind_args(read.bind, {"args": args})).bindable()


def _method(runtime: Runtime, api_id: str) -> str:
    return runtime.catalog.api(api_id).http.method


def _redacted_values(args: Any, markers: frozenset[str], path: str = "") -> list[str]:
    """Paths of values that redaction changed (sending them back would corrupt the app)."""
    if isinstance(args, dict):
        return [
            p for k, v in args.items()
            for p in _redacted_values(v, markers, f"{path}.{k}".lstrip("."))
        ]
    if isinstance(args, list):
        return [p for i, v in enumerate(args) for p in _redacted_values(v, markers, f"{path}[{i}]")]
    if isinstance(args, str) and any(marker in args for marker in markers):
        return [path or "(value)"]
    return []


def _excerpt(body: Any, limit: int = 200) -> str:
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."
