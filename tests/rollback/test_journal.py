"""The journal cannot be fooled or blocked: a reused pid, a damaged row, two
recoveries at once, a foreign file given to a read-only command."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from toolbed.cli import app as cli
from toolbed.connectors import Runtime, process_started
from toolbed.errors import JournalError
from toolbed.rollback import Journal, Status, open_entries, recover

runner = CliRunner()


def offline(catalog) -> Runtime:
    return Runtime(catalog, apps={}, env={},
                   transport=httpx.MockTransport(lambda request: pytest.fail("sent")))


def write(journal: Journal, mode: str = "replay") -> int:
    return journal.begin(run_id="r1", task_id="t", app="kinto", api="kinto.create_bucket",
                         mode=mode, args={"bucket": "b"}, status=Status.APPLIED,
                         compensation={"api": "kinto.delete_bucket", "args": {"bucket": "b"}})


def test_a_dead_runs_entry_is_recovered_even_when_its_pid_now_names_another_process(
        journal: Journal) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        seq = write(journal)
        started = process_started(other.pid)
        assert started is not None
        with journal.db.conn:
            journal.db.conn.execute("update writes set pid = ?, started = ? where seq = ?",
                                    (other.pid, started - 3600, seq))   # an older process
        assert [e.seq for e in open_entries(journal)] == [seq]
        with journal.db.conn:
            journal.db.conn.execute("update writes set started = ? where seq = ?",
                                    (started, seq))                     # that very process
        assert open_entries(journal) == []
    finally:
        other.kill()
        other.wait()


def damage(path: Path, seq: int) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("update writes set args = '{not json' where seq = ?", (seq,))


def test_a_damaged_row_is_reported_and_the_others_are_still_listed_and_recovered(
        journal: Journal, catalog, tmp_path: Path) -> None:
    first, bad, last = write(journal), write(journal), write(journal)
    damage(journal.path, bad)
    assert [e.seq for e in journal.entries()] == [first, last]
    assert [seq for seq, _ in journal.damaged] == [bad]

    status = runner.invoke(cli, ["rollback", "status", "--journal", str(journal.path)])
    assert status.exit_code == 0, status.output
    assert f"entry #{bad} of" in status.output and "cannot be read" in status.output

    with offline(catalog) as runtime:            # replayed writes close as no-ops
        done = recover(runtime, journal)
    assert [e.seq for e in done] == [last, first]
    recovered = runner.invoke(cli, ["rollback", "recover", "--journal", str(journal.path)])
    assert recovered.exit_code == 1 and f"entry #{bad} of" in recovered.output


def test_two_recoveries_of_one_journal_cannot_run_at_once(journal: Journal, catalog,
                                                          tmp_path: Path) -> None:
    write(journal)
    with journal.recovering(), offline(catalog) as runtime:
        other = Journal(journal.path)
        with pytest.raises(JournalError, match=f"another .* \\(pid {os.getpid()}\\)"):
            recover(runtime, other)
        other.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_status_reads_without_writing_and_refuses_a_file_that_is_no_journal(
        journal: Journal, tmp_path: Path) -> None:
    foreign = tmp_path / "notes.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("create table notes (text)")
    before = digest(foreign)
    result = runner.invoke(cli, ["rollback", "status", "--journal", str(foreign)])
    assert result.exit_code == 1 and "is not a toolbed rollback journal" in result.output
    assert digest(foreign) == before and not Path(f"{foreign}-wal").exists()

    write(journal)
    journal.close()
    before = digest(journal.path)
    result = runner.invoke(cli, ["rollback", "status", "--journal", str(journal.path)])
    assert result.exit_code == 0 and "applied" in result.output
    assert digest(journal.path) == before
    missing = runner.invoke(cli, ["rollback", "status", "--journal", str(tmp_path / "no.db")])
    assert missing.exit_code == 0 and "nothing to undo" in missing.output
    assert not (tmp_path / "no.db").exists()
