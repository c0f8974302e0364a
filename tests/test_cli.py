"""The command line, used the way the README shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.cli import app
from toolbed.connectors import process_alive
from toolbed.paths import home_dir

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_apis_list_json_has_the_documented_fields(catalog):
    result = run("apis", "list", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == len(catalog)
    assert {"id", "app", "domain", "tier", "effect", "emulator"} <= set(rows[0])
    assert {r["app"] for r in rows} >= {"kinto", "radicale"}


def test_apis_list_filters(catalog):
    rows = json.loads(run("apis", "list", "--app", "kinto", "--json").stdout)
    assert rows and {r["app"] for r in rows} == {"kinto"}
    rows = json.loads(run("apis", "list", "--tier", "hosted", "--json").stdout)
    assert all(r["tier"] == "hosted" for r in rows)
    table = run("apis", "list", "--app", "radicale")
    assert table.exit_code == 0 and "radicale.create_event" in table.stdout


def test_apis_show(catalog):
    result = run("apis", "show", "kinto.create_record", "--json")
    data = json.loads(result.stdout)
    assert data["effect"] == "write" and data["undo"]["api"]
    assert data["parameters"]["type"] == "object"
    assert data["queries"] and all(isinstance(q, str) for q in data["queries"])
    human = run("apis", "show", "radicale.create_event")
    assert human.exit_code == 0 and "undo:" in human.stdout and "asked as: " in human.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["apis", "show", "kinto.nope"], "Error: unknown API 'kinto.nope'"),
        (["apis", "list", "--app", "nope"], "Error: unknown app 'nope'; the catalog has:"),
        (["call", "kinto.list_buckets", "--args", "{bad"], "Error: --args is not valid JSON"),
        (["call", "kinto.list_buckets", "--mode", "tape"], "Error: unknown mode 'tape'"),
        (["call", "kinto.get_bucket", "--args", '{"bucket": "../../admin"}', "--mode", "replay",
          "--cassette", "/nonexistent/c.yaml"], "Error: no cassette at /nonexistent/c.yaml"),
        (["apps", "up", "nope"], "Error: no self-hosted app 'nope'; known: "),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, message):
    result = run(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message), result.stderr
    assert "Traceback" not in result.output


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """A fresh TOOLBED_HOME that shares the installed apps but not the run state."""
    apps = home_dir() / "apps"
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path))
    (tmp_path / "apps").symlink_to(apps)
    yield tmp_path
    run("apps", "down")


@pytest.mark.live
def test_apps_up_call_status_down(isolated_home, tmp_path):
    up = run("apps", "up", "kinto")
    assert up.exit_code == 0, up.output
    assert "kinto 26.5.0: up at http://127.0.0.1:" in up.stdout

    status = json.loads(run("apps", "status", "--json").stdout)
    kinto = next(r for r in status if r["app"] == "kinto")
    assert kinto["running"] and kinto["health"] == "ok"
    assert kinto["url"].startswith("http://127.0.0.1:")

    created = run("call", "kinto.create_bucket", "--args", '{"bucket": "household"}')
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["status"] == 201
    listed = json.loads(run("call", "kinto.list_buckets").stdout)
    assert "household" in [b["id"] for b in listed["body"]["data"]]

    bad = run("call", "kinto.get_bucket", "--args", '{"bucket": "../../admin"}')
    assert bad.exit_code == 1 and "not a single path segment" in bad.stderr

    cassette = tmp_path / "one.yaml"
    rec = run("call", "kinto.list_buckets", "--mode", "record", "--cassette", str(cassette))
    assert rec.exit_code == 0 and cassette.is_file()

    down = run("apps", "down", "kinto")
    assert down.exit_code == 0 and "kinto: stopped" in down.stdout
    assert not json.loads(run("apps", "status", "--json").stdout)[0]["running"]

    stopped = run("call", "kinto.list_buckets")
    assert stopped.exit_code == 1
    assert "kinto is not running; start it with `toolbed apps up kinto`" in stopped.stderr
    replay = run("call", "kinto.list_buckets", "--mode", "replay", "--cassette", str(cassette))
    assert replay.exit_code == 0
    assert json.loads(replay.stdout) == json.loads(rec.stdout)


@pytest.mark.live
def test_exercise_with_rollback_refuses_irreversible_writes_unless_allowed(isolated_home):
    assert run("apps", "up", "radicale").exit_code == 0

    refused = run("apps", "exercise", "radicale", "--rollback", "--json")
    assert refused.exit_code == 1  # the exercise's irreversible deletes were refused
    data = json.loads(refused.stdout)
    errors = [c["error"] or "" for c in data["calls"] if not c["ok"]]
    assert errors and all("cannot be undone" in e for e in errors[:1])
    (report,) = data["rollback"]
    assert not [e for e in report["entries"] if e["status"] == "irreversible"]

    allowed = run("apps", "exercise", "radicale", "--rollback", "--allow-irreversible", "--json")
    assert allowed.exit_code == 0, allowed.output
    (report,) = json.loads(allowed.stdout)["rollback"]
    irreversible = [e["api"] for e in report["entries"] if e["status"] == "irreversible"]
    assert irreversible == ["radicale.delete_calendar", "radicale.delete_addressbook",
                            "radicale.delete_calendar"]
    assert report["collateral"] == []


def test_apis_check_compares_every_example_with_its_documented_request():
    result = run("apis", "check", "--app", "github", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) >= 20 and all(r["mismatches"] == [] for r in rows)


def test_the_readme_catalog_table_is_the_catalog_s(tmp_path):
    readme = Path(__file__).parents[1] / "README.md"
    copy = tmp_path / "README.md"
    copy.write_text(readme.read_text())
    for tier in ("hosted", "selfhosted", "mcp"):
        assert run("apis", "table", "--tier", tier, "--update", str(copy)).exit_code == 0
        assert run("apis", "table", "--tier", tier).stdout in readme.read_text()
    assert copy.read_text() == readme.read_text(), (
        "run `toolbed apis table --tier TIER --update README.md` for every tier")


def test_a_damaged_run_record_is_reported_and_no_second_instance_is_started(isolated_home):
    records = isolated_home / "run"
    records.mkdir(exist_ok=True)
    (records / "kinto.json").write_text('{"app": "kinto", "base_url": "http://127.0.0.1:')
    status = run("apps", "status", "--json")
    assert status.exit_code == 0
    [kinto] = [row for row in json.loads(status.output) if row["app"] == "kinto"]
    assert kinto["running"] is False and "damaged" in kinto["health"]
    up = run("apps", "up", "kinto")
    assert up.exit_code == 1 and "kinto.json is damaged" in up.output
    assert "delete the file" in up.output
    (records / "kinto.json").unlink()


@pytest.mark.live
def test_apps_a_killed_command_started_are_stopped_by_the_next_command(isolated_home):
    child = subprocess.Popen([sys.executable, "-c", (
        "import json, sys, time\n"
        "from toolbed.connectors import own\nfrom toolbed.launchers import get_launcher\n"
        "app = own(get_launcher('kinto').start())\n"
        "print(json.dumps({'pid': app.pid, 'data': app.data_dir}), flush=True)\n"
        "time.sleep(120)\n")], stdout=subprocess.PIPE, text=True)
    try:
        started = json.loads(child.stdout.readline())
    finally:
        child.kill()                                  # SIGKILL: no finally of its own runs
        child.wait()
    assert process_alive(started["pid"]) and Path(started["data"]).is_dir()
    assert list((isolated_home / "run").glob("kinto.owned-*.json"))
    result = run("apps", "status", "--json")
    assert result.exit_code == 0
    assert "stopped kinto" in result.output and "left running by a toolbed command" in \
        result.output
    assert not process_alive(started["pid"])
    assert not Path(started["data"]).exists()          # its credentials went with it
    assert not list((isolated_home / "run").glob("kinto*.json"))
