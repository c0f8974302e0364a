"""Catalog entries held to their provider's published OpenAPI spec.

An entry is written by hand from the provider's docs, and a guess that looks right (a
path that follows the pattern of its neighbours, a parameter name the docs misspell)
passes every offline test. Where the provider publishes a machine-readable spec, this
compares each entry with it, field by field: the operation (host, path and method),
every path, query and header argument's name and place, which of them are required,
the body's encoding and fields, and the auth scheme. Each difference is a sentence a
person can act on; an entry with none is exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ._openapi import OpenApiSpec, Operation, load_openapi, template_key
from ._schema import Api, App, OpenApiRef
from ._specs import spec_file

__all__ = ["Conformance", "catalog_conformance", "conformance"]


@dataclass(frozen=True)
class Conformance:
    """How one app's entries compare with its specs: ``results[api_id]`` lists what
    differs (empty for an exact entry). ``newer`` are the entries the app's ``openapi``
    says the spec predates (with the docs page that shows them)."""

    app: str
    specs: list[str]
    results: dict[str, list[str]] = field(default_factory=dict)
    newer: dict[str, str] = field(default_factory=dict)

    @property
    def checked(self) -> int:
        return len(self.results)

    @property
    def exact(self) -> int:
        return sum(not p for a, p in self.results.items() if a not in self.newer)

    @property
    def differences(self) -> dict[str, list[str]]:
        """The entries that differ from the spec and are not known to be newer."""
        return {a: p for a, p in self.results.items() if p and a not in self.newer}

    @property
    def stale(self) -> list[str]:
        """Entries listed as newer that now match the spec: the note is out of date."""
        return [a for a in self.newer if not self.results.get(a)]


def conformance(app: App, specs: dict[str, OpenApiSpec]) -> Conformance:
    """Compare every API of ``app`` with the operations of its specs, read already
    (``specs`` maps each of ``app.openapi``'s ``spec`` to the document)."""
    report = Conformance(app.app, [ref.spec for ref in app.openapi])
    for ref in app.openapi:
        report.newer.update({f"{app.app}.{name}": page for name, page in ref.newer.items()})
    for api in app.apis:
        problems: list[str] = []
        for ref in app.openapi:
            problems = _differences(app, api, ref, [specs[ref.spec]])
            if not problems or not problems[0].startswith("no operation"):
                break
        report.results[api.id] = problems
    return report


def _differences(app: App, api: Api, ref: OpenApiRef, specs: list[OpenApiSpec]) -> list[str]:
    found = _find(app, api, ref, specs)
    if isinstance(found, str):
        return [found]
    spec, op = found
    problems: list[str] = []
    auth_params = _auth_parameters(app) | {
        (p.location, p.name.lower()) for p in op.parameters if p.name == ref.credential}
    for name, arg in api.args.items():
        wire = arg.field or name
        if arg.location == "path":
            continue        # a placeholder's name is not on the wire; _find matched its place
        if arg.location == "body":
            problems += _body_arg(op, name, wire)
            continue
        if (arg.location, wire.lower()) in auth_params:
            continue
        param = op.parameter(wire, arg.location)
        if param is None:
            known = sorted(p.name for p in op.parameters if p.location == arg.location)
            problems.append(f"{arg.location} parameter {wire!r} is not in the spec "
                            f"(it has: {', '.join(known) or 'none'})")
        elif param.required and name not in api.required and "default" not in arg.schema_:
            # an argument with a default is always sent (the request builder fills it in)
            problems.append(f"{arg.location} parameter {wire!r} is required by the spec")
    declared = {((a.field or n).lower(), a.location) for n, a in api.args.items()}
    for param in op.parameters:
        if param.required and param.location == "query" and \
                (param.name.lower(), param.location) not in declared and \
                (param.location, param.name.lower()) not in auth_params:
            problems.append(f"required {param.location} parameter {param.name!r} of the "
                            "spec is missing")
    problems += _body(api, op, ref)
    problems += _auth(app, spec, op)
    return problems


def _find(app: App, api: Api, ref: OpenApiRef, specs: list[OpenApiSpec]
          ) -> tuple[OpenApiSpec, Operation] | str:
    """The spec operation an entry calls, or a sentence saying why there is none.

    A spec placeholder matches a catalog placeholder or a literal segment the catalog
    fixed (``/users/{user_gid}`` serves ``/users/me``, ``/{section}.{format}`` serves
    ``/{section}.json``); an exact template wins over such a match."""
    base = urlsplit(app.base_url or "")
    full = template_key(base.path.rstrip("/") + api.http.path.split("?")[0])
    other_methods: list[str] = []
    for exact in (True, False):
        for spec in specs:
            for server in ([ref.server] if ref.server else spec.servers or [""]):
                parts = urlsplit(server)
                if parts.netloc and parts.netloc.lower() != base.netloc.lower():
                    continue
                prefix = template_key(parts.path) if parts.path.strip("/") else ""
                if not full.startswith(prefix):
                    continue
                rest = full[len(prefix):] or "/"
                for op in spec.operations:
                    if (template_key(op.path) == rest) if exact else \
                            _pattern(op.path).fullmatch(rest):
                        if op.method == api.http.method.lower():
                            return spec, op
                        other_methods.append(op.method.upper())
        if other_methods:
            return (f"the spec has {api.http.path} with "
                    f"{', '.join(sorted(set(other_methods)))}, not {api.http.method}")
    return f"no operation {api.http.method} {base.netloc}{full} in the spec"


def _pattern(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}/]+\})", path.rstrip("/") or "/")
    return re.compile("".join(r"(?:\{\}|[^/{}]+)" if p.startswith("{") else re.escape(p)
                              for p in parts))


