"""`toolbed apis import`: an OpenAPI document becomes a catalog file a person can edit.

This is how a user adds their own API. Each operation becomes an API: its name from
the operationId, its description from the summary, every path, query and header
parameter and every top-level field of a JSON or form body an argument with its place
and a schema cut down to the keywords the catalog accepts, auth from the security
schemes, one example (the required arguments and the request they must make) so that
`toolbed apis check` proves each entry builds the request the spec describes. A write
is marked ``irreversible`` until someone writes its undo: importing cannot know which
call reverses another, and a wrong undo is worse than none. Operations toolbed cannot
call (a multipart upload, a binary body) are left out and
listed at the top of the file.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, urlencode

import jsonschema
import yaml

from toolbed.errors import SpecError

from ._openapi import OpenApiSpec, Operation
from ._schema import _KEYWORDS, _PAIRS

__all__ = ["IMPORTED_WRITE", "import_openapi", "to_yaml"]

IMPORTED_WRITE = ("imported from an OpenAPI spec: write its undo (apis/README.md, 'Undo'), "
                  "then delete this line")
_READS = {"get", "head", "options"}


def import_openapi(spec: OpenApiSpec, app: str, *, name: str | None = None,
                   domain: str = "imported", base_url: str | None = None,
                   docs: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """The catalog data for ``spec`` as app ``app``, and the operations left out (why)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", app):
        raise SpecError(f"app id {app!r} must be snake_case (a-z, 0-9, _), e.g. my_notes")
    base = (base_url or next((s for s in spec.servers if s.startswith("https://")), "")
            ).rstrip("/")
    if not base.startswith("https://"):
        raise SpecError(f"the spec names no https:// server ({', '.join(spec.servers) or 'none'})"
                        "; give the API's base URL with --base-url https://...")
    link = docs or spec.docs or base
    auth, credential = _auth(spec, app)
    apis: list[dict[str, Any]] = []
    skipped: list[str] = []
    names: set[str] = set()
    for op in spec.operations:
        try:
            entry = _api(op, credential, base, link)
        except _Skip as why:
            skipped.append(f"{op.method.upper()} {op.path}: {why}")
            continue
        entry["name"] = _unique(entry["name"], names)
        apis.append(entry)
    if not apis:
        raise SpecError("no operation of the spec can be called by toolbed: "
                        + "; ".join(skipped[:5]))
    data = {"app": app, "name": name or spec.title or app, "domain": domain,
            "tier": "hosted", "base_url": base, "docs": link,
            "description": _sentence(spec.title or app, 300), "auth": auth, "apis": apis}
    return data, skipped


def to_yaml(data: dict[str, Any], skipped: list[str], source: str) -> str:
    """The catalog file's text, with where it came from and what was left out on top."""
    head = [f"# Imported by `toolbed apis import` from {source}.",
            "# Check each description, write the undo of each write, then `toolbed apis check`."]
    head += [f"# left out: {line}" for line in skipped]
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(head) + "\n" + body


class _Skip(Exception):
    pass


