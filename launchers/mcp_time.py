"""The MCP reference time server: the current time in any IANA time zone, and a time
converted between zones."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._mcpserver import McpLauncher

LOCAL_ZONE = "Europe/Berlin"
"""The server's local zone (its default when a request names none), fixed so that a
run is the same on every machine."""


@register("launcher", "time")
class TimeLauncher(McpLauncher):
    executable = "mcp-server-time"

    def server_command(self, data_dir: Path) -> list[str]:
        return [str(self.server_path()), "--local-timezone", LOCAL_ZONE]
