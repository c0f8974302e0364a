"""Apps toolbed started: where each answers, the record that lets later commands find
it, and the process behind it.

The runtime reads these records to reach the apps, and the launchers write them, so
they live here, below both: imports go one way (launchers -> runtime -> running apps).
``toolbed apps up`` keeps its record in ``$TOOLBED_HOME/run/<app>.json`` (mode 0600: it
holds the generated password); an app a command starts for itself (``toolbed eval``)
is recorded with that command's pid and start time, and stopped by the next command if
its owner died first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from toolbed.paths import home_dir

__all__ = [
    "RunningApp",
    "damaged_records",
    "forget_running",
    "own",
    "process_alive",
    "process_started",
    "reap_orphans",
    "running_apps",
    "save_running",
    "stop_app",
]


@dataclass
class RunningApp:
    """A started app: where it answers and what it needs to be called."""

    app: str
    base_url: str
    pid: int
    version: str
    data_dir: str
    log_path: str
    env: dict[str, str] = field(default_factory=dict, repr=False)
    """Credentials, as the env vars the app's catalog auth reads."""
    started_at: float = field(default_factory=time.time)
    owner: list[float] | None = None
    """For an app a command started for itself (``toolbed eval``): that process's pid and
    start time. When it dies without stopping the app, the next toolbed command does."""

    @property
    def port(self) -> int:
        return urlsplit(self.base_url).port or 80


def stop_app(app: RunningApp, *, keep_data: bool = False) -> None:
    """Stop the app's whole process group and delete its data dir."""
    try:
        os.killpg(app.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    else:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and process_alive(app.pid):
            time.sleep(0.05)
        if process_alive(app.pid):
            with suppress(ProcessLookupError):
                os.killpg(app.pid, signal.SIGKILL)
    _reap(app.pid)
    if not keep_data:
        shutil.rmtree(app.data_dir, ignore_errors=True)


def _run_dir() -> Path:
    path = home_dir() / "run"
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_running(app: RunningApp) -> None:
    """Record a started app (written whole or not at all: a crash mid-write cannot leave
    a half record that makes a running app look stopped)."""
    path = _record(app)
    partial = path.with_name(f".{path.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(asdict(app), fh)
    partial.replace(path)


def _record(app: RunningApp) -> Path:
    """``run/<app>.json`` for `toolbed apps up`; an owned app's record also names its
    owner, so that it never overwrites (or is deleted with) another instance's."""
    owner = f".owned-{int(app.owner[0])}" if app.owner else ""
    return _run_dir() / f"{app.app}{owner}.json"


def forget_running(name: str | RunningApp) -> None:
    """Delete the record of app ``name`` (of `toolbed apps up`), or of that instance."""
    path = _record(name) if isinstance(name, RunningApp) else _run_dir() / f"{name}.json"
    path.unlink(missing_ok=True)


def running_apps(owned: bool = True) -> dict[str, RunningApp]:
    """Apps toolbed started whose process is still alive: those of ``toolbed apps up``
    and, unless not ``owned``, those a running command started for itself (a damaged
    record is skipped here; ``damaged_records`` lists it)."""
    found: dict[str, RunningApp] = {}
    for _, app in _records():
        if app is None or not process_alive(app.pid) or (app.owner is not None and not owned):
            continue
        if app.app not in found or found[app.app].owner is not None:
            found[app.app] = app                # an app of `toolbed apps up` comes first
    return found


def own(app: RunningApp) -> RunningApp:
    """Record ``app`` as started by this process for itself (see ``reap_orphans``)."""
    app.owner = [os.getpid(), process_started(os.getpid()) or 0.0]
    save_running(app)
    return app


def reap_orphans() -> list[RunningApp]:
    """Stop the apps whose owning command died without stopping them (a SIGKILLed
    ``toolbed eval``), delete their data dirs (credentials included) and records."""
    reaped = []
    for path, app in _records():
        if app is None or app.owner is None:
            continue
        pid, started = int(app.owner[0]), float(app.owner[1])
        if process_alive(pid, started or None):
            continue
        stop_app(app)
        path.unlink(missing_ok=True)
        reaped.append(app)
    return reaped


def damaged_records() -> dict[str, Path]:
    """Run records that cannot be read: toolbed cannot tell whether their app runs."""
    return {path.stem.split(".")[0]: path for path, app in _records() if app is None}


def _records() -> Iterator[tuple[Path, RunningApp | None]]:
    """Each run record and the app it holds (None when it cannot be read)."""
    for path in sorted(_run_dir().glob("*.json")):
        try:
            yield path, RunningApp(**json.loads(path.read_text()))
        except (ValueError, TypeError):
            yield path, None


def process_started(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if it is gone.

    A pid alone names a process only while it lives: after it dies (or the machine
    restarts) the number is given to another. The pid with its start time does not."""
    try:
        return round(psutil.Process(pid).create_time(), 2)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def process_alive(pid: int, started: float | None = None) -> bool:
    """Whether process ``pid`` still runs (a zombie child of ours is reaped and is not);
    with ``started``, whether it is the same process that started then."""
    if started is not None and process_alive(pid):
        now = process_started(pid)
        return now is not None and abs(now - started) < 0.05
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap(pid: int) -> None:
    with suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
