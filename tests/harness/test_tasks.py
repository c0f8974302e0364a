"""Task files: what the loader refuses, what the oracle catches, and the CLI over both."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Runtime, save_running
from toolbed.errors import TaskError
from toolbed.harness import run_oracle
from toolbed.tasks import Task, TaskSuite, load_tasks

from ..conftest import AppPool, block_network

UNREAD: dict[str, Any] = {
    "id": "kinto-unread", "query": "Which books in my home library haven't I read yet?",
    "apps": ["kinto"], "scenario": "single", "category": "personal life", "split": "train",
    "chain": [{"api": "kinto.list_records", "args": {"bucket": "library", "collection": "books"},
               "save": "books"}],
    "answer": {"type": "fixed", "source": "books.body.data[?read == `false`].title",
               "value": ["Middlemarch"]},
}
PACKED: dict[str, Any] = {
    "id": "kinto-pack-charger",
    "query": "The phone charger is in my suitcase now, tick it off my Lisbon packing list.",
    "apps": ["kinto"], "scenario": "multi", "category": "application manipulation",
    "split": "train",
    "chain": [
        {"api": "kinto.list_records", "args": {"bucket": "trips", "collection": "packing"},
         "save": "packing"},
        {"api": "kinto.update_record",
         "args": {"bucket": "trips", "collection": "packing", "data": {"packed": True}},
         "bind": {"id": "packing.body.data[?item == 'phone charger'] | [0].id"}},
    ],
    "answer": {"type": "operational", "state": [{
        "api": "kinto.list_records", "args": {"bucket": "trips", "collection": "packing"},
        "expect": "body.data[?item == 'phone charger'] | [0].packed"}]},
}
OLDEST: dict[str, Any] = {
    "id": "kinto-oldest", "query": "Tell me about the oldest book on my shelves.",
    "apps": ["kinto"], "scenario": "single", "category": "information retrieval",
    "split": "test",
    "chain": UNREAD["chain"],
    "answer": {"type": "open", "facts": ["min_by(books.body.data, &year).title"],
               "references": ["Middlemarch (1871), by George Eliot, on the bedroom shelf."]},
}


def write(
    tmp_path: Path, *tasks: dict[str, Any], text: str | None = None, name: str = "tasks.yaml"
) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    path.write_text(text if text is not None else yaml.safe_dump(list(tasks), sort_keys=False))
    return path


def changed(task: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**task, **fields}


@pytest.fixture
def load(tmp_path: Path, catalog: Catalog) -> Callable[..., TaskSuite]:
    """Write tasks to a file and load it, as `toolbed tasks validate --tasks FILE` would."""
    def load(*tasks: dict[str, Any], text: str | None = None) -> TaskSuite:
        return load_tasks(write(tmp_path, *tasks, text=text), catalog=catalog)
    return load


@pytest.fixture
def rt(catalog: Catalog, pool: AppPool) -> Iterator[Runtime]:
    with Runtime(catalog, apps=pool.only("kinto")) as runtime:
        yield runtime


# -- the loader ---------------------------------------------------------------------


def test_a_good_file_loads_into_typed_tasks(load: Callable[..., TaskSuite]) -> None:
    suite = load(UNREAD, PACKED, OLDEST)
    assert [t.id for t in suite] == ["kinto-unread", "kinto-pack-charger", "kinto-oldest"]
    assert [t.type for t in suite] == ["fixed", "operational", "open"]
    assert suite.filter(types=["open"]) == [suite.task("kinto-oldest")]
    assert isinstance(suite.task("kinto-unread"), Task)


@pytest.mark.parametrize(("task", "message"), [
    (changed(UNREAD, chain=[{"api": "kinto.list_recordz", "save": "b"}]),
     "Did you mean kinto.list_records"),
    (changed(UNREAD, query="Call kinto.list_records on my library please"), "names the API"),
    (changed(UNREAD, query="Please run list_records for the books"), "names the API"),
    (changed(UNREAD, scenario="multi"), "scenario multi means 2 to 9 calls"),
    (changed(UNREAD, apps=["radicale"]), "differ from the chain's apps"),
    (changed(UNREAD, chain=[{"api": "kinto.list_records", "args": {"bucket": "library",
                                                                    "colection": "books"},
                                      "save": "books"}]),
     "takes no argument(s) ['colection']"),
    (changed(UNREAD, chain=[{"api": "kinto.list_records", "args": {"bucket": 7,
                                                                    "collection": "books"},
                              "save": "books"}]),
     "bucket"),
    (changed(UNREAD, answer={"type": "fixed", "source": "books.[", "value": 1}),
     "not a valid JMESPath expression"),
    (changed(UNREAD, answer={"type": "fixed", "source": "books", "value": None}),
     "needs a value"),
    (changed(PACKED, scenario="single", chain=PACKED["chain"][:1]),
     "must make at least one write"),
    (changed(PACKED, irreversible=True), "every write of the chain has an undo"),
    (changed(PACKED, answer={"type": "operational", "state": [{
        "api": "kinto.delete_bucket", "args": {"bucket": "trips"}, "expect": "status"}]}),
     "a state check must only read"),
    (changed(UNREAD, split="holdout"), "field split"),
    (changed(UNREAD, reset=True), "`reset: true` is for chains with a write no undo reverses"),
])
def test_a_bad_task_is_refused_with_its_file_id_and_fix(
    tmp_path: Path, catalog: Catalog, task: dict[str, Any], message: str
) -> None:
    path = write(tmp_path, task)
    with pytest.raises(TaskError) as caught:
        load_tasks(path, catalog=catalog)
    assert message in str(caught.value)
    assert f"{path}: task {task['id']}" in str(caught.value)


def test_malformed_yaml_and_duplicate_ids_are_named(load: Callable[..., TaskSuite]) -> None:
    unclosed = r"not valid YAML \(line 3, column 1\): did not find expected ',' or ']'"
    with pytest.raises(TaskError, match=unclosed):
        load(text="- id: a\n  query: [unclosed\n")
    with pytest.raises(TaskError, match="'kinto-unread' is used twice"):
        load(UNREAD, UNREAD)


# -- the oracle, live ---------------------------------------------------------------


def test_the_oracle_passes_sound_tasks_and_leaves_the_app_as_it_was(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    for task in load(UNREAD, PACKED, OLDEST):
        run = run_oracle(rt, task)
        assert run.ok, run.summary()
    # run again: the first run's write was undone, so the check fails before again
    assert run_oracle(rt, load(PACKED).task("kinto-pack-charger")).ok


def test_a_wrong_label_is_caught_against_the_live_app(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    task = load(changed(UNREAD, answer={
        **UNREAD["answer"], "value": ["Dune"]})).task("kinto-unread")
    run = run_oracle(rt, task)
    assert not run.ok
    assert "the label is 'Dune', but the app returned 'Middlemarch'" in run.problems[0]


def test_an_operational_task_that_needs_no_action_is_caught(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    already = {"api": "kinto.list_records", "args": {"bucket": "trips", "collection": "packing"},
               "expect": "body.data[?item == 'passport'] | [0].packed"}
    task = load(changed(PACKED, answer={
        "type": "operational", "state": [already]})).task("kinto-pack-charger")
    run = run_oracle(rt, task)
    assert any("holds before the chain" in p for p in run.problems), run.problems
    assert run.report is not None and run.report.clean, "the write was still undone"


def test_an_expression_that_does_not_fit_the_answer_fails_the_task_not_the_run(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    misfit = {"api": "kinto.list_records", "args": {"bucket": "trips", "collection": "packing"},
              "expect": "contains(body.nothing, 'charger')"}     # contains() on null
    task = load(changed(PACKED, answer={"type": "operational", "state": [misfit]}))
    run = run_oracle(rt, task.task("kinto-pack-charger"))
    assert any("does not hold after the chain" in p for p in run.problems), run.problems
    task = load(changed(UNREAD, answer={"type": "realtime", "source": "abs(books.body)"}))
    run = run_oracle(rt, task.task("kinto-unread"))
    assert any("cannot be evaluated" in p for p in run.problems), run.problems


def test_a_task_that_resets_its_app_needs_a_way_to_restart_it(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    wipe = {**PACKED, "id": "kinto-wipe", "scenario": "single", "irreversible": True,
            "reset": True, "chain": [{"api": "kinto.batch", "args": {"requests": [
                {"method": "DELETE", "path": "/buckets/trips"}]}}],
            "answer": {"type": "operational", "state": [{
                "api": "kinto.list_buckets", "expect": "!contains(body.data[].id, 'trips')"}]}}
    with pytest.raises(TaskError, match="restarts its apps afterwards"):
        run_oracle(rt, load(wipe).task("kinto-wipe"))


def test_an_open_reference_must_mention_the_facts_the_app_returned(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    task = load(changed(OLDEST, answer={
        **OLDEST["answer"], "references": ["It is Bleak House, by Dickens."]})).task("kinto-oldest")
    run = run_oracle(rt, task)
    assert any("does not mention 'Middlemarch'" in p for p in run.problems), run.problems


def test_a_failing_gold_call_is_reported_not_raised(
    load: Callable[..., TaskSuite], rt: Runtime
) -> None:
    task = load(changed(UNREAD, chain=[{
        "api": "kinto.list_records", "args": {"bucket": "nowhere", "collection": "books"},
        "save": "books"}])).task("kinto-unread")
    run = run_oracle(rt, task)
    assert any("gold call kinto.list_records failed" in p for p in run.problems), run.problems


# -- the command line ---------------------------------------------------------------


def test_validate_stats_and_split_from_the_command_line(
    tmp_path: Path, catalog: Catalog, pool: AppPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "suite", UNREAD, PACKED, OLDEST)
    runner = CliRunner()
    offline = runner.invoke(cli, ["tasks", "validate", "--tasks", str(path)])
    assert offline.exit_code == 0 and "3 tasks load" in offline.output

    # kinto recorded as running, as `toolbed apps up kinto` would
    kinto = pool.only("kinto")["kinto"]
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    save_running(kinto)
    live = runner.invoke(cli, ["tasks", "validate", "--live", "--tasks", str(path), "--json"])
    assert live.exit_code == 0, live.output
    assert json.loads(live.output) == {"total": 3, "passed": 3, "failed": []}
    mislabelled = write(tmp_path / "other", changed(UNREAD, answer={
        **UNREAD["answer"], "value": ["Dune"]}))
    wrong = runner.invoke(cli, ["tasks", "validate", "--live", "--tasks", str(mislabelled)])
    assert wrong.exit_code == 1 and "kinto-unread: FAILED" in wrong.output

    stats = runner.invoke(cli, ["tasks", "stats", "--tasks", str(path), "--json"])
    counts = json.loads(stats.output)
    assert counts["total"] == 3
    assert counts["type"] == {"fixed": 1, "open": 1, "operational": 1}
    assert counts["calls"] == {"1": 2, "2": 1}
    assert counts["granularity"] == {"S-M": 1, "S-S": 2}
    assert set(counts) == {"total", "app", "domain", "scenario", "granularity", "type",
                           "category", "split", "lang", "calls", "dialogues"}
    assert counts["dialogues"]["total"] == 0        # a task file of one's own: no dialogues
    shipped = json.loads(runner.invoke(cli, ["tasks", "stats", "--app", "kinto",
                                             "--json"]).output)["dialogues"]
    assert shipped["total"] == sum(shipped["granularity"].values()) > 0
    assert set(shipped["granularity"]) <= {"M-S", "M-M"} and shipped["app"]["kinto"] == \
        shipped["total"]

    bad = runner.invoke(cli, ["tasks", "validate", "--tasks", str(tmp_path / "nope.yaml")])
    assert bad.exit_code == 1 and "no such task file" in bad.output
    assert "Traceback" not in bad.output

    split = runner.invoke(cli, ["tasks", "split", "--tasks", str(path.parent), "--write"])
    assert split.exit_code == 0, split.output
    assert {t.split for t in load_tasks(path, catalog=catalog)} <= {"train", "dev", "test"}


def test_record_then_replay_offline_from_the_command_line(
    tmp_path: Path, pool: AppPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "suite", UNREAD, PACKED, OLDEST)
    cassettes = tmp_path / "cassettes"
    kinto = pool.only("kinto")["kinto"]
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    save_running(kinto)
    runner = CliRunner()
    recorded = runner.invoke(cli, ["tasks", "record", "--tasks", str(path),
                                   "--cassettes", str(cassettes)])
    assert recorded.exit_code == 0, recorded.output
    assert sorted(p.name for p in (cassettes / "kinto").iterdir()) == [
        "kinto-oldest.yaml", "kinto-pack-charger.yaml", "kinto-unread.yaml"]

    block_network(monkeypatch)
    replayed = runner.invoke(cli, ["tasks", "validate", "--replay", "--tasks", str(path),
                                   "--cassettes", str(cassettes), "--json"])
    assert replayed.exit_code == 0, replayed.output
    assert json.loads(replayed.output) == {"total": 3, "passed": 3, "failed": []}

    # recording again while kinto is down fails, and keeps the cassettes it had
    before = {p.name: p.read_bytes() for p in (cassettes / "kinto").iterdir()}
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "nothing-running"))
    down = runner.invoke(cli, ["tasks", "record", "--tasks", str(path),
                               "--cassettes", str(cassettes)])
    assert down.exit_code == 1 and "kinto is not running" in down.output
    assert {p.name: p.read_bytes() for p in (cassettes / "kinto").iterdir()} == before


ITEM = {"id": "a 1", "title": "Milk", "rank": 4}


def test_hosted_tasks_run_only_with_live_and_are_marked_verified_when_they_pass(
    tmp_path: Path, demo_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a hosted service, served by a mock transport: tests never reach the internet
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=ITEM)

    monkeypatch.setattr("toolbed.tasks._suite.load_catalog", lambda: demo_catalog)
    monkeypatch.setattr("toolbed.cli._tasks.Runtime", functools.partial(
        Runtime, env={"DEMO_API_KEY": "k-123"}, transport=httpx.MockTransport(serve)))
    rank = {"id": "demo-rank", "query": "What rank does the item 'a 1' have today?",
            "apps": ["demo"], "scenario": "single", "category": "real-time search",
            "split": "train", "verified": False,
            "chain": [{"api": "demo.get_item", "args": {"item_id": "a 1"}, "save": "item"}],
            "answer": {"type": "realtime", "source": "item.body.rank", "match": "number"}}
    title = {**rank, "id": "demo-title", "query": "What is the title of the item 'a 1'?",
             "answer": {"type": "fixed", "source": "item.body.title", "value": "Bread"}}
    path = write(tmp_path, rank, title)
    cassettes = tmp_path / "cassettes"
    runner = CliRunner()
    args = ["tasks", "record", "--tasks", str(path), "--cassettes", str(cassettes)]

    refused = runner.invoke(cli, args)
    assert refused.exit_code == 1
    assert "2 of these tasks are not yet verified" in refused.output and "--live" in refused.output
    assert not cassettes.exists()

    ran = runner.invoke(cli, [*args, "--live"])
    assert ran.exit_code == 1, "the mislabelled task fails"
    assert "demo-title: FAILED" in ran.output and "1 tasks verified live" in ran.output
    suite = load_tasks(path, catalog=demo_catalog)
    assert {t.id: t.verified for t in suite} == {"demo-rank": True, "demo-title": False}
    assert [p.name for p in (cassettes / "demo").iterdir()] == ["demo-rank.yaml"]
    assert "k-123" not in (cassettes / "demo" / "demo-rank.yaml").read_text()
