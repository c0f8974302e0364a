"""`toolbed cassettes drift` on a live Kinto: a fresh recording is still valid, and a
recording whose answers differ from the app's in shape or status says so; on a hosted
service served by a transport whose answers change (no network); and `--update`,
which records again what passes and marks stale what broke, which runs then skip;
`apis check --live` compared with the recordings, and the report as a page."""

from __future__ import annotations

import json
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Mode, RunningApp, Runtime, made_when, made_with, read_cassette
from toolbed.harness import check_drift, drift_html, drift_report, drift_task, run_oracle
from toolbed.paths import home_dir
from toolbed.tasks import Task, load_tasks, set_field


def test_drift_of_a_kinto_task_before_and_after_its_recording_is_tampered_with(
    tmp_path: Path, kinto: RunningApp, catalog: Catalog,
) -> None:
    task = load_tasks().task("kinto-packing-left")
    cassette = tmp_path / "kinto-packing-left.yaml"
    with Runtime(catalog, mode=Mode.RECORD, cassette=cassette, apps={"kinto": kinto}) as rt:
        assert run_oracle(rt, task).ok

    fresh = drift_task(catalog, task, cassette, {"kinto": kinto})
    assert fresh.verdict == "still valid"
    assert {d.change.label for _, d in fresh.requests} <= {"unchanged", "values changed"}

    recorded = yaml.safe_load(cassette.read_text())
    reads = [i for i in recorded["interactions"] if "/records" in i["request"]["uri"]]
    body = json.loads(reads[0]["response"]["body"]["string"])
    body["data"] = [{("label" if k == "item" else k): v for k, v in r.items()}
                    for r in body["data"]]                   # the app renamed a field
    reads[0]["response"]["body"]["string"] = json.dumps(body)
    cassette.write_text(yaml.safe_dump(recorded))
    report = drift_report([drift_task(catalog, task, cassette, {"kinto": kinto})])
    assert report["apis"]["kinto.list_records"]["change"] == "shape changed"
    assert "item is new" in report["apis"]["kinto.list_records"]["detail"] or \
        "label is gone" in report["apis"]["kinto.list_records"]["detail"]
    assert report["summary"]["apis"]["shape changed"] == 1

    writes = load_tasks().task("kinto-add-sunscreen-record-id")
    assert drift_task(catalog, writes, cassette, {"kinto": kinto}).verdict == "skipped"


RANK: dict[str, Any] = {
    "id": "demo-rank", "query": "What rank does the item 'a 1' have today?",
    "apps": ["demo"], "scenario": "single", "category": "real-time search", "split": "train",
    "chain": [{"api": "demo.get_item", "args": {"item_id": "a 1"}, "save": "item"}],
    "answer": {"type": "realtime", "source": "item.body.rank", "match": "number"}}
ITEM = {"id": "a 1", "title": "Milk", "rank": 4}


def serving(body: Any, status: int = 200) -> httpx.MockTransport:
    """A hosted service that answers every request with ``body``."""
    return httpx.MockTransport(lambda request: httpx.Response(
        status, json=body, headers={"Server": "demo-api/2.1"}))


@pytest.fixture
def rank_cassette(tmp_path: Path, demo_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
                  ) -> Path:
    """The RANK task recorded against a service that answers ITEM (its key set)."""
    monkeypatch.setenv("DEMO_API_KEY", "k-123")
    cassette = tmp_path / "demo-rank.yaml"
    with Runtime(demo_catalog, mode=Mode.RECORD, cassette=cassette,
                 transport=serving(ITEM)) as rt:
        assert run_oracle(rt, Task.model_validate(RANK)).ok
    return cassette


def test_hosted_drift_through_a_transport_whose_answers_change(
    rank_cassette: Path, demo_catalog: Catalog,
) -> None:
    task, cassette = Task.model_validate(RANK), rank_cassette
    recorded = read_cassette(cassette)
    assert made_with(recorded) == {"demo": "server demo-api/2.1"}
    assert abs((made_when(recorded) or 0) - time.time()) < 120

    def verdict(transport: httpx.MockTransport) -> tuple[str, str]:
        result = drift_task(demo_catalog, task, cassette, transport=transport)
        return result.verdict, drift_report([result])["apis"]["demo.get_item"]["change"]

    assert verdict(serving(ITEM)) == ("still valid", "unchanged")
    assert verdict(serving({**ITEM, "rank": 7})) == ("answer moved", "values changed")
    assert verdict(serving({"id": "a 1", "title": "Milk", "position": 4})) == \
        ("broken", "shape changed")
    assert verdict(serving(ITEM, 404)) == ("broken", "gone")
    assert verdict(serving(ITEM, 401)) == ("broken", "auth changed")
    assert "k-123" not in cassette.read_text()


