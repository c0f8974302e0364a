"""MCP servers as apps: a real stdio server from npm or PyPI, started behind toolbed's
bridge (``_bridge.py``) on 127.0.0.1 with a per-run bearer token.

A launcher of an app of tier ``mcp`` says how to run its server (``server_command``)
and what to lay out in the data dir first (``prepare``, e.g. a git repository); the
install (a pinned package in its own prefix), the start, the seed, the health check,
the restart and the stop are every launcher's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import ClassVar

from ._base import Launcher, NpmLauncher

__all__ = ["McpLauncher", "NpmMcpLauncher"]


class McpLauncher(Launcher):
    """An MCP server from PyPI (installed into its own virtualenv) behind the bridge."""

    health_path = "/health"
    executable: ClassVar[str]
    """The server's console script, e.g. ``mcp-server-git``."""

    @property
    def package(self) -> str:  # type: ignore[override]
        assert self.app.mcp is not None
        return self.app.mcp.package

    def server_path(self) -> Path:
        return self.bin_dir / self.executable

    def server_command(self, data_dir: Path) -> list[str]:
        """The command that runs the MCP server over stdio."""
        return [str(self.server_path())]

    def server_cwd(self, data_dir: Path) -> Path:
        """Where the server runs: relative paths in tool calls resolve from here."""
        return data_dir

    def prepare(self, data_dir: Path) -> None:
        """Lay out what the server needs in ``data_dir`` before it starts."""

    def configure(self, data_dir: Path, port: int, env: dict[str, str]) -> list[str]:
        token = data_dir / "bridge-token"
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(env[self.token_env])
        self.prepare(data_dir)
        cwd = self.server_cwd(data_dir)
        cwd.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-m", "toolbed.launchers._bridge", "--port", str(port),
                "--token-file", str(token), "--cwd", str(cwd), "--",
                *self.server_command(data_dir)]


class NpmMcpLauncher(McpLauncher, NpmLauncher):
    """An MCP server from npm (installed into its own prefix) behind the bridge."""

    def server_path(self) -> Path:
        return self.node_modules / ".bin" / self.executable
