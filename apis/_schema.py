"""The typed shape of a catalog file: one App, its Apis, and how each maps to HTTP.

This module is the contract for everything under apis/: the loader turns YAML into
these models, and the connector runtime, the rollback journal and the retriever
read nothing else. Checks that span several fields (a path placeholder with no
argument, an undo that names an unknown API) live here too, so that a bad file
fails at load time with the file, the API and the field named, not at call time.
"""

from __future__ import annotations

import base64
import re
import string
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import jmespath
import jsonschema
from jmespath.exceptions import JMESPathError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "Api",
    "ApiKeyAuth",
    "App",
    "Arg",
    "Auth",
    "BasicAuth",
    "BearerAuth",
    "Body",
    "Example",
    "ExpectedRequest",
    "Http",
    "Lookup",
    "NoAuth",
    "OpenApiRef",
    "ProbeStep",
    "Step",
    "Undo",
]

_NAME = r"^[a-z][a-z0-9_]*$"
_METHODS = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
    # WebDAV / CalDAV / CardDAV verbs, used by the self-hosted calendar and file apps
    "PROPFIND", "PROPPATCH", "MKCOL", "MKCALENDAR", "REPORT", "COPY", "MOVE",
}
# Argument schemas are checked against the draft 7 meta-schema: it catches the same
# mistakes in the keywords the catalog uses (a misspelt type, a bad enum) as 2020-12's,
# which resolves dynamic references and made loading the catalog five times slower.
_META_SCHEMA = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# The JSON Schema keywords an argument's schema may use (beside the placement keys `in`
# and `field`). Draft 7 lets any other key through, and an unquoted description with a
# comma in a YAML flow map ({type: string, description: Results (default 20, max 250)})
# loads as a cut description plus a stray key: a strict list catches that at load time.
_KEYWORDS = frozenset({
    "type", "description", "title", "enum", "const", "default", "examples", "format",
    "pattern", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "items", "minItems", "maxItems", "uniqueItems",
    "properties", "required", "additionalProperties", "minProperties", "maxProperties",
    "anyOf", "oneOf", "allOf", "not",
})
_PAIRS = {"(": ")", "[": "]", "{": "}"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


# -- auth ---------------------------------------------------------------------------
# Each scheme owns all of its behaviour: the env vars it reads and which of them are
# secret, what it adds to a request, the credentials a launcher makes for a new
# instance, and the OpenAPI security schemes that describe it. Adding a scheme is one
# class here and one member of ``Auth``; nothing else switches on the scheme.

Read = Callable[[str, str], str]
"""``read(var, what)``: the value of env var ``var``; ``what`` says what it holds, for
the error a missing one raises."""


class _Auth(_Model):
    @property
    def env_vars(self) -> list[str]:
        """Every env var the scheme reads."""
        return []

    @property
    def secret_env_vars(self) -> list[str]:
        """The env vars that hold secrets (a user name is not one)."""
        return []

    @property
    def call_args(self) -> list[str]:
        """The call's arguments the scheme reads (checked against the app's APIs)."""
        return []

    def apply(self, read: Read, args: Mapping[str, Any] | None = None,
              ) -> tuple[dict[str, str], dict[str, str]]:
        """The ``(headers, query params)`` that authenticate a request (``args``, the
        call's arguments, for a scheme whose user is one of them)."""
        return {}, {}

    @property
    def carriers(self) -> tuple[list[str], list[str]]:
        """The header names and the query parameter names a credential goes in."""
        headers, params = self.apply(lambda var, what: "")
        return list(headers), list(params)

    def fresh_credentials(self, user: str, secret: Callable[[str], str]) -> dict[str, str]:
        """Env vars for an app instance started now: ``user`` as its user name where the
        scheme has one, ``secret(var)`` as the value of each secret."""
        return {var: secret(var) for var in self.secret_env_vars}

    def accepted_by(self, scheme: Mapping[str, Any]) -> bool:
        """Whether an operation that asks for this OpenAPI security scheme object
        (``{"type": "http", "scheme": "bearer"}``, ...) takes a call with this auth."""
        return False


class NoAuth(_Auth):
    """The API needs no credentials."""

    scheme: Literal["none"] = "none"

    def accepted_by(self, scheme: Mapping[str, Any]) -> bool:
        return True          # a public read that a spec lists under an optional scheme


class ApiKeyAuth(_Auth):
    """A key sent in a header (``X-Api-Key: KEY``) or a query parameter (``?appid=KEY``)."""

    scheme: Literal["api_key"]
    location: Literal["header", "query"] = Field(alias="in")
    name: str = Field(description="Header or query parameter that carries the key.")
    env: str = Field(description="Environment variable that holds the key.")
    prefix: str = Field("", description="Text put before the key, e.g. 'Token '.")

    @property
    def env_vars(self) -> list[str]:
        return [self.env]

    @property
    def secret_env_vars(self) -> list[str]:
        return [self.env]

    def apply(self, read: Read, args: Mapping[str, Any] | None = None,
              ) -> tuple[dict[str, str], dict[str, str]]:
        carried = {self.name: self.prefix + read(self.env, "API key")}
        return (carried, {}) if self.location == "header" else ({}, carried)

    def accepted_by(self, scheme: Mapping[str, Any]) -> bool:
        return (scheme.get("type") == "apiKey" and scheme.get("in") == self.location
                and str(scheme.get("name", "")).lower() == self.name.lower())


class BearerAuth(_Auth):
    """``Authorization: Bearer TOKEN``, the token read from an env var."""

    scheme: Literal["bearer"]
    env: str

    @property
    def env_vars(self) -> list[str]:
        return [self.env]

    @property
    def secret_env_vars(self) -> list[str]:
        return [self.env]

    def apply(self, read: Read, args: Mapping[str, Any] | None = None,
              ) -> tuple[dict[str, str], dict[str, str]]:
        return {"Authorization": f"Bearer {read(self.env, 'bearer token')}"}, {}

    def accepted_by(self, scheme: Mapping[str, Any]) -> bool:
        kind = scheme.get("type")
        return kind in ("oauth2", "openIdConnect") or (
            kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer")


class BasicAuth(_Auth):
    """HTTP Basic auth; user and password come from two env vars, or the user from a
    call's argument (``user_arg``) where the API logs in per resource: ihatemoney's user
    is the id of the project a call is about, its password that project's code."""

    scheme: Literal["basic"]
    user_env: str
    password_env: str
    user_arg: str | None = Field(
        None, description="Argument whose value is the user name when a call gives it.")

    @property
    def env_vars(self) -> list[str]:
        return [self.user_env, self.password_env]

    @property
    def secret_env_vars(self) -> list[str]:
        return [self.password_env]

    @property
    def call_args(self) -> list[str]:
        return [self.user_arg] if self.user_arg else []

    def apply(self, read: Read, args: Mapping[str, Any] | None = None,
              ) -> tuple[dict[str, str], dict[str, str]]:
        given = (args or {}).get(self.user_arg) if self.user_arg else None
        user = str(given) if given else read(self.user_env, "user name for basic auth")
        password = read(self.password_env, "password for basic auth")
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}, {}

    def fresh_credentials(self, user: str, secret: Callable[[str], str]) -> dict[str, str]:
        return {self.user_env: user, self.password_env: secret(self.password_env)}

    def accepted_by(self, scheme: Mapping[str, Any]) -> bool:
        return scheme.get("type") == "http" and str(scheme.get("scheme", "")).lower() == "basic"


Auth = Annotated[NoAuth | ApiKeyAuth | BearerAuth | BasicAuth, Field(discriminator="scheme")]


# -- one API --------------------------------------------------------------------------


class Arg(BaseModel):
    """One argument: a JSON Schema property plus where it goes in the request.

    In YAML the placement keys sit beside the schema keywords::

        bucket: {type: string, in: path, description: Bucket id}
        title:  {type: string, in: body, field: data.title, description: ...}
        table:  {type: string, in: path, encoding: tilde, description: ...}
    """

    model_config = ConfigDict(frozen=True)

    location: Literal["path", "query", "header", "body"] = Field(alias="in")
    field: str | None = Field(
        None,
        description="Query/header name or dotted JSON body path; defaults to the argument name.",
    )
    encoding: Literal["percent", "tilde"] = Field(
        "percent",
        description="How a path value is escaped: percent (RFC 3986), or tilde for an app "
        "that finds names only tilde-encoded (Datasette: ~E5~AE~B6 for 家, ~2E for '.').",
    )
    schema_: dict[str, Any] = Field(alias="schema")

    @model_validator(mode="before")
    @classmethod
    def _split_schema(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "schema" in data:
            return data
        data = dict(data)
        placement = {k: data.pop(k) for k in ("in", "field", "encoding") if k in data}
        return {**placement, "schema": data}

    @field_validator("schema_")
    @classmethod
    def _described(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if not schema.get("description"):
            raise ValueError("every argument needs a description (the agent and retriever read it)")
        if "type" not in schema and "enum" not in schema and "const" not in schema:
            raise ValueError("every argument needs a JSON Schema 'type' (or 'enum')")
        _lint(schema, "")
        return schema


def _lint(schema: dict[str, Any], where: str) -> None:
    """Every key a supported keyword with a value, every description whole (brackets
    closed), in this schema and the schemas nested in it."""
    for key, value in schema.items():
        if key not in _KEYWORDS:
            raise ValueError(
                f"{where}unknown key {key!r}: not a JSON Schema keyword toolbed supports; if it "
                "is the end of a description cut at a comma, quote the description")
        if value is None:
            raise ValueError(f"{where}{key!r} has no value")
    description = schema.get("description")
    if isinstance(description, str):
        depth: list[str] = []
        for char in description:
            if char in _PAIRS:
                depth.append(_PAIRS[char])
            elif char in _PAIRS.values() and (not depth or depth.pop() != char):
                depth = ["?"]
                break
        if depth:
            raise ValueError(f"{where}description {description!r} has unbalanced brackets: "
                             "was it cut short?")
    nested: list[tuple[str, Any]] = [
        (f"{where}properties.{name}.", sub) for name, sub in
        (schema.get("properties") or {}).items()]
    for key in ("items", "additionalProperties", "not"):
        nested.append((f"{where}{key}.", schema.get(key)))
    for key in ("anyOf", "oneOf", "allOf"):
        nested += [(f"{where}{key}[{i}].", sub) for i, sub in enumerate(schema.get(key) or [])]
    for path, sub in nested:
        if isinstance(sub, dict):
            _lint(sub, path)


class Body(_Model):
    """How the body arguments become the request body.

    ``json`` and ``form`` assemble the ``in: body`` arguments by their ``field``;
    ``text`` and ``xml`` send either the one body argument as-is (an iCalendar
    event, a vCard) or a ``template`` with ``$arg`` placeholders (a WebDAV query),
    whose values are XML-escaped for ``xml``.
    """

    encoding: Literal["json", "form", "text", "xml"] = "json"
    content_type: str | None = None
    template: str | None = None

    @property
    def media_type(self) -> str:
        if self.content_type:
            return self.content_type
        return {
            "json": "application/json",
            "form": "application/x-www-form-urlencoded",
            "text": "text/plain; charset=utf-8",
            "xml": "application/xml; charset=utf-8",
        }[self.encoding]

    @property
    def template_names(self) -> set[str]:
        if self.template is None:
            return set()
        return {
            m.group("named") or m.group("braced")
            for m in string.Template.pattern.finditer(self.template)
            if m.group("named") or m.group("braced")
        }


class Http(_Model):
    """The HTTP side of an API: method, path template, constant headers, body encoding."""

    method: str
    path: str
    headers: dict[str, str] = {}
    body: Body | None = None

    @field_validator("method")
    @classmethod
    def _method(cls, method: str) -> str:
        method = method.upper()
        if method not in _METHODS:
            raise ValueError(f"unknown HTTP method {method!r}; use one of {sorted(_METHODS)}")
        return method

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        if not path.startswith("/"):
            raise ValueError(f"path {path!r} must start with '/'")
        return path

    @property
    def placeholders(self) -> list[str]:
        return _PLACEHOLDER.findall(self.path)


class Before(_Model):
    """A read made just before a write, so that its undo can restore what was there."""

    api: str
    bind: dict[str, str] = {}


class Lookup(_Model):
    """How recovery finds what a write did when its response was never recorded.

    A process killed between sending a write and journalling its response leaves the
    journal not knowing, say, the id the server gave a new record. Recovery then calls
    the read ``api`` (arguments bound over ``{args, before}``) and evaluates ``response``
    over ``{args, before, lookup}``: the result stands in for the lost response when the
    undo is bound, and null means the write never took effect.
    """

    api: str
    bind: dict[str, str] = {}
    response: str = "lookup"


class Instead(_Model):
    """Another compensation, used when ``when`` holds.

    Some writes do different things depending on what was there: a PUT that edits a
    record creates it if it was missing, and then the undo must delete rather than
    restore. ``when`` is a JMESPath expression over the same context as ``bind``.
    """

    when: str
    api: str
    bind: dict[str, str] = {}


class NewId(_Model):
    """The undo re-creates the object under a new id (a deleted bill comes back as a new
    bill). Older undos of the same run that name the old id must then use the new one:
    edit a bill, then delete it, and the edit's undo has to reach the re-created bill.

    ``arg`` is the write's argument holding the old id, and the argument name older
    undos bind it to; ``value``, a JMESPath expression over ``{"response": <the undo's
    observation>}``, is the new id.
    """

    arg: str
    value: str


class Undo(_Model):
    """The compensation of a write: which API undoes it and how its arguments are bound.

    Each value of ``bind`` is a JMESPath expression evaluated over
    ``{"args": <the write's arguments>, "response": <its observation>,
    "before": <the observation of the ``before`` read>}``. The first of ``instead``
    whose ``when`` is true replaces ``api`` and ``bind``.
    """

    api: str
    bind: dict[str, str] = {}
    before: Before | None = None
    lookup: Lookup | None = None
    instead: list[Instead] = []
    new_id: NewId | None = None

    @property
    def needs_response(self) -> bool:
        """Whether a binding reads the write's response (so a lost response needs ``lookup``)."""
        expressions = [*self.bind.values()]
        for case in self.instead:
            expressions += [case.when, *case.bind.values()]
        return any(_reads_root(expr, "response") for expr in expressions)


def _reads_root(expression: str, name: str) -> bool:
    """Whether a JMESPath expression reads the top-level key ``name``."""
    def walk(node: Any, top: bool) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "field" and node.get("value") == name and top:
            return True
        children = node.get("children", [])
        if node.get("type") in ("subexpression", "index_expression", "projection"):
            return walk(children[0], top) if children else False
        return any(walk(child, top) for child in children)

    return walk(jmespath.compile(expression).parsed, True)


class ProbeStep(_Model):
    """One read of an app's state probe.

    ``each`` (JMESPath over the probe's saved reads) repeats the read once per item,
    and ``bind`` fills arguments over ``{<saved>..., "item": <the item>}``; ``save``
    keeps the observation (a list of them with ``each``) for later steps. A probe lists
    everything a task could change, so that rollback can prove nothing was left behind.
    """

    api: str
    args: dict[str, Any] = {}
    bind: dict[str, str] = {}
    each: str | None = None
    save: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        return {"api": data} if isinstance(data, str) else data


class ExpectedRequest(_Model):
    """The request an example must produce, written from the provider's documentation.

    ``url`` is the full URL with its query string as the docs show it (parameter order
    does not matter); ``headers`` lists the non-auth headers the docs require; at most one
    of ``json``, ``form`` and ``content`` gives the body.
    """

    method: str
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = {}
    json_: Any = Field(None, alias="json")
    form: dict[str, str] | None = None
    content: str | None = None


class Example(_Model):
    """Real, valid arguments for an API and the request the docs say they make.

    Docs and `toolbed apis check --live` use ``args``; the offline tests build the
    request from them and compare it with ``request``.
    """

    args: dict[str, Any] = {}
    request: ExpectedRequest


class Api(_Model):
    """One callable API of an app; its id is ``<app>.<name>``."""

    name: str = Field(pattern=_NAME)
    app: str = ""
    description: str = Field(min_length=20)
    effect: Literal["read", "write"]
    http: Http
    args: dict[str, Arg] = {}
    required: list[str] = []
    undo: Undo | None = None
    irreversible: str | None = Field(
        None, description="Why a write has no undo; such writes need --allow-irreversible."
    )
    docs: str | None = None
    examples: list[Example] = []
    queries: list[str] = Field(
        [], description="Requests a user would make that this API serves, in plain words "
        "with concrete values; the retriever indexes them beside the description.",
    )

    queries_zh: list[str] = Field(
        [], description="The same kind of requests as a Chinese user would ask them (their "
        "own words, not translations of ``queries``): the retriever's documents for "
        "requests in Chinese.",
    )

    @field_validator("queries", "queries_zh")
    @classmethod
    def _queries(cls, queries: list[str]) -> list[str]:
        seen: set[str] = set()
        for query in queries:
            text = " ".join(query.split())
            if not 10 <= len(text) <= 300:
                raise ValueError(f"query {query!r} must be a request of 10 to 300 characters")
            if text.lower() in seen:
                raise ValueError(f"query {query!r} appears twice")
            seen.add(text.lower())
        return queries

    @property
    def id(self) -> str:
        return f"{self.app}.{self.name}"

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as agents and validators see it."""
        return {
            "type": "object",
            "properties": {name: dict(arg.schema_) for name, arg in self.args.items()},
            "required": list(self.required),
            "additionalProperties": False,
        }

    @model_validator(mode="after")
    def _consistent(self) -> Api:
        names = set(self.args)
        for missing in sorted(set(self.required) - names):
            raise ValueError(f"required argument {missing!r} is not declared under args")
        placeholders = self.http.placeholders
        path_args = {n for n, a in self.args.items() if a.location == "path"}
        for p in placeholders:
            if p not in path_args:
                raise ValueError(f"path placeholder {{{p}}} has no argument with 'in: path'")
            if p not in self.required:
                raise ValueError(f"path argument {p!r} must be listed in required")
        for extra in sorted(path_args - set(placeholders)):
            raise ValueError(
                f"argument {extra!r} is 'in: path' but {self.http.path} has no {{{extra}}}"
            )
        body_args = {n for n, a in self.args.items() if a.location == "body"}
        if body_args and self.http.body is None and self.http.method in {"GET", "HEAD", "DELETE"}:
            raise ValueError(f"{self.http.method} with body arguments needs an explicit http.body")
        body = self.http.body or Body()
        if body.encoding in ("text", "xml"):
            if body.template is not None:
                unknown = body.template_names - body_args
                if unknown:
                    raise ValueError(
                        f"http.body.template uses {sorted(unknown)}, not 'in: body' args"
                    )
            elif len(body_args) != 1:
                raise ValueError(
                    f"a {body.encoding} body without a template takes exactly one 'in: body' "
                    f"argument, found {sorted(body_args) or 'none'}"
                )
        problem = jsonschema.exceptions.best_match(_META_SCHEMA.iter_errors(self.parameters))
        if problem is not None:
            raise ValueError(f"args are not valid JSON Schema: {problem.message}")
        for i, example in enumerate(self.examples):
            problem = jsonschema.Draft202012Validator(self.parameters).iter_errors(example.args)
            for error in problem:
                raise ValueError(f"examples[{i}].args break the schema: {error.message}")
        if self.effect == "read" and (self.undo or self.irreversible):
            raise ValueError("a read API takes neither 'undo' nor 'irreversible'")
        if self.effect == "write" and not (self.undo or self.irreversible):
            raise ValueError(
                "a write API needs 'undo' (the API that reverses it) or 'irreversible: <why>'"
            )
        if self.undo:
            expressions = list(self.undo.bind.items())
            if self.undo.before:
                expressions += self.undo.before.bind.items()
            if self.undo.lookup:
                expressions += [*self.undo.lookup.bind.items(),
                                ("lookup.response", self.undo.lookup.response)]
            for i, case in enumerate(self.undo.instead):
                expressions += [(f"instead[{i}].when", case.when), *case.bind.items()]
            if self.undo.new_id:
                if self.undo.new_id.arg not in self.args:
                    raise ValueError(f"undo.new_id.arg {self.undo.new_id.arg!r} is not an "
                                     "argument of this API")
                expressions.append(("new_id.value", self.undo.new_id.value))
            for key, expr in expressions:
                _check_jmespath(f"undo bind {key!r}", expr)
        return self


def _check_jmespath(what: str, expr: str) -> None:
    try:
        jmespath.compile(expr)
    except JMESPathError as exc:
        raise ValueError(f"{what}: {expr!r} is not a JMESPath expression ({exc})") from None


class Step(_Model):
    """One call of an app's ``exercise``: the sequence that calls every API once.

    ``bind`` fills arguments from earlier steps saved with ``save``: each value is a
    JMESPath expression over ``{<saved name>: <observation>, ...}``.
    """

    api: str
    args: dict[str, Any] = {}
    bind: dict[str, str] = {}
    save: str | None = None
    expect: int | list[int] | None = Field(
        None, description="Status code(s) that count as success; default any 2xx."
    )

    def accepts(self, status: int | None) -> bool:
        if status is None:
            return False
        if self.expect is None:
            return 200 <= status < 300
        allowed = [self.expect] if isinstance(self.expect, int) else self.expect
        return status in allowed


class OpenApiRef(_Model):
    """The provider's published OpenAPI spec that the app's entries are checked against.

    ``spec`` is ``<npm package>/<file in it>``, a package `toolbed apis specs` installs
    (pinned, with its checksum, in ``apis/_specs.py``). The other fields say where the
    provider's docs and its spec differ in form but not in fact, each with the reason."""

    spec: str = Field(pattern=r"^(@[a-z0-9-]+/)?[a-z0-9.-]+/\S+\.(json|ya?ml)$")
    server: str | None = Field(
        None, pattern=r"^https://",
        description="The base URL the catalog calls, where the spec names another host or "
        "path prefix for the same API (Google's www.googleapis.com/books/v1).")
    credential: str | None = Field(
        None, description="A spec parameter that carries the credential, which the app's "
        "auth sends instead (Slack's legacy `token`).")
    json_bodies: str | None = Field(
        None, description="Why JSON bodies are sent where the spec lists form bodies: the "
        "provider's docs page that says it accepts JSON.")
    newer: dict[str, str] = Field(
        {}, description="APIs (by name) that the spec predates, each with the docs page "
        "that shows the newer form; reported apart, never counted as exact.")


# -- one app --------------------------------------------------------------------------


class McpServer(_Model):
    """The MCP server behind an app of tier ``mcp``: a stdio server from a registry,
    which toolbed installs pinned (at the app's ``version``) and starts behind its
    bridge (``launchers/_bridge.py``); each of its tools is an API of the app."""

    registry: Literal["npm", "pypi"]
    package: str = Field(description="The npm or PyPI package that ships the server.")


class App(_Model):
    """An app of the catalog: identity, where it runs, how to authenticate, its APIs.

    Three tiers: ``hosted`` (a public service, at its own base URL), ``selfhosted`` (an
    open-source app toolbed installs and starts on 127.0.0.1) and ``mcp`` (a Model
    Context Protocol server toolbed installs and starts the same way, its tools called
    through toolbed's bridge). The last two are ``local``."""

    app: str = Field(pattern=_NAME)
    name: str
    domain: str
    tier: Literal["hosted", "selfhosted", "mcp"]
    docs: str = Field(pattern=r"^https?://")
    description: str = ""
    base_url: str | None = Field(
        None, description="Hosted apps: the real base URL. Self-hosted: given by the launcher."
    )
    version: str | None = Field(None, description="Self-hosted: the pinned version installed.")
    emulator: bool = Field(False, description="An emulator of a cloud API, not the real service.")
    auth: Auth = NoAuth()
    seed: list[Step] = Field(
        [], description="Self-hosted: calls that load realistic data at every start.",
    )
    state_probe: list[ProbeStep] = []
    volatile: list[str] = Field(
        [], description="Keys that change on every write (timestamps, etags); ignored when "
        "rollback compares the state probe's snapshots.",
    )
    settle: float = Field(
        0.0, ge=0, le=60,
        description="Seconds the app may take to show a write in its state probe (work "
        "done by background tasks, such as Synapse's room statistics); rollback re-probes "
        "for up to this long before it reports a difference.",
    )
    openapi: list[OpenApiRef] = Field(
        [], description="The provider's published specs, for `toolbed apis conformance`.")
    apis: list[Api]
    exercise: list[Step] = []
    mcp: McpServer | None = Field(None, description="Tier mcp: the server and its package.")

    @property
    def local(self) -> bool:
        """Installed and started by toolbed on this machine (self-hosted or MCP)."""
        return self.tier != "hosted"

    @model_validator(mode="before")
    @classmethod
    def _stamp_app(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("apis"), list):
            app = data.get("app", "")
            data = {
                **data,
                "apis": [{**a, "app": app} if isinstance(a, dict) else a for a in data["apis"]],
            }
        return data

    @model_validator(mode="after")
    def _consistent(self) -> App:
        if self.tier == "hosted" and not self.base_url:
            raise ValueError("a hosted app needs base_url (the provider's real API root)")
        if self.tier == "hosted" and self.base_url and not self.base_url.startswith("https://"):
            raise ValueError("a hosted app's base_url must use https://")
        if self.tier == "hosted":
            for api in self.apis:
                if not api.examples:
                    raise ValueError(
                        f"{api.name}: a hosted API needs examples (args + the documented request)"
                    )
        if self.local and self.base_url:
            raise ValueError(f"a {self.tier} app takes no base_url: its launcher supplies one")
        if (self.tier == "mcp") != (self.mcp is not None):
            raise ValueError("an app of tier mcp names its server (mcp: registry, package), "
                             "and only such an app does")
        if self.tier == "mcp":
            for api in self.apis:
                if (api.http.method, api.http.path) != ("POST", f"/tools/{api.name}"):
                    raise ValueError(f"{api.name}: an MCP tool is called as POST "
                                     f"/tools/{api.name} (the bridge's route; the API's "
                                     "name is the tool's)")
        for name in self.auth.call_args:
            if not any(name in api.args for api in self.apis):
                raise ValueError(f"auth.user_arg {name!r} is no API's argument")
        by_name: dict[str, Api] = {}
        for api in self.apis:
            if api.name in by_name:
                raise ValueError(f"API name {api.name!r} appears twice")
            by_name[api.name] = api
        for api in self.apis:
            undo = api.undo
            if undo is None:
                continue
            for what, name, bind in [
                ("undo", undo.api, undo.bind),
                *((f"undo.instead[{i}]", c.api, c.bind) for i, c in enumerate(undo.instead)),
            ]:
                target = by_name.get(name)
                if target is None:
                    raise ValueError(f"{api.name}: {what} names unknown API {name!r}")
                _check_binding(f"{api.name}: {what}", target, bind)
            if undo.before:
                before = by_name.get(undo.before.api)
                if before is None or before.effect != "read":
                    raise ValueError(f"{api.name}: undo.before must name a read API of this app")
                _check_binding(f"{api.name}: undo.before", before, undo.before.bind)
            if undo.lookup:
                lookup = by_name.get(undo.lookup.api)
                if lookup is None or lookup.effect != "read":
                    raise ValueError(f"{api.name}: undo.lookup must name a read API of this app")
                _check_binding(f"{api.name}: undo.lookup", lookup, undo.lookup.bind)
        for i, probe in enumerate(self.state_probe):
            if probe.api not in by_name or by_name[probe.api].effect != "read":
                raise ValueError(f"state_probe[{i}] {probe.api!r} is not a read API of this app")
            for key, expr in [*probe.bind.items(), ("each", probe.each or "@")]:
                _check_jmespath(f"state_probe[{i}] {key!r}", expr)
        for part, steps in (("seed", self.seed), ("exercise", self.exercise)):
            for i, step in enumerate(steps):
                if step.api not in by_name:
                    raise ValueError(f"{part}[{i}] calls unknown API {step.api!r}")
                for key, expr in step.bind.items():
                    _check_jmespath(f"{part}[{i}] bind {key!r}", expr)
        return self

    def api(self, name: str) -> Api:
        for api in self.apis:
            if api.name == name:
                return api
        raise KeyError(name)


def _check_binding(where: str, target: Api, bind: dict[str, str]) -> None:
    unknown = set(bind) - set(target.args)
    if unknown:
        raise ValueError(f"{where} binds {sorted(unknown)}, not arguments of {target.name}")
    missing = set(target.required) - set(bind)
    if missing:
        raise ValueError(f"{where} leaves required {sorted(missing)} of {target.name} unbound")
