"""Every hosted API builds exactly the request its provider documents, offline.

Each hosted entry carries examples: real arguments and the request the provider's docs
show for them. The runtime builds the request through an httpx mock transport (nothing
reaches the network) and it must match: method, URL path, query parameters, the
documented headers, the body, and the credentials placed where the auth scheme says.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any
from urllib.parse import parse_qsl, unquote

import httpx
import pytest

from toolbed.apis import (
    Api, ApiKeyAuth, App, BasicAuth, BearerAuth, Catalog, Example, load_catalog,
)
from toolbed.connectors import Runtime

FAKE_SECRET = "fake-credential-0123"


def _hosted(catalog: Catalog) -> list[tuple[str, int]]:
    return [
        (api.id, i)
        for api in catalog
        if catalog.app_of(api).tier == "hosted"
        for i in range(len(api.examples))
    ]


def built_request(catalog: Catalog, api: Api, example: Example) -> httpx.Request:
    """Send the example through the runtime into a mock transport; return what it got."""
    app = catalog.app_of(api)
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    env = {var: FAKE_SECRET for var in app.auth.env_vars}
    with Runtime(catalog, env=env, apps={}, transport=httpx.MockTransport(answer)) as rt:
        rt.call(api.id, example.args)
    (request,) = seen
    return request


def mismatches(app: App, example: Example, request: httpx.Request) -> list[str]:
    """How ``request`` differs from ``example.request``; empty when it matches."""
    want = example.request
    want_url = httpx.URL(want.url)
    problems = []
    if request.method != want.method.upper():
        problems.append(f"method {request.method} != {want.method}")
    got_where = (request.url.scheme, request.url.host, unquote(request.url.path))
    want_where = (want_url.scheme, want_url.host, unquote(want_url.path))
    if got_where != want_where:
        problems.append(f"URL {got_where} != {want_where}")

    query = Counter(parse_qsl(request.url.query.decode(), keep_blank_values=True))
    auth = app.auth
    if isinstance(auth, ApiKeyAuth) and auth.location == "query":
        key = (auth.name, auth.prefix + FAKE_SECRET)
        if query[key] != 1:
            problems.append(f"query parameter {auth.name} does not carry the key")
        query.pop(key, None)
    want_query = Counter(parse_qsl(want_url.query.decode(), keep_blank_values=True))
    if query != want_query:
        problems.append(f"query {sorted(query.elements())} != {sorted(want_query.elements())}")

    for name, value in want.headers.items():
        if request.headers.get(name) != value:
            problems.append(f"header {name}: {request.headers.get(name)!r} != {value!r}")
    expected_auth = _auth_header(auth)
    if expected_auth and request.headers.get(expected_auth[0]) != expected_auth[1]:
        problems.append(f"auth header {expected_auth[0]} missing or wrong")

    problems.extend(_body_mismatches(want.json_, want.form, want.content, request))
    return problems


def _auth_header(auth: Any) -> tuple[str, str] | None:
    if isinstance(auth, ApiKeyAuth) and auth.location == "header":
        return auth.name, auth.prefix + FAKE_SECRET
    if isinstance(auth, BearerAuth):
        return "Authorization", f"Bearer {FAKE_SECRET}"
    if isinstance(auth, BasicAuth):
        token = base64.b64encode(f"{FAKE_SECRET}:{FAKE_SECRET}".encode()).decode()
        return "Authorization", f"Basic {token}"
    return None


def _body_mismatches(
    want_json: Any, want_form: dict[str, str] | None, want_content: str | None,
    request: httpx.Request,
) -> list[str]:
    body = request.content
    if want_json is not None:
        try:
            got = json.loads(body)
        except ValueError:
            return [f"body is not JSON: {body[:80]!r}"]
        return [] if got == want_json else [f"JSON body {got} != {want_json}"]
    if want_form is not None:
        got_form = dict(parse_qsl(body.decode(), keep_blank_values=True))
        return [] if got_form == want_form else [f"form body {got_form} != {want_form}"]
    if want_content is not None:
        got_text = body.decode()
        return [] if got_text == want_content else [f"body {got_text!r} != {want_content!r}"]
    return [f"unexpected body {body[:80]!r}"] if body else []


@pytest.mark.parametrize("api_id,index", _hosted(load_catalog()))
def test_hosted_example_builds_the_documented_request(
    catalog: Catalog, api_id: str, index: int
) -> None:
    api = catalog.api(api_id)
    example = api.examples[index]
    request = built_request(catalog, api, example)
    assert mismatches(catalog.app_of(api), example, request) == []


def test_every_demo_example_matches(demo_catalog: Catalog) -> None:
    for api in demo_catalog:
        for example in api.examples:
            request = built_request(demo_catalog, api, example)
            assert mismatches(demo_catalog.app_of(api), example, request) == [], api.id


def test_a_wrong_path_or_parameter_is_caught(demo_catalog: Catalog) -> None:
    api = demo_catalog.api("demo.get_item")
    example = api.examples[0]
    request = built_request(demo_catalog, api, example)
    wrong = example.model_copy(update={"request": example.request.model_copy(update={
        "url": "https://api.demo.example/v2/item/a%201?expand=owner&units=metric&min_rank=3"
    })})
    found = mismatches(demo_catalog.app_of(api), wrong, request)
    assert any(p.startswith("URL") for p in found)
    assert any(p.startswith("query") for p in found)


def test_the_key_goes_where_the_auth_scheme_says(demo_catalog: Catalog) -> None:
    api = demo_catalog.api("demo.get_item")
    request = built_request(demo_catalog, api, api.examples[0])
    assert request.url.params["appid"] == FAKE_SECRET


def test_hosted_entries_are_complete(catalog: Catalog) -> None:
    ids = [api.id for api in catalog]
    assert len(ids) == len(set(ids))
    for api in catalog:
        app = catalog.app_of(api)
        if app.tier != "hosted":
            continue
        assert (api.docs or app.docs).startswith("https://"), api.id
        assert len(api.description) >= 40, api.id
        assert api.examples, api.id
        for arg in api.args.values():
            assert arg.schema_.get("description"), api.id
