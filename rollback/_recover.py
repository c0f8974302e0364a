"""Recovery: undo what a dead process left in the journal.

A run killed with SIGKILL (or a crashed machine, or an undo that failed because an app
was down) leaves entries that still owe an undo: ``applied`` ones with a bound undo,
``failed`` ones to retry, and ``pending`` ones that may or may not have reached the
app, which the declared lookup settles. ``recover`` undoes them newest first, across
runs, against the apps that are running now.
"""

from __future__ import annotations

import os

from toolbed.connectors import Mode, Runtime
from toolbed.connectors.launchers import process_alive

from ._journal import OPEN, Entry, Journal, Status
from ._undo import UndoPolicy, undo_entry

__all__ = ["open_entries", "recover"]


def open_entries(
    journal: Journal, *, run_id: str | None = None, include_live: bool = False
) -> list[Entry]:
    """Entries that still owe an undo, skipping those of processes still running."""
    entries = journal.entries(run_id=run_id, statuses=OPEN)
    if include_live:
        return entries
    return [e for e in entries if e.pid == os.getpid() or not process_alive(e.pid)]


def recover(
    runtime: Runtime,
    journal: Journal | None = None,
    *,
    run_id: str | None = None,
    include_live: bool = False,
    policy: UndoPolicy | None = None,
) -> list[Entry]:
    """Undo every open entry (of ``run_id``, or all), newest first; return them after.

    Entries written by a process that is still alive are left to it unless
    ``include_live``. Entries journalled in replay mode changed nothing real and are
    closed as ``noop``.
    """
    journal = journal or Journal()
    done = []
    for entry in reversed(open_entries(journal, run_id=run_id, include_live=include_live)):
        if entry.mode == Mode.REPLAY.value and runtime.mode is not Mode.REPLAY:
            journal.update(entry.seq, Status.NOOP, error="journalled in replay: nothing was sent")
            done.append(journal.get(entry.seq))
            continue
        done.append(undo_entry(runtime, journal, entry, policy))
    return done

