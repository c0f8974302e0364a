"""Turn an Api and the agent's arguments into an ``httpx.Request``, or refuse.

Two guarantees live here. Arguments that break the API's JSON Schema, or that no
request can carry, never become a request: a refusal is an ``ArgumentError`` that
names the argument, whatever the value (a lone surrogate, NaN, a header value that is
not printable ASCII, a URL too long to send), never another exception. And no argument
can move a request elsewhere: every path value is one percent-encoded segment, values
that are dot segments or carry a ``/`` are refused (or, for an app that reads names
tilde-encoded, every byte but letters, digits, ``_`` and ``-`` is escaped), a header
that carries a path (WebDAV's ``Destination``) gets the same rules and the same
encoding per segment, and the built URL is checked to keep the base URL's scheme,
host, port and path.
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode
from xml.sax.saxutils import escape

import httpx
import jsonschema

from toolbed.apis import Api
from toolbed.errors import ArgumentError, UnsafeArgumentError

__all__ = ["build_request", "validate_args"]

MAX_DEPTH = 64
"""Deepest nesting of an argument value; deeper is refused before any parsing recurses."""

_PATH_HEADERS = frozenset({"destination"})
"""Headers whose value is a path on the app (WebDAV COPY/MOVE)."""


def validate_args(api: Api, args: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``args`` against the API's JSON Schema; return them with schema defaults filled."""
    if not isinstance(args, Mapping):
        raise ArgumentError(
            f"{api.id}: arguments must be a JSON object, got {type(args).__name__}",
            [{"path": "", "message": "not an object"}],
        )
    _sendable(api, args)
    validator = jsonschema.Draft202012Validator(api.parameters)
    problems = sorted(validator.iter_errors(dict(args)), key=lambda e: list(e.absolute_path))
    if problems:
        errors = [_explain(e) for e in problems]
        lines = "; ".join(
            f"{e['path']}: {e['message']}" if e["path"] else e["message"] for e in errors
        )
        raise ArgumentError(f"{api.id}: invalid arguments: {lines}", errors)
    filled = dict(args)
    for name, arg in api.args.items():
        if name not in filled and "default" in arg.schema_:
            filled[name] = arg.schema_["default"]
    return filled


def _sendable(api: Api, args: Mapping[str, Any]) -> None:
    """Refuse values that JSON, a URL or a header cannot carry, naming the argument.

    Walked without recursion, so that a value nested thousands deep is refused here
    rather than crashing the schema check or the JSON encoder."""
    stack: list[tuple[str, Any, int]] = [(str(k), v, 1) for k, v in args.items()]
    while stack:
        where, value, depth = stack.pop()
        problem = None
        if depth > MAX_DEPTH:
            problem = f"is nested deeper than {MAX_DEPTH} levels"
        elif isinstance(value, float) and not math.isfinite(value):
            problem = f"is {value}, not a finite number (JSON has no NaN or Infinity)"
        elif isinstance(value, int) and not isinstance(value, bool) and \
                value.bit_length() > 1000:
            problem = "is an integer too large to send (over 300 digits)"
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                problem = (f"is not valid Unicode (a lone surrogate at character "
                           f"{exc.start}); send whole characters")
        elif isinstance(value, Mapping):
            stack += [(f"{where}.{k}", v, depth + 1) for k, v in value.items()]
        elif isinstance(value, list | tuple):
            stack += [(f"{where}[{i}]", v, depth + 1) for i, v in enumerate(value)]
        if problem:
            raise ArgumentError(f"{api.id}: argument {where} {problem}",
                                [{"path": where, "message": problem}])


def _explain(error: jsonschema.ValidationError) -> dict[str, str]:
    path = ".".join(str(p) for p in error.absolute_path)
    message = error.message
    if error.validator == "additionalProperties":
        message = f"{message}; allowed arguments are listed by `toolbed apis show`"
    return {"path": path, "message": message}


