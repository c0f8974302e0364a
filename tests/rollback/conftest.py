"""Fresh instances of every self-hosted app for the rollback tests.

Rollback tests compare whole-app snapshots, so they get apps of their own: nothing
another test left behind can show up as a difference, and nothing they do leaks out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from toolbed.apis import Catalog
from toolbed.connectors import RunningApp, launch, launcher_names
from toolbed.connectors.launchers import save_running
from toolbed.rollback import Journal


@pytest.fixture(scope="package")
def fresh_apps(catalog: Catalog) -> Iterator[dict[str, RunningApp]]:
    with ExitStack() as stack:
        yield {name: stack.enter_context(launch(name, catalog)) for name in launcher_names()}


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    journal = Journal(tmp_path / "journal.db")
    yield journal
    journal.close()


@pytest.fixture
def home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_apps: dict[str, RunningApp]
) -> Iterator[Path]:
    """A TOOLBED_HOME where the fresh apps are recorded as running, as `toolbed apps up`
    would: child processes and `toolbed rollback recover` find them there."""
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path))
    for running in fresh_apps.values():
        save_running(running)
    yield tmp_path
