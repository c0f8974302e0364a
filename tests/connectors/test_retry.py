"""Idempotent requests are retried on connect errors, 429 and 5xx; others never."""

from __future__ import annotations

import httpx
import pytest
import tenacity

from toolbed.connectors import RetryPolicy, Runtime
from toolbed.errors import TransportError

FAST = RetryPolicy(attempts=3, backoff=0.0)


def scripted(*replies):
    """A transport answering with each reply in turn (an exception is raised)."""
    calls = []

    def handler(request):
        reply = replies[len(calls)]
        calls.append(request)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return httpx.MockTransport(handler), calls


def runtime(catalog, transport, retry=FAST):
    return Runtime(catalog, env={"DEMO_API_KEY": "k"}, transport=transport, retry=retry)


def test_get_is_retried_until_it_succeeds(demo_catalog):
    transport, calls = scripted(httpx.Response(503), httpx.Response(429), httpx.Response(200))
    with runtime(demo_catalog, transport) as rt:
        obs = rt.call("demo.get_item", {"item_id": "1"})
    assert obs.status == 200 and len(calls) == 3


def test_post_is_never_retried(demo_catalog):
    transport, calls = scripted(httpx.Response(503), httpx.Response(201))
    with runtime(demo_catalog, transport) as rt:
        obs = rt.call("demo.create_item", {"title": "x"})
    assert obs.status == 503 and len(calls) == 1


def test_last_response_is_returned_when_retries_run_out(demo_catalog):
    transport, calls = scripted(*[httpx.Response(502)] * 3)
    with runtime(demo_catalog, transport) as rt:
        assert rt.call("demo.get_item", {"item_id": "1"}).status == 502
    assert len(calls) == 3


def test_connect_errors_are_retried_then_reported(demo_catalog):
    transport, calls = scripted(*[httpx.ConnectError("refused")] * 3)
    with runtime(demo_catalog, transport) as rt, pytest.raises(TransportError) as err:
        rt.call("demo.get_item", {"item_id": "1"})
    assert len(calls) == 3
    assert "GET https://api.demo.example/v2/items/1 failed: ConnectError" in str(err.value)
    assert "k" not in str(err.value).split("failed")[0].split("?")[-1]  # no query, no key


def test_4xx_is_an_observation_not_a_retry(demo_catalog):
    transport, calls = scripted(httpx.Response(404, json={"error": "not found"}))
    with runtime(demo_catalog, transport) as rt:
        obs = rt.call("demo.get_item", {"item_id": "1"})
    assert (obs.status, obs.body, obs.ok, len(calls)) == (404, {"error": "not found"}, False, 1)


def state_after(response: httpx.Response, attempt: int = 1) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
    state.attempt_number = attempt
    state.set_result(response)
    return state


@pytest.mark.parametrize(
    ("headers", "attempt", "expected"),
    [
        ({"Retry-After": "7"}, 1, 7.0),
        ({"Retry-After": "3600"}, 1, 30.0),            # capped by max_wait
        ({}, 1, 0.5),                                  # exponential from backoff
        ({}, 3, 2.0),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 1, 0.0),  # a date in the past
    ],
)
def test_wait_honours_retry_after(headers, attempt, expected):
    wait = RetryPolicy().wait(state_after(httpx.Response(503, headers=headers), attempt))
    assert wait == expected


async def test_async_calls_retry_too(demo_catalog):
    transport, calls = scripted(httpx.Response(500), httpx.Response(200, json={"id": "1"}))
    rt = Runtime(demo_catalog, env={"DEMO_API_KEY": "k"}, async_transport=transport, retry=FAST)
    async with rt:
        obs = await rt.acall("demo.get_item", {"item_id": "1"})
    assert obs.body == {"id": "1"} and len(calls) == 2
