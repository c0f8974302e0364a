"""What the commands share: their common options, one console, JSON for scripts and
tables for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

console = Console()

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
OutOpt = Annotated[Path | None, typer.Option(
    "--out", help="Write the drift report as JSON here.")]
HtmlOpt = Annotated[Path | None, typer.Option(
    "--html", help="Write the drift report as a page here (like a run's report.html).")]
ModeOpt = Annotated[str, typer.Option("--mode", help="live, record or replay.")]
CassetteOpt = Annotated[
    Path | None, typer.Option("--cassette", help="Cassette file for record/replay.")
]


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