def build_request(
    api: Api,
    args: Mapping[str, Any],
    base_url: str,
    *,
    auth_headers: Mapping[str, str] | None = None,
    auth_params: Mapping[str, str] | None = None,
) -> httpx.Request:
    """Validate ``args`` and build the request for ``api`` against ``base_url``."""
    values = validate_args(api, args)
    base = httpx.URL(base_url)
    path = api.http.path
    for name in api.http.placeholders:
        path = path.replace("{" + name + "}", _segment(api, name, values[name]))
    try:
        url = base.copy_with(raw_path=(base.raw_path.decode().rstrip("/") + path).encode())
    except httpx.InvalidURL as exc:
        raise ArgumentError(f"{api.id}: the path is too long to send ({exc}); send shorter "
                            "values", [{"path": "", "message": str(exc)}]) from None

    params: list[tuple[str, str | int | float | bool | None]] = []
    headers: dict[str, str] = dict(api.http.headers)
    body_values: dict[str, Any] = {}
    for name, arg in api.args.items():
        if name not in values or values[name] is None:
            continue
        value = values[name]
        key = arg.field or name
        if arg.location == "query":
            if isinstance(value, dict):
                # an object spreads into one parameter per key (OpenAPI's form/explode)
                params.extend((k, _scalar(v)) for k, v in value.items())
            else:
                items = value if isinstance(value, list) else [value]
                params.extend((key, _scalar(v)) for v in items)
        elif arg.location == "header":
            headers[key] = _header(api, name, key, value)
        elif arg.location == "body":
            body_values[name] = value
    params.extend((auth_params or {}).items())
    headers.update(auth_headers or {})
    if params:
        try:
            url = url.copy_merge_params(params)
        except httpx.InvalidURL as exc:
            raise ArgumentError(f"{api.id}: the query is too long to send ({exc}); send "
                                "shorter values", [{"path": "", "message": str(exc)}]) from None

    content: bytes | None = None
    if body_values or (api.http.body and api.http.body.template is not None):
        content, media_type = _body(api, body_values)
        headers.setdefault("Content-Type", media_type)

    request = httpx.Request(api.http.method, url, headers=headers, content=content)
    _check_origin(api, base, request.url)
    return request


_TILDE_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _tilde_encode(text: str) -> str:
    """Datasette's escaping of a name in a URL path: letters, digits, '_' and '-' as
    they are, a space as '+', every other byte of the UTF-8 as ~XX (家 -> ~E5~AE~B6,
    '.' -> ~2E, so a table's name never runs into a .json suffix)."""
    return "".join(chr(b) if b in _TILDE_SAFE else "+" if b == 0x20 else f"~{b:02X}"
                   for b in text.encode())


def _segment(api: Api, name: str, value: Any) -> str:
    text = _scalar(value)
    if api.args[name].encoding == "tilde" and text:
        return _tilde_encode(text)          # '/', '.' and '..' are escaped too
    if text in ("", ".", "..") or "/" in text or "\\" in text:
        raise UnsafeArgumentError(
            f"{api.id}: path argument {name!r} = {text!r} is not a single path segment; "
            "a path value may not be empty, '.', '..' or contain '/' or '\\'",
            [{"path": name, "message": "not a single path segment"}],
        )
    return quote(text, safe="")


def _header(api: Api, name: str, field: str, value: Any) -> str:
    """A header value: printable ASCII only (HTTP carries nothing else safely, and CR or
    LF would start another header). A path-carrying header gets the path rules, and is
    sent percent-encoded segment by segment like a path argument (it is a URI: RFC 4918
    section 10.3), so a file named 装修预算.csv can be a destination."""
    text = _scalar(value)
    path = field.lower() in _PATH_HEADERS
    bad = next((c for c in text if not (" " <= c <= "~" or c == "\t" or path and c > "\x9f")),
               None)
    problem = None
    if bad is not None:
        problem = (f"holds {bad!r}; a header value must be printable ASCII (write "
                   "typographic quotes and other characters as ASCII)")
    elif path:
        segments = text.split("/")
        if not text.startswith("/") or "\\" in text or any(
                s in (".", "..") for s in segments):
            problem = ("is not a plain path: it must start with '/' and may hold no '.' or "
                       "'..' segment and no '\\'")
        else:
            text = "/".join(quote(s, safe="") for s in segments)
    if problem:
        raise UnsafeArgumentError(f"{api.id}: header argument {name!r} = {text[:80]!r} "
                                  f"{problem}", [{"path": name, "message": problem}])
    return text


def _check_origin(api: Api, base: httpx.URL, url: httpx.URL) -> None:
    prefix = base.raw_path.decode().rstrip("/") + "/"
    if (
        (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port)
        or not url.raw_path.decode().startswith(prefix)
        or "/../" in url.raw_path.decode() + "/"
    ):
        raise UnsafeArgumentError(
            f"{api.id}: the arguments would send the request to {url}, outside {base}; refused"
        )


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=False)
    return str(value)


def _body(api: Api, values: dict[str, Any]) -> tuple[bytes, str]:
    spec = api.http.body
    encoding = spec.encoding if spec else "json"
    media_type = spec.media_type if spec else "application/json"
    if encoding in ("json", "form"):
        document: Any = {}
        for name, value in values.items():
            field = api.args[name].field or name
            if field == ".":
                document = value
                continue
            target = document
            *parents, leaf = field.split(".")
            for part in parents:
                target = target.setdefault(part, {})
            target[leaf] = value
        if encoding == "json":
            return (json.dumps(document, ensure_ascii=False, allow_nan=False).encode(),
                    media_type)
        return urlencode({k: _scalar(v) for k, v in document.items()}).encode(), media_type
    assert spec is not None
    if spec.template is None:
        (value,) = values.values()
        return _scalar(value).encode(), media_type
    fill = {name: "" for name in spec.template_names}
    for name, value in values.items():
        text = _scalar(value)
        fill[name] = escape(text, {'"': "&quot;"}) if encoding == "xml" else text
    return string.Template(spec.template).substitute(fill).encode(), media_type
