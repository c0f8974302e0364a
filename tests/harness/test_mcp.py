"""`toolbed mcp serve`, driven by the official MCP SDK's client: over stdio and streamable
HTTP on a live Kinto, replayed with the network blocked, and with the retriever's
``find_tools`` changing what is listed; and `toolbed eval --via mcp`, which scores as
the direct path does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from langchain_core.messages import AIMessage
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import RunningApp, Runtime, save_running, tool_name
from toolbed.harness import (
    FIND_TOOLS,
    LangChainAgent,
    McpTestbed,
    Runner,
    ScriptedChatModel,
    TaskResult,
    load_results,
)
from toolbed.launchers import free_port
from toolbed.retriever import ToolIndex, tool_documents
from toolbed.rollback import Journal, Status, default_journal_path, recover
from toolbed.tasks import load_tasks

BLOCK_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network blocked in this server")
socket.socket.connect = socket.socket.connect_ex = socket.create_connection = refuse
"""
"""Run first in a server process whose replay must not open any connection."""

SERVE = "from toolbed.cli import main\nsys.argv[0] = 'toolbed'\nmain()\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kinto: RunningApp) -> Path:
    """A TOOLBED_HOME where the live Kinto is recorded as running (`toolbed apps up`)."""
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path))
    save_running(kinto)
    return tmp_path


def stdio(*args: str, blocked: bool = False) -> StdioServerParameters:
    """`toolbed mcp serve ARGS` as a stdio server (the SDK passes no environment unless
    told, and the server must find this test's TOOLBED_HOME)."""
    code = (BLOCK_NETWORK if blocked else "import sys\n") + SERVE
    return StdioServerParameters(command=sys.executable,
                                 args=["-c", code, "mcp", "serve", *args],
                                 env=dict(os.environ))


def buckets(kinto: RunningApp, catalog: Catalog) -> list[str]:
    with Runtime(catalog, apps={"kinto": kinto}) as runtime:
        return [b["id"] for b in runtime.call("kinto.list_buckets").body["data"]]


def text(result: types.CallToolResult) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


async def session(client: Client, bucket: str) -> list[dict[str, Any]]:
    """A read, a write, a bad argument and a tool that is not there: what each gave."""
    results = [
        await client.call_tool(tool_name("kinto.list_buckets"), {}),
        await client.call_tool(tool_name("kinto.create_bucket"), {"bucket": bucket}),
        await client.call_tool(tool_name("kinto.get_bucket"), {"bucket": "../admin"}),
        await client.call_tool("kinto__no_such_api", {}),
    ]
    return [{"error": r.is_error, "text": text(r), "data": r.structured_content}
            for r in results]


def test_stdio_serves_kinto_records_and_rolls_the_write_back_when_the_client_leaves(
    home: Path, tmp_path: Path, kinto: RunningApp, catalog: Catalog,
) -> None:
    cassette = tmp_path / "mcp.yaml"
    bucket = "mcp-stdio"

    async def live() -> tuple[list[str], list[dict[str, Any]], list[str]]:
        async with Client(stdio("--app", "kinto", "--mode", "record",
                                "--cassette", str(cassette))) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            got = await session(client, bucket)
            during = buckets(kinto, catalog)
            return names, got, during

    names, got, during = anyio.run(live)
    assert names == [tool_name(a.id) for a in catalog.app("kinto").apis]
    read, write, bad, missing = got
    assert not read["error"] and read["data"]["status"] == 200
    assert not write["error"] and write["data"]["status"] == 201 and bucket in during
    assert bad["error"] and "'bucket'" in bad["text"] and bad["data"]["status"] is None
    assert missing["error"] and "no tool 'kinto__no_such_api'" in missing["text"]

    assert bucket not in buckets(kinto, catalog)           # undone when the client left
    entries = Journal(default_journal_path()).entries()
    assert [(e.api, e.status) for e in entries] == [("kinto.create_bucket",
                                                     Status.COMPENSATED)]
    secrets = [v for v in kinto.env.values() if len(v) >= 8]
    seen = json.dumps(got) + cassette.read_text(encoding="utf-8")
    assert secrets and not any(s in seen for s in secrets)

    async def replayed() -> list[dict[str, Any]]:
        async with Client(stdio("--app", "kinto", "--mode", "replay",
                                "--cassette", str(cassette), blocked=True)) as client:
            return await session(client, bucket)

    assert anyio.run(replayed) == got


