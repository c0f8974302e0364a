"""Turn an Api and the agent's arguments into an ``httpx.Request``, or refuse.

Two guarantees live here. Arguments that break the API's JSON Schema never become a
request. And no argument can move a request elsewhere: every path value is one
percent-encoded segment, values that are dot segments or carry a ``/`` are refused,
and the built URL is checked to keep the base URL's scheme, host, port and path.
"""

from __future__ import annotations

import json
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


def validate_args(api: Api, args: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``args`` against the API's JSON Schema; return them with schema defaults filled."""
    if not isinstance(args, Mapping):
        raise ArgumentError(
            f"{api.id}: arguments must be a JSON object, got {type(args).__name__}",
            [{"path": "", "message": "not an object"}],
        )
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
    url = base.copy_with(raw_path=(base.raw_path.decode().rstrip("/") + path).encode())

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
            headers[key] = _scalar(value)
        elif arg.location == "body":
            body_values[name] = value
    params.extend((auth_params or {}).items())
    headers.update(auth_headers or {})
    if params:
        url = url.copy_merge_params(params)

    content: bytes | None = None
    if body_values or (api.http.body and api.http.body.template is not None):
        content, media_type = _body(api, body_values)
        headers.setdefault("Content-Type", media_type)

    request = httpx.Request(api.http.method, url, headers=headers, content=content)
    _check_origin(api, base, request.url)
    return request


def _segment(api: Api, name: str, value: Any) -> str:
    text = _scalar(value)
    if text in ("", ".", "..") or "/" in text or "\\" in text:
        raise UnsafeArgumentError(
            f"{api.id}: path argument {name!r} = {text!r} is not a single path segment; "
            "a path value may not be empty, '.', '..' or contain '/' or '\\'",
            [{"path": name, "message": "not a single path segment"}],
        )
    return quote(text, safe="")


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
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
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
            return json.dumps(document, ensure_ascii=False).encode(), media_type
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
