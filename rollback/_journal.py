"""The write-ahead journal: every write, before it is sent, in SQLite.

A row is written (``pending``) before a write leaves the process and updated when the
answer arrives (``applied`` with its bound undo, or ``noop`` when the app refused it),
then again when the undo ran (``compensated`` or ``failed``). Because the row comes
first, a process killed at any point leaves a row that says what may have happened,
and ``toolbed rollback recover`` can finish the job.

SQLite runs in WAL mode and commits each change at once: a SIGKILL loses nothing that
was journalled, and ``toolbed rollback status`` can read while a run writes.
Values are stored as the runtime's redactor left them: no secret reaches this file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from toolbed.errors import JournalError
from toolbed.paths import home_dir

__all__ = ["OPEN", "Entry", "Journal", "Status", "default_journal_path"]


class Status(StrEnum):
    PENDING = "pending"
    """Journalled and maybe sent; no answer recorded (yet, or ever: the process died)."""
    APPLIED = "applied"
    """The app accepted the write; the undo is bound and waits for rollback."""
    NOOP = "noop"
    """Nothing to undo: the app refused the write, or recovery found it never took effect."""
    COMPENSATED = "compensated"
    """The undo ran and the app accepted it."""
    FAILED = "failed"
    """The undo could not run or was refused, after retries; ``recover`` tries again."""
    IRREVERSIBLE = "irreversible"
    """A write with no undo, allowed by the run's policy; reported, never undone."""


OPEN = (Status.PENDING, Status.APPLIED, Status.FAILED)
"""Statuses that still owe an undo."""


class Entry(BaseModel):
    """One journalled write."""

    seq: int
    run_id: str
    task_id: str | None = None
    app: str
    api: str
    mode: str
    pid: int
    status: Status
    args: dict[str, Any]
    before: dict[str, Any] | None = None
    """The observation of the undo's ``before`` read."""
    response: dict[str, Any] | None = None
    """The write's observation (status, headers, body)."""
    compensation: dict[str, Any] | None = None
    """The bound undo: ``{"api": id, "args": {...}}``."""
    http_status: int | None = None
    instance: str | None = None
    """The data dir of the self-hosted app instance the write went to."""
    attempts: int = 0
    error: str | None = None
    created: str
    updated: str

    @property
    def is_open(self) -> bool:
        return self.status in OPEN


_JSON_COLUMNS = ("args", "before", "response", "compensation")


def default_journal_path() -> Path:
    """``$TOOLBED_HOME/rollback/journal.db``."""
    return home_dir() / "rollback" / "journal.db"


class Journal:
    """The journal file (``":memory:"`` for one that dies with the process)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path is not None else default_journal_path()
        memory = str(path) == ":memory:"
        try:
            if not memory:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                ":memory:" if memory else self.path,
                check_same_thread=False, isolation_level=None, timeout=30,
            )
            self.db = sqlite_utils.Database(conn)
            self._table = self.db.table("writes")
            if not memory:
                self.db.enable_wal()
                conn.execute("PRAGMA synchronous=NORMAL")
                self.path.chmod(0o600)
            self._create()
        except sqlite3.DatabaseError as exc:
            raise JournalError(
                f"cannot open the rollback journal {self.path}: {exc}; "
                "move the file away to start a new journal"
            ) from None
        self._lock = threading.Lock()

    def _create(self) -> None:
        self._table.create(
            {
                "seq": int, "run_id": str, "task_id": str, "app": str, "api": str,
                "mode": str, "pid": int, "status": str, "args": str, "before": str,
                "response": str, "compensation": str, "http_status": int,
                "attempts": int, "error": str, "created": str, "updated": str,
                "instance": str,
            },
            pk="seq",
            not_null={"run_id", "app", "api", "mode", "status", "args", "created", "updated"},
            if_not_exists=True,
        )
        if "instance" not in self._table.columns_dict:   # a journal from before the column
            self._table.add_column("instance", str)
        self._table.create_index(["status"], if_not_exists=True)
        self._table.create_index(["run_id"], if_not_exists=True)

    def close(self) -> None:
        self.db.conn.close()

    # -- writing -------------------------------------------------------------------------

    def begin(
        self, *, run_id: str, task_id: str | None, app: str, api: str, mode: str,
        args: dict[str, Any], before: dict[str, Any] | None = None,
        compensation: dict[str, Any] | None = None, status: Status = Status.PENDING,
        instance: str | None = None,
    ) -> int:
        """Journal a write that is about to be sent; return its sequence number."""
        now = _now()
        row = {
            "run_id": run_id, "task_id": task_id, "app": app, "api": api, "mode": mode,
            "pid": os.getpid(), "status": str(status), "args": args, "before": before,
            "compensation": compensation, "attempts": 0, "created": now, "updated": now,
            "instance": instance,
        }
        with self._lock:
            table = self._table.insert(_encode(row))
            assert table.last_pk is not None
            return int(table.last_pk)

    def update(self, seq: int, status: Status, **fields: Any) -> None:
        """Move an entry to ``status``, setting any other column given."""
        unknown = set(fields) - set(Entry.model_fields)
        if unknown:
            raise ValueError(f"unknown journal columns {sorted(unknown)}")
        row = _encode({**fields, "status": str(status), "updated": _now()})
        with self._lock:
            self._table.update(seq, row)

    # -- reading -------------------------------------------------------------------------

    def entries(
        self, *, run_id: str | None = None, statuses: tuple[Status, ...] | None = None,
    ) -> list[Entry]:
        """Entries in the order they were written, optionally of one run or some statuses."""
        where, params = [], []
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if statuses:
            where.append(f"status in ({', '.join('?' for _ in statuses)})")
            params.extend(str(s) for s in statuses)
        with self._lock:
            rows = list(
                self._table.rows_where(
                    " and ".join(where) or None, params, order_by="seq"
                )
            )
        return [_decode(row) for row in rows]

    def get(self, seq: int) -> Entry:
        with self._lock:
            return _decode(self._table.get(seq))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _encode(row: dict[str, Any]) -> dict[str, Any]:
    return {
        k: json.dumps(v, ensure_ascii=False) if k in _JSON_COLUMNS and v is not None else v
        for k, v in row.items()
    }


def _decode(row: dict[str, Any]) -> Entry:
    data = {
        k: json.loads(v) if k in _JSON_COLUMNS and v is not None else v for k, v in row.items()
    }
    return Entry.model_validate(data)
