"""A Chinese user's words reach the app as typed: characters outside the Basic
Multilingual Plane, mixed scripts and full-width digits, in a JSON body and in a query
string, live on Kinto, and again from the recording (issue 20's promise for `lang: zh`
tasks)."""

from __future__ import annotations

import json
from pathlib import Path

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, Runtime, read_cassette
from toolbed.rollback import Journal, RollbackScope, snapshot

from ..conftest import AppPool

TEXT = "𠮷野家的牛丼 ＡＢＣ１２３ 两份 take-away 🍜，下周五 2025年3月14日"
"""U+20BB7 and U+1F35C lie outside the BMP (UTF-16 surrogate pairs); full-width Latin
letters and digits; Chinese, Latin and emoji in one string; a full-width comma."""


def reads(rt: Runtime) -> list[str]:
    """The titles the app gives back, asked for by exact value and by a substring."""
    where = {"bucket": "zh-text", "collection": "orders"}
    exact = rt.call("kinto.list_records", {**where, "filters": {"title": TEXT}})
    like = rt.call("kinto.list_records", {**where, "filters": {"like_title": "*𠮷野家*"}})
    return [r["title"] for obs in (exact, like) for r in obs.body["data"]]


def test_chinese_text_reaches_the_app_intact_and_replays_the_same(
    tmp_path: Path, catalog: Catalog, kinto: RunningApp, journal: Journal,
) -> None:
    cassette = tmp_path / "zh.yaml"
    with Runtime(catalog, mode=Mode.RECORD, cassette=cassette, apps={"kinto": kinto}) as rt, \
            RollbackScope(rt, journal, verify=["kinto"]) as scope:
        scope.call("kinto.create_bucket", {"bucket": "zh-text"})
        scope.call("kinto.create_collection", {"bucket": "zh-text", "collection": "orders"})
        made = scope.call("kinto.create_record", {
            "bucket": "zh-text", "collection": "orders", "data": {"title": TEXT}})
        assert made.status == 201 and made.body["data"]["title"] == TEXT
        assert reads(rt) == [TEXT, TEXT]
    assert scope.report is not None and scope.report.clean, scope.report.summary()

    # the cassette holds the text itself, and a replay answers with it unchanged
    assert TEXT in str(read_cassette(cassette)["interactions"])
    with Runtime(catalog, mode=Mode.REPLAY, cassette=cassette) as replay:
        assert reads(replay) == [TEXT, TEXT]



def test_the_state_probe_reads_a_calendar_named_in_chinese(
    catalog: Catalog, radicale: RunningApp,
) -> None:
    # Radicale lists the calendar as /alice/%E5%AE%B6%E5%8A%A1%20.../; the probe must ask
    # for it by its name (the runtime encodes the path itself), or it reads a 404 for it
    # and a change inside that calendar is never seen by verification
    name = "家务 安排"
    event = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//toolbed//test//ZH\r\nBEGIN:VEVENT\r\n"
             "UID:sao-chu\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260405T010000Z\r\n"
             "SUMMARY:大扫除\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    with Runtime(catalog, apps={"radicale": radicale}) as rt:
        rt.call("radicale.create_calendar", {"user": "alice", "calendar": name,
                                             "displayname": "家务"})
        try:
            rt.call("radicale.create_event", {"user": "alice", "calendar": name,
                                              "uid": "sao-chu", "ics": event})
            state = json.dumps(snapshot(rt.call, catalog.app("radicale")), ensure_ascii=False)
        finally:
            rt.call("radicale.delete_calendar", {"user": "alice", "calendar": name})
    assert "SUMMARY:大扫除" in state


def test_a_file_moves_out_of_a_chinese_folder_and_its_undo_moves_it_back(
    catalog: Catalog, pool: AppPool, journal: Journal,
) -> None:
    # WebDAV's Destination header is a URI: the runtime percent-encodes it like a path,
    # so the undo's destination, /家庭/装修预算.csv, can be sent (it was refused before,
    # and the file stayed in /notes)
    apps = pool.only("wsgidav")
    with Runtime(catalog, apps=apps) as rt:
        with RollbackScope(rt, journal, verify=["wsgidav"]) as scope:
            moved = scope.call("wsgidav.move_file", {
                "folder": "家庭", "name": "装修预算.csv", "destination": "/notes/装修 预算.csv"})
            assert moved.status == 201, moved
            assert "厨房,38000" in rt.call("wsgidav.read_file",
                                          {"folder": "notes", "name": "装修 预算.csv"}).body
        back = rt.call("wsgidav.read_file", {"folder": "家庭", "name": "装修预算.csv"})
    assert scope.report is not None and scope.report.clean, scope.report.summary()
    assert back.status == 200 and "厨房,38000" in back.body