def test_requests_are_paired_across_new_ids_and_another_order(
    tmp_path: Path, demo_catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an app started afresh makes new ids and lists two objects the other way round:
    # each recorded read meets the fresh read of the same object, so nothing changed
    monkeypatch.setenv("DEMO_API_KEY", "k-123")
    task = Task.model_validate({
        "id": "demo-two", "query": "What are the first two items I have?", "apps": ["demo"],
        "scenario": "multi", "category": "information retrieval", "split": "train",
        "chain": [{"api": "demo.find", "args": {"phrase": "mine"}, "save": "found"},
                  {"api": "demo.get_item", "bind": {"item_id": "found.body.ids[0]"}},
                  {"api": "demo.get_item", "bind": {"item_id": "found.body.ids[1]"}}],
        "answer": {"type": "realtime", "source": "length(found.body.ids)", "match": "number"}})
    milk, note = {"title": "Milk", "rank": 4}, {"done": False, "text": "call Ann"}

    def app(ids: list[str], items: dict[str, Any]) -> httpx.MockTransport:
        def answer(request: httpx.Request) -> httpx.Response:
            if request.method == "REPORT":
                return httpx.Response(200, json={"ids": ids})
            return httpx.Response(200, json=items[request.url.path.rsplit("/", 1)[1]])
        return httpx.MockTransport(answer)

    first = ["5eda8d72-9a13-44d9-a3b2-e425fb114212", "0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9"]
    again = ["9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d"]
    cassette = tmp_path / "demo-two.yaml"
    with Runtime(demo_catalog, mode=Mode.RECORD, cassette=cassette,
                 transport=app(first, {first[0]: milk, first[1]: note})) as rt:
        assert run_oracle(rt, task).ok
    result = drift_task(demo_catalog, task, cassette,
                        transport=app(again, {again[0]: note, again[1]: milk}))
    assert result.verdict == "still valid"
    assert [d.change.label for _, d in result.requests] == \
        ["values changed", "unchanged", "unchanged"]
    renamed = drift_task(demo_catalog, task, cassette, transport=app(
        again, {again[0]: note, again[1]: {"name": "Milk", "rank": 4}}))
    assert drift_report([renamed])["apis"]["demo.get_item"]["change"] == "shape changed"


def test_a_live_check_of_the_apis_is_compared_with_their_recordings(
    rank_cassette: Path, demo_catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    cassette = rank_cassette
    get_item = demo_catalog.api("demo.get_item")
    never = next(a for a in demo_catalog.apis.values() if a.effect == "read" and a.examples
                 and a.id != get_item.id)

    def checked(body: Any, status: int = 200) -> dict[str, Any]:
        health, drifts = check_drift(demo_catalog, [get_item, never], [cassette],
                                     transport=serving(body, status))
        assert [h.api for h in health] == [get_item.id, never.id]
        return drift_report([], drifts)["apis"]

    same = checked(ITEM)       # its example asks for more than the task did: another request
    assert same[get_item.id]["change"] == "unchanged" and same[get_item.id]["checked"] == 1
    assert same[never.id]["detail"] == "not recorded before"
    moved = checked({"id": "a 1", "title": "Milk", "position": 4})
    assert moved[get_item.id]["change"] == "shape changed"
    assert "against another request's recording" in moved[get_item.id]["detail"]
    assert checked(ITEM, 410)[get_item.id]["change"] == "gone"

    monkeypatch.delenv("DEMO_API_KEY")                      # no key: called nowhere, no verdict
    health, drifts = check_drift(demo_catalog, [get_item], [cassette], transport=serving(ITEM))
    assert [h.verdict for h in health] == ["auth needed"] and drifts == []


class _Rows(HTMLParser):
    """The page's table rows: (class, cell texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[str]]] = []
        self.in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append((dict(attrs).get("class") or "", []))
        elif tag == "td":
            self.rows[-1][1].append("")
            self.in_cell = True

    def handle_endtag(self, tag: str) -> None:
        self.in_cell = self.in_cell and tag != "td"

    def handle_data(self, data: str) -> None:
        if self.in_cell:
            self.rows[-1][1][-1] += data


def test_the_drift_page_lists_what_changed_worst_first_and_the_tasks_that_broke(
    rank_cassette: Path, demo_catalog: Catalog,
) -> None:
    task, cassette = Task.model_validate(RANK), rank_cassette
    broken = drift_task(demo_catalog, task, cassette, transport=serving(ITEM, 404))
    _, drifts = check_drift(demo_catalog, demo_catalog.apis.values(), [cassette],
                            transport=serving({"id": "a 1", "title": "Milk", "rank": 5}))
    report = drift_report([broken], drifts)
    page = drift_html(report, "Drift <nightly>")
    assert "<title>Drift &lt;nightly&gt;</title>" in page
    parser = _Rows()
    parser.feed(page)
    apis = [(kind, cells) for kind, cells in parser.rows if kind.startswith("api ")]
    assert apis[0][0] == "api gone" and apis[0][1][0] == "demo.get_item"
    assert "status 200 is now 404" in apis[0][1][3] and "demo-rank" in apis[0][1][4]
    listed = {cells[0] for _, cells in apis}
    assert listed == set(report["apis"])              # every API, changed or (folded) not
    tasks = [cells for kind, cells in parser.rows if kind.startswith("task ")]
    assert tasks == [["demo-rank", "broken", report["tasks"]["demo-rank"]["detail"], ""]]
    assert "k-123" not in page


def test_set_field_adds_replaces_and_removes_a_task_field_leaving_the_rest_as_written() -> None:
    text = ("# my tasks\n"
            "- id: one\n  query: first  # keep this comment\n  split: train\n"
            "- id: two\n  split: dev\n  stale: \"old reason\"\n  chain:\n    - split: x\n")
    added = set_field(text, "stale", {0: '"2026-11-27 the app changed"'})
    assert added.splitlines()[1:3] == ["- id: one", '  stale: "2026-11-27 the app changed"']
    assert "# keep this comment" in added and added.count("stale:") == 2
    removed = set_field(added, "stale", {0: None, 1: None})
    assert removed == text.replace('  stale: "old reason"\n', "")
    assert set_field(text, "split", {1: "test"}).count("    - split: x") == 1   # nested: kept
    assert "  split: test\n" in set_field(text, "split", {1: "test"})


@pytest.mark.live
def test_drift_update_records_again_what_passes_and_marks_stale_what_broke(
    tmp_path: Path, kinto: RunningApp, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = {"id": "kinto-unread", "query": "Which books in my home library haven't I read?",
            "apps": ["kinto"], "scenario": "single", "category": "personal life",
            "split": "train", "chain": [{"api": "kinto.list_records", "save": "books",
                                         "args": {"bucket": "library", "collection": "books"}}],
            "answer": {"type": "fixed", "source": "books.body.data[?read == `false`].title",
                       "value": ["Middlemarch"]}}
    bad = {**good, "id": "kinto-unread-mislabelled"}
    tasks, cassettes = tmp_path / "kinto.yaml", tmp_path / "cassettes"
    tasks.write_text(yaml.safe_dump([good, bad], sort_keys=False))
    for task in load_tasks(tasks, catalog=catalog):
        with Runtime(catalog, mode=Mode.RECORD, cassette=cassettes / "kinto" / f"{task.id}.yaml",
                     apps={"kinto": kinto}) as rt:
            assert run_oracle(rt, task).ok
    # the app now answers otherwise than the second task says (its label no longer holds)
    bad["answer"] = {**bad["answer"], "value": ["Dune"]}
    tasks.write_text(yaml.safe_dump([good, bad], sort_keys=False))
    before = {p.name: p.read_text() for p in (cassettes / "kinto").iterdir()}

    home = tmp_path / "home"                  # the installed apps, nothing else of the real home
    home.mkdir()
    (home / "apps").symlink_to(home_dir() / "apps")
    monkeypatch.setenv("TOOLBED_HOME", str(home))
    runner = CliRunner()
    where = ["--tasks", str(tasks), "--cassettes", str(cassettes)]
    page = tmp_path / "drift.html"
    ran = runner.invoke(cli, ["cassettes", "drift", "--app", "kinto", "--update", *where,
                              "--html", str(page), "--out", str(tmp_path / "drift.json")])
    assert ran.exit_code == 1, ran.output                      # a task broke
    assert "recorded again: 1; marked stale: 1" in ran.output
    assert f'<tr class="task broken"><td>{bad["id"]}</td>' in page.read_text()
    assert json.loads((tmp_path / "drift.json").read_text())["tasks"][bad["id"]][
        "verdict"] == "broken"
    suite = load_tasks(tasks, catalog=catalog)
    assert suite.task(good["id"]).stale is None
    assert "cassettes drift" in (suite.task(bad["id"]).stale or "")
    after = {p.name: p.read_text() for p in (cassettes / "kinto").iterdir()}
    assert after[f"{bad['id']}.yaml"] == before[f"{bad['id']}.yaml"]
    assert after[f"{good['id']}.yaml"] != before[f"{good['id']}.yaml"]

    replayed = runner.invoke(cli, ["tasks", "validate", "--replay", *where])
    assert replayed.exit_code == 0, replayed.output
    assert f"skipping {bad['id']}, stale:" in replayed.output
    assert "1 of 1 tasks passed" in replayed.output

    listed = json.loads(runner.invoke(cli, ["cassettes", "list", "--json", *where]).output)
    assert {r["task"]: r["made_with"] for r in listed} == {
        good["id"]: {"kinto": f"version {catalog.app('kinto').version}"},
        bad["id"]: {"kinto": f"version {catalog.app('kinto').version}"}}
    assert all(r["moved"] == [] and 0 <= r["age_days"] < 1 for r in listed)
    path = cassettes / "kinto" / f"{good['id']}.yaml"
    path.write_text(path.read_text().replace(f"version {catalog.app('kinto').version}",
                                             "version 1.0.0"))      # made on another version
    listed = json.loads(runner.invoke(cli, ["cassettes", "list", "--json", *where]).output)
    assert {r["task"]: r["moved"] for r in listed} == {good["id"]: ["kinto"], bad["id"]: []}
    later = runner.invoke(cli, ["cassettes", "list", "--since", "2999-01-01", *where])
    assert later.exit_code == 1 and "no recorded task" in later.output
