"""changedetection.io: website change monitoring (watches, snapshots, diffs, tags)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, Launcher, RunningApp

# Every page fetch goes through `requests`, which honours $http(s)_proxy and $no_proxy:
# watches of 127.0.0.1 are fetched directly, anything else is sent to a closed port on
# the loopback and fails at once. (The uppercase HTTP_PROXY is left unset on purpose:
# changedetection reads it itself and would then send local fetches there too.)
_NO_NETWORK_PROXY = f"http://{LOOPBACK}:9"


@register("launcher", "changedetection")
class ChangedetectionLauncher(Launcher):
    package = "changedetection.io"
    health_path = "/api/v1/systeminfo"  # 403 without the key, but it answers once ready
    start_timeout = 60.0
    first_check_timeout = 60.0

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {
            "DISABLE_VERSION_CHECK": "true",           # no daily call to changedetection.io
            "NOTIFICATION_WORKERS": "0",               # notifications are stored, never sent
            "ALLOW_IANA_RESTRICTED_ADDRESSES": "true",  # may fetch its own 127.0.0.1 pages
            "http_proxy": _NO_NETWORK_PROXY,
            "https_proxy": _NO_NETWORK_PROXY,
            "no_proxy": f"{LOOPBACK},localhost",
            "SAFE_PROTOCOL_REGEX": "^(http|https):",   # no ftp:// (it would bypass the proxy)
            "REQUESTS_RETRY_MAX_COUNT": "1",
            "FETCH_WORKERS": "2",
            "LOGGER_LEVEL": "INFO",
        }

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        datastore = data_dir / "datastore"
        datastore.mkdir(exist_ok=True)
        command = [
            str(self.bin_dir / "changedetection.py"),
            "-h", LOOPBACK, "-p", str(port), "-d", str(datastore),
        ]
        # A fresh datastore gets two default watches of public sites, fetched at once.
        # Create it empty instead: with a -u URL no defaults are added, and the testing
        # switch exits right after the datastore is written, before that URL is added.
        self.setup_command(
            [*command, "-u", f"http://{LOOPBACK}:{port}/"], data_dir, "creating the datastore",
            env={"TESTING_SHUTDOWN_AFTER_DATASTORE_LOAD": "1"},
        )
        settings_file = datastore / "changedetection.json"
        if not settings_file.is_file():
            raise AppStartError(f"changedetection: creating the datastore wrote no {settings_file}")
        settings: dict[str, Any] = json.loads(settings_file.read_text())
        application = settings["settings"]["application"]
        application["api_access_token"] = env[self.token_env]
        application["api_access_token_enabled"] = True
        # the address of this instance, as systeminfo reports it: the seed reads it to
        # watch the instance's own pages, the only pages it can reach
        application["base_url"] = f"http://{LOOPBACK}:{port}"
        settings_file.write_text(json.dumps(settings, indent=2))
        settings_file.chmod(0o600)
        return command

    def ready(self, running: RunningApp) -> None:
        self._wait_for_first_checks(running)

    def _wait_for_first_checks(self, running: RunningApp) -> None:
        """Wait until every active watch of the seed has been fetched once.

        New watches are checked in the background soon after they are added; waiting
        here gives read tasks a first snapshot to find, and keeps those checks from
        changing the state while a task runs (the next ones are hours away).
        """
        headers = {"x-api-key": running.env[self.token_env]}
        with httpx.Client(base_url=running.base_url, headers=headers, timeout=5) as client:
            def pending() -> str | None:
                unchecked = []
                for uuid in client.get("/api/v1/watch").json():
                    watch = client.get(f"/api/v1/watch/{uuid}").json()
                    if not watch.get("paused") and not watch.get("check_count"):
                        unchecked.append(watch.get("url"))
                queued = client.get("/api/v1/systeminfo").json().get("queue_size", 0)
                return f"the seed's watches {unchecked} (queue {queued}) are not checked" \
                    if unchecked or queued else None
            self.wait_until(running, pending, timeout=self.first_check_timeout,
                            interval=0.3)
