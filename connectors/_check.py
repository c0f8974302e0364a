"""Check catalog entries against their documentation (offline) and their service (live).

Every hosted API carries examples: real arguments and the request the provider's docs
show for them. ``request_mismatches`` builds that request through the runtime into an
httpx mock transport (nothing reaches the network) and lists how it differs: method,
URL path, query parameters, the documented headers, the body, and the credentials put
where the auth scheme says. ``check_live`` calls each read API once with its example
and sorts the answers the way a user triaging availability needs: ok, auth needed,
gone, or error.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote

import httpx
from pydantic import BaseModel

from toolbed.apis import Api, App, Catalog, Example
from toolbed.errors import CredentialError, ToolbedError

from ._runtime import Runtime

__all__ = ["FAKE_SECRET", "Health", "built_request", "check_live", "request_mismatches"]

FAKE_SECRET = "fake-credential-0123"
"""The credential the offline check puts in every auth env var."""


def built_request(catalog: Catalog, api: Api, example: Example) -> httpx.Request:
    """The request the runtime sends for ``example``, caught by a mock transport."""
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


def request_mismatches(catalog: Catalog, api: Api, example: Example) -> list[str]:
    """How the request built from ``example`` differs from the documented one."""
    app = catalog.app_of(api)
    request = built_request(catalog, api, example)
    want = example.request
    want_url = httpx.URL(want.url)
    problems = []
    if request.method != want.method.upper():
        problems.append(f"method {request.method} != {want.method}")
    got_where = (request.url.scheme, request.url.host, unquote(request.url.path))
    want_where = (want_url.scheme, want_url.host, unquote(want_url.path))
    if got_where != want_where:
        problems.append(f"URL {got_where} != {want_where}")
    problems.extend(_query_mismatches(app, request, want_url))
    for name, value in want.headers.items():
        if request.headers.get(name) != value:
            problems.append(f"header {name}: {request.headers.get(name)!r} != {value!r}")
    for name, value in _fake_credentials(app)[0].items():
        if request.headers.get(name) != value:
            problems.append(f"auth header {name} missing or wrong")
    problems.extend(_body_mismatches(want.json_, want.form, want.content, request.content))
    return problems


def _query_mismatches(app: App, request: httpx.Request, want_url: httpx.URL) -> list[str]:
    query = Counter(parse_qsl(request.url.query.decode(), keep_blank_values=True))
    problems = []
    for key in _fake_credentials(app)[1].items():
        if query[key] != 1:
            problems.append(f"query parameter {key[0]} does not carry the key")
        query.pop(key, None)
    want = Counter(parse_qsl(want_url.query.decode(), keep_blank_values=True))
    if query != want:
        problems.append(f"query {sorted(query.elements())} != {sorted(want.elements())}")
    return problems


def _fake_credentials(app: App) -> tuple[dict[str, str], dict[str, str]]:
    """The ``(headers, query params)`` the app's auth adds when every variable it reads
    holds ``FAKE_SECRET``."""
    return app.auth.apply(lambda var, what: FAKE_SECRET)


def _body_mismatches(
    want_json: Any, want_form: dict[str, str] | None, want_content: str | None, body: bytes
) -> list[str]:
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


Verdict = Literal["ok", "auth needed", "gone", "error"]


class Health(BaseModel):
    """How one API answered its example."""

    api: str
    verdict: Verdict
    status: int | None = None
    detail: str = ""


def check_live(runtime: Runtime, apis: Iterable[Api]) -> list[Health]:
    """Call each read API once with its first example; never calls a write."""
    out = []
    for api in apis:
        if api.effect != "read" or not api.examples:
            continue
        try:
            obs = runtime.call(api.id, api.examples[0].args)
        except CredentialError as exc:
            out.append(Health(api=api.id, verdict="auth needed", detail=str(exc)))
            continue
        except ToolbedError as exc:
            out.append(Health(api=api.id, verdict="error", detail=str(exc)))
            continue
        status = obs.status or 0
        verdict: Verdict
        if 200 <= status < 300:
            verdict = "ok"
        elif status in (401, 403):
            verdict = "auth needed"
        elif status in (404, 410):
            verdict = "gone"
        else:
            verdict = "error"
        detail = "" if verdict == "ok" else str(obs.body)[:160]
        out.append(Health(api=api.id, verdict=verdict, status=status, detail=detail))
    return out
