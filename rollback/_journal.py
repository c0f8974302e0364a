"""The write-ahead journal: every write, before it is sent, in SQLite.

A row is written (``pending``) before a write leaves the process and updated when the
answer arrives (``applied`` with its bound undo, or ``noop`` when the app refused it),
then again when the undo ran (``compensated`` or ``failed``). Because the row comes
first, a process killed at any point leaves a row that says what may have happened,
and ``toolbed rollback recover`` can finish the job.

SQLite runs in WAL mode and commits each change at once: a SIGKILL loses nothing that
was journalled, and ``toolbed rollback status`` can read while a run writes; it opens
the file read-only and changes nothing in it. A row that cannot be read back (hand
edited, damaged) is listed in ``damaged`` and skipped, so that it cannot hide the
others. Each row names its process by pid and start time: a pid that now belongs to
another process does not make a dead run's writes look alive.
Values are stored as the runtime's redactor left them: no secret reaches this file.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from toolbed.connectors import process_started
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
    started: float | None = None
    """When the journalling process started: with ``pid``, it names the process."""
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
    """The journal file (``":memory:"`` for one that dies with the process).

    ``readonly`` opens an existing journal for reading only (``toolbed rollback
    status``): nothing is created, migrated or switched to WAL, and a file that is not a
    toolbed journal is refused."""

    def __init__(self, path: str | Path | None = None, *, readonly: bool = False):
        self.path = Path(path) if path is not None else default_journal_path()
        self.damaged: list[tuple[int, str]] = []
        """Rows that could not be read back: (seq, why)."""
        self._lock = threading.Lock()
        memory = str(path) == ":memory:"
        if readonly and not memory:
            self._open_readonly()
            return
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

    def _open_readonly(self) -> None:
        if not self.path.exists():
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self.db = sqlite_utils.Database(conn)
            self._table = self.db.table("writes")
            self._create()                  # an empty journal: nothing was journalled
            return
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                   check_same_thread=False, isolation_level=None, timeout=30)
            self.db = sqlite_utils.Database(conn)
            columns = set(self.db.table("writes").columns_dict) \
                if self.db.table("writes").exists() else set()
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.path} cannot be read as a rollback journal: {exc}"
                               ) from None
        missing = {"seq", "run_id", "app", "api", "status", "args"} - columns
        if missing:
            conn.close()
            raise JournalError(f"{self.path} is not a toolbed rollback journal (no 'writes' "
                               "table with seq, run_id, app, api, status, args); give the "
                               "journal's path, by default $TOOLBED_HOME/rollback/journal.db")
        self._table = self.db.table("writes")

    def _create(self) -> None:
        self._table.create(
            {
                "seq": int, "run_id": str, "task_id": str, "app": str, "api": str,
                "mode": str, "pid": int, "status": str, "args": str, "before": str,
                "response": str, "compensation": str, "http_status": int,
                "attempts": int, "error": str, "created": str, "updated": str,
                "instance": str, "started": float,
            },
            pk="seq",
            not_null={"run_id", "app", "api", "mode", "status", "args", "created", "updated"},
            if_not_exists=True,
        )
        for column, kind in (("instance", str), ("started", float)):
            if column not in self._table.columns_dict:    # a journal from before the column
                self._table.add_column(column, kind)
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
            "pid": os.getpid(), "started": process_started(os.getpid()),
            "status": str(status), "args": args,
            "before": before,
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
        entries, damaged = [], []
        for row in rows:
            try:
                entries.append(_decode(row))
            except (ValueError, TypeError) as exc:      # JSON or pydantic: a damaged row
                damaged.append((int(row.get("seq") or 0), _why(exc)))
        self.damaged = damaged
        return entries

    def get(self, seq: int) -> Entry:
        with self._lock:
            return _decode(self._table.get(seq))

    @contextmanager
    def recovering(self) -> Iterator[None]:
        """Hold the journal's recovery lock: two recoveries at once would undo the same
        writes twice. A second one is refused with the first one's pid."""
        lock_path = self.path.with_name(self.path.name + ".recover.lock")
        with open(lock_path, "a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "?"
                raise JournalError(f"another `toolbed rollback recover` (pid {holder}) is "
                                   f"recovering {self.path}; wait for it to finish") from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            try:
                yield
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)


def _why(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}"


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
