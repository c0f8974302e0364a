"""A Chinese user's words reach the app as typed: characters outside the Basic
Multilingual Plane, mixed scripts and full-width digits, in a JSON body and in a query
string, live on Kinto, and again from the recording (issue 20's promise for `lang: zh`
tasks)."""

from __future__ import annotations

from pathlib import Path

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, Runtime, read_cassette
from toolbed.rollback import Journal, RollbackScope

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