def _body_arg(op: Operation, name: str, wire: str) -> list[str]:
    if wire == ".":
        return [] if op.body_schema is not None else [f"body argument {name!r}: the "
                                                      "operation takes no body"]
    top = wire.split(".")[0]
    fields = op.body_fields
    if op.body_schema is None:
        return [f"body field {top!r}: the operation takes no body"]
    if not fields and (op.body_schema.get("additionalProperties") is not False):
        return []           # a free-form object: any field is the spec's
    if not any(f.name == top for f in fields):
        return [f"body field {top!r} is not in the spec (it has: "
                f"{', '.join(sorted(f.name for f in fields)) or 'none'})"]
    return []


def _body(api: Api, op: Operation, ref: OpenApiRef) -> list[str]:
    problems = []
    body_args = {(a.field or n).split(".")[0]: n for n, a in api.args.items()
                 if a.location == "body"}
    if body_args and op.media_type:
        encoding = (api.http.body.encoding if api.http.body else "json")
        media = op.media_type.split(";")[0].strip()
        wanted = {"json": ("application/json",), "form": (
            "application/x-www-form-urlencoded", "multipart/form-data")}.get(encoding)
        if wanted and media not in wanted and not media.endswith("+json") and not (
                encoding == "json" and ref.json_bodies):
            problems.append(f"body is sent as {encoding} but the spec takes {media}")
    if "." in body_args:
        return problems
    for f in op.body_fields:
        if f.required and f.name not in body_args:
            problems.append(f"required body field {f.name!r} of the spec is missing")
    return problems


def _auth_parameters(app: App) -> set[tuple[str, str]]:
    """The (place, name) of the parameter that carries the app's credential."""
    headers, params = app.auth.carriers
    return {("header", h.lower()) for h in headers} | {("query", q.lower()) for q in params}


def _auth(app: App, spec: OpenApiSpec, op: Operation) -> list[str]:
    names = op.security if op.security is not None else spec.security
    schemes = [spec.security_schemes[n] for n in names if n in spec.security_schemes]
    if not schemes:
        return []           # the spec says nothing about credentials here
    auth = app.auth
    if any(auth.accepted_by(scheme) for scheme in schemes):
        return []
    offered = ", ".join(_scheme_words(s) for s in schemes)
    return [f"auth {auth.scheme} is not one the spec accepts ({offered})"]


def _scheme_words(scheme: dict[str, object]) -> str:
    kind = scheme.get("type")
    if kind == "apiKey":
        return f"api_key in {scheme.get('in')} {scheme.get('name')!r}"
    if kind == "http":
        return str(scheme.get("scheme"))
    return str(kind)


def catalog_conformance(apps: list[App]) -> list[Conformance]:
    """The report of every app that names its provider's specs (each spec read once)."""
    read: dict[str, OpenApiSpec] = {}
    reports = []
    for app in apps:
        for ref in app.openapi:
            if ref.spec not in read:
                read[ref.spec] = load_openapi(spec_file(ref.spec))
        if app.openapi:
            reports.append(conformance(app, read))
    return reports
