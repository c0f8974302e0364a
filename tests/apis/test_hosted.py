"""Every hosted API builds exactly the request its provider documents, offline.

Each hosted entry carries examples: real arguments and the request the provider's docs
show for them. ``request_mismatches`` builds the request through an httpx mock
transport (nothing reaches the network) and compares: method, URL path, query, the
documented headers, the body, and the credentials placed where the auth scheme says.
``check_live`` (``toolbed apis check --live``) is tested here on a mock transport too.
"""

from __future__ import annotations

import httpx
import pytest

from toolbed.apis import Catalog, load_catalog
from toolbed.connectors import (
    FAKE_SECRET,
    RetryPolicy,
    Runtime,
    built_request,
    check_live,
    request_mismatches,
)

HOSTED = [
    (api.id, i)
    for catalog in [load_catalog()]
    for api in catalog
    if catalog.app_of(api).tier == "hosted"
    for i in range(len(api.examples))
]


@pytest.mark.parametrize("api_id,index", HOSTED)
def test_hosted_example_builds_the_documented_request(
    catalog: Catalog, api_id: str, index: int
) -> None:
    api = catalog.api(api_id)
    assert request_mismatches(catalog, api, api.examples[index]) == []


def test_the_hosted_tier_is_broad() -> None:
    catalog = load_catalog()
    hosted = catalog.filter(tier="hosted")
    apps = {api.app for api in hosted}
    domains = {catalog.apps[a].domain for a in apps}
    assert len(hosted) >= 700 and len(apps) >= 60 and len(domains) >= 16


def test_every_demo_example_matches(demo_catalog: Catalog) -> None:
    for api in demo_catalog:
        for example in api.examples:
            assert request_mismatches(demo_catalog, api, example) == [], api.id


def test_a_wrong_path_or_parameter_is_caught(demo_catalog: Catalog) -> None:
    api = demo_catalog.api("demo.get_item")
    example = api.examples[0]
    wrong = example.model_copy(update={"request": example.request.model_copy(update={
        "url": "https://api.demo.example/v2/item/a%201?expand=owner&units=metric&min_rank=3"
    })})
    found = request_mismatches(demo_catalog, api, wrong)
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


def test_live_check_sorts_answers_into_ok_auth_gone_error(demo_catalog: Catalog) -> None:
    answers = iter([httpx.Response(200, json={}), httpx.Response(401), httpx.Response(404),
                    httpx.Response(500, text="boom")])

    def serve(request: httpx.Request) -> httpx.Response:
        return next(answers)

    reads = [api for api in demo_catalog if api.effect == "read"]
    env = {"DEMO_API_KEY": "k3y-value"}
    with Runtime(demo_catalog, env=env, apps={}, transport=httpx.MockTransport(serve),
                 retry=RetryPolicy(attempts=1)) as rt:
        verdicts = [h.verdict for api in reads * 2 for h in check_live(rt, [api])]
    assert verdicts == ["ok", "auth needed", "gone", "error"]

    with Runtime(demo_catalog, env={}, apps={}) as rt:  # no key: nothing is sent
        (health,) = check_live(rt, [demo_catalog.api("demo.get_item")])
    assert health.verdict == "auth needed" and "DEMO_API_KEY" in health.detail
