"""Credentials come from the environment, and a missing one is named."""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.conftest import DEMO
from toolbed.apis import App, Catalog
from toolbed.connectors import Runtime, auth_for
from toolbed.errors import CredentialError


def app_with(auth: dict) -> App:
    return App.model_validate({**DEMO, "auth": auth})


def test_api_key_in_query(demo_catalog):
    headers, params = auth_for(demo_catalog.app("demo"), {"DEMO_API_KEY": "k1"})
    assert (headers, params) == ({}, {"appid": "k1"})


def test_api_key_in_header_with_prefix():
    app = app_with({"scheme": "api_key", "in": "header", "name": "Authorization",
                    "env": "DEMO_TOKEN", "prefix": "Token "})
    assert auth_for(app, {"DEMO_TOKEN": "t"}) == ({"Authorization": "Token t"}, {})


def test_bearer_and_basic():
    bearer = app_with({"scheme": "bearer", "env": "DEMO_TOKEN"})
    assert auth_for(bearer, {"DEMO_TOKEN": "t"})[0] == {"Authorization": "Bearer t"}
    basic = app_with({"scheme": "basic", "user_env": "DEMO_USER", "password_env": "DEMO_PW"})
    header = auth_for(basic, {"DEMO_USER": "u", "DEMO_PW": "p"})[0]["Authorization"]
    assert base64.b64decode(header.removeprefix("Basic ")) == b"u:p"


def test_basic_auth_whose_user_is_the_call_s_argument(demo_catalog):
    # ihatemoney logs in per project: the user is the project the call is about
    basic = {"scheme": "basic", "user_env": "DEMO_USER", "password_env": "DEMO_PW",
             "user_arg": "item_id"}
    env = {"DEMO_USER": "u", "DEMO_PW": "p", "DEMO_API_KEY": "k"}
    sent: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200, json={}))
    catalog = Catalog([app_with(basic)])
    with Runtime(catalog, env=env, transport=transport) as rt:
        rt.call("demo.get_item", {"item_id": "trip-2026"})
    assert base64.b64decode(sent[0].headers["Authorization"][6:]) == b"trip-2026:p"
    header = auth_for(catalog.app("demo"), env, {})[0]["Authorization"]
    assert base64.b64decode(header[6:]) == b"u:p"              # no such argument: the env's
    with pytest.raises(ValueError, match="user_arg 'project' is no API's argument"):
        app_with({**basic, "user_arg": "project"})


def test_missing_env_key_is_named_and_nothing_is_sent(demo_catalog):
    sent = []
    transport = httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200))
    with Runtime(demo_catalog, env={}, transport=transport) as rt, pytest.raises(
        CredentialError
    ) as err:
        rt.call("demo.get_item", {"item_id": "1"})
    assert sent == []
    assert str(err.value) == (
        "demo needs the environment variable DEMO_API_KEY (API key); set it with "
        "`export DEMO_API_KEY=...` or get one at https://docs.demo.example/"
    )


def test_selfhosted_hint_points_at_apps_up():
    data = {**DEMO, "tier": "selfhosted", "base_url": None, "version": "1.0",
            "auth": {"scheme": "bearer", "env": "DEMO_TOKEN"}}
    app = Catalog([App.model_validate(data)]).app("demo")
    with pytest.raises(CredentialError, match="toolbed apps up demo"):
        auth_for(app, {})


def test_an_agent_calling_a_tool_without_its_key_gets_an_error_observation(demo_catalog):
    sent = []
    transport = httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200))
    with Runtime(demo_catalog, env={}, transport=transport) as rt:
        observation = rt.observe("demo.get_item", {"item_id": "1"})
    assert sent == [] and observation.error is not None
    assert observation.error.type == "CredentialError"
    assert "DEMO_API_KEY" in observation.error.message


SCHEMES = [
    {"scheme": "none"},
    {"scheme": "api_key", "in": "header", "name": "X-Key", "env": "K", "prefix": "Token "},
    {"scheme": "api_key", "in": "query", "name": "appid", "env": "K"},
    {"scheme": "bearer", "env": "T"},
    {"scheme": "basic", "user_env": "U", "password_env": "P"},
]


@pytest.mark.parametrize("auth", SCHEMES, ids=lambda a: f"{a['scheme']}-{a.get('in', '')}")
def test_each_scheme_reads_only_its_own_env_vars_and_makes_credentials_for_them(auth):
    scheme = app_with(auth).auth
    read: list[str] = []
    headers, params = scheme.apply(lambda var, what: read.append(var) or f"<{var}>")
    assert read == scheme.env_vars
    assert set(scheme.secret_env_vars) <= set(scheme.env_vars)
    fresh = scheme.fresh_credentials("alice", lambda var: f"secret-of-{var}")
    assert set(fresh) == set(scheme.env_vars)
    assert all(fresh[v] == f"secret-of-{v}" for v in scheme.secret_env_vars)
    # the credentials a launcher makes are the ones a call then sends
    again = scheme.apply(lambda var, what: fresh[var])
    assert set(again[0]) == set(headers) and set(again[1]) == set(params)
    if auth["scheme"] != "basic":                   # basic carries them base64-encoded
        sent = " ".join([*headers.values(), *params.values()])
        assert all(f"<{var}>" in sent for var in scheme.secret_env_vars)


@pytest.mark.parametrize(("auth", "openapi", "accepted"), [
    (SCHEMES[1], {"type": "apiKey", "in": "header", "name": "x-key"}, True),
    (SCHEMES[1], {"type": "apiKey", "in": "query", "name": "X-Key"}, False),
    (SCHEMES[3], {"type": "http", "scheme": "Bearer"}, True),
    (SCHEMES[3], {"type": "oauth2"}, True),
    (SCHEMES[3], {"type": "http", "scheme": "basic"}, False),
    (SCHEMES[4], {"type": "http", "scheme": "basic"}, True),
    (SCHEMES[0], {"type": "apiKey", "in": "query", "name": "key"}, True),
])
def test_each_scheme_knows_the_openapi_security_schemes_that_describe_it(
        auth, openapi, accepted):
    assert app_with(auth).auth.accepted_by(openapi) is accepted
