"""A provider's OpenAPI document, read into the few facts toolbed compares and imports.

Two users: `toolbed apis import` turns a spec into catalog YAML, and the conformance
check holds catalog entries to their provider's published spec. Both need the same
things of an operation (method, path, each parameter's name, place and required-ness,
the body's media type and fields, the security schemes), with ``$ref`` resolved, so
they are read here once. Swagger 2 documents are read as well: their ``host`` and
``basePath`` become a server, ``in: body``/``formData`` parameters a request body and
``securityDefinitions`` the security schemes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolbed.errors import SpecError

__all__ = ["OpenApiSpec", "Operation", "Parameter", "load_openapi", "template_key"]

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_PLACEHOLDER = re.compile(r"\{[^}/]+\}")


@dataclass(frozen=True)
class Parameter:
    """A path, query, header or cookie parameter, or a field of a JSON/form body."""

    name: str
    location: str
    required: bool = False
    schema: dict[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str = ""
    summary: str = ""
    description: str = ""
    docs: str = ""
    parameters: list[Parameter] = field(default_factory=list)
    media_type: str | None = None
    """The request body's media type (the JSON one when several are offered)."""
    body_schema: dict[str, Any] | None = None
    body_required: bool = False
    security: list[str] | None = None
    """The names of the schemes that may authorise it (None: the document's default)."""

    @property
    def body_fields(self) -> list[Parameter]:
        """The top-level fields of an object body, as ``in: body`` parameters."""
        schema = self.body_schema or {}
        required = set(schema.get("required") or [])
        return [Parameter(name, "body", name in required, sub if isinstance(sub, dict) else {},
                          str((sub or {}).get("description", "")))
                for name, sub in (schema.get("properties") or {}).items()]

    def parameter(self, name: str, location: str) -> Parameter | None:
        pool = self.body_fields if location == "body" else self.parameters
        for param in pool:
            if param.location == location and (
                    param.name == name or location == "header"
                    and param.name.lower() == name.lower()):
                return param
        return None


@dataclass(frozen=True)
class OpenApiSpec:
    """The operations of one document, its servers and security schemes."""

    title: str
    version: str
    servers: list[str]
    operations: list[Operation]
    security_schemes: dict[str, dict[str, Any]]
    security: list[str]
    """The schemes of the document-wide security requirement, in order."""
    docs: str = ""

    def operation(self, method: str, path: str) -> Operation | None:
        """The operation at ``path`` (placeholders of any name) with ``method``."""
        key = (method.lower(), template_key(path))
        for op in self.operations:
            if (op.method, template_key(op.path)) == key:
                return op
        return None


def template_key(path: str) -> str:
    """A path template with its placeholders' names dropped: ``/a/{}/b``."""
    return _PLACEHOLDER.sub("{}", path.rstrip("/") or "/")


