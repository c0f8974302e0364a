"""Recovery: undo what a dead process left in the journal.

A run killed with SIGKILL (or a crashed machine, or an undo that failed because an app
was down) leaves entries that still owe an undo: ``applied`` ones with a bound undo,
``failed`` ones to retry, and ``pending`` ones that may or may not have reached the
app, which the declared lookup settles. ``recover`` undoes them newest first, across
runs, against the apps that are running now, but only on the instance each write went
to: a self-hosted app keeps its data in a temporary dir, so a write to an instance
whose dir is gone went with it, and one to another instance that still exists waits.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolbed.connectors import Mode, Runtime, process_alive

from ._journal import OPEN, Entry, Journal, Status
from ._undo import UndoPolicy, undo_entry

__all__ = ["open_entries", "recover"]


def open_entries(
    journal: Journal, *, run_id: str | None = None, include_live: bool = False
) -> list[Entry]:
    """Entries that still owe an undo, skipping those of processes still running (the
    same pid and start time: a pid given to another process since does not count)."""
    entries = journal.entries(run_id=run_id, statuses=OPEN)
    if include_live:
        return entries
    return [e for e in entries
            if e.pid == os.getpid() or not process_alive(e.pid, e.started)]


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
    with journal.recovering():
        return _recover(runtime, journal, run_id, include_live, policy)


def _recover(runtime: Runtime, journal: Journal, run_id: str | None, include_live: bool,
             policy: UndoPolicy | None) -> list[Entry]:
    done = []
    for entry in reversed(open_entries(journal, run_id=run_id, include_live=include_live)):
        if Mode(entry.mode).offline and not runtime.offline:
            journal.update(entry.seq, Status.NOOP, error="journalled in replay: nothing was sent")
            done.append(journal.get(entry.seq))
            continue
        elsewhere = _elsewhere(runtime, entry)
        if elsewhere is not None and not Path(elsewhere).exists():
            journal.update(entry.seq, Status.NOOP, error=(
                f"{entry.app}'s instance with data in {elsewhere} is gone, and the write "
                "with it: nothing left to undo"))
            done.append(journal.get(entry.seq))
            continue
        if elsewhere is not None:
            journal.update(entry.seq, entry.status, error=(
                f"written to the {entry.app} instance with data in {elsewhere}, not the one "
                "running now; recover while that instance is the one running"))
            done.append(journal.get(entry.seq))
            continue
        done.append(undo_entry(runtime, journal, entry, policy))
    return done


def _elsewhere(runtime: Runtime, entry: Entry) -> str | None:
    """The data dir of the instance the entry's write went to, if not the running one."""
    running = runtime.apps.get(entry.app)
    if entry.instance is None or (running is not None and running.data_dir == entry.instance):
        return None
    return entry.instance

