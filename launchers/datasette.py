"""Datasette: SQLite databases as a JSON API (tables, rows, SQL queries, write API)."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import httpx

from toolbed.apis import App
from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, Launcher, RunningApp

DATABASES = ("household", "library")
"""The database files served: created empty, filled by the catalog's seed."""


@register("launcher", "datasette")
class DatasetteLauncher(Launcher):
    package = "datasette"
    health_path = "/-/versions.json"
    user = "root"
    issues_token = True  # bootstrap() issues a bearer token signed with this run's secret

    def __init__(self, app: App):
        super().__init__(app)
        self._secret = secrets.token_hex(32)
        self._token: subprocess.Popen[str] | None = None

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        # issue the token while the server starts: each command takes seconds to import
        self._token = subprocess.Popen(
            [str(self.bin_dir / "datasette"), "create-token", self.user],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            text=True, cwd=data_dir,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(data_dir),
                 **self.process_env(data_dir)},
        )
        return [
            str(self.bin_dir / "datasette"), "serve",
            *(str(data_dir / f"{name}.db") for name in DATABASES),
            "--create",
            "--host", LOOPBACK, "--port", str(port),
            # the root actor (the token's) may do everything, anyone else nothing
            "--root", "--default-deny",
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        # the signing secret goes by environment, never on a command line
        return {"DATASETTE_SECRET": self._secret}

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        assert self._token is not None, "configure() starts the token command"
        try:
            out, err = self._token.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self._token.kill()
            out, err = self._token.communicate()
        token = out.strip()
        if self._token.returncode != 0 or not token.startswith("dstok_"):
            raise AppStartError(
                f"datasette started but issuing its API token failed: {err.strip()[-500:]}"
            )
        env[self.token_env] = token

    def ready(self, running: RunningApp) -> None:
        """Wait until Datasette's own table listing shows every table the seed made.

        Datasette learns about schema changes in the background, up to a second after
        them; until then `get_database` lists no tables, so a task that reads the
        listing would depend on how soon after the start it runs.
        """
        headers = {"Authorization": f"Bearer {running.env[self.token_env]}"}
        with httpx.Client(base_url=running.base_url, headers=headers, timeout=5) as client:
            def pending() -> str | None:
                for database in DATABASES:
                    made = set(client.get(f"/{database}/-/query.json", params={
                        "sql": "select name from sqlite_master where type = 'table'",
                        "_shape": "arrayfirst"}).json())
                    listed = {t["name"] for t in client.get(f"/{database}.json").json()
                              .get("tables", [])}
                    if not made <= listed:
                        return (f"{database} lists {sorted(listed)} of the tables "
                                f"{sorted(made)}")
                return None
            self.wait_until(running, pending, timeout=30, interval=0.1)
