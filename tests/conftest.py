"""Shared fixtures.

Live fixtures start the real self-hosted apps on 127.0.0.1 with temporary data and
stop them afterwards, also when a test fails. A missing app is an error that says
to run `toolbed apps install`, never a skip.

A test that uses one of them is marked ``live`` by collection; any other test that
starts an app without being marked fails, and no test outside ``live`` can open a
connection, so ``pytest -m "not live"`` is an offline suite.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from toolbed.apis import App, Catalog, load_catalog
from toolbed.connectors import RunningApp, stop_app
from toolbed.launchers import (
    Launcher,
    free_port,
    get_launcher,
    launch,
    launcher_names,
    restart_app,
)

LIVE_FIXTURES = frozenset({"kinto", "radicale", "pool", "fresh_apps", "chroma_server"})
"""The fixtures that start apps or servers (here and in the packages' conftest)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if LIVE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.live)


@pytest.fixture(autouse=True)
def offline_unless_live(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                        ) -> None:
    """A test not marked live may neither start an app nor open a connection."""
    if request.node.get_closest_marker("live"):
        return

    def refuse(launcher: Launcher, *args: object, **kwargs: object) -> None:
        pytest.fail(f"this test starts {launcher.app.app}: mark it `@pytest.mark.live` "
                    f"or take the app from a live fixture ({', '.join(sorted(LIVE_FIXTURES))})")

    monkeypatch.setattr(Launcher, "start", refuse)
    block_network(monkeypatch)


class AppPool:
    """One fresh instance per app, started when first asked for.

    A test package that compares whole-app state (rollback, task validation) makes
    its own pool in a package-scoped fixture, so nothing another package's tests left
    behind shows up, and all its apps stop when the package is done.
    """

    def __init__(self, catalog: Catalog, stack: ExitStack):
        self._catalog, self._stack = catalog, stack
        self._running: dict[str, RunningApp] = {}

    def only(self, *names: str) -> dict[str, RunningApp]:
        for name in names:
            if name not in self._running:
                self._running[name] = get_launcher(name, self._catalog).start()
                self._stack.callback(lambda name=name: stop_app(self._running[name]))
        return {name: self._running[name] for name in names}

    def restart(self, running: RunningApp) -> RunningApp:
        """The app restarted from its seed (what a task with ``reset`` asks for)."""
        self._running[running.app] = restart_app(running, self._catalog)
        return self._running[running.app]


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def selfhosted_names() -> list[str]:
    return launcher_names()


@pytest.fixture(scope="session")
def kinto(catalog: Catalog) -> Iterator[RunningApp]:
    with launch("kinto", catalog) as app:
        yield app


@pytest.fixture(scope="session")
def radicale(catalog: Catalog) -> Iterator[RunningApp]:
    with launch("radicale", catalog) as app:
        yield app


@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[str]:
    """A real Chroma server on 127.0.0.1, on a free port, with its data in tmp_path."""
    port = free_port()
    chroma = Path(sys.executable).with_name("chroma")
    log = (tmp_path / "chroma.log").open("wb")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(tmp_path / "data"), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (tmp_path / "chroma.log").read_text()
            assert time.monotonic() < deadline, "chroma did not answer in 60 s"
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


DEMO = {
    "app": "demo",
    "name": "Demo service",
    "domain": "testing",
    "tier": "hosted",
    "base_url": "https://api.demo.example/v2",
    "docs": "https://docs.demo.example/",
    "auth": {"scheme": "api_key", "in": "query", "name": "appid", "env": "DEMO_API_KEY"},
    "apis": [
        {
            "name": "get_item",
            "description": "Fetch one item by its id, with optional expansion of related items.",
            "effect": "read",
            "http": {"method": "GET", "path": "/items/{item_id}"},
            "args": {
                "item_id": {"type": "string", "in": "path", "description": "Item id"},
                "expand": {"type": "array", "items": {"type": "string"},
                           "in": "query",
                           "description": "Related objects to include"},
                "filters": {"type": "object", "in": "query",
                            "description": "Field filters, one query parameter per key"},
                "units": {"type": "string", "enum": ["metric", "imperial"], "in": "query",
                          "default": "metric", "description": "Unit system"},
            },
            "required": ["item_id"],
            "examples": [{
                "args": {"item_id": "a 1", "expand": ["owner", "tags"], "filters": {"min_rank": 3}},
                "request": {
                    "method": "GET",
                    "url": "https://api.demo.example/v2/items/a%201"
                           "?expand=owner&expand=tags&min_rank=3&units=metric",
                },
            }],
        },
        {
            "name": "create_item",
            "description": "Create an item with a title and tags; returns the new item.",
            "effect": "write",
            "http": {"method": "POST", "path": "/items"},
            "args": {
                "title": {"type": "string", "in": "body", "field": "data.title",
                          "description": "Title"},
                "tags": {"type": "array", "items": {"type": "string"}, "in": "body",
                         "field": "data.tags", "description": "Tags"},
                "request_id": {"type": "string", "in": "header", "field": "X-Request-Id",
                               "description": "Idempotency key"},
            },
            "required": ["title"],
            "undo": {"api": "delete_item", "bind": {"item_id": "response.body.id"}},
            "examples": [{
                "args": {"title": "Milk", "tags": ["food"], "request_id": "r-1"},
                "request": {
                    "method": "POST",
                    "url": "https://api.demo.example/v2/items",
                    "headers": {"X-Request-Id": "r-1"},
                    "json": {"data": {"title": "Milk", "tags": ["food"]}},
                },
            }],
        },
        {
            "name": "delete_item",
            "description": "Delete an item by its id; the item can be created again afterwards.",
            "effect": "write",
            "http": {"method": "DELETE", "path": "/items/{item_id}"},
            "args": {"item_id": {"type": "string", "in": "path", "description": "Item id"}},
            "required": ["item_id"],
            "irreversible": "the demo service keeps no copy of deleted items",
            "examples": [{"args": {"item_id": "x"}, "request": {
                "method": "DELETE", "url": "https://api.demo.example/v2/items/x"}}],
        },
        {
            "name": "put_note",
            "description": "Store a plain-text note under a name, replacing any note of that name.",
            "effect": "write",
            "http": {"method": "PUT", "path": "/notes/{name}",
                     "body": {"encoding": "text", "content_type": "text/plain"}},
            "args": {
                "name": {"type": "string", "in": "path", "description": "Note name"},
                "text": {"type": "string", "in": "body", "description": "Note text"},
            },
            "required": ["name", "text"],
            "irreversible": "demo",
            "examples": [{"args": {"name": "todo", "text": "buy milk"}, "request": {
                "method": "PUT", "url": "https://api.demo.example/v2/notes/todo",
                "headers": {"Content-Type": "text/plain"}, "content": "buy milk"}}],
        },
        {
            "name": "find",
            "description": "Search items whose display name matches a phrase, as a WebDAV report.",
            "effect": "read",
            "http": {"method": "REPORT", "path": "/items/", "headers": {"Depth": "1"},
                     "body": {"encoding": "xml",
                              "template": "<q><match>$phrase</match></q>"}},
            "args": {"phrase": {"type": "string", "in": "body", "description": "Phrase"}},
            "required": ["phrase"],
            "examples": [{"args": {"phrase": "a<b"}, "request": {
                "method": "REPORT", "url": "https://api.demo.example/v2/items/",
                "headers": {"Depth": "1"}, "content": "<q><match>a&lt;b</match></q>"}}],
        },
    ],
}


@pytest.fixture
def demo_catalog() -> Catalog:
    """A small hosted app that exercises every placement and encoding (no network)."""
    return Catalog([App.model_validate(DEMO)])


def block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, any attempt to open a connection, to any host, fails."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(f"network blocked in this test (tried {args[1:] or args})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No connection can be opened in this test: proof that a replay is offline."""
    block_network(monkeypatch)
