"""The rollback scope on the real apps: policy, verification, failures, secrets, replay."""

from __future__ import annotations

import base64
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import App, Catalog
from toolbed.cli import app as cli
from toolbed.connectors import RunningApp, Runtime
from toolbed.errors import IrreversibleWriteError, TransportError
from toolbed.rollback import (
    Journal,
    RollbackScope,
    Status,
    UndoPolicy,
    diff,
    recover,
    snapshot,
)

from ..conftest import AppPool

EVENT = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//toolbed//tests//EN\r\nBEGIN:VEVENT\r\n"
    "UID:dentist\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260310T080000Z\r\n"
    "DTEND:20260310T090000Z\r\nSUMMARY:Dentist\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


@pytest.fixture
def rt(catalog: Catalog, fresh_apps: dict[str, RunningApp]) -> Iterator[Runtime]:
    with Runtime(catalog, apps=fresh_apps) as runtime:
        yield runtime


def test_a_task_s_writes_are_undone_newest_first(rt: Runtime, journal: Journal) -> None:
    with RollbackScope(rt, journal, task_id="groceries", verify=["kinto"]) as scope:
        scope.call("kinto.create_bucket", {"bucket": "home"})
        scope.call("kinto.create_collection", {"bucket": "home", "collection": "shopping"})
        milk = scope.call("kinto.create_record", {
            "bucket": "home", "collection": "shopping", "data": {"item": "milk"}})
        assert milk.status == 201

    report = scope.report
    assert report is not None and report.clean, report.summary()
    assert [e.api for e in report.entries] == [
        "kinto.create_bucket", "kinto.create_collection", "kinto.create_record"]
    assert {e.status for e in report.entries} == {Status.COMPENSATED}
    undo = report.entries[2].compensation
    assert undo == {"api": "kinto.delete_record", "args": {
        "bucket": "home", "collection": "shopping", "id": milk.body["data"]["id"]}}
    assert rt.call("kinto.get_bucket", {"bucket": "home"}).status in (403, 404)


def test_writes_are_undone_when_the_task_raises(rt: Runtime, journal: Journal) -> None:
    with pytest.raises(RuntimeError), RollbackScope(rt, journal, verify=["kinto"]) as scope:
        scope.call("kinto.create_bucket", {"bucket": "doomed"})
        raise RuntimeError("the agent crashed")
    assert scope.report is not None and scope.report.clean, scope.report.summary()


def test_a_change_made_behind_the_scope_s_back_is_named_as_collateral(
    rt: Runtime, journal: Journal
) -> None:
    with RollbackScope(rt, journal, verify=["kinto"]) as scope:
        rt.call("kinto.create_bucket", {"bucket": "stray", "data": {"title": "not journalled"}})
    try:
        report = scope.report
        assert report is not None and not report.clean
        named = [str(d) for d in report.collateral]
        assert any("bucket=stray" in d and "added" in d for d in named), named
        assert any("/buckets/stray" in d for d in named), named
    finally:
        rt.call("kinto.delete_bucket", {"bucket": "stray"})


