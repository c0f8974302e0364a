"""Evaluations on a Ray cluster (`toolbed eval --ray`): a local cluster of two workers on
this machine gives the rows one process gives, replaying and recording live, also when
a worker is killed in the middle of the run, and leaves no write undone and no app
running."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.errors import ClusterError, JournalError
from toolbed.harness import (
    AgentOptions,
    Evaluation,
    OracleAgent,
    RayCluster,
    TaskResult,
    check_address,
    make_agent,
)
from toolbed.paths import home_dir
from toolbed.retriever import ToolIndex, tool_documents
from toolbed.rollback import OPEN, Journal
from toolbed.tasks import Task, TaskSuite, load_tasks

from .conftest import ScriptedOpenAI

pytestmark = pytest.mark.live          # a Ray cluster's servers, and apps, on this machine


@pytest.fixture(scope="module")
def suite() -> TaskSuite:
    return load_tasks()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A TOOLBED_HOME of this test's own (the installed apps linked in): the Ray workers
    inherit it, and make their homes in it."""
    apps = home_dir() / "apps"
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "apps").symlink_to(apps)
    yield tmp_path / "home"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def comparable(rows: list[dict[str, Any]], live: bool) -> list[dict[str, Any]]:
    """The rows as a comparison of two runs sees them: in a live run, the wall time
    differs, and so do the values each app instance made up (ids, timestamps)."""
    if not live:
        return rows
    return [{key: row[key] for key in ("task", "trial", "success", "completion",
                                       "tool_match", "scores", "errors", "problems")}
            | {"apis": [c["api"] for c in row["trajectory"]["calls"]]} for row in rows]


def results(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def open_writes(worker_home: Path) -> list[Any]:
    path = worker_home / "rollback" / "journal.db"
    if not path.exists():
        return []
    try:
        journal = Journal(path, readonly=True)
    except JournalError:                        # created but not yet a journal
        return []
    try:
        return journal.entries(statuses=OPEN)
    finally:
        journal.close()


def test_an_unreachable_or_malformed_cluster_address_is_one_clear_error_within_seconds(
    home: Path,
) -> None:
    address = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(ClusterError, match=f"cannot reach the Ray cluster at {address}"):
        check_address(address)
    assert time.monotonic() - started < 6
    with pytest.raises(ClusterError, match="give local .* HOST:PORT"):
        check_address("my-laptop")
    with ScriptedOpenAI([{"content": "-"}]) as web:       # an HTTP/1 server, not Ray's head
        other = web.url.removeprefix("http://").removesuffix("/v1")
        started = time.monotonic()
        with pytest.raises(ClusterError, match="answers, but not as a Ray cluster"):
            check_address(other)
        assert time.monotonic() - started < 6

    out = CliRunner().invoke(cli, ["eval", "--agent", "oracle", "--mode", "replay",
                                   "--limit", "1", "--ray", address])
    assert out.exit_code == 1
    assert out.stderr.startswith(f"Error: cannot reach the Ray cluster at {address}")
    assert "Traceback" not in out.output
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())

    not_yet = CliRunner().invoke(cli, ["eval", "--turns", "multi", "--ray", "local"])
    assert not_yet.exit_code == 2 and "--ray runs single-turn tasks" in not_yet.output

    chroma = f"http://127.0.0.1:{closed_port()}"
    no_index = CliRunner().invoke(cli, [
        "eval", "--agent", "react", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
        "--limit", "1", "--chroma-url", chroma])
    assert no_index.exit_code == 1 and "Chroma server" in no_index.output, no_index.output
    assert "Traceback" not in no_index.output


