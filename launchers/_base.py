"""Install, start and stop a real self-hosted app on 127.0.0.1.

Each app is installed in its own virtualenv under ``$TOOLBED_HOME/apps/<app>/`` at
the version its catalog file pins, so apps never share dependencies with toolbed or
with each other. A start picks a free loopback port, a fresh temporary data dir and
fresh credentials (or the ones set in the env), waits until the app answers over
HTTP, and returns a ``RunningApp`` (connectors/_running.py keeps the records that let
later commands find it, and stops it).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import httpx

from toolbed.apis import ApiKeyAuth, App, BasicAuth, BearerAuth, Catalog, load_catalog
from toolbed.connectors import RunningApp, Runtime, run_steps, save_running, stop_app
from toolbed.errors import (
    AppError,
    AppInstallError,
    AppNotInstalledError,
    AppStartError,
    ToolbedError,
)
from toolbed.paths import home_dir
from toolbed.registry import lookup, names

__all__ = ["Launcher", "NpmLauncher", "free_port", "get_launcher", "launch", "launcher_names",
           "restart_app"]

LOOPBACK = "127.0.0.1"


class Launcher:
    """Base class: subclasses say how to configure, start and bootstrap one app."""

    package: ClassVar[str]
    """The PyPI distribution to install (its version comes from the catalog)."""
    extras: ClassVar[tuple[str, ...]] = ()
    """Further pinned requirements installed beside it (``"cheroot==11.0.0"``)."""
    health_path: ClassVar[str] = "/"
    user: ClassVar[str] = "alice"
    """The account toolbed creates; the password is per run."""
    start_timeout: ClassVar[float] = 30.0
    issues_token: ClassVar[bool] = False
    """For token auth: the app issues the token in ``bootstrap()`` (toolbed does not pick it)."""

    def __init__(self, app: App):
        if not app.local or not app.version:
            raise ToolbedError(f"{app.app} is not a self-hosted or MCP app with a pinned "
                               "version")
        self.app = app

    # -- install ---------------------------------------------------------------------

    @property
    def install_dir(self) -> Path:
        return home_dir() / "apps" / self.app.app

    @property
    def bin_dir(self) -> Path:
        return self.install_dir / "venv" / "bin"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.app.version}"

    @property
    def requirements(self) -> list[str]:
        return [self.requirement, *self.extras]

    def installed_version(self) -> str | None:
        marker = self.install_dir / "installed.json"
        if not marker.is_file():
            return None
        return json.loads(marker.read_text()).get("version")

    @property
    def prefix(self) -> Path:
        """Where the app's packages go (replaced whole on a new install)."""
        return self.install_dir / "venv"

    def install_commands(self) -> list[list[str]]:
        """The commands that install the pinned packages into ``prefix``."""
        return [
            [sys.executable, "-m", "venv", str(self.prefix)],
            [str(self.bin_dir / "python"), "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", *self.requirements],
        ]

    def install(self) -> bool:
        """Install the pinned version; returns False when it was already there. Two
        processes installing the same app at once (two Ray workers of one node, two
        `toolbed apps install`) take turns, and the second finds it installed."""
        self.install_dir.mkdir(parents=True, exist_ok=True)
        with _taking_turns(self.install_dir / ".install.lock"):
            if self.installed_version() == self.app.version:
                return False
            self._install()
        return True

    def _install(self) -> None:
        shutil.rmtree(self.prefix, ignore_errors=True)
        self.prefix.mkdir(parents=True)
        for cmd in self.install_commands():
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=self.prefix)
            except FileNotFoundError:
                raise AppInstallError(
                    f"installing {self.app.app} needs `{cmd[0]}`, which is not on PATH"
                ) from None
            if proc.returncode != 0:
                out = (proc.stderr or proc.stdout).strip().splitlines()
                tail = "\n".join(out)[-1500:]
                raise AppInstallError(
                    f"installing {self.requirement} for {self.app.app} failed "
                    f"(is the package registry reachable?):\n{tail}"
                )
        (self.install_dir / "installed.json").write_text(
            json.dumps({"version": self.app.version, "requirements": self.requirements})
        )

    def require_installed(self) -> None:
        found = self.installed_version()
        if found != self.app.version:
            state = f"version {found} is installed" if found else "it is not installed"
            raise AppNotInstalledError(
                f"{self.app.app} {self.app.version} is needed but {state}; "
                f"run `toolbed apps install {self.app.app}`"
            )

    # -- what subclasses provide -------------------------------------------------------

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        """Write config files into ``data_dir``; return the command that starts the app."""
        raise NotImplementedError

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        """Create accounts or anything else the app needs once it answers.

        A token made here (an API key the app issues) goes into ``env`` under the env
        var the catalog's auth reads; ``env`` becomes the running app's credentials.
        """

    def process_env(self, data_dir: Path) -> dict[str, str]:
        """Extra environment for the app's process (besides a clean PATH and HOME)."""
        return {}

    def ready(self, running: RunningApp) -> None:
        """Wait for anything the app still does after its seed (the app is stopped on error)."""

    def wait_until(self, running: RunningApp, pending: Callable[[], str | None],
                   timeout: float = 60, interval: float = 0.2) -> None:
        """Poll ``pending`` until it returns None; it says what the app has not done yet,
        and after ``timeout`` seconds that is the ``AppStartError``'s message."""
        deadline = time.monotonic() + timeout
        while (still := pending()) is not None:
            if time.monotonic() > deadline:
                raise AppStartError(f"{self.app.app}: {still} {timeout:g} s after the "
                                    f"start; see {running.log_path}")
            time.sleep(interval)

    def setup_command(
        self, cmd: list[str], data_dir: Path, what: str, *,
        env: dict[str, str] | None = None, timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run a one-off setup command (make a config, a datastore, a hash) in the app's
        clean environment; ``AppStartError`` with its output's tail if it fails."""
        try:
            done = subprocess.run(
                cmd, cwd=data_dir, capture_output=True, text=True, timeout=timeout,
                env={**_clean_env(), "HOME": str(data_dir), **self.process_env(data_dir),
                     **(env or {})},
            )
        except subprocess.TimeoutExpired:
            raise AppStartError(f"{self.app.app}: {what} took over {timeout:.0f} s") from None
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            raise AppStartError(f"{self.app.app}: {what} failed:\n{tail}")
        return done

    # -- start / stop -------------------------------------------------------------------

    def credentials(self) -> dict[str, str]:
        """Env vars for the app's auth: the fixed user and a per-run password, or a
        per-run token (unless the app issues its own, see ``issues_token``).

        A password or token already set in the environment is used instead, so a user
        (or a test) can choose it.
        """
        if self.issues_token:
            return {}
        return self.app.auth.fresh_credentials(
            self.user, lambda var: os.environ.get(var) or secrets.token_hex(24))

    @property
    def token_env(self) -> str:
        """The env var that carries the app's token (API key or bearer auth)."""
        auth = self.app.auth
        assert isinstance(auth, ApiKeyAuth | BearerAuth), f"{self.app.app} has no token auth"
        return auth.env

    def password(self, env: dict[str, str]) -> str:
        """This run's password, from the credentials of ``credentials()``."""
        auth = self.app.auth
        assert isinstance(auth, BasicAuth), f"{self.app.app} has no basic auth"
        return env[auth.password_env]

    def start(
        self, *, port: int | None = None, data_dir: str | Path | None = None,
        credentials: dict[str, str] | None = None,
    ) -> RunningApp:
        """Start the app and wait until it answers; raises ``AppStartError`` if it does not.

        ``credentials`` (a running instance's ``env``) start it with the same ones.
        """
        self.require_installed()
        port = port or free_port()
        data = Path(data_dir or tempfile.mkdtemp(prefix=f"toolbed-{self.app.app}-"))
        data.mkdir(parents=True, exist_ok=True)
        env = dict(credentials) if credentials is not None else self.credentials()
        cmd = self.configure(data, port, env)
        log_path = data / "server.log"
        base_url = f"http://{LOOPBACK}:{port}"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                cmd, cwd=data, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**_clean_env(), "HOME": str(data), **self.process_env(data)},
            )
        running = RunningApp(
            app=self.app.app, base_url=base_url, pid=proc.pid, version=self.app.version or "",
            data_dir=str(data), log_path=str(log_path), env=env,
        )
        try:
            self._wait_healthy(proc, base_url, log_path)
            self.bootstrap(base_url, env)
            self._seed(running)
            self.ready(running)
        except BaseException:
            stop_app(running)
            raise
        return running

    def _seed(self, running: RunningApp) -> None:
        """Load the catalog's ``seed`` steps: the data read tasks expect to find."""
        if not self.app.seed:
            return
        with Runtime(Catalog([self.app]), apps={self.app.app: running}, env={}) as rt:
            results = run_steps(rt, self.app.app, self.app.seed)
        failed = next((r for r in results if not r.ok), None)
        if failed is not None:
            obs = failed.observation
            why = obs.error.message if obs.error else f"HTTP {obs.status}: {str(obs.body)[:300]}"
            raise AppStartError(f"{self.app.app}: seeding failed at {failed.api_id}: {why}")

    def _wait_healthy(self, proc: subprocess.Popen, base_url: str, log_path: Path) -> None:
        deadline = time.monotonic() + self.start_timeout
        with httpx.Client(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise AppStartError(
                        f"{self.app.app} exited with code {proc.returncode} while starting; "
                        f"its log ({log_path}) ends with:\n{_tail(log_path)}"
                    )
                try:
                    if client.get(base_url + self.health_path).status_code < 500:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        raise AppStartError(
            f"{self.app.app} did not answer on {base_url} within {self.start_timeout:.0f} s; "
            f"its log ({log_path}) ends with:\n{_tail(log_path)}"
        )

    @contextmanager
    def running(self, **kwargs: object) -> Iterator[RunningApp]:
        """Start the app for the ``with`` block and stop it afterwards, also on error."""
        app = self.start(**kwargs)  # type: ignore[arg-type]
        try:
            yield app
        finally:
            stop_app(app)


@contextmanager
def _taking_turns(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on file ``lock`` for the block, waiting for it if another
    process holds it (the lock goes with the process, also when it is killed)."""
    with open(lock, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class NpmLauncher(Launcher):
    """An app from the npm registry, installed into its own prefix with the machine's npm.

    ``overrides`` pins transitive dependencies (npm's ``overrides`` in package.json),
    for packages whose own ranges no longer resolve.
    """

    overrides: ClassVar[dict[str, str]] = {}

    @property
    def prefix(self) -> Path:
        return self.install_dir / "npm"

    @property
    def node_modules(self) -> Path:
        return self.prefix / "node_modules"

    @property
    def requirement(self) -> str:
        return f"{self.package}@{self.app.version}"

    def install_commands(self) -> list[list[str]]:
        manifest = {"name": f"toolbed-{self.app.app}", "private": True,
                    "overrides": self.overrides}
        (self.prefix / "package.json").write_text(json.dumps(manifest, indent=2))
        return [["npm", "install", "--no-audit", "--no-fund", "--save-exact",
                 "--prefix", str(self.prefix), *self.requirements]]


def get_launcher(name: str, catalog: Catalog | None = None) -> Launcher:
    """The launcher of self-hosted app ``name``, bound to its catalog entry."""
    catalog = catalog or load_catalog()
    cls = lookup("launcher", name)
    return cls(catalog.app(name))


def launcher_names() -> list[str]:
    return names("launcher")


@contextmanager
def launch(name: str, catalog: Catalog | None = None, **kwargs: object) -> Iterator[RunningApp]:
    """``with launch("kinto") as app:`` runs a fresh Kinto for the block."""
    with get_launcher(name, catalog).running(**kwargs) as app:
        yield app


def restart_app(app: RunningApp, catalog: Catalog | None = None) -> RunningApp:
    """The app as its seed left it: stopped, its data deleted, started again on the
    same port with the same credentials, so whoever calls it needs to change nothing.

    This is how a task whose writes no undo can reverse (emptying a whole collection)
    leaves the app as it found it."""
    launcher = get_launcher(app.app, catalog)
    if launcher.issues_token:
        raise AppError(f"{app.app} issues its own token at each start, so it cannot be "
                       "restarted with the same credentials; start a new instance instead")
    stop_app(app)
    return launcher.start(port=app.port, credentials=app.env)


def restart_recorded(app: RunningApp, catalog: Catalog | None = None) -> RunningApp:
    """``restart_app``, with the new instance recorded as the old one was: as an app of
    ``toolbed apps up``, or as started for itself by the same command."""
    new = restart_app(app, catalog)
    new.owner = app.owner
    save_running(new)
    return new


# -- helpers -----------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:]) or "(empty log)"


def _clean_env() -> dict[str, str]:
    # the app gets PATH and locale, never toolbed's secrets
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ}