def _api(op: Operation, credential: set[tuple[str, str]], base: str, docs: str
         ) -> dict[str, Any]:
    method = op.method.upper()
    args: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    path = op.path
    for param in op.parameters:
        if param.location == "cookie":
            if param.required:
                raise _Skip(f"needs cookie {param.name!r}")
            continue
        if (param.location, param.name.lower()) in credential:
            continue
        arg = _arg_name(param.name, args)
        schema = _schema(param.schema, param.description or
                         f"The {param.name} {param.location} parameter")
        if param.location == "path":
            path = path.replace("{" + param.name + "}", "{" + arg + "}")
        elif arg != param.name:
            schema["field"] = param.name
        args[arg] = {**schema, "in": param.location}
        if param.required:
            required.append(arg)
    body: dict[str, Any] | None = None
    if op.body_schema is not None:
        media = (op.media_type or "").split(";")[0].strip()
        if media == "application/json" or media.endswith("+json"):
            body = {"encoding": "json"}
        elif media == "application/x-www-form-urlencoded":
            body = {"encoding": "form"}
        elif media.startswith("text/"):
            body = {"encoding": "text", "content_type": media}
        else:
            raise _Skip(f"a {media or 'body'} body is not one toolbed sends (JSON, form, text)")
        if media != "application/json" and body["encoding"] == "json":
            body["content_type"] = media
        fields = op.body_fields
        if body["encoding"] == "text":
            args["body"] = {**_schema({"type": "string"}, "The text of the request body"),
                            "in": "body"}
            required.append("body")
        elif op.body_schema.get("type") == "object" or fields:
            for f in fields:
                if "." in f.name:
                    raise _Skip(f"body field {f.name!r} has a dot in its name")
                arg = _arg_name(f.name, args)
                schema = _schema(f.schema, f.description or f"The {f.name} field of the body")
                args[arg] = {**schema, "in": "body", **({"field": f.name} if arg != f.name
                                                        else {})}
                if f.required:
                    required.append(arg)
        else:
            args["body"] = {**_schema(op.body_schema, "The request body"), "in": "body",
                            "field": "."}
            if op.body_required:
                required.append("body")
    for placeholder in re.findall(r"\{([^}/]+)\}", path):
        if placeholder not in args:
            raise _Skip(f"path placeholder {{{placeholder}}} has no parameter in the spec")
    entry: dict[str, Any] = {
        "name": _snake(op.operation_id) or _snake(f"{op.method} {op.path}"),
        "description": _description(op),
        "effect": "read" if op.method in _READS else "write",
        "docs": op.docs or docs,
        "http": {"method": method, "path": path, **({"body": body} if body else {})},
        "args": args,
        "required": required,
    }
    if entry["effect"] == "write":
        entry["irreversible"] = IMPORTED_WRITE
    entry["examples"] = [_example(entry, base)]
    if not args:
        del entry["args"]
    if not required:
        del entry["required"]
    return entry


def _example(entry: dict[str, Any], base: str) -> dict[str, Any]:
    """Values for the required arguments and the request they must build."""
    args = {name: _value(entry["args"][name]) for name in entry["required"]}
    path = entry["http"]["path"]
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    body: dict[str, Any] = {}
    whole: Any = None
    for name, value in args.items():
        arg = entry["args"][name]
        wire = arg.get("field", name)
        if arg["in"] == "path":
            path = path.replace("{" + name + "}", quote(_text(value), safe=""))
        elif arg["in"] == "query" and isinstance(value, dict):
            query += [(k, _text(v)) for k, v in value.items()]
        elif arg["in"] == "query":
            query += [(wire, _text(v)) for v in (value if isinstance(value, list) else [value])]
        elif arg["in"] == "header":
            headers[wire] = _text(value)
        elif wire == ".":
            whole = value
        else:
            body[wire] = value
    request: dict[str, Any] = {"method": entry["http"]["method"],
                               "url": base + path + (f"?{urlencode(query)}" if query else "")}
    if headers:
        request["headers"] = headers
    encoding = (entry["http"].get("body") or {}).get("encoding", "json")
    if encoding == "text":
        request["content"] = _text(body["body"])
    elif whole is not None or body:
        if encoding == "form":
            request["form"] = {k: _text(v) for k, v in body.items()}
        else:
            request["json"] = whole if whole is not None else body
    return {"args": args, "request": request}


def _value(arg: dict[str, Any]) -> Any:
    """The first of the schema's examples, its first enum value and a value made from
    its type that the schema accepts."""
    schema = {k: v for k, v in arg.items() if k not in ("in", "field")}
    candidates = [*(schema.get("examples") or []), *(schema.get("enum") or [])[:1],
                  _made(schema)]
    for value in candidates:
        if value is not None and not list(
                jsonschema.Draft202012Validator(schema).iter_errors(value)):
            return value
    raise _Skip(f"no value fits the schema of {arg.get('description', '')[:40]!r} "
                "for its example")