def test_a_replay_of_the_suite_on_two_ray_workers_equals_one_process_though_one_dies(
    home: Path, tmp_path: Path, suite: TaskSuite,
) -> None:
    tasks = suite.filter(tier="selfhosted", lang="all")        # every split, both languages
    one = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "one", mode="replay")
    one.run()

    said: list[str] = []
    with RayCluster("local", workers=2, agent="oracle", say=said.append) as cluster:
        killed: list[int] = []

        def kill_one_early(result: TaskResult) -> None:
            if not killed and len(results_so_far) == 100:
                killed.append(cluster.worker_pids()[0])
                os.kill(killed[0], signal.SIGKILL)
            results_so_far.append(result)

        results_so_far: list[TaskResult] = []
        ray = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "ray",
                         mode="replay", cluster=cluster)
        summary = ray.run(advance=kill_one_early)

    assert killed and any(f"(pid {killed[0]}) died" in line for line in said), said
    assert results(tmp_path / "ray") == results(tmp_path / "one")
    assert summary["runs"] == len(tasks) and summary["problems"] == 0


def test_a_live_sample_recorded_on_two_ray_workers_equals_one_process_though_one_dies_mid_write(
    home: Path, tmp_path: Path, suite: TaskSuite,
) -> None:
    tasks: list[Task] = []
    for app in ("kinto", "radicale"):
        mine = [t for t in suite.filter(apps=[app], splits=["test"]) if t.apps == [app]
                and not t.reset]
        tasks += [t for t in mine if t.type == "operational"][:4] + \
                 [t for t in mine if t.type != "operational"][:2]
    one = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "one", mode="live")
    one.run()

    said: list[str] = []
    with RayCluster("local", workers=2, agent="oracle", say=said.append) as cluster:
        killed: list[int] = []
        done = threading.Event()

        def kill_worker_0_while_a_write_is_open() -> None:
            worker_home = home / "ray" / "ray" / "worker-0"
            while not done.is_set():
                if open_writes(worker_home):
                    killed.append(cluster.worker_pids()[0])
                    os.kill(killed[0], signal.SIGKILL)
                    return
                time.sleep(0.002)

        watcher = threading.Thread(target=kill_worker_0_while_a_write_is_open, daemon=True)
        watcher.start()
        try:
            summary = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "ray",
                                 mode="record", cluster=cluster).run()
        finally:
            done.set()
            watcher.join()

    assert killed, "no write of worker 0 was ever seen open"
    assert any(f"(pid {killed[0]}) died" in line for line in said), said
    undone = [line for line in said if line.startswith("worker 0 recovered: ")
              and " of the dead worker" not in line]          # the open write, settled
    assert undone and all(line.endswith((" compensated", " noop")) for line in undone), said
    assert any(line.startswith("worker 0 recovered: stopped ") for line in said), said
    assert comparable(results(tmp_path / "ray"), live=True) == \
        comparable(results(tmp_path / "one"), live=True)
    assert summary["problems"] == 0                     # every write undone and verified
    for worker_home in (home / "ray" / "ray").iterdir():
        assert open_writes(worker_home) == []
        assert list((worker_home / "run").glob("*.json")) == []     # no app left running

    # the workers' recordings came back to the run folder: they replay in one process
    Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "replayed", mode="replay",
               cassettes=tmp_path / "ray" / "cassettes").run()
    recorded, replayed = results(tmp_path / "ray"), results(tmp_path / "replayed")
    assert [{**r, "seconds": None} for r in recorded] == replayed


