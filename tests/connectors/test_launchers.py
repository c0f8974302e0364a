"""Starting an app that cannot start, or is not installed, gives one clear error;
installing one twice at once installs it once."""

from __future__ import annotations

import os
import socket
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from toolbed.connectors import RunningApp, Runtime, running_apps, stop_app
from toolbed.errors import AppError, AppNotInstalledError, AppStartError
from toolbed.launchers import free_port, get_launcher, restart_app

pytestmark = pytest.mark.live


def test_a_port_already_taken_is_reported_with_the_apps_log(catalog):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        launcher = get_launcher("radicale", catalog)
        launcher.start_timeout = 10
        with pytest.raises(AppStartError) as err:
            launcher.start(port=port)
    message = str(err.value)
    assert message.startswith("radicale exited with code")
    assert "its log" in message and "Address already in use" in message


def test_an_app_that_is_not_installed_says_how_to_install_it(catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path))
    with pytest.raises(AppNotInstalledError) as err:
        get_launcher("kinto", catalog).start()
    assert str(err.value) == (
        "kinto 26.5.0 is needed but it is not installed; run `toolbed apps install kinto`"
    )


def test_two_installs_of_one_app_at_once_take_turns_and_install_it_once(
    catalog, tmp_path, monkeypatch
):
    """Two Ray workers of one node, or two `toolbed apps install`, may install the same
    app at the same moment: the second waits for the first, then finds it installed."""
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    runs = tmp_path / "runs.log"

    class SlowInstall(type(get_launcher("kinto", catalog))):
        def install_commands(self) -> list[list[str]]:      # a stand-in for pip's run
            return [[sys.executable, "-c",
                     f"import time; open({str(runs)!r}, 'a').write('x'); time.sleep(0.5)"]]

    launcher = SlowInstall(catalog.app("kinto"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        fresh = sorted(pool.map(lambda _: launcher.install(), range(2)))
    assert fresh == [False, True]
    assert runs.read_text() == "x"
    assert launcher.installed_version() == catalog.app("kinto").version


def test_stopping_removes_the_process_and_the_data(catalog):
    launcher = get_launcher("radicale", catalog)
    with launcher.running() as app:
        data_dir = app.data_dir
    assert not Path(data_dir).exists()
    with pytest.raises(ProcessLookupError):
        os.kill(app.pid, 0)


def test_free_port_is_on_loopback_and_unused():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # would raise if something held it


def test_running_apps_ignores_dead_records(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "kinto.json").write_text(
        '{"app": "kinto", "base_url": "http://127.0.0.1:1", "pid": 999999999, '
        '"version": "x", "data_dir": "/nonexistent", "log_path": "/nonexistent"}'
    )
    assert running_apps() == {}


def test_restarting_brings_back_the_seed_on_the_same_port_and_credentials(catalog):
    first = get_launcher("kinto", catalog).start()
    try:
        with Runtime(catalog, apps={"kinto": first}) as rt:
            assert rt.call("kinto.delete_bucket", {"bucket": "library"}).status == 200
        second = restart_app(first, catalog)
        try:
            assert (second.base_url, second.env) == (first.base_url, first.env)
            assert second.pid != first.pid and not Path(first.data_dir).exists()
            with Runtime(catalog, apps={"kinto": second}) as rt:   # same creds still work
                assert rt.call("kinto.get_bucket", {"bucket": "library"}).status == 200
        finally:
            stop_app(second)
    except BaseException:
        stop_app(first)   # if the restart failed half way (stopping twice is harmless)
        raise


def test_an_app_that_issues_its_own_token_is_not_restarted_in_place(catalog):
    synapse = RunningApp(app="synapse", base_url="http://127.0.0.1:1", pid=0, version="",
                         data_dir="/nonexistent", log_path="/nonexistent")
    with pytest.raises(AppError, match="issues its own token"):
        restart_app(synapse, catalog)


def test_an_mcp_server_is_reached_through_its_bridge_with_the_run_token(catalog):
    """The bridge: tools as routes behind a per-run token; a tool's own error is a 422
    whose body is the server's result; the server's refusals name what was wrong."""
    import httpx

    from toolbed.launchers import launch

    with launch("memory", catalog) as memory:
        token = memory.env["TOOLBED_MEMORY_TOKEN"]
        url = f"{memory.base_url}/tools"
        assert httpx.post(f"{url}/read_graph", json={}).status_code == 401
        wrong = {"Authorization": "Bearer " + "0" * len(token)}
        assert httpx.post(f"{url}/read_graph", json={}, headers=wrong).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{memory.base_url}/health").json()["tools"] == \
            len(catalog.app("memory").apis)
        unknown = httpx.post(f"{url}/forget_everything", json={}, headers=auth)
        assert unknown.status_code == 404 and "forget_everything" in unknown.text
        listed = httpx.post(f"{url}/open_nodes", json=["Priya Nair"], headers=auth)
        assert listed.status_code == 400 and "JSON object" in listed.text
        bad = httpx.post(f"{url}/open_nodes", json={"names": "Priya Nair"}, headers=auth)
        assert bad.status_code == 422 and bad.json()["isError"] is True
        with Runtime(catalog, apps={"memory": memory}) as runtime:
            found = runtime.call("memory.open_nodes", {"names": ["Priya Nair"]})
    assert found.ok and found.body["structuredContent"]["entities"][0]["name"] == "Priya Nair"
    assert token not in found.model_dump_json()


def test_datasette_is_ready_once_its_table_listing_shows_every_table(catalog):
    """Datasette's table listing lags up to a second behind the schema: right after a
    table is made, `get_database` does not list it. The start waits (`ready`) until it
    does, so a task that reads the listing first thing finds the seed's tables."""
    launcher = get_launcher("datasette", catalog)
    app = launcher.start()
    try:
        with Runtime(catalog, apps={"datasette": app}) as runtime:
            def listed() -> set[str]:
                body = runtime.call("datasette.get_database", {"database": "library"}).body
                return {table["name"] for table in body["tables"]}

            assert {"books", "authors"} <= listed()
            runtime.call("datasette.create_table", {
                "database": "library", "table": "wishlist",
                "columns": [{"name": "title", "type": "text"}]})
            launcher.ready(app)
            assert "wishlist" in listed()
    finally:
        stop_app(app)


def test_waiting_for_an_app_that_never_gets_ready_names_what_it_has_not_done(catalog):
    launcher = get_launcher("datasette", catalog)
    app = RunningApp(app="datasette", base_url="http://127.0.0.1:9", pid=0, version="",
                     data_dir="/nonexistent", log_path="/nonexistent/server.log")
    calls = []

    def pending() -> str:
        calls.append(1)
        return "the seed's tables are not listed"

    with pytest.raises(AppStartError) as err:
        launcher.wait_until(app, pending, timeout=0.3, interval=0.05)
    assert str(err.value) == ("datasette: the seed's tables are not listed 0.3 s after the "
                              "start; see /nonexistent/server.log")
    assert len(calls) > 1
