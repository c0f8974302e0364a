"""Jupyter Server: notebooks, files, kernels, sessions and terminals over a REST API."""

from __future__ import annotations

import json
from pathlib import Path

from toolbed.registry import register

from ._base import LOOPBACK, Launcher


@register("launcher", "jupyter_server")
class JupyterServerLauncher(Launcher):
    package = "jupyter-server"
    # a kernel needs ipykernel in the app's venv (it brings the python3 kernelspec)
    extras = ("ipykernel==7.4.0",)
    health_path = "/api"  # the API version answers without a token
    start_timeout = 60.0

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        jupyter = data_dir / "jupyter"
        for sub in ("config", "data", "runtime"):
            (jupyter / sub).mkdir(parents=True, exist_ok=True)
        workspace = data_dir / "workspace"
        workspace.mkdir(exist_ok=True)
        config = {
            "ServerApp": {
                "ip": LOOPBACK,
                "port": port,
                "port_retries": 0,
                "open_browser": False,
                "allow_root": True,
                "allow_remote_access": False,
                "root_dir": str(workspace),
                "terminals_enabled": True,
            },
            "IdentityProvider": {"token": env[self.token_env]},
            # a deleted file is really deleted (not moved to ~/.local/share/Trash)
            "FileContentsManager": {"delete_to_trash": False},
            # kernels talk ZeroMQ on loopback only
            "KernelManager": {"ip": LOOPBACK},
        }
        path = jupyter / "config" / "jupyter_server_config.json"
        path.write_text(json.dumps(config, indent=1))
        path.chmod(0o600)  # holds the token
        return [str(self.bin_dir / "jupyter-server"), "--no-browser"]

    def process_env(self, data_dir: Path) -> dict[str, str]:
        jupyter = data_dir / "jupyter"
        return {
            "JUPYTER_CONFIG_DIR": str(jupyter / "config"),
            "JUPYTER_DATA_DIR": str(jupyter / "data"),
            "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
            "IPYTHONDIR": str(data_dir / "ipython"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "SHELL": "/bin/bash",
        }
