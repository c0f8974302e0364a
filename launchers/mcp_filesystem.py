"""The MCP reference filesystem server: files and folders under one allowed directory
(``files/`` in the data dir), where relative paths in tool calls resolve."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._mcpserver import NpmMcpLauncher


@register("launcher", "filesystem")
class FilesystemLauncher(NpmMcpLauncher):
    executable = "mcp-server-filesystem"

    def server_cwd(self, data_dir: Path) -> Path:
        return data_dir / "files"

    def server_command(self, data_dir: Path) -> list[str]:
        return [str(self.server_path()), str(self.server_cwd(data_dir))]