def load_openapi(path: str | Path) -> OpenApiSpec:
    """Read an OpenAPI 3.x or Swagger 2 document (JSON or YAML)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot read the spec ({exc.strerror or exc})") from None
    try:
        doc = json.loads(text) if text.lstrip().startswith("{") else yaml.load(
            text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SpecError(f"{path}: not JSON or YAML ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise SpecError(f"{path}: not an OpenAPI document (no 'paths' object)")
    if str(doc.get("swagger", "")).startswith("2"):
        return _Reader(doc, path).swagger2()
    if not str(doc.get("openapi", "")).startswith("3"):
        raise SpecError(f"{path}: 'openapi: 3.x' or 'swagger: \"2.0\"' expected at the top")
    return _Reader(doc, path).openapi3()


class _Reader:
    def __init__(self, doc: dict[str, Any], path: Path):
        self.doc, self.path = doc, path

    def resolve(self, node: Any, seen: tuple[str, ...] = ()) -> Any:
        """``node`` with every local ``$ref`` replaced by what it points at; a reference
        inside itself (a tree of comments) becomes an empty schema at the second visit."""
        if isinstance(node, list):
            return [self.resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return {}
            return self.resolve(self._pointer(ref), (*seen, ref))
        return {key: self.resolve(value, seen) for key, value in node.items()}

    def _item(self, item: Any) -> dict[str, Any]:
        """A path item with its parameters resolved (responses are never read)."""
        item = self._pointer(item["$ref"]) if isinstance(item, dict) and "$ref" in item else item
        if not isinstance(item, dict):
            return {}
        out = {key: value for key, value in item.items() if key != "parameters"}
        out["parameters"] = self.resolve(item.get("parameters") or [])
        for method in _METHODS:
            if isinstance(item.get(method), dict):
                out[method] = {**item[method],
                               "parameters": self.resolve(item[method].get("parameters") or [])}
        return out

    def _pointer(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise SpecError(f"{self.path}: only local references are read, not {ref!r}; "
                            "bundle the spec first (e.g. `redocly bundle`)")
        node: Any = self.doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise SpecError(f"{self.path}: reference {ref!r} points at nothing")
            node = node[part]
        return node

    def _info(self) -> tuple[str, str, str]:
        info = self.doc.get("info") or {}
        docs = (self.doc.get("externalDocs") or {}).get("url", "")
        return str(info.get("title", "")), str(info.get("version", "")), str(docs)

    def openapi3(self) -> OpenApiSpec:
        servers = []
        for server in self.doc.get("servers") or []:
            url = str(server.get("url", ""))
            for name, var in (server.get("variables") or {}).items():
                url = url.replace("{" + name + "}", str(var.get("default", "")))
            servers.append(url)
        schemes = self.resolve((self.doc.get("components") or {}).get("securitySchemes") or {})
        ops = []
        for path, method, op, shared in self._operations():
            media, body, body_required = None, None, False
            request = self.resolve(op.get("requestBody"))
            if isinstance(request, dict):
                content = request.get("content") or {}
                media = _pick_media(list(content))
                if media:
                    body = (content[media] or {}).get("schema") or {}
                body_required = bool(request.get("required"))
            ops.append(self._operation(method, path, op, shared, media, body, body_required))
        return self._spec(servers, ops, schemes)

    def swagger2(self) -> OpenApiSpec:
        schemes_ = self.doc.get("schemes") or ["https"]
        host = self.doc.get("host", "")
        servers = [f"{schemes_[0]}://{host}{self.doc.get('basePath', '')}".rstrip("/")] \
            if host else []
        schemes = {}
        for name, scheme in (self.doc.get("securityDefinitions") or {}).items():
            kind = scheme.get("type")
            if kind == "basic":
                schemes[name] = {"type": "http", "scheme": "basic"}
            else:
                schemes[name] = dict(scheme)
        ops = []
        consumes = self.doc.get("consumes") or ["application/json"]
        for path, method, op, shared in self._operations():
            params = _merged(shared, op.get("parameters") or [])
            body_params = [p for p in params if p.get("in") == "body"]
            form_params = [p for p in params if p.get("in") == "formData"]
            media, body, body_required = None, None, False
            if body_params:
                media = _pick_media(op.get("consumes") or consumes) or "application/json"
                body = body_params[0].get("schema") or {}
                body_required = bool(body_params[0].get("required"))
            elif form_params:
                media = "application/x-www-form-urlencoded"
                body = {"type": "object",
                        "properties": {p["name"]: _swagger_schema(p) for p in form_params},
                        "required": [p["name"] for p in form_params if p.get("required")]}
                body_required = bool(body["required"])
            rest = [p for p in params if p.get("in") not in ("body", "formData")]
            ops.append(self._operation(
                method, path, {**op, "parameters": [
                    {**p, "schema": _swagger_schema(p)} for p in rest]},
                [], media, body, body_required))
        return self._spec(servers, ops, schemes)

    def _operations(self) -> Iterator[tuple[str, str, dict[str, Any], list[Any]]]:
        """Each operation: its path, method, object and its path item's parameters."""
        for path, item in self.doc["paths"].items():
            item = self._item(item)
            shared = item.get("parameters") or []
            for method in _METHODS:
                if isinstance(item.get(method), dict):
                    yield path, method, item[method], shared

    def _spec(self, servers: list[str], ops: list[Operation],
              schemes: dict[str, dict[str, Any]]) -> OpenApiSpec:
        title, version, docs = self._info()
        return OpenApiSpec(title, version, servers, ops, schemes,
                           _requirement(self.doc.get("security")), docs)

    def _operation(self, method: str, path: str, op: dict[str, Any], shared: list[Any],
                   media: str | None, body: dict[str, Any] | None,
                   body_required: bool) -> Operation:
        params = []
        for raw in _merged(shared, op.get("parameters") or []):
            schema = raw.get("schema") or {}
            if not schema and isinstance(raw.get("content"), dict):
                # a parameter serialised as JSON: its schema sits under its media type
                first: dict[str, Any] = next(iter(raw["content"].values()), {}) or {}
                schema = first.get("schema") or {}
            location = str(raw.get("in", ""))
            params.append(Parameter(str(raw.get("name", "")), location,
                                    bool(raw.get("required")) or location == "path",
                                    schema, str(raw.get("description", ""))))
        security = op.get("security")
        return Operation(
            method, path, str(op.get("operationId", "")), str(op.get("summary", "")),
            str(op.get("description", "")), str((op.get("externalDocs") or {}).get("url", "")),
            params, media, body, body_required,
            None if security is None else _requirement(security))


def _merged(shared: list[Any], own: list[Any]) -> list[dict[str, Any]]:
    """Path-level parameters overridden by the operation's own (same name and place)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for param in [*shared, *own]:
        if isinstance(param, dict) and "name" in param:
            out[(param["name"], param.get("in", ""))] = param
    return list(out.values())


def _pick_media(types: list[str]) -> str | None:
    """The media type toolbed would send: JSON first, then a form, then the first."""
    for wanted in ("application/json", "application/x-www-form-urlencoded"):
        for media in types:
            if media.split(";")[0].strip() == wanted:
                return media
    for media in types:
        if media.endswith("+json"):
            return media
    return types[0] if types else None


def _swagger_schema(param: dict[str, Any]) -> dict[str, Any]:
    keys = ("type", "format", "items", "enum", "default", "minimum", "maximum",
            "minLength", "maxLength", "pattern")
    schema = {k: param[k] for k in keys if k in param}
    if schema.get("type") == "file":
        schema["type"] = "string"
    return schema


def _requirement(security: Any) -> list[str]:
    names: list[str] = []
    for requirement in security or []:
        if isinstance(requirement, dict):
            names += [n for n in requirement if n not in names]
    return names
