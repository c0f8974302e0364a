"""The ``toolbed`` command line: thin typer commands over the Python API.

Every ``ToolbedError`` becomes ``Error: <message>`` on stderr and exit code 1, with
no traceback. Listing commands take ``--json`` for scripts.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from toolbed.connectors.launchers import reap_orphans
from toolbed.errors import ToolbedError

from . import _apis, _apps, _call, _eval, _retriever, _rollback, _tasks

__all__ = ["app", "main"]


class _Group(TyperGroup):
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
app.add_typer(_apis.app, name="apis")
app.add_typer(_apps.app, name="apps")
app.add_typer(_rollback.app, name="rollback")
app.add_typer(_tasks.app, name="tasks")
app.add_typer(_retriever.app, name="retriever")
app.command("call")(_call.call)
app.command("eval")(_eval.eval_)
app.command("report")(_eval.report)
app.command("compare")(_eval.compare)


def main() -> None:
    app()
