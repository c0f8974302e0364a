"""Drift: has the app changed under a cassette?

A recording is only as good as the service it was made from. Given one recorded
exchange and the same request answered again now, ``compare`` says what changed,
structurally: the status (gone, auth), the content type, the headers toolbed reads
(``DRIFT_HEADERS``: an ETag, a Location), and for JSON the shape of the body (its
keys, types, arrays and objects, and nullability), values aside. The values count
only as "values changed", since live data moves (that is what real-time
answers are for); whether a task's answer moved is the task's own verdict.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from toolbed.apis import Catalog

from ._cassette import canonical_origin
from ._observation import KEPT_HEADERS

__all__ = ["Change", "Drift", "api_of", "body_shape", "compare", "exchange_key",
           "request_pattern"]


class Change(IntEnum):
    """How much an answer changed, least to most (a group takes its worst)."""

    UNCHANGED = 0
    VALUES = 1
    """Same status, type and shape; some values differ."""
    SHAPE = 2
    """A key, a type, an array or object, or nullability differs; or the status."""
    AUTH = 3
    """The app now asks for credentials it did not (401, 403)."""
    GONE = 4
    """404 or 410 where there was an answer, or no answer at all (DNS, refused)."""

    @property
    def label(self) -> str:
        return {0: "unchanged", 1: "values changed", 2: "shape changed",
                3: "auth changed", 4: "gone"}[self.value]


@dataclass(frozen=True)
class Drift:
    """One request's verdict, with the first difference found."""

    change: Change
    detail: str = ""


DRIFT_HEADERS = tuple(h for h in KEPT_HEADERS if h not in ("content-type", "retry-after"))
"""Response headers whose loss breaks a reader: those an observation keeps for bindings
(an ETag an update or undo sends back, a Location), less the content type, compared on
its own, and Retry-After, which only a throttled answer carries."""


def exchange_key(request: dict[str, Any]) -> tuple[str, str, str]:
    """What pairs a recorded request with its fresh twin: method, URI (canonical, so
    ports do not matter) and body (JSON compared parsed)."""
    body = request.get("body") or ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    with contextlib.suppress(ValueError):
        body = json.dumps(json.loads(body), sort_keys=True)
    return str(request.get("method")), str(request.get("uri")), body


