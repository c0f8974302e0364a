"""``toolbed rollback status|recover``: the journal of writes, and undoing what a dead run left."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import load_catalog
from toolbed.connectors import Runtime
from toolbed.errors import ToolbedError
from toolbed.rollback import OPEN, Entry, Journal, open_entries, recover

from ._output import JsonOpt, console, print_json, table

app = typer.Typer(help="Inspect the journal of writes and undo what a dead run left.",
                  no_args_is_help=True, add_completion=False)

JournalOpt = Annotated[
    Path | None,
    typer.Option("--journal", help="Journal file (default: $TOOLBED_HOME/rollback/journal.db)."),
]
RunOpt = Annotated[str | None, typer.Option("--run", help="Only this run id.")]


def _rows(entries: list[Entry]) -> list[list[object]]:
    return [
        [e.seq, e.run_id, e.task_id, e.api, e.status.value, e.http_status,
         (e.compensation or {}).get("api"), e.error]
        for e in entries
    ]


_COLUMNS = ["#", "run", "task", "write", "status", "http", "undo", "error"]


@app.command()
def status(
    run: RunOpt = None,
    all_: Annotated[bool, typer.Option("--all", help="Include undone and no-op entries.")] = False,
    journal: JournalOpt = None,
    json_: JsonOpt = False,
) -> None:
    """List the journalled writes that still owe an undo (pending, applied, failed).
    Reads the journal without changing it."""
    book = Journal(journal, readonly=True)
    entries = book.entries(run_id=run, statuses=None if all_ else OPEN)
    if json_:
        print_json([e.model_dump(mode="json") for e in entries]
                   + [{"seq": seq, "damaged": why} for seq, why in book.damaged])
        return
    if not entries and not book.damaged:
        console.print("nothing to undo: every journalled write is settled")
        return
    if entries:
        table(None, _COLUMNS, _rows(entries))
    _report_damaged(book)


def _report_damaged(book: Journal) -> None:
    for seq, why in book.damaged:
        console.print(f"entry #{seq} of {book.path} cannot be read ({why}); it is skipped: "
                      "undo its write by hand if it had one, then delete the row",
                      markup=False, soft_wrap=True)


@app.command("recover")
def recover_command(
    run: RunOpt = None,
    include_live: Annotated[
        bool, typer.Option("--include-live", help="Also undo entries of processes still running.")
    ] = False,
    journal: JournalOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Undo, newest first, every write a dead run left; exit 1 if any is still open."""
    book = Journal(journal)
    if not open_entries(book, run_id=run, include_live=include_live):
        if json_:
            print_json([])
        else:
            console.print("nothing to recover")
        _report_damaged(book)
        if book.damaged:
            raise typer.Exit(1)
        return
    with Runtime(load_catalog()) as runtime:
        done = recover(runtime, book, run_id=run, include_live=include_live)
    if json_:
        print_json([e.model_dump(mode="json") for e in done])
    else:
        table(None, _COLUMNS, _rows(done))
    _report_damaged(book)
    still = [e for e in done if e.is_open]
    if book.damaged and not still:
        raise typer.Exit(1)
    if still:
        raise ToolbedError(
            f"{len(still)} write(s) could not be undone (see the error column); "
            "fix the cause (e.g. start the app with `toolbed apps up`) and run "
            "`toolbed rollback recover` again"
        )
