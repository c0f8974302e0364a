"""Fresh instances of the self-hosted apps for the rollback tests.

Rollback tests compare whole-app snapshots, so they get apps of their own: nothing
another test left behind can show up as a difference, and nothing they do leaks out.
Apps start on first use and all stop when the package's tests are done.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from toolbed.apis import Catalog
from toolbed.connectors import RunningApp, save_running
from toolbed.rollback import Journal

from ..conftest import AppPool


@pytest.fixture(scope="package")
def pool(catalog: Catalog) -> Iterator[AppPool]:
    with ExitStack() as stack:
        yield AppPool(catalog, stack)


@pytest.fixture
def fresh_apps(pool: AppPool) -> dict[str, RunningApp]:
    """Kinto and Radicale, which the scenario tests below use."""
    return pool.only("kinto", "radicale")


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
