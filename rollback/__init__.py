"""Rollback: every write journalled before it is sent, undone after the task, verified.

    >>> from toolbed.rollback import RollbackScope
    >>> with RollbackScope(runtime, verify=["kinto"]) as scope:
    ...     scope.call("kinto.create_bucket", {"bucket": "trip"}).status
    201
    >>> scope.report.clean
    True

The journal (SQLite, WAL) survives a killed process; ``recover`` (and
``toolbed rollback recover``) undoes what such a process left behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from ._journal import OPEN, Entry, Journal, Status, default_journal_path
    from ._probe import Difference, Snapshot, diff, snapshot
    from ._recover import open_entries, recover
    from ._scope import RollbackReport, RollbackScope
    from ._undo import UndoPolicy, bind_undo, undo_entry

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "OPEN",
    "Difference",
    "Entry",
    "Journal",
    "RollbackReport",
    "RollbackScope",
    "Snapshot",
    "Status",
    "UndoPolicy",
    "bind_undo",
    "default_journal_path",
    "diff",
    "open_entries",
    "recover",
    "snapshot",
    "undo_entry",
]