def request_pattern(request: dict[str, Any]) -> tuple[str, str]:
    """What pairs a recorded request with its fresh twin when ids differ: method and
    URI with each path segment or query value that is an id (``_ID_KEY``: a number, a
    UUID, a Matrix id, a long token) taken as any id. Two reads of one API that differ
    only in such ids are the same question asked of another start of the app."""
    parts = urlsplit(str(request.get("uri")))
    path = "/".join("{id}" if _ID_KEY.match(unquote(seg)) else seg
                    for seg in parts.path.split("/"))
    query = "&".join(f"{k}={'{id}' if _ID_KEY.match(v) else v}"
                     for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return str(request.get("method")), f"{path}?{query}"


def compare(recorded: dict[str, Any] | None, fresh: dict[str, Any] | None) -> Drift:
    """The verdict on one request: its recorded response against the fresh one (None:
    no answer came)."""
    if recorded is None:
        return Drift(Change.UNCHANGED, "not recorded before")
    if fresh is None:
        return Drift(Change.GONE, "no answer now")
    before, after = _status(recorded), _status(fresh)
    if before != after:
        if after in (404, 410) and before not in (404, 410):
            return Drift(Change.GONE, f"status {before} is now {after}")
        if after in (401, 403) and before not in (401, 403):
            return Drift(Change.AUTH, f"status {before} is now {after}")
        return Drift(Change.SHAPE, f"status {before} is now {after}")
    kinds = _content_type(recorded), _content_type(fresh)
    if kinds[0] != kinds[1]:
        return Drift(Change.SHAPE, f"content type {kinds[0]} is now {kinds[1]}")
    gone = [h for h in DRIFT_HEADERS if _header(recorded, h) and not _header(fresh, h)]
    if gone:
        return Drift(Change.SHAPE, f"header {gone[0]} is gone")
    old, new = _body(recorded), _body(fresh)
    if kinds[0].endswith("json") or kinds[0].endswith("+json"):
        try:
            old_json, new_json = json.loads(old), json.loads(new)
        except ValueError:
            pass
        else:
            change, text = _shape_difference(body_shape(old_json), body_shape(new_json), "$")
            if change is Change.SHAPE:
                return Drift(change, text)
            if old_json == new_json:
                return Drift(Change.UNCHANGED)
            return Drift(Change.VALUES, text or "same shape, other values")
    return Drift(Change.UNCHANGED) if old == new else Drift(Change.VALUES, "other text")


def body_shape(value: Any) -> Any:
    """The shape of a JSON value: its type, an object's keys with their shapes, and an
    array's items merged into one shape (``None`` for an empty array: any items); a
    key that only some of an array's objects have is listed as optional. An object
    keyed by ids is taken as an array of its values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    items: Any = value.values() if isinstance(value, dict) else value
    if isinstance(value, dict) and not (value and all(_ID_KEY.match(k) for k in value)):
        return {"object": {key: body_shape(item) for key, item in value.items()},
                "optional": []}
    shape: Any = None
    for item in items:              # an array, or an object keyed by ids: a map of them
        shape = _merge(shape, body_shape(item))
    return {"array": shape}


_ID_KEY = re.compile(
    r"^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[!@$#+][^ ]+:\S+|"
    r"[!@$#+]?[A-Za-z0-9_-]*\d[A-Za-z0-9_-]{15,})$")
"""Keys that are ids (numbers, UUIDs, Matrix ids, long tokens with digits): an object
keyed by them is a collection whose ids each app start makes anew, so its shape is the
shape of its values, as an array's is of its items."""


def _merge(a: Any, b: Any) -> Any:
    """One shape for two items of an array: objects merge key by key (a key one of them
    lacks becomes optional), anything else that differs becomes a set of options."""
    if a is None or a == b:
        return b
    if b is None:                   # an empty array's items: any, so the other's shape
        return a
    if _is(a, "object") and _is(b, "object"):
        left, right = a["object"], b["object"]
        keys = sorted(set(left) | set(right))
        return {"object": {k: _merge(left[k], right[k]) if k in left and k in right
                           else left.get(k, right.get(k)) for k in keys},
                "optional": sorted({*a["optional"], *b["optional"],
                                    *(set(left) ^ set(right))})}
    if _is(a, "array") and _is(b, "array"):
        return {"array": _merge(a["array"], b["array"])}
    options = {json.dumps(o, sort_keys=True) for o in (*_options(a), *_options(b))}
    return {"anyOf": [json.loads(o) for o in sorted(options)]}


def _is(shape: Any, kind: str) -> bool:
    return isinstance(shape, dict) and kind in shape


def _options(shape: Any) -> list[Any]:
    return shape["anyOf"] if _is(shape, "anyOf") else [shape]


def _shape_difference(old: Any, new: Any, where: str) -> tuple[Change, str]:
    """The first place where the fresh shape breaks the recorded one (a key every item
    had is gone, a type not seen before), as SHAPE; else a key that is new, as VALUES
    (an addition breaks no reader); else UNCHANGED. Fewer options than recorded (an
    optional key absent, a field never null this time) depend on the data: no change."""
    if old == new or old is None or new is None:
        return Change.UNCHANGED, ""
    if _is(old, "object") and _is(new, "object"):
        before, after = old["object"], new["object"]
        added = ""
        for key in sorted(set(before) | set(after)):
            if key not in after:
                if key not in old["optional"]:
                    return Change.SHAPE, f"{where}.{key} is gone"
                continue
            if key not in before:
                added = added or f"{where}.{key} is new"
                continue
            change, text = _shape_difference(before[key], after[key], f"{where}.{key}")
            if change is Change.SHAPE:
                return change, text
            added = added or text
        return (Change.VALUES, added) if added else (Change.UNCHANGED, "")
    if _is(old, "array") and _is(new, "array"):
        return _shape_difference(old["array"], new["array"], f"{where}[]")
    kinds = {_kind(o): o for o in _options(old)}
    added = ""
    for option in _options(new):
        match = kinds.get(_kind(option))
        if match is None:                               # a kind never seen here before
            return Change.SHAPE, f"{where}: {_name(old)} is now {_name(new)}"
        if isinstance(option, dict):                     # an object or array: inside it
            change, text = _shape_difference(match, option, where)
            if change is Change.SHAPE:
                return change, text
            added = added or text
    return (Change.VALUES, added) if added else (Change.UNCHANGED, "")


def _kind(shape: Any) -> str:
    return shape if isinstance(shape, str) else next(iter(shape))


def _name(shape: Any) -> str:
    if isinstance(shape, str):
        return shape
    if _is(shape, "anyOf"):
        return " or ".join(_name(s) for s in shape["anyOf"])
    return "object" if _is(shape, "object") else "array"


def _status(response: dict[str, Any]) -> int:
    return int((response.get("status") or {}).get("code") or 0)


def _header(response: dict[str, Any], name: str) -> str:
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    value = headers.get(name) or [""]
    return str(value[0] if isinstance(value, list) else value)


def _content_type(response: dict[str, Any]) -> str:
    return _header(response, "content-type").split(";")[0].strip().lower()


def _body(response: dict[str, Any]) -> str:
    body = (response.get("body") or {}).get("string") or ""
    return body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)


def api_of(catalog: Catalog, method: str, uri: str) -> str | None:
    """The catalog API a recorded request called (the first whose method and path
    template match), or None."""
    for app in catalog.apps.values():
        base = (canonical_origin(app.app) if app.local else app.base_url or "").rstrip("/")
        if not base or not uri.startswith(base):
            continue
        path = urlsplit(uri[len(base):]).path or "/"
        for api in app.apis:
            if api.http.method == method.upper() and _template(api.http.path).fullmatch(path):
                return api.id
    return None


def _template(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))