def test_two_models_and_two_trials_fan_out_over_the_cluster_each_model_in_its_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
) -> None:
    secret = "sk-toolbed-ray-7f3a9c"
    monkeypatch.setenv("SCRIPTED_OPENAI_KEY", secret)          # the workers inherit it
    chosen = [t.id for t in suite.filter(["kinto"], (), ["test"], (), "selfhosted")[:3]]
    run = tmp_path / "run"
    with ScriptedOpenAI([{"content": "Nothing to report."}]) as server:
        result = CliRunner().invoke(cli, [
            "eval", "--model", "first", "--model", "second", "--base-url", server.url,
            "--api-key-env", "SCRIPTED_OPENAI_KEY", "--tools", "gold", "--app", "kinto",
            "--limit", "3", "--trials", "2", "--ray", "local", "--workers", "2",
            "--run-dir", str(run)])
    assert result.exit_code == 0, result.output

    asked = {body["model"] for _, _, body in server.requests}
    assert asked == {"first", "second"}                 # both models, from the workers
    for model in ("first", "second"):
        spec = json.loads((run / model / "run.json").read_text())
        assert spec["model"] == model and spec["trials"] == 2
        rows = results(run / model)
        assert sorted((r["task"], r["trial"]) for r in rows) == \
            sorted((task, trial) for task in chosen for trial in (0, 1))
        assert all(r["problems"] == [] for r in rows)   # every write undone, every app up
    assert f"toolbed compare {run / 'first'} {run / 'second'}" in result.output
    compared = CliRunner().invoke(cli, ["compare", str(run / "first"), str(run / "second")])
    assert compared.exit_code == 0 and "3 tasks in both" in compared.output

    # the key reached the model server from the workers, and was written nowhere: not in
    # the runs, not in the workers' homes (journals, app logs), not in Ray's session logs
    assert all({k.lower(): v for k, v in h.items()}["authorization"] == f"Bearer {secret}"
               for _, h, _ in server.requests)
    session = Path("/tmp/ray/session_latest").resolve()
    for folder in (run, home, session):
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 50_000_000:
                assert secret.encode() not in path.read_bytes(), path


def test_a_cluster_started_with_ray_start_is_joined_by_address(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
) -> None:
    """The README's way: `ray start --head` with a token, then `--ray HOST:PORT`."""
    monkeypatch.setenv("RAY_AUTH_MODE", "token")       # Ray reads a process's token once:
    monkeypatch.setenv("RAY_AUTH_TOKEN", os.environ.get("RAY_AUTH_TOKEN") or "7" * 64)
    port = closed_port()
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
         "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false",
         "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                check_address(f"127.0.0.1:{port}")
                break
            except ClusterError:
                assert head.poll() is None and time.monotonic() < deadline
                time.sleep(0.5)
        with pytest.raises(ClusterError, match="has 2 CPUs and each worker holds one"):
            RayCluster(f"127.0.0.1:{port}", workers=3).connect()

        tasks = suite.filter(apps=["buku"], splits=["test"])
        one = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "one", mode="replay")
        one.run()
        with RayCluster(f"127.0.0.1:{port}", agent="oracle") as cluster:
            assert cluster.workers == 2                 # one per CPU of the cluster
            Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "ray",
                       mode="replay", cluster=cluster).run()
        assert results(tmp_path / "ray") == results(tmp_path / "one")
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=60)


def test_workers_install_an_app_their_node_lacks_once_then_run_its_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
) -> None:
    """A node with every app but TiddlyWiki: its two workers both need it for their
    first task; one installs it (with npm, from npm's cache here: a test never reaches
    the registry, and setup's own install of TiddlyWiki put it there), the other waits
    for that install and uses it, and the tasks pass as in one process."""
    installed = home_dir() / "apps"
    node = tmp_path / "home"
    (node / "apps").mkdir(parents=True)
    for app in installed.iterdir():
        if app.name != "tiddlywiki":
            (node / "apps" / app.name).symlink_to(app)
    tasks = [t for t in suite.filter(apps=["tiddlywiki"], splits=["test"])
             if t.apps == ["tiddlywiki"] and not t.reset][:4]
    one = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "one", mode="live")
    one.run()

    monkeypatch.setenv("TOOLBED_HOME", str(node))
    monkeypatch.setenv("npm_config_offline", "true")      # npm's cache, or an error
    said: list[str] = []
    with RayCluster("local", workers=2, agent="oracle", say=said.append) as cluster:
        summary = Evaluation(suite.catalog, OracleAgent(), tasks, tmp_path / "ray",
                             mode="live", cluster=cluster).run()

    version = suite.catalog.app("tiddlywiki").version
    installs = [line for line in said if " installed " in line]
    assert len(installs) == 1, said                     # once, for both workers
    assert re.fullmatch(rf"worker [01]: installed tiddlywiki@{re.escape(version)} on its "
                        r"node \(\d+\.\d s\)", installs[0]), installs
    assert json.loads((node / "apps" / "tiddlywiki" / "installed.json").read_text()
                      )["version"] == version
    assert comparable(results(tmp_path / "ray"), live=True) == \
        comparable(results(tmp_path / "one"), live=True)
    assert all(row["success"] for row in results(tmp_path / "ray"))
    assert summary["problems"] == 0


