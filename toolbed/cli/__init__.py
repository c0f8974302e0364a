"""The ``toolbed`` command line: thin typer commands over the Python API.

Every ``ToolbedError`` becomes ``Error: <message>`` on stderr and exit code 1, with
no traceback. Listing commands take ``--json`` for scripts.

Each command's module is imported only when that command runs, so ``toolbed --help``
and ``toolbed apis show`` do not pay for the retriever's torch or the agents'
LangChain; ``COMMANDS`` holds the line ``toolbed --help`` shows for each (a test
keeps it equal to the command's own help).
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from toolbed.connectors._running import reap_orphans
from toolbed.errors import ToolbedError

__all__ = ["COMMANDS", "app", "load_command", "main"]

COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module, attribute: a function or a typer app, the line `toolbed --help` shows)
    "call": ("_call", "call", "Call one API and print the observation as JSON."),
    "eval": ("_eval", "eval_", "Run an agent on tasks, roll every write back, score it and "
             "write a report."),
    "report": ("_eval", "report", "Rewrite a run's results.jsonl, summary.json and "
               "summary.md, and print the summary."),
    "compare": ("_eval", "compare", "Two runs' scores side by side, on the tasks both ran."),
    "apis": ("_apis", "app", "Browse the catalog of app APIs."),
    "apps": ("_apps", "app", "Install, start, stop and exercise the self-hosted apps."),
    "rollback": ("_rollback", "app", "Inspect the journal of writes and undo what a dead run "
                 "left."),
    "tasks": ("_tasks", "app", "The task suite: list, validate live, record cassettes, count."),
    "dialogues": ("_dialogues", "app", "Multi-turn dialogues: list, validate live, record "
                  "cassettes."),
    "cassettes": ("_cassettes", "app", "Recorded cassettes: check them against the apps as "
                  "they are now."),
    "mcp": ("_mcp", "app", "Serve the testbed to MCP clients: the catalog's APIs as tools, "
            "every write rolled back."),
    "retriever": ("_retriever", "app", "Index the catalog's APIs in chroma, search them, train "
                  "and measure the retriever."),
}


def load_command(name: str) -> Any:
    """Import command ``name``'s module and return it as a click command."""
    module, attribute, _ = COMMANDS[name]
    target = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    if not isinstance(target, typer.Typer):        # a function: a one-command app
        function, target = target, typer.Typer(add_completion=False)
        target.command(name)(function)
    return typer.main.get_command(target)


class _Group(TyperGroup):
    listing = False
    """True while the help is written: commands are then named from ``COMMANDS``
    without importing them."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if self.listing:
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name][2])
        return load_command(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def invoke(self, ctx: Any) -> Any:
        try:
            # apps a killed `toolbed eval` started for itself: stopped, data deleted
            for orphan in reap_orphans():
                typer.echo(f"stopped {orphan.app} (pid {orphan.pid}), left running by a "
                           "toolbed command that died", err=True)
            return super().invoke(ctx)
        except ToolbedError as exc:
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    cls=_Group,
    name="toolbed",
    help="A live, real-world API testbed for tool-using LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _toolbed() -> None:
    # a callback makes the app a group before any command is loaded
    pass


def main() -> None:
    app()
