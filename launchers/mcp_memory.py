"""The MCP reference memory server: a knowledge graph of entities, relations and
observations, kept in one JSON Lines file of the data dir."""

from __future__ import annotations

from pathlib import Path

from toolbed.registry import register

from ._mcpserver import NpmMcpLauncher


@register("launcher", "memory")
class MemoryLauncher(NpmMcpLauncher):
    executable = "mcp-server-memory"

    def process_env(self, data_dir: Path) -> dict[str, str]:
        return {"MEMORY_FILE_PATH": str(data_dir / "memory.jsonl")}
