"""Every catalog API of every self-hosted app, called live against the real app.

Each test starts a fresh app on 127.0.0.1 (free port, temporary data dir, new
credentials) and stops it afterwards, also when the test fails.
"""

from __future__ import annotations

import base64
import os
from contextlib import ExitStack

import pytest

from toolbed.connectors import Runtime, run_exercise
from toolbed.launchers import launch, launcher_names

pytestmark = pytest.mark.live

APPS = launcher_names()


def failures(results) -> str:
    return "\n".join(
        f"{r.api_id} {r.args} -> {r.observation.status} "
        f"{r.observation.error or str(r.observation.body)[:300]}"
        for r in results if not r.ok
    )


@pytest.mark.parametrize("name", APPS)
def test_every_api_answers_live(catalog, name):
    with launch(name, catalog) as app, Runtime(catalog, apps={name: app}) as rt:
        results = run_exercise(rt, name)
    assert all(r.ok for r in results), failures(results)
    called = {r.api_id for r in results}
    assert called == {api.id for api in catalog.filter(app=name)}


def test_record_then_replay_with_the_apps_stopped_gives_identical_observations(
    catalog, tmp_path
):
    """Both apps in one cassette: requests match on app, not on their random ports."""
    cassette = tmp_path / "both.yaml"
    with ExitStack() as stack:
        apps = {name: stack.enter_context(launch(name, catalog)) for name in APPS}
        with Runtime(catalog, mode="record", cassette=cassette, apps=apps) as rt:
            recorded = [r.observation for name in APPS for r in run_exercise(rt, name)]
    assert [o.error for o in recorded if o.error] == []  # a failed call is never recorded
    # the apps are stopped now: their process groups are gone, their ports closed
    with Runtime(catalog, mode="replay", cassette=cassette, apps={}) as rt:
        replayed = [r.observation for name in APPS for r in run_exercise(rt, name)]
    assert len(recorded) == sum(len(catalog.app(name).exercise) for name in APPS)
    assert replayed == recorded
    requests = [line for line in cassette.read_text().splitlines() if "uri: " in line]
    assert requests and all("127.0.0.1" not in line for line in requests)


def test_a_canary_secret_never_appears_in_a_cassette(catalog, tmp_path, monkeypatch):
    canary = "canary-3b1f9d2a7c"
    monkeypatch.setenv("TOOLBED_KINTO_PASSWORD", canary)
    cassette = tmp_path / "kinto.yaml"
    with launch("kinto", catalog) as app, Runtime(
        catalog, mode="record", cassette=cassette, apps={"kinto": app}
    ) as rt:
        assert app.env["TOOLBED_KINTO_PASSWORD"] == canary  # the app really uses it
        observations = [r.observation for r in run_exercise(rt, "kinto")]
    text = cassette.read_text()
    assert "interactions" in text and len(observations) > 20
    assert canary not in text
    assert base64.b64encode(f"admin:{canary}".encode()).decode() not in text
    assert "authorization" not in text.lower()
    assert all(canary not in o.model_dump_json() for o in observations)


@pytest.mark.parametrize("name", APPS)
def test_apps_listen_on_loopback_only(catalog, name):
    with launch(name, catalog) as app:
        listening = _listening_addresses(app.port)
    assert listening == {"127.0.0.1"}


async def test_async_calls_against_a_live_app(catalog, kinto):
    async with Runtime(catalog, apps={"kinto": kinto}) as rt:
        info = await rt.acall("kinto.get_server_info")
        missing = await rt.aobserve("kinto.get_bucket", {"bucket": "no-such-bucket"})
    assert info.status == 200 and info.body["project_name"] == "kinto"
    assert missing.status in (403, 404) and missing.error is None


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket in LISTEN state on ``port`` (from /proc)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        with open(table) as fh:
            next(fh)
            for line in fh:
                local, state = line.split()[1], line.split()[3]
                addr, hexport = local.split(":")
                if state == "0A" and int(hexport, 16) == port:
                    if width == 8:
                        found.add(".".join(str(b) for b in reversed(bytes.fromhex(addr))))
                    else:
                        found.add("ipv6:" + addr)
    return found


def test_datasette_reaches_a_table_whose_name_is_chinese_with_a_space_and_a_dot(catalog):
    name = "家庭 账本.2026"
    with launch("datasette", catalog) as app, Runtime(catalog, apps={"datasette": app}) as rt:
        made = rt.call("datasette.create_table", {
            "database": "household", "table": name, "pk": "id",
            "rows": [{"id": 1, "item": "房租", "amount": 4200}]})
        assert made.status == 201, made.body
        second = {"id": 2, "item": "水费", "amount": 86}
        added = rt.call("datasette.insert_rows",
                        {"database": "household", "table": name, "rows": [second]})
        assert added.status == 201, added.body
        rows = rt.call("datasette.list_rows", {"database": "household", "table": name})
        assert rows.status == 200 and [r["item"] for r in rows.body["rows"]] == ["房租", "水费"]
        dropped = rt.call("datasette.drop_table", {"database": "household", "table": name,
                                                    "confirm": True})
        assert dropped.status == 200, dropped.body
