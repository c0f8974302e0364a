"""Record a run into a cassette, replay it offline, and keep secrets out of it."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from benchmarks._vcrpy import vcrpy_replay
from toolbed.connectors import Mode, Runtime, json_body, parse_mode
from toolbed.errors import CassetteNotFoundError, ReplayMissError, ToolbedError

KEY = "canary-key-0f9c2e71"


def server(request: httpx.Request) -> httpx.Response:
    """Stands in for the remote service while recording."""
    if request.method == "POST":
        body = json.loads(request.content)
        return httpx.Response(201, json={"id": "it-1", **body["data"], "password": "hunter22"})
    return httpx.Response(200, json={"id": "it-1", "echo_key": request.url.params.get("appid")})


def offline(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"replay reached the transport: {request.url}")


def record(catalog, path, calls):
    with Runtime(catalog, mode="record", cassette=path, env={"DEMO_API_KEY": KEY},
                 transport=httpx.MockTransport(server)) as rt:
        return [rt.call(api, args) for api, args in calls]


CALLS = [
    ("demo.create_item", {"title": "Milk", "tags": ["food"]}),
    ("demo.get_item", {"item_id": "it-1"}),
    ("demo.get_item", {"item_id": "it-1"}),
]


def test_replay_gives_the_recorded_observations_without_the_network(demo_catalog, tmp_path):
    path = tmp_path / "run.yaml"
    recorded = record(demo_catalog, path, CALLS)
    with Runtime(demo_catalog, mode="replay", cassette=path, env={},
                 transport=httpx.MockTransport(offline)) as rt:
        replayed = [rt.call(api, args) for api, args in CALLS]
    assert replayed == recorded
    assert recorded[0].body["password"] == "<redacted>"
    assert recorded[1].body["echo_key"] == "<DEMO_API_KEY>"


def test_secrets_never_reach_the_cassette(demo_catalog, tmp_path):
    path = tmp_path / "run.yaml"
    record(demo_catalog, path, CALLS)
    text = path.read_text()
    assert KEY not in text
    assert base64.b64encode(KEY.encode()).decode() not in text
    assert "hunter22" not in text
    assert "appid" not in text  # the key's query parameter is dropped whole


def test_a_request_that_was_not_recorded_is_a_clear_error(demo_catalog, tmp_path):
    path = tmp_path / "run.yaml"
    record(demo_catalog, path, CALLS[:1])
    with Runtime(demo_catalog, mode="replay", cassette=path,
                 transport=httpx.MockTransport(offline)) as rt, pytest.raises(
        ReplayMissError
    ) as err:
        rt.call("demo.get_item", {"item_id": "other"})
    message = str(err.value)
    assert "has no recorded response for GET https://api.demo.example/v2/items/other" in message
    assert "re-record with --mode record" in message
    # the nearest recording is named, with what differs
    assert "#1 POST https://api.demo.example/v2/items: differs in method" in message
    assert "path: /v2/items != /v2/items/other" in message


def test_each_recording_plays_once_in_order(demo_catalog, tmp_path):
    path = tmp_path / "run.yaml"
    record(demo_catalog, path, CALLS[1:2])
    with Runtime(demo_catalog, mode="replay", cassette=path,
                 transport=httpx.MockTransport(offline)) as rt:
        assert rt.call("demo.get_item", {"item_id": "it-1"}).status == 200
        with pytest.raises(ReplayMissError, match="the same request, already played"):
            rt.call("demo.get_item", {"item_id": "it-1"})


def test_a_recording_that_fails_or_is_discarded_keeps_the_earlier_cassette(
    demo_catalog, tmp_path
):
    path = tmp_path / "run.yaml"
    record(demo_catalog, path, CALLS[1:2])
    earlier = path.read_bytes()

    with pytest.raises(RuntimeError), Runtime(
        demo_catalog, mode="record", cassette=path, env={"DEMO_API_KEY": KEY},
        transport=httpx.MockTransport(server),
    ) as rt:
        rt.call(*CALLS[0])
        raise RuntimeError("the run broke half way")
    assert path.read_bytes() == earlier

    with Runtime(demo_catalog, mode="record", cassette=path, env={"DEMO_API_KEY": KEY},
                 transport=httpx.MockTransport(server)) as rt:
        rt.call(*CALLS[0])
        assert rt.cassette is not None
        rt.cassette.discard()
    assert path.read_bytes() == earlier
    assert [p.name for p in tmp_path.iterdir()] == ["run.yaml"]

    record(demo_catalog, path, CALLS[:1])
    assert path.read_bytes() != earlier


def test_missing_cassette(demo_catalog, tmp_path):
    with pytest.raises(CassetteNotFoundError) as err:
        Runtime(demo_catalog, mode="replay", cassette=tmp_path / "nope.yaml").open()
    assert "no cassette at" in str(err.value) and "--mode record" in str(err.value)


def test_record_and_replay_need_a_cassette_path(demo_catalog):
    with pytest.raises(ToolbedError, match="needs a cassette path"):
        Runtime(demo_catalog, mode="replay")


def test_unknown_mode_lists_the_valid_ones():
    assert parse_mode("replay") is Mode.REPLAY
    with pytest.raises(ToolbedError, match="use one of: live, record, replay"):
        parse_mode("playback")


class _R:
    def __init__(self, body):
        self.body = body


def test_json_body_matcher_compares_parsed_json():
    json_body(_R(b'{"a": 1, "b": 2}'), _R(b'{"b":2,"a":1}'))
    json_body(_R(b"BEGIN:VCALENDAR"), _R(b"BEGIN:VCALENDAR"))
    with pytest.raises(AssertionError):
        json_body(_R(b'{"a": 1}'), _R(b'{"a": 2}'))
    with pytest.raises(AssertionError):
        json_body(_R(b"x"), _R(b"y"))


def test_a_mode_says_what_it_implies_and_the_runtime_answers_for_it(demo_catalog, tmp_path):
    assert [m for m in Mode if m.offline] == [Mode.REPLAY]
    assert [m for m in Mode if not m.concurrent] == [Mode.RECORD]
    assert [m for m in Mode if not m.uses_cassette] == [Mode.LIVE]
    assert all(m.can_restart is not m.offline for m in Mode)
    replay = Runtime(demo_catalog, mode="replay", cassette=tmp_path / "c.yaml", apps={})
    live = Runtime(demo_catalog, mode="live", apps={})
    assert (replay.offline, replay.can_restart) == (True, False)
    assert (live.offline, live.can_restart) == (False, True)


def test_a_time_relative_to_the_run_replays_as_recorded_days_later(demo_catalog, tmp_path,
                                                                    monkeypatch):
    from toolbed.apis import Step
    from toolbed.connectors import run_steps

    tomorrow = Step(api="demo.create_item", args={"tags": ["reminder"]},
                    bind={"title": "join('', ['standup ', iso(at(`1`, '09:00'))])"})
    path = tmp_path / "run.yaml"
    with Runtime(demo_catalog, mode="record", cassette=path, env={"DEMO_API_KEY": KEY},
                 transport=httpx.MockTransport(server)) as rt:
        [recorded] = run_steps(rt, None, [tomorrow])
    title = recorded.args["title"]
    assert title.startswith("standup ") and title.endswith("T09:00:00Z")
    assert f"toolbed_clock: {rt.clock}" in path.read_text()

    real = __import__("time").time
    monkeypatch.setattr("time.time", lambda: real() + 3 * 86400)     # three days on
    with Runtime(demo_catalog, mode="replay", cassette=path, env={},
                 transport=httpx.MockTransport(offline)) as rt:
        [replayed] = run_steps(rt, None, [tomorrow])
    assert replayed.args["title"] == title and replayed.observation.ok
    with Runtime(demo_catalog, mode="live", env={"DEMO_API_KEY": KEY},
                 transport=httpx.MockTransport(server)) as rt:
        [live] = run_steps(rt, None, [tomorrow])
    assert live.args["title"] != title          # a live run is three days later


def test_the_index_answers_as_vcrpy_did(demo_catalog, tmp_path):
    """vcrpy's own player, with the same filters and matchers, gives the same
    observations as the index: bodies compared as JSON, a request repeated."""
    path = tmp_path / "run.yaml"
    recorded = record(demo_catalog, path, CALLS)
    calls = [("demo.create_item", {"tags": ["food"], "title": "Milk"}), *CALLS[1:]]
    with Runtime(demo_catalog, mode="replay", cassette=path, env={}) as rt:
        indexed = [rt.call(api, args) for api, args in calls]
    with vcrpy_replay(), Runtime(demo_catalog, mode="replay", cassette=path, env={}) as rt:
        replayed = [rt.call(api, args) for api, args in calls]
    assert indexed == replayed == recorded


def test_other_clients_of_the_task_are_answered_from_its_cassette(demo_catalog, tmp_path):
    """A chat model's or a judge's own httpx client, recorded into the task's cassette,
    replays from it too, and only in the thread that replays."""
    path = tmp_path / "run.yaml"
    with Runtime(demo_catalog, mode="record", cassette=path, env={"DEMO_API_KEY": KEY},
                 transport=httpx.MockTransport(server)) as rt:
        rt.call(*CALLS[1])
    with Runtime(demo_catalog, mode="replay", cassette=path, env={}) as rt:
        with httpx.Client() as model_client:
            answer = model_client.get("https://api.demo.example/v2/items/it-1?units=metric")
        assert answer.status_code == 200 and answer.json()["id"] == "it-1"
        with pytest.raises(ReplayMissError):   # played once, like any recording
            rt.call(*CALLS[1])
    assert httpx.HTTPTransport.handle_request.__name__ == "handle_request"
    assert "toolbed" not in httpx.HTTPTransport.handle_request.__module__


def test_tasks_replay_side_by_side_each_from_its_own_cassette(demo_catalog, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    paths = []
    for n in range(4):
        paths.append(tmp_path / f"task{n}.yaml")
        record(demo_catalog, paths[-1], [("demo.create_item", {"title": f"item {n}"})])

    def replay(path):
        with Runtime(demo_catalog, mode="replay", cassette=path, env={}) as rt:
            return rt.call("demo.create_item", {"title": f"item {path.stem[-1]}"}).body["title"]

    with ThreadPoolExecutor(4) as pool:
        titles = list(pool.map(replay, paths))
    assert titles == [f"item {n}" for n in range(4)]
