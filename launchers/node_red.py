"""Node-RED: flow-based automation (flows of wired nodes), managed over its Admin HTTP API."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import httpx

from toolbed.errors import AppStartError
from toolbed.registry import register

from ._base import LOOPBACK, NpmLauncher

# Household settings a flow would read with global.get(...); Node-RED preloads them into
# the global context at start (functionGlobalContext), and the Admin API shows them.
_GLOBAL_CONTEXT = {
    "thermostat_setpoint": 21,
    "away_mode": False,
    "quiet_hours": {"start": "22:00", "end": "07:00"},
    "household": "Rivera family",
    "wifi_guest_network": "Rivera-Guest",
}


@register("launcher", "node_red")
class NodeRedLauncher(NpmLauncher):
    package = "node-red"
    # the editor page answers 503 until the runtime has started its flows
    health_path = "/"
    user = "admin"
    start_timeout = 60.0
    # the Admin API takes a bearer token, issued in bootstrap() for this run's password;
    # the password itself never leaves the launcher
    issues_token = True

    def credentials(self) -> dict[str, str]:
        self._password = secrets.token_urlsafe(18)
        return super().credentials()

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        node = "node"
        user_dir = data_dir / "userdir"
        user_dir.mkdir(exist_ok=True)
        hashed = self.setup_command(
            [node, "-e",
             "process.stdout.write(require(process.argv[1]).hashSync(process.env.NR_PASSWORD, 10))",
             str(self.node_modules / "bcryptjs")],
            data_dir, "hashing the admin password", env={"NR_PASSWORD": self._password},
        )
        if not hashed.stdout.startswith("$2"):
            raise AppStartError(
                f"node-red: hashing the admin password failed: {hashed.stderr[-500:]}"
            )
        settings = {
            "uiHost": LOOPBACK,
            "uiPort": port,
            "flowFile": "flows.json",
            "credentialSecret": secrets.token_hex(16),
            "adminAuth": {
                "type": "credentials",
                "users": [{"username": self.user, "password": hashed.stdout, "permissions": "*"}],
            },
            # nothing reaches the internet: no telemetry or update checks, no palette
            # installs from the npm registry, no modules fetched for function nodes
            "telemetry": {"enabled": False, "updateNotification": False},
            "externalModules": {
                "autoInstall": False,
                "palette": {"allowInstall": False, "allowUpload": False, "allowUpdate": False},
                "modules": {"allowInstall": False},
            },
            "functionExternalModules": False,
            "diagnostics": {"enabled": True, "ui": True},
            # lets POST /flows/state stop and start the flows
            "runtimeState": {"enabled": True, "ui": True},
            "functionGlobalContext": _GLOBAL_CONTEXT,
            "exportGlobalContextKeys": True,
            "logging": {"console": {"level": "info", "metrics": False, "audit": False}},
            "editorTheme": {"tours": False, "projects": {"enabled": False}},
        }
        path = user_dir / "settings.js"
        path.write_text("module.exports = " + json.dumps(settings, indent=2) + ";\n")
        path.chmod(0o600)  # holds the password hash and the credential secret
        return [
            node, str(self.node_modules / "node-red" / "red.js"),
            "--userDir", str(user_dir), "--settings", str(path), "--port", str(port),
        ]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {"NODE_RED_DISABLE_TELEMETRY": "1"}

    def bootstrap(self, base_url: str, env: dict[str, str]) -> None:
        # the Admin API's OAuth password grant, as node-red-admin and the editor use it
        response = httpx.post(
            f"{base_url}/auth/token",
            json={"client_id": "node-red-admin", "grant_type": "password", "scope": "*",
                  "username": self.user, "password": self._password},
            timeout=10,
        )
        token = response.json().get("access_token") if response.status_code == 200 else None
        if not token:
            raise AppStartError(
                f"node-red started but exchanging the admin password for a token failed: "
                f"HTTP {response.status_code}"
            )
        env[self.token_env] = token