def test_keep_writes_leaves_them_open_in_the_journal(
    home: Path, kinto: RunningApp, catalog: Catalog,
) -> None:
    async def write() -> None:
        async with Client(stdio("--app", "kinto", "--keep-writes")) as client:
            result = await client.call_tool(tool_name("kinto.create_bucket"),
                                            {"bucket": "mcp-kept"})
            assert not result.is_error

    anyio.run(write)
    assert "mcp-kept" in buckets(kinto, catalog)
    journal = Journal(default_journal_path())
    kept = journal.entries(statuses=(Status.APPLIED,))
    assert [e.api for e in kept] == ["kinto.create_bucket"]
    recover(Runtime(catalog, apps={"kinto": kinto}), journal, run_id=kept[0].run_id)
    assert "mcp-kept" not in buckets(kinto, catalog)


@pytest.fixture
def http_server(home: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys\n" + SERVE, "mcp", "serve", "--app", "kinto",
         "--transport", "http", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(("mode", "stop"), [("auto", signal.SIGINT),      # 2026 protocol
                                            ("legacy", signal.SIGTERM)])  # the handshake
def test_http_serves_kinto_and_rolls_back_when_the_server_stops(
    http_server: tuple[str, subprocess.Popen[bytes]], kinto: RunningApp, catalog: Catalog,
    mode: str, stop: signal.Signals,
) -> None:
    url, proc = http_server
    bucket = f"mcp-http-{mode}"

    async def use() -> list[dict[str, Any]]:
        async with Client(url, mode=mode) as client:
            assert len((await client.list_tools()).tools) == len(catalog.app("kinto").apis)
            return await session(client, bucket)

    read, write, bad, missing = anyio.run(use)
    assert not read["error"] and not write["error"] and bad["error"] and missing["error"]
    assert bucket in buckets(kinto, catalog)        # the session is the server's run
    foreign = httpx.post(url, headers={"Host": "evil.example"}, json={})
    assert foreign.status_code == 421               # the SDK's DNS-rebinding guard

    proc.send_signal(stop)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert "1 write(s), 1 undone, 0 left open" in err.decode()
    assert bucket not in buckets(kinto, catalog)


# -- find_tools, in process -----------------------------------------------------------


@pytest.fixture(scope="module")
def kinto_index(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> ToolIndex:
    index = ToolIndex(tmp_path_factory.mktemp("chroma"))
    index.build(tool_documents(Catalog([catalog.app("kinto")])))
    return index


@asynccontextmanager
async def offline(catalog: Catalog) -> AsyncIterator[Runtime]:
    with Runtime(catalog, apps={}) as runtime:         # find_tools calls no app
        yield runtime


def test_find_tools_adds_the_retrievers_top_k_and_says_the_list_changed(
    kinto_index: ToolIndex, catalog: Catalog, no_network: None,
) -> None:
    kinto_apis = [a.id for a in catalog.app("kinto").apis]
    query = "add a new record to my collection"
    top = [h.api for h in kinto_index.search(query, 3)]

    async def use(mode: str) -> tuple[list[str], Any, list[str], list[str]]:
        testbed = McpTestbed(catalog, kinto_apis, lambda: offline(catalog), index=kinto_index)
        changed: list[Any] = []

        async def note(message: Any) -> None:
            changed.append(message)

        async with Client(testbed.server, mode=mode, message_handler=note) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            async with anyio.create_task_group() as group:
                if mode != "legacy":                      # 2026: a listen stream
                    async def listen() -> None:
                        async with client.listen(tools_list_changed=True) as events:
                            async for event in events:
                                changed.append(event)
                                return
                    group.start_soon(listen)
                    await anyio.sleep(0.2)
                found = await client.call_tool(FIND_TOOLS, {"query": query, "k": 3})
                with anyio.fail_after(10):
                    while not changed:
                        await anyio.sleep(0.05)
            after = [t.name for t in (await client.list_tools()).tools]
            bad = await client.call_tool(FIND_TOOLS, {"query": query, "k": 500})
            hidden = await client.call_tool("github__get_repo", {})
            errors = [text(bad), text(hidden)] if bad.is_error and hidden.is_error else []
            return before, found.structured_content, after, errors

    for mode in ("auto", "legacy"):
        before, found, after, errors = anyio.run(use, mode)
        assert before == [FIND_TOOLS]
        assert [t["name"] for t in found["tools"]] == [tool_name(a) for a in top]
        assert after == [FIND_TOOLS, *[tool_name(a) for a in top]]
        assert "'k' must be a whole number from 1 to 20" in errors[0]
        assert f"call {FIND_TOOLS}" in errors[1]


# -- toolbed eval --via mcp -------------------------------------------------------------


def test_an_agent_via_mcp_gets_the_same_trajectory_and_scores_as_direct(
    tmp_path: Path, kinto: RunningApp, catalog: Catalog,
) -> None:
    """A wrong tool, a refused call and a write, through an MCP session or not."""
    task = load_tasks().task("kinto-add-sunscreen-record-id")

    def run(via: str) -> TaskResult:
        model = ScriptedChatModel(messages=iter([
            AIMessage("", tool_calls=[{"id": "1", "name": "kinto__delete_everything",
                                       "args": {}}]),
            AIMessage("", tool_calls=[{"id": "2", "name": "kinto__replace_record",
                                       "args": {"bucket": "trips", "collection": "packing"}}]),
            AIMessage("", tool_calls=[{"id": "3", "name": "kinto__replace_record", "args": {
                "bucket": "trips", "collection": "packing", "id": "sunscreen",
                "if_none_match": "*", "data": {"item": "sunscreen", "packed": False,
                                               "quantity": 1}}}]),
            AIMessage("Added it as sunscreen-entry."),
        ]))
        runner = Runner(catalog, LangChainAgent(model), tmp_path / via, "live", tools="apps",
                        apps={"kinto": kinto}, via=via)
        return runner.run_one(task)

    direct, over_mcp = run("direct"), run("mcp")
    assert [c.ok for c in direct.trajectory.calls] == [False, False, True]
    # equal but for what came back: the write's answer carries the time it was made
    assert [c.model_copy(update={"excerpt": None}) for c in over_mcp.trajectory.calls] == \
        [c.model_copy(update={"excerpt": None}) for c in direct.trajectory.calls]
    assert over_mcp.trajectory.model_copy(update={"calls": []}) == \
        direct.trajectory.model_copy(update={"calls": []})
    assert ['"sunscreen"' in (c.excerpt or "") for c in over_mcp.trajectory.calls] == \
        ['"sunscreen"' in (c.excerpt or "") for c in direct.trajectory.calls] == \
        [False, False, True]
    assert (over_mcp.scores, over_mcp.errors, over_mcp.success) == \
        (direct.scores, direct.errors, direct.success)
    assert over_mcp.problems == direct.problems == []             # both writes undone


def test_the_oracle_replays_via_mcp_with_the_rows_of_the_direct_path(
    tmp_path: Path, no_network: None,
) -> None:
    def rows(via: str) -> list[dict[str, Any]]:
        run = tmp_path / via
        result = CliRunner().invoke(cli, [
            "eval", "--agent", "oracle", "--mode", "replay", "--split", "dev", "--sample",
            "25", "--via", via, "--run-dir", str(run)])
        assert result.exit_code == 0, result.output
        return load_results(run)

    direct, over_mcp = rows("direct"), rows("mcp")
    assert over_mcp == direct and {r["success"] for r in direct} == {True}
    assert json.loads((tmp_path / "mcp" / "run.json").read_text())["via"] == "mcp"