def test_an_app_a_worker_cannot_install_fails_its_tasks_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
) -> None:
    node = tmp_path / "home"
    (node / "apps").mkdir(parents=True)
    monkeypatch.setenv("TOOLBED_HOME", str(node))
    monkeypatch.setenv("npm_config_offline", "true")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "empty-npm-cache"))
    task = next(t for t in suite.filter(apps=["tiddlywiki"], splits=["test"])
                if t.apps == ["tiddlywiki"])
    with RayCluster("local", workers=1, agent="oracle") as cluster:
        summary = Evaluation(suite.catalog, OracleAgent(), [task], tmp_path / "ray",
                             mode="live", cluster=cluster).run()

    [row] = results(tmp_path / "ray")
    assert not row["success"] and summary["problems"] == 1
    [why] = row["problems"]
    assert why.startswith("tiddlywiki could not be started: it is not installed on the Ray "
                          "worker's node, where installing tiddlywiki@"), why
    assert "ENOTCACHED" in why                      # npm's own words on why, not a traceback
    assert not (node / "apps" / "tiddlywiki" / "installed.json").exists()


def test_a_run_on_the_cluster_takes_its_tools_from_an_index_on_a_chroma_server(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
    chroma_server: str,
) -> None:
    """`toolbed eval --ray ... --chroma-url URL`: the driver asks the index on the server
    for each task's tools (the workers need not reach it), the workers run the tasks, and
    the rows are a single process's over the same index."""
    ToolIndex(url=chroma_server).build(tool_documents(Catalog([suite.catalog.app("kinto")])))
    monkeypatch.setenv("SCRIPTED_OPENAI_KEY", "sk-test")
    tasks = [t for t in suite.filter(apps=["kinto"], splits=["test"]) if t.apps == ["kinto"]][:4]
    with ScriptedOpenAI([{"content": "Nothing to report."}]) as server:
        options = AgentOptions(model="scripted", base_url=server.url,
                               api_key_env="SCRIPTED_OPENAI_KEY")

        def evaluation(run: str, cluster: RayCluster | None = None) -> Evaluation:
            return Evaluation(suite.catalog, make_agent("langchain", options), tasks,
                              tmp_path / run, mode="live", tools="retriever",
                              index=ToolIndex(url=chroma_server), cluster=cluster)

        evaluation("one").run()
        with RayCluster("local", workers=2, agent="langchain", options=options) as cluster:
            summary = evaluation("ray", cluster).run()

    rows = results(tmp_path / "ray")
    assert comparable(rows, live=True) == comparable(results(tmp_path / "one"), live=True)
    kinto = {f"kinto.{api.name}" for api in suite.catalog.app("kinto").apis}
    assert all(len(r["trajectory"]["offered"]) == 5 and set(r["trajectory"]["offered"]) <= kinto
               for r in rows)                          # the server's index: kinto's alone
    assert [r["trajectory"]["offered"] for r in rows] == \
        [r["trajectory"]["offered"] for r in results(tmp_path / "one")]
    assert summary["problems"] == 0
    assert not (home / "retriever" / "chroma").exists()          # no local index