def test_verification_waits_for_an_app_that_settles_in_the_background(
    rt: Runtime, journal: Journal, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a stray bucket that a "background task" removes half a second after the scope
    # ends: seen as collateral by an app that settles at once, not by one given time
    def stray_removed_later() -> threading.Timer:
        rt.call("kinto.create_bucket", {"bucket": "settling"})
        timer = threading.Timer(0.5, rt.call, ("kinto.delete_bucket", {"bucket": "settling"}))
        timer.start()
        return timer

    with RollbackScope(rt, journal, verify=["kinto"]) as scope:
        timer = stray_removed_later()
    timer.join()
    assert scope.report is not None and scope.report.collateral, "no wait without settle"

    patient = catalog.app("kinto").model_copy(update={"settle": 5.0})
    monkeypatch.setitem(catalog.apps, "kinto", patient)
    with RollbackScope(rt, journal, verify=["kinto"]) as scope:
        timer = stray_removed_later()
    timer.join()
    assert scope.report is not None and scope.report.clean, scope.report.summary()


def test_an_irreversible_write_is_refused_unless_allowed(rt: Runtime, journal: Journal) -> None:
    batch = {"requests": [{"method": "PUT", "path": "/buckets/bulk"}]}
    with RollbackScope(rt, journal, verify=["kinto"]) as scope:
        with pytest.raises(IrreversibleWriteError, match="--allow-irreversible"):
            scope.call("kinto.batch", batch)
        refused = scope.observe("kinto.batch", batch)
    assert refused.error is not None and refused.error.type == "IrreversibleWriteError"
    assert scope.report is not None and scope.report.clean  # nothing was sent
    assert scope.report.entries == []

    with RollbackScope(rt, journal, verify=["kinto"], allow_irreversible=True) as allowed:
        assert allowed.call("kinto.batch", batch).status == 200
    try:
        report = allowed.report
        assert report is not None
        assert [e.api for e in report.irreversible] == ["kinto.batch"]
        assert any("bucket=bulk" in str(d) for d in report.collateral)
    finally:
        rt.call("kinto.delete_bucket", {"bucket": "bulk"})


def test_an_upsert_is_undone_by_what_it_did(
    catalog: Catalog, pool: AppPool, journal: Journal
) -> None:
    """A TiddlyWiki PUT edits a tiddler or creates it: the undo restores or deletes."""
    with Runtime(catalog, apps=pool.only("tiddlywiki")) as rt:
        with RollbackScope(rt, journal, verify=["tiddlywiki"]) as scope:
            scope.call("tiddlywiki.update_tiddler", {"title": "Garden plan", "text": "tomatoes"})
            scope.call("tiddlywiki.create_tiddler", {"title": "Shopping list", "text": "gone"})
        report = scope.report
        assert report is not None and report.clean, report.summary()
        assert [e.compensation["api"] for e in report.entries if e.compensation] == [
            "tiddlywiki.delete_tiddler", "tiddlywiki.restore_tiddler"]
        assert rt.call("tiddlywiki.get_tiddler", {"title": "Garden plan"}).status == 404
        shopping = rt.call("tiddlywiki.get_tiddler", {"title": "Shopping list"})
        assert "oat milk" in shopping.body["text"]


def test_an_overwritten_tag_and_a_moved_alias_are_set_back(
    catalog: Catalog, pool: AppPool, journal: Journal
) -> None:
    model = {"name": "iris-classifier"}
    with Runtime(catalog, apps=pool.only("mlflow")) as rt:
        with RollbackScope(rt, journal, verify=["mlflow"]) as scope:
            scope.call("mlflow.set_registered_model_tag", {**model, "key": "owner", "value": "me"})
            scope.call("mlflow.set_registered_model_tag", {**model, "key": "stage", "value": "qa"})
            scope.call("mlflow.set_registered_model_alias",
                       {**model, "alias": "champion", "version": "1"})
        report = scope.report
        assert report is not None and report.clean, report.summary()
        assert [e.compensation for e in report.entries] == [
            {"api": "mlflow.set_registered_model_tag",
             "args": {**model, "key": "owner", "value": "ml-platform"}},
            {"api": "mlflow.delete_registered_model_tag", "args": {**model, "key": "stage"}},
            {"api": "mlflow.set_registered_model_alias",
             "args": {**model, "alias": "champion", "version": "2"}},
        ]


def test_older_undos_follow_an_object_that_an_undo_re_creates_under_a_new_id(
    catalog: Catalog, pool: AppPool, journal: Journal
) -> None:
    flat = {"project": "maple-street-flat"}
    with Runtime(catalog, apps=pool.only("ihatemoney")) as rt:
        pizza = next(b for b in rt.call("ihatemoney.list_bills", flat).body
                     if b["what"] == "Pizza night")
        same = {"payer": pizza["payer_id"], "payed_for": [o["id"] for o in pizza["owers"]],
                "date": pizza["date"], "bill_type": pizza["bill_type"]}
        with RollbackScope(rt, journal, verify=["ihatemoney"]) as scope:
            # edit a bill, then delete it: the delete's undo brings it back as a new bill,
            # and the edit's undo must reach that one
            scope.call("ihatemoney.update_bill", {**flat, **same, "bill_id": pizza["id"],
                                                  "what": "Pizza and drinks", "amount": 61})
            scope.call("ihatemoney.delete_bill", {**flat, "bill_id": pizza["id"]})
            # add a bill, then delete it: the add's undo must delete the re-created one
            taxi = scope.call("ihatemoney.add_bill", {**flat, **same, "what": "Taxi",
                                                      "amount": 12})
            scope.call("ihatemoney.delete_bill", {**flat, "bill_id": taxi.body})
        report = scope.report
        assert report is not None and report.clean, report.summary()
        assert {e.status for e in report.entries} == {Status.COMPENSATED}
        edit_undo = report.entries[0].compensation
        assert edit_undo is not None and edit_undo["args"]["bill_id"] != pizza["id"]
        bills = {b["what"]: b for b in rt.call("ihatemoney.list_bills", flat).body}
        assert "Taxi" not in bills and "Pizza and drinks" not in bills
        assert bills["Pizza night"]["amount"] == pizza["amount"]
        assert bills["Pizza night"]["id"] == edit_undo["args"]["bill_id"]


def test_recovery_undoes_a_write_only_on_the_instance_it_went_to(
    rt: Runtime, journal: Journal, tmp_path: Path
) -> None:
    with RollbackScope(rt, journal, verify=["kinto"]) as scope:
        scope.call("kinto.create_bucket", {"bucket": "left-open"})
        entry = journal.entries(run_id=scope.run_id)[0]
        assert entry.instance == rt.apps["kinto"].data_dir
        # as if the process had died here, and the same write had gone to two other
        # instances: one stopped since (its data dir deleted), one still up elsewhere
        other = tmp_path / "other-kinto"
        other.mkdir()
        for instance in (str(tmp_path / "stopped-kinto"), str(other)):
            seq = journal.begin(run_id="dead", task_id=None, app="kinto",
                                api="kinto.create_bucket", mode="live",
                                args={"bucket": "left-open"}, instance=instance)
            journal.update(seq, Status.APPLIED, compensation=entry.compensation)
        done = recover(rt, journal, run_id="dead", include_live=True)
        assert rt.call("kinto.get_bucket", {"bucket": "left-open"}).status == 200  # untouched

    assert [e.status for e in done] == [Status.APPLIED, Status.NOOP]
    assert "not the one running now" in (done[0].error or "")
    assert "is gone" in (done[1].error or "")
    assert scope.report is not None and scope.report.clean, scope.report.summary()


def test_an_undo_that_landed_unjournalled_is_not_reported_failed(
    rt: Runtime, journal: Journal
) -> None:
    event = {"user": "alice", "calendar": "landed", "uid": "dentist"}
    with RollbackScope(rt, journal, verify=["radicale"],
                       policy=UndoPolicy(attempts=1)) as scope:
        scope.call("radicale.create_calendar", {
            "user": "alice", "calendar": "landed", "displayname": "Landed"})
        created = scope.call("radicale.create_event", {**event, "ics": EVENT})
        scope.call("radicale.update_event", {**event, "etag": created.headers["etag"],
                                             "ics": EVENT.replace("Dentist", "Moved")})
        undo = journal.entries(run_id=scope.run_id)[-1].compensation
        assert undo is not None and rt.call(undo["api"], undo["args"]).ok  # as if cut off

    report = scope.report
    assert report is not None and report.clean, report.summary()
    update = report.entries[-1]
    assert update.status is Status.COMPENSATED and "had landed" in (update.error or "")


@contextmanager
def stopped(app: RunningApp) -> Iterator[None]:
    """Freeze the app's processes (SIGSTOP): connections hang, nothing answers."""
    os.killpg(app.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(app.pid, signal.SIGCONT)


def settled_after_thaw(rt: Runtime, app: App) -> None:
    """Wait until two snapshots of the app, half a second apart, agree (at most 30 s).

    Thawed, the app first works through the requests that timed out while it was
    frozen, so a snapshot may itself time out (on a busy machine): that is not settled."""
    deadline = time.monotonic() + 30
    last = None
    while time.monotonic() < deadline:
        try:
            now = snapshot(rt.call, app)
        except TransportError:
            now = None
        if now is not None and last is not None and not diff(last, now):
            return
        last = now
        time.sleep(0.5)
    raise AssertionError(f"{app.app} did not settle within 30 s of being thawed")


def test_an_undo_that_fails_is_reported_then_recovered_on_the_next_run(
    home: Path, catalog: Catalog, fresh_apps: dict[str, RunningApp]
) -> None:
    radicale = fresh_apps["radicale"]
    journal_path = home / "journal.db"
    with Runtime(catalog, apps=fresh_apps, timeout=1.0) as rt:
        baseline = snapshot(rt.call, catalog.app("radicale"))
        scope = RollbackScope(rt, Journal(journal_path), verify=["radicale"],
                              policy=UndoPolicy(attempts=2, initial_wait=0.1))
        with scope:
            scope.call("radicale.create_calendar", {
                "user": "alice", "calendar": "dentist", "displayname": "Dentist"})
            scope.call("radicale.create_event", {
                "user": "alice", "calendar": "dentist", "uid": "dentist", "ics": EVENT})
            with stopped(radicale):
                report = scope.rollback()

        assert [e.status for e in report.failed] == [Status.FAILED, Status.FAILED]
        assert all("timed out" in (e.error or "").lower() or "failed" in (e.error or "")
                   for e in report.failed), report.summary()
        assert all(e.attempts == 2 for e in report.failed)

        status = CliRunner().invoke(
            cli, ["rollback", "status", "--journal", str(journal_path), "--json"])
        assert status.exit_code == 0, status.output
        assert [e["status"] for e in json.loads(status.output)] == ["failed", "failed"]

        # thawed, the app still serves the undo requests that timed out while it was
        # frozen; let it finish them, as a crashed run's app would have, then recover
        settled_after_thaw(rt, catalog.app("radicale"))
        result = CliRunner().invoke(cli, ["rollback", "recover", "--journal", str(journal_path)])
        assert result.exit_code == 0, result.output
        assert Journal(journal_path).entries(statuses=(Status.FAILED,)) == []
        assert diff(baseline, snapshot(rt.call, catalog.app("radicale"))) == []


def test_a_failed_undo_that_landed_late_is_not_sent_again(
    home: Path, catalog: Catalog, fresh_apps: dict[str, RunningApp]
) -> None:
    with Runtime(catalog, apps=fresh_apps) as rt:
        baseline = snapshot(rt.call, catalog.app("radicale"))
        scope = RollbackScope(rt, Journal(home / "late.db"), verify=["radicale"])
        with scope:
            scope.call("radicale.create_calendar", {
                "user": "alice", "calendar": "late", "displayname": "Late"})
            [entry] = scope.journal.entries(run_id=scope.run_id)
            # as if its undo had timed out on our side and reached the app afterwards
            scope.journal.update(entry.seq, Status.FAILED, error="undo timed out")
            rt.call("radicale.delete_calendar", {"user": "alice", "calendar": "late"})
        [entry] = scope.journal.entries(run_id=scope.run_id)
        assert entry.status is Status.COMPENSATED and "already undone" in (entry.error or "")
        assert scope.report is not None and scope.report.clean, scope.report.summary()
        assert diff(baseline, snapshot(rt.call, catalog.app("radicale"))) == []


def test_the_journal_never_contains_a_secret(
    rt: Runtime, tmp_path: Path, fresh_apps: dict[str, RunningApp]
) -> None:
    secret = fresh_apps["kinto"].env["TOOLBED_KINTO_PASSWORD"]
    path = tmp_path / "journal.db"
    rt.call("kinto.create_bucket", {"bucket": "vault", "data": {"note": secret}})
    with RollbackScope(rt, Journal(path), verify=["kinto"]) as scope:
        scope.call("kinto.create_account", {"username": "bob", "password": secret})
        scope.call("kinto.update_bucket", {"bucket": "vault", "data": {"copy": f"pw={secret}"}})
    assert scope.report is not None
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("journal"))
    for form in (secret, base64.b64encode(secret.encode()).decode()):
        assert form.encode() not in stored
    assert b"<TOOLBED_KINTO_PASSWORD>" in stored
    # restoring the bucket would write the marker back instead of the secret: refused,
    # and the bucket is reported as left changed
    update = next(e for e in scope.report.entries if e.api == "kinto.update_bucket")
    assert update.status is Status.FAILED and "redacted" in (update.error or "")
    assert any("bucket=vault" in str(d) for d in scope.report.collateral)
    rt.call("kinto.delete_bucket", {"bucket": "vault"})


def test_rollback_replays_from_the_cassette_exactly(
    catalog: Catalog, fresh_apps: dict[str, RunningApp], tmp_path: Path
) -> None:
    cassette = tmp_path / "scope.yaml"

    def task(runtime: Runtime) -> list[tuple[str, str, object]]:
        with RollbackScope(runtime, verify=["kinto"]) as scope:
            scope.call("kinto.create_bucket", {"bucket": "replayed"})
            scope.call("kinto.create_collection", {"bucket": "replayed", "collection": "c"})
            scope.call("kinto.create_record", {
                "bucket": "replayed", "collection": "c", "data": {"n": 1}})
        assert scope.report is not None and scope.report.clean, scope.report.summary()
        return [(e.api, e.status.value, e.compensation) for e in scope.report.entries]

    with Runtime(catalog, apps=fresh_apps, mode="record", cassette=cassette) as recording:
        recorded = task(recording)
    with Runtime(catalog, mode="replay", cassette=cassette) as replaying:
        replayed = task(replaying)
    assert replayed == recorded


async def test_the_async_scope_undoes_on_exit(rt: Runtime, journal: Journal) -> None:
    async with RollbackScope(rt, journal, verify=["radicale"]) as scope:
        made = await scope.acall("radicale.create_addressbook", {
            "user": "alice", "addressbook": "friends", "displayname": "Friends"})
        assert made.status == 201
        listed = await scope.acall("radicale.list_collections", {"user": "alice"})
        assert any(e["href"].endswith("/friends/") for e in listed.body)
    assert scope.report is not None and scope.report.clean, scope.report.summary()
    assert [e.status for e in scope.report.entries] == [Status.COMPENSATED]


def test_status_and_recover_from_the_command_line(home: Path, rt: Runtime) -> None:
    path = home / "journal.db"
    scope = RollbackScope(rt, Journal(path), run_id="abandoned")
    scope.call("kinto.create_bucket", {"bucket": "left"})  # no `with`: never rolled back

    shown = CliRunner().invoke(cli, ["rollback", "status", "--journal", str(path), "--json"])
    assert shown.exit_code == 0
    assert '"status": "applied"' in shown.output and "kinto.create_bucket" in shown.output

    done = CliRunner().invoke(cli, ["rollback", "recover", "--journal", str(path)])
    assert done.exit_code == 0, done.output
    assert rt.call("kinto.get_bucket", {"bucket": "left"}).status in (403, 404)
    again = CliRunner().invoke(cli, ["rollback", "status", "--journal", str(path)])
    assert "nothing to undo" in again.output
