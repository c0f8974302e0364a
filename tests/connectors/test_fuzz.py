"""Hostile arguments, over every API of the catalog: the two promises of
``connectors/_request.py`` under fuzzing.

Each example takes an API, starts from one of its real example argument sets (so
most calls get past the schema and reach the request builder) and swaps in values a
model's JSON tool call, or a careless Python caller, can carry: lone surrogates,
typographic quotes in a header, CR/LF, dot segments and backslashes, NaN, huge
integers, values over 64 KiB, nesting a thousand deep, arguments that are not an
object. Whatever comes in, a call either is refused with a toolbed error or sends a
request that fits the schema and stays on the API's base URL and path template; an
agent's ``observe`` never raises. No socket is opened: a mock transport answers.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbed.apis import Api, Catalog
from toolbed.connectors import RunningApp, Runtime
from toolbed.connectors._request import build_request
from toolbed.errors import ToolbedError

EXAMPLES = 5000

HOSTILE: list[Any] = [
    "\ud83d", "a\udc00b", "\u201cabc\u201d", "caf\u00e9", "\U0001f642", "a\r\nX-Injected: 1",
    "\x00", "", ".", "..", "../..", "/../", "/./", "/..\\../", "..\\..", "%2e%2e", "a/b",
    "http://elsewhere.example/", "//elsewhere.example", "?q=1", "#top", "x" * 70_000,
    float("nan"), float("inf"), -float("inf"), 10**5000, -(10**400), 2**63, -1, 0, 1.5,
    True, False, None, [], {}, [None], {"": None}, ["\ud83d"], {"k": float("nan")},
]


def nested(depth: int) -> Any:
    value: Any = "deep"
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


HOSTILE += [nested(70), nested(1500)]


def base_url(catalog: Catalog, api: Api) -> str:
    app = catalog.app_of(api)
    return app.base_url or f"http://127.0.0.1:9/{app.app}"


def template(api: Api) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", api.http.path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


# A hostile value is drawn by its index and made in the test: hypothesis then never
# prints or stores a 70,000-character string or a 5,000-digit integer.
VALUES = st.tuples(st.just(True), st.integers(0, len(HOSTILE) - 1)) | st.tuples(
    st.just(False), st.text(max_size=20) | st.integers() | st.floats())

# Every example draws the same shape (all choices up front, none inside the test), so
# that what a call does can never change what hypothesis draws next.
CALLS = st.tuples(
    st.integers(0, 10**6),                                  # which API
    st.integers(0, 19),                                     # 0: args that are no object
    st.integers(0, 10**6),                                  # which of its examples
    st.lists(st.tuples(st.integers(0, 10**6), VALUES), min_size=1, max_size=3),
)


def hostile_args(api: Api, shape: int, example: int,
                 swaps: list[tuple[int, tuple[bool, Any]]]) -> Any:
    if shape == 0:                                          # not an object at all
        return [[], "", 0, False, "{}", [["a", 1]], 1.5][example % 7]
    start = dict(api.examples[example % len(api.examples)].args) if api.examples else {}
    names = [*api.args, "unknown_arg"]
    for which, (hostile, value) in swaps:
        start[names[which % len(names)]] = HOSTILE[value] if hostile else value
    return start


def assert_fits(catalog: Catalog, api: Api, args: Any, request: httpx.Request) -> None:
    """A request was made: so the arguments were valid, and it stays where it belongs."""
    jsonschema.Draft202012Validator(api.parameters).validate(args)
    base = httpx.URL(base_url(catalog, api))
    assert (request.url.scheme, request.url.host, request.url.port) == \
        (base.scheme, base.host, base.port)
    prefix = base.raw_path.decode().rstrip("/")
    path = request.url.raw_path.decode().split("?")[0]
    assert path.startswith(prefix + "/")
    assert template(api).fullmatch(path[len(prefix):]), path
    for name, value in request.headers.raw:
        assert b"\r" not in value and b"\n" not in value, name
    if request.headers.get("content-type", "").startswith("application/json"):
        json.loads(request.content, parse_constant=lambda c: pytest.fail(f"sent {c}"))


def nth_api(catalog: Catalog, n: int) -> Api:
    # not a fixture: hypothesis prints a test's arguments, and 1,619 APIs print long
    apis = catalog.filter()
    return apis[n % len(apis)]


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(call=CALLS)
def test_hostile_arguments_are_refused_or_make_a_request_that_fits(catalog, call):
    api = nth_api(catalog, call[0])
    args = hostile_args(api, *call[1:])
    try:
        request = build_request(api, args, base_url(catalog, api))
    except ToolbedError:
        return
    assert_fits(catalog, api, args, request)


@settings(max_examples=1000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(call=CALLS)
def test_an_agent_call_with_hostile_arguments_is_an_observation_never_a_crash(
        catalog, call):
    api = nth_api(catalog, call[0])
    args = hostile_args(api, *call[1:])
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={})

    env = {var: "secret-value" for app in catalog.apps.values() for var in app.auth.env_vars}
    apps = {name: RunningApp(name, f"http://127.0.0.1:9/{name}", 1, "1", "/tmp", "/tmp")
            for name, app in catalog.apps.items() if app.local}
    with Runtime(catalog, apps=apps, env=env, transport=httpx.MockTransport(answer)) as runtime:
        observation = runtime.observe(api.id, args)
    if observation.error is not None:
        assert not sent, "a refused call sent a request"
    else:
        assert len(sent) == 1
        assert_fits(catalog, api, args, sent[0])