def _made(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    low = schema.get("minimum", 1)
    if kind == "integer":
        return int(low) if isinstance(low, int | float) else 1
    if kind == "number":
        return float(low) if isinstance(low, int | float) else 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [_made(schema.get("items") or {"type": "string"})]
    if kind == "object":
        return {k: _made(v) for k, v in (schema.get("properties") or {}).items()
                if k in (schema.get("required") or [])}
    return "example"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _schema(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """A spec's schema cut down to the keywords the catalog accepts, with a type and a
    whole description (OpenAPI's ``nullable``, ``readOnly``, ``x-`` keys dropped) and
    no top-level default."""
    out = _clean(schema)
    out["description"] = _sentence(description, 200)
    if "default" in out:
        # toolbed sends a declared default; the spec's means "what the server assumes
        # when the parameter is absent", so it goes into the words instead
        default = out.pop("default")
        out["description"] = f"{out['description'].rstrip('.')} (default {_text(default)})."
    if "type" not in out and "enum" not in out and "const" not in out:
        out["type"] = "object" if "properties" in out else "string"
    return out


def _clean(schema: Any) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "example" and value is not None:
            out.setdefault("examples", [value])
        if key not in _KEYWORDS or value is None:
            continue
        if key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            continue                    # OpenAPI 3.0's boolean form; draft 7 wants a number
        if key == "description":
            value = _sentence(str(value), 200)
            if not value:
                continue
        elif key in ("items", "additionalProperties", "not"):
            value = _clean(value) if isinstance(value, dict) else value
        elif key == "properties":
            value = {k: _clean(v) for k, v in value.items()} if isinstance(value, dict) else {}
        elif key in ("anyOf", "oneOf", "allOf"):
            value = [_clean(v) for v in value if isinstance(v, dict)]
        elif key == "type" and value == "file":
            value = "string"
        out[key] = value
    return out


def _description(op: Operation) -> str:
    parts = [t.strip() for t in (op.summary, op.description) if t.strip()]
    if len(parts) == 2 and parts[0][-1] not in ".!?:":
        parts[0] += "."
    text = _sentence(" ".join(parts), 300)
    if len(text) < 20:
        text = f"{text or op.operation_id or 'Call'}: {op.method.upper()} {op.path}"
    return text


def _sentence(text: str, limit: int) -> str:
    """Plain words: Markdown links and code marks out, whitespace collapsed, cut at a
    sentence end under ``limit`` characters, unmatched brackets dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text).replace("`", "").replace("**", "")
    text = " ".join(text.split())
    if len(text) > limit:
        cut = max(text.rfind(". ", 0, limit), text.rfind("; ", 0, limit))
        text = text[:cut + 1] if cut > limit // 3 else text[:limit].rsplit(" ", 1)[0] + "..."
    return _balanced(text)


def _balanced(text: str) -> str:
    keep, stack = list(text), []
    for i, char in enumerate(text):
        if char in _PAIRS:
            stack.append(i)
        elif char in _PAIRS.values():
            if stack and _PAIRS[text[stack[-1]]] == char:
                stack.pop()
            else:
                keep[i] = ""
    for i in stack:
        keep[i] = ""
    return "".join(keep).strip()


def _auth(spec: OpenApiSpec, app: str) -> tuple[dict[str, Any], set[tuple[str, str]]]:
    """The catalog auth for the spec's first usable scheme, and the parameter that
    carries its credential (left out of every API's arguments)."""
    env = f"{app.upper()}_TOKEN"
    names = spec.security or list(spec.security_schemes)
    for scheme in (spec.security_schemes.get(n) for n in names):
        if not scheme:
            continue
        kind, http = scheme.get("type"), str(scheme.get("scheme", "")).lower()
        if kind == "http" and http == "basic":
            return ({"scheme": "basic", "user_env": f"{app.upper()}_USER",
                     "password_env": f"{app.upper()}_PASSWORD"},
                    {("header", "authorization")})
        if kind in ("oauth2", "openIdConnect") or (kind == "http" and http == "bearer"):
            return {"scheme": "bearer", "env": env}, {("header", "authorization")}
        if kind == "apiKey" and scheme.get("in") in ("header", "query"):
            where, key = str(scheme["in"]), str(scheme.get("name", ""))
            return ({"scheme": "api_key", "in": where, "name": key,
                     "env": f"{app.upper()}_API_KEY"}, {(where, key.lower())})
    return {"scheme": "none"}, set()


def _arg_name(wire: str, taken: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_]+", "_", wire).strip("_") or "value"
    if name[0].isdigit():
        name = "p_" + name
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _snake(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    if text and not text[0].isalpha():
        text = "op_" + text
    return text


def _unique(name: str, taken: set[str]) -> str:
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name

