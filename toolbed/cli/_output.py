"""Output shared by the commands: one console, JSON for scripts, tables for people."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

console = Console()


def print_json(data: Any) -> None:
    """Plain JSON on stdout (no colour, no wrapping), for ``--json``."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    out = Table(title=title, show_lines=False)
    for column in columns:
        out.add_column(column, overflow="fold")
    for row in rows:
        out.add_row(*("" if v is None else str(v) for v in row))
    console.print(out)
