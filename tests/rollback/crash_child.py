"""A run that makes writes in a rollback scope and dies by SIGKILL at a chosen point.

    python crash_child.py JOURNAL PHASE K

Run by test_crash.py. The apps are the ones recorded under $TOOLBED_HOME. PHASE names
where the process kills itself, at the K-th write (or K-th undo for ``mid_rollback``):

- ``before_journal``: the write is about to be journalled, nothing sent;
- ``after_journal``: journalled as pending, not yet sent;
- ``after_send``: the app has answered, the answer is not journalled (the window a
  declared lookup exists for);
- ``after_applied``: the answer and its undo are journalled;
- ``mid_rollback``: the task is over and K undos have run;
- ``none``: no self-kill (the parent kills at a random moment instead).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from toolbed.apis import CATALOG_DIR, load_catalog
from toolbed.connectors import Runtime
from toolbed.rollback import Journal, RollbackScope, Status

ICS = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//toolbed//crash//EN\r\nBEGIN:VEVENT\r\n"
    "UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260301T090000Z\r\n"
    "DTEND:20260301T100000Z\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
VCF = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{name}\r\nN:{name};;;;\r\nEND:VCARD\r\n"


def writes(scope: RollbackScope) -> None:
    """Ten writes over two apps: ids chosen by the caller and by the server, updates, deletes."""
    call = scope.call
    call("kinto.create_bucket", {"bucket": "crash", "data": {"title": "Crash test"}})
    call("kinto.create_collection", {"bucket": "crash", "collection": "notes"})
    rec = call("kinto.create_record", {"bucket": "crash", "collection": "notes",
                                       "data": {"title": "first"}})
    call("kinto.update_record", {"bucket": "crash", "collection": "notes",
                                 "id": rec.body["data"]["id"], "data": {"title": "edited"}})
    call("kinto.create_record", {"bucket": "crash", "collection": "notes",
                                 "data": {"title": "second"}})
    call("radicale.create_calendar", {"user": "alice", "calendar": "crash",
                                      "displayname": "Crash"})
    created = call("radicale.create_event", {"user": "alice", "calendar": "crash", "uid": "e1",
                                             "ics": ICS.format(uid="e1", summary="Standup")})
    call("radicale.update_event", {"user": "alice", "calendar": "crash", "uid": "e1",
                                   "etag": created.headers["etag"],
                                   "ics": ICS.format(uid="e1", summary="Moved standup")})
    call("radicale.create_addressbook", {"user": "alice", "addressbook": "crashbook",
                                         "displayname": "Crash book"})
    call("radicale.create_contact", {"user": "alice", "addressbook": "crashbook", "uid": "c1",
                                     "vcf": VCF.format(uid="c1", name="Ada Lovelace")})


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(journal_path: str, phase: str, k: int) -> None:
    journal = Journal(journal_path)
    counts = {"begin": 0, "applied": 0, "compensated": 0}
    begin, update = journal.begin, journal.update

    def patched_begin(**kwargs: Any) -> int:
        counts["begin"] += 1
        if phase == "before_journal" and counts["begin"] == k:
            die()
        seq = begin(**kwargs)
        if phase == "after_journal" and counts["begin"] == k:
            die()
        return seq

    def patched_update(seq: int, status: Status, **fields: Any) -> None:
        if phase == "after_send" and counts["begin"] == k and "http_status" in fields:
            die()  # the answer is here and not journalled yet
        update(seq, status, **fields)
        if status is Status.APPLIED:
            counts["applied"] += 1
            if phase == "after_applied" and counts["applied"] == k:
                die()
        if status is Status.COMPENSATED:
            counts["compensated"] += 1
            if phase == "mid_rollback" and counts["compensated"] == k:
                die()

    journal.begin = patched_begin  # type: ignore[method-assign]
    journal.update = patched_update  # type: ignore[method-assign]
    catalog = load_catalog(CATALOG_DIR / "selfhosted")
    with Runtime(catalog) as runtime, RollbackScope(runtime, journal, task_id="crash") as scope:
        writes(scope)
    sys.exit(0 if scope.report and scope.report.clean else 3)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
