"""`toolbed eval`: the oracle replays at 100%, a model's run records and replays with its
own HTTP traffic, and what an agent gets wrong is counted."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Runtime
from toolbed.harness import (
    LangChainAgent,
    OracleAgent,
    ReactAgent,
    Runner,
    ScriptedChatModel,
    ToolBox,
    Trajectory,
    chat_model,
    dialogue_summary,
    load_results,
    tooleyes_markdown,
    tooleyes_table,
    write_report,
)
from toolbed.harness.metrics import ERRORS
from toolbed.paths import home_dir
from toolbed.retriever import Hit, Pipeline
from toolbed.tasks import TaskSuite, load_tasks, task_cassette

from ..conftest import AppPool, block_network
from .conftest import ScriptedOpenAI


@pytest.fixture(scope="module")
def suite() -> TaskSuite:
    return load_tasks()


def test_toolbed_eval_replays_the_oracle_offline_and_reports_100_percent(
    suite: TaskSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seeded sample over all splits through the command, its report and a resumed
    rerun; every task's cassette replays through the same runner in
    test_oracle_runs.py."""
    block_network(monkeypatch)
    run = tmp_path / "oracle"
    args = ["eval", "--agent", "oracle", "--mode", "replay", "--split", "train", "--split",
            "dev", "--split", "test", "--sample", "60", "--run-dir", str(run)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    recorded = min(60, sum(suite.tier(t) == "selfhosted" for t in suite))  # eval's default tier
    summary = json.loads((run / "summary.json").read_text())
    assert summary["tasks"] == recorded and summary["success"] == 1.0 and summary["problems"] == 0
    assert {"ts", "ps", "tn", "to", "sr", "ats", "sats", "tpr", "tool_match", "completion",
            "ans_acc"} <= set(summary["metrics"])
    assert set(summary["metrics"].values()) == {1.0}
    assert summary["errors"] == dict.fromkeys(ERRORS, 0)
    assert summary["completion"]["all"]["all"] == 1.0
    assert (run / "summary.md").read_text().startswith(f"# oracle on {recorded} tasks")
    assert len((run / "results.jsonl").read_text().splitlines()) == recorded
    page = (run / "report.html").read_text()
    assert page.count('<img src="data:image/png;base64,') == 2 and "<td>tool_match</td>" in page

    again = CliRunner().invoke(cli, args)           # a rerun resumes: nothing left to do
    assert again.exit_code == 0 and f"{recorded} runs done" in " ".join(again.output.split())
    printed = CliRunner().invoke(cli, ["report", str(run)])
    assert printed.exit_code == 0 and "Success: 100.0%" in printed.output
    same = CliRunner().invoke(cli, ["compare", str(run), str(run), "--json", "--plot",
                                    str(tmp_path / "ab.png")])
    assert json.loads(same.output)["metrics"]["success"] == {"a": 1.0, "b": 1.0}
    assert (tmp_path / "ab.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("damage", [b"interactions: [{request: ", b"", b"\x89\xff\x00 not yaml"])
def test_a_damaged_cassette_fails_its_task_and_the_replay_run_goes_on(
    tmp_path: Path, suite: TaskSuite, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
    damage: bytes,
) -> None:
    block_network(monkeypatch)
    tasks = [t for t in suite if task_cassette(t).is_file()][:2]
    for task in tasks:
        copy = task_cassette(task, tmp_path / "cassettes")
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(task_cassette(task).read_bytes())
    task_cassette(tasks[0], tmp_path / "cassettes").write_bytes(damage)
    runner = Runner(catalog, OracleAgent(), tmp_path / "run", "replay",
                    cassettes=tmp_path / "cassettes")
    first, second = runner.run(tasks)
    assert not first.success and second.success
    [problem] = first.problems
    assert str(task_cassette(tasks[0], tmp_path / "cassettes")) in problem
    assert "damaged" in problem or "is not a cassette" in problem
    assert "--mode record" in problem


def test_an_interrupted_run_reports_what_finished_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    run = tmp_path / "run"
    args = ["eval", "--agent", "oracle", "--mode", "replay", "--app", "kinto", "--limit", "3",
            "--run-dir", str(run)]
    execute = Runner.execute
    calls: list[str] = []

    def ctrl_c_on_the_third(self: Runner, task: Any, *rest: Any) -> Any:
        calls.append(task.id)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return execute(self, task, *rest)

    monkeypatch.setattr(Runner, "execute", ctrl_c_on_the_third)
    stopped = CliRunner().invoke(cli, args)
    assert stopped.exit_code == 130, stopped.output
    assert "interrupted" in stopped.output and "--run-dir" in stopped.output
    meta = json.loads((run / "run.json").read_text())
    assert meta["agent"] == "oracle" and meta["mode"] == "replay" and len(meta["tasks"]) == 3
    assert meta["tools"] == "gold"                   # what the oracle was given, in truth
    assert json.loads((run / "summary.json").read_text())["tasks"] == 2

    monkeypatch.setattr(Runner, "execute", execute)
    resumed = CliRunner().invoke(cli, args)
    assert resumed.exit_code == 0, resumed.output
    assert "2 runs done" in " ".join(resumed.output.split())
    assert json.loads((run / "summary.json").read_text())["tasks"] == 3


@pytest.fixture
def kinto(pool: AppPool) -> Iterator[dict]:
    yield pool.only("kinto")


def test_a_model_run_records_with_its_http_traffic_and_replays_offline(
    tmp_path: Path, suite: TaskSuite, kinto: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-canary-5d1e0c7a9b"
    monkeypatch.setenv("SCRIPTED_OPENAI_KEY", key)
    task = suite.task("kinto-packing-left")
    with Runtime(suite.catalog, apps=kinto) as runtime:
        records = runtime.call("kinto.list_records", {"bucket": "trips",
                                                      "collection": "packing"}).body["data"]
    left = sum(1 for r in records if not r["packed"])
    script = [
        {"content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "kinto__list_records",
            "arguments": json.dumps({"bucket": "trips", "collection": "packing"})}}]},
        {"content": f"{left} things still need to go in the bag."},
    ]

    def run(mode: str, url: str) -> tuple[Any, Runner]:
        agent = LangChainAgent(chat_model("scripted", base_url=url,
                                          api_key_env="SCRIPTED_OPENAI_KEY"))
        runner = Runner(suite.catalog, agent, tmp_path / mode, mode,
                        cassettes=tmp_path / "cassettes", apps=kinto)
        return list(runner.run([task]))[0], runner

    with ScriptedOpenAI(script) as model:
        recorded, _ = run("record", model.url)
        url = model.url
    assert len(model.requests) == 2 and model.requests[0][0] == "/v1/chat/completions"
    assert recorded.success and recorded.scores["completion"] == 1.0
    assert [c.api for c in recorded.trajectory.calls] == ["kinto.list_records"]
    cassette = (tmp_path / "cassettes" / "kinto-packing-left.0.yaml").read_text()
    assert "/v1/chat/completions" in cassette and "kinto__list_records" in cassette
    assert key not in cassette                       # the model's key is never recorded

    block_network(monkeypatch)                       # no model server, no apps, no network
    replayed, runner = run("replay", url)
    assert replayed.trajectory == recorded.trajectory
    assert replayed.scores == recorded.scores and replayed.errors == recorded.errors
    assert load_results(runner.run_dir)[0]["answer"] == f"{left} things still need to go in " \
        "the bag."
    write_report(runner.run_dir)
    for path in runner.run_dir.iterdir():            # nor is it in any result or report
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_what_an_agent_gets_wrong_is_counted_and_rolled_back(
    tmp_path: Path, suite: TaskSuite, kinto: dict, catalog: Catalog
) -> None:
    task = suite.task("kinto-add-sunscreen-record-id")
    model = ScriptedChatModel(messages=iter([
        AIMessage("", tool_calls=[{"id": "1", "name": "kinto__delete_everything", "args": {}}]),
        AIMessage("", tool_calls=[{"id": "2", "name": "kinto__replace_record",
                                   "args": {"bucket": "trips", "collection": "packing"}}]),
        AIMessage("", tool_calls=[{"id": "3", "name": "kinto__replace_record", "args": {
            "bucket": "trips", "collection": "packing", "id": "sunscreen", "if_none_match": "*",
            "data": {"item": "sunscreen", "packed": False, "quantity": 1}}}]),  # not two
        AIMessage("Added it as sunscreen-entry."),
    ]))
    runner = Runner(catalog, LangChainAgent(model), tmp_path / "run", "live", tools="apps",
                    apps=kinto)
    result = runner.run_one(task)
    calls = result.trajectory.calls
    assert [(c.api, c.valid, c.ok) for c in calls] == [
        ("kinto__delete_everything", False, False),             # not an offered tool
        ("kinto.replace_record", True, False),                  # refused: id and data missing
        ("kinto.replace_record", True, True)]
    assert "not one of the tools offered" in (calls[0].error or "")
    assert result.errors["invalid_api"] == 1 and result.errors["wrong_argument"] == 1
    assert result.scores["tool_match"] == 1.0 and not result.success
    assert result.problems == []                                # its write was undone
    # ToolEyes, rule-based: 4 rounds, none malformed; of 3 calls only the last names an
    # offered tool with its required arguments; it answered. No judge: nothing judged
    assert {k: v for k, v in result.scores.items() if k.startswith("tooleyes_")} == {
        "tooleyes_fa": 1.0, "tooleyes_t_reality": 0.3333, "tooleyes_a_pass": 1.0}


def test_hostile_values_in_tool_calls_fail_the_task_not_the_run(
    tmp_path: Path, suite: TaskSuite, kinto: dict, catalog: Catalog
) -> None:
    task = suite.task("kinto-add-sunscreen-record-id")
    record = {"bucket": "trips", "collection": "packing", "id": "sunscreen"}
    hostile = [                                    # each once crashed the whole eval run
        {**record, "if_match": "\u201c1712345678901\u201d", "data": {"item": "x"}},
        {**record, "id": "\ud83d", "data": {"item": "x"}},
        {**record, "data": {"item": "x" * 70_000}, "if_match": "a\r\nX-Injected: 1"},
        {**record, "data": {"quantity": float("nan")}},
        {**record, "data": {"n": 10**5000}},
    ]
    model = ScriptedChatModel(messages=iter([
        *(AIMessage("", tool_calls=[{"id": str(i), "name": "kinto__replace_record",
                                     "args": args}]) for i, args in enumerate(hostile)),
        AIMessage("I could not add it."),
    ]))
    runner = Runner(catalog, LangChainAgent(model), tmp_path / "run", "live", tools="apps",
                    apps=kinto)
    [result] = list(runner.run([task]))
    calls = result.trajectory.calls
    assert len(calls) == len(hostile)
    assert all(c.api == "kinto.replace_record" and not c.ok and c.error for c in calls)
    assert not result.success and result.problems == []     # nothing was written
    assert "is not valid Unicode" in (calls[1].error or "")


def test_an_agent_that_raises_fails_its_task_and_the_run_goes_on(
    tmp_path: Path, suite: TaskSuite, kinto: dict, catalog: Catalog
) -> None:
    class Broken:
        name = "broken"

        def run(self, task: Any, tools: Any) -> None:
            raise UnicodeEncodeError("ascii", "\u201c", 0, 1, "ordinal not in range(128)")

    tasks = [suite.task("kinto-add-sunscreen-record-id"), suite.task("kinto-oldest-book-summary")]
    runner = Runner(catalog, Broken(), tmp_path / "run", "live", tools="apps", apps=kinto)
    results = list(runner.run(tasks))
    assert [r.task.id for r in results] == [t.id for t in tasks]
    for result in results:
        assert not result.success
        assert any(p.startswith("the agent failed: UnicodeEncodeError") for p in result.problems)


class OffersAnotherApp:
    """A retriever that offers radicale's tool, an app no kinto task uses, beside
    kinto's, for the queries in ``reach``."""

    model = None
    pipeline = Pipeline()

    def __init__(self, reach: set[str]):
        self.reach = reach

    def search(self, query: str, k: int, where: Any = None) -> list[Hit]:
        hits = [Hit("kinto.list_records", 0.9)]
        if query in self.reach:
            hits.append(Hit("radicale.list_collections", 0.5))
        return hits[:k]


def eval_with_retriever(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite,
                        limit: int) -> tuple[Any, Path, list[str]]:
    """`toolbed eval --tools retriever --app kinto --limit N`, live, in a home of its own
    (so it starts the apps itself), with a scripted model that answers at once; the
    first task is offered a radicale tool. Returns the result, run dir and task ids."""
    chosen = suite.filter(["kinto"], (), ["test"], (), "selfhosted")[:limit]
    home = tmp_path / "home"
    home.mkdir()
    (home / "apps").symlink_to(home_dir() / "apps")
    monkeypatch.setenv("TOOLBED_HOME", str(home))
    monkeypatch.setattr("toolbed.cli._eval._tool_index",
                        lambda *a: OffersAnotherApp({chosen[0].query}))
    monkeypatch.setenv("SCRIPTED_OPENAI_KEY", "sk-test")
    run = tmp_path / "run"
    with ScriptedOpenAI([{"content": "Nothing to report."}]) as server:
        result = CliRunner().invoke(cli, [
            "eval", "--model", "openai:scripted", "--base-url", server.url,
            "--api-key-env", "SCRIPTED_OPENAI_KEY", "--tools", "retriever", "--app", "kinto",
            "--limit", str(limit), "--run-dir", str(run)])
    assert not list((home / "run").glob("*.json"))        # every app it started, stopped
    return result, run, [t.id for t in chosen]


@pytest.mark.live
def test_a_retrieved_tool_of_another_app_has_its_app_started_and_the_run_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite
) -> None:
    result, run, [task] = eval_with_retriever(tmp_path, monkeypatch, suite, 1)
    assert result.exit_code == 0, result.output
    assert "starting radicale" in result.output
    [row] = load_results(run)
    assert row["task"] == task
    assert "radicale.list_collections" in row["trajectory"]["offered"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["problems"] == 0 and summary["retriever_scope"] == "tier"


@pytest.mark.live
def test_an_offered_app_that_cannot_start_fails_its_task_and_the_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suite: TaskSuite
) -> None:
    from toolbed.errors import AppStartError
    from toolbed.launchers import Launcher

    real_start = Launcher.start

    def start(self: Any, **kwargs: Any) -> Any:
        if self.app.app == "radicale":
            raise AppStartError("radicale did not answer on 127.0.0.1 within 30 s")
        return real_start(self, **kwargs)

    monkeypatch.setattr(Launcher, "start", start)
    result, run, (first, second) = eval_with_retriever(tmp_path, monkeypatch, suite, 2)
    assert result.exit_code == 1 and "had problems" in result.output
    rows = {r["task"]: r for r in load_results(run)}
    assert rows[first]["problems"] == [
        "radicale could not be started: radicale did not answer on 127.0.0.1 within 30 s"]
    assert rows[second]["problems"] == []
    summary = (run / "summary.md").read_text()
    assert f"| {first} | 0 | radicale could not be started" in summary


def test_a_failed_run_never_offered_its_gold_tool_is_a_retrieval_miss(
    tmp_path: Path, suite: TaskSuite, kinto: dict, catalog: Catalog
) -> None:
    task = suite.task("kinto-add-sunscreen-record-id")       # gold: kinto.replace_record

    class Index:                                            # a retriever that misses it
        def search(self, query: str, k: int, where: Any = None) -> list[Hit]:
            return [Hit("kinto.list_records", 0.9), Hit("kinto.get_record", 0.8)][:k]

    model = ScriptedChatModel(messages=iter([AIMessage("I found no way to add it.")]))
    runner = Runner(catalog, LangChainAgent(model), tmp_path / "run", "live",
                    tools="retriever", apps=kinto, index=Index())
    [result] = list(runner.run([task]))
    assert result.trajectory.offered == ["kinto.list_records", "kinto.get_record"]
    assert result.scores["gold_offered"] == 0.0 and not result.success
    summary = write_report(runner.run_dir)
    assert summary["retrieval_misses"] == {"realtime": {"failed": 1, "missed": 1},
                                           "all": {"failed": 1, "missed": 1}}
    assert "| realtime | 1 | 1 |" in (runner.run_dir / "summary.md").read_text()
    assert "gold tool not offered" in (runner.run_dir / "report.html").read_text()
    # with --turns all the dialogues ran first: their summary joins the report
    talks = dialogue_summary([{"dialogue": "d", "granularity": "M-S", "success": True,
                               "scores": {"sr": 1.0}, "problems": []}], agent="langchain")
    (runner.run_dir / "dialogues.json").write_text(json.dumps(talks))
    write_report(runner.run_dir)
    assert "## Dialogues" in (runner.run_dir / "summary.md").read_text()
    assert "| M-S | 1 | 1.000 | 1.000 |" in (runner.run_dir / "summary.md").read_text()
    assert "<h2>Dialogues</h2>" in (runner.run_dir / "report.html").read_text()


def test_an_llm_judge_rules_on_open_answers_and_replays_from_the_cassette(
    tmp_path: Path, suite: TaskSuite, kinto: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbed.harness.metrics import llm_judge

    task = suite.task("kinto-oldest-book-summary")               # an open answer
    said = task.answer.references[0]                             # word for word

    def run(mode: str, url: str) -> Any:
        agent = LangChainAgent(ScriptedChatModel(messages=iter([AIMessage(said)])))
        runner = Runner(suite.catalog, agent, tmp_path / mode, mode, apps=kinto,
                        cassettes=tmp_path / "cassettes",
                        judge=llm_judge(chat_model("judge", base_url=url)))
        return runner.run_one(task)

    with ScriptedOpenAI([{"content": "No, it leaves out the shelf."}]) as judge:
        recorded = run("record", judge.url)
        url = judge.url
    assert "Reference answer: The oldest is Middlemarch" in \
        judge.requests[0][2]["messages"][0]["content"]
    # the embedding similarity would pass it word for word; the judge decides
    assert recorded.scores["completion"] == 0.0 and not recorded.success
    assert "tooleyes_ic" not in recorded.scores       # its replies hold no score to read
    block_network(monkeypatch)                                    # no judge, no kinto
    assert run("replay", url).scores == recorded.scores

    def broken(request: str, answer: str, reference: str) -> float:
        raise ConnectionError("judge unreachable")

    agent = LangChainAgent(ScriptedChatModel(messages=iter([AIMessage(said)])))
    result = Runner(suite.catalog, agent, tmp_path / "broken", "replay",
                    cassettes=tmp_path / "cassettes", judge=broken).run_one(task)
    assert result.scores["completion"] == pytest.approx(1.0, abs=1e-4)   # by similarity
    assert result.problems == ["the judge failed (ConnectionError: judge unreachable); "
                               "scored by similarity"]


def test_a_judge_rates_tooleyes_capabilities_and_a_replay_gives_the_same_scores(
    tmp_path: Path, suite: TaskSuite, kinto: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbed.harness.metrics import llm_judge

    task = suite.task("kinto-packing-left")
    packing = {"bucket": "trips", "collection": "packing"}

    def run(mode: str, url: str) -> Any:
        agent = LangChainAgent(ScriptedChatModel(messages=iter([
            AIMessage("I need the packing list to count what is left.", tool_calls=[
                {"id": "1", "name": "kinto__list_records", "args": packing}]),
            AIMessage("Some things still need to go in the bag.")])))
        runner = Runner(suite.catalog, agent, tmp_path / mode, mode, apps=kinto,
                        cassettes=tmp_path / "cassettes",
                        judge=llm_judge(chat_model("judge", base_url=url)))
        return runner.run_one(task)

    with ScriptedOpenAI([{"content": "Scoring Reason: sound.\nEvaluation Score: 8"}]) as judge:
        recorded = run("record", judge.url)
        url = judge.url
    asked = [r[2]["messages"][0]["content"] for r in judge.requests]
    assert len(asked) == 5                  # IC, b-validity, b-integrity, a-quality, 1 t-match
    assert any("THOUGHT: I need the packing list" in a for a in asked)
    assert all("Evaluation Score" in a for a in asked)
    scores = {k: v for k, v in recorded.scores.items() if k.startswith("tooleyes_")}
    assert scores == {"tooleyes_fa": 1.0, "tooleyes_t_reality": 1.0, "tooleyes_a_pass": 1.0,
                      "tooleyes_ic": 0.8, "tooleyes_bp": 0.64, "tooleyes_ts": 0.8,
                      "tooleyes_ao": 0.8, "tooleyes_overall": 0.808}
    block_network(monkeypatch)                                    # no judge, no kinto
    assert run("replay", url).scores == recorded.scores
    table = tooleyes_table([{"scores": recorded.scores, "category": task.category}])
    assert table["judged"] and table["by_scenario"][task.category]["overall"] == 0.808
    text = "\n".join(tooleyes_markdown(table))
    assert f"| {task.category} | 1 | 100.0 | 80.0 | 64.0 | 80.0 | 80.0 | 80.8 |" in text
    unjudged = tooleyes_table([{"scores": {"tooleyes_fa": 1.0}, "category": task.category}])
    assert "run with `--judge`" in "\n".join(tooleyes_markdown(unjudged))
    assert "The judge (embedded) gave no readable score" in "\n".join(
        tooleyes_markdown(unjudged, judge="embedded"))


@pytest.mark.live
def test_a_live_eval_starts_the_apps_it_needs_and_stops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolbed.harness._evaluation as evaluation
    from toolbed.connectors import process_alive

    monkeypatch.setattr(evaluation, "running_apps", lambda **_: {})  # as if nothing were up
    started: list = []
    real_get = evaluation.get_launcher

    def spy(name: str, catalog: Catalog) -> Any:
        launcher = real_get(name, catalog)
        start = launcher.start

        def start_and_note(**kwargs: Any) -> Any:
            started.append(start(**kwargs))
            return started[-1]

        monkeypatch.setattr(launcher, "start", start_and_note)
        return launcher

    monkeypatch.setattr(evaluation, "get_launcher", spy)
    args = ["eval", "--agent", "oracle", "--app", "kinto", "--limit", "3", "--mode", "record",
            "-v", "--run-dir", str(tmp_path / "run")]
    monkeypatch.setattr(sys, "argv", ["toolbed", *args])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "starting kinto" in result.output and "Success: 100.0%" in result.output
    # kinto, and the other app of any cross-app task among the three; all stopped after
    assert "kinto" in [a.app for a in started]
    assert not any(process_alive(a.pid) for a in started)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["tasks"] == 3
    rows = load_results(tmp_path / "run")
    assert all(f"pass {r['task']} (" in result.output for r in rows)          # -v
    page = (tmp_path / "run" / "report.html").read_text()
    for row in rows:                                # each task's calls are in the report
        assert f'id="run-{row["task"]}-0"' in page
        calls = row["trajectory"]["calls"]
        assert all(f'<code class="api">{c["api"]}</code>' in page for c in calls)

    # the command it prints replays the run offline, with the same scores
    printed = result.output.split("replay it offline, with the same scores:")[1].split()
    assert printed[:2] == ["toolbed", "eval"] and "--mode" in printed
    block_network(monkeypatch)
    again = CliRunner().invoke(cli, printed[1:printed.index("--run-dir") + 2])
    assert again.exit_code == 0, again.output
    replayed = json.loads((tmp_path / "run-replay" / "summary.json").read_text())
    assert replayed["metrics"] == summary["metrics"] and replayed["tasks"] == 3


def test_a_react_agent_is_parsed_leniently_and_its_format_is_scored(
    tmp_path: Path, suite: TaskSuite, kinto: dict, catalog: Catalog
) -> None:
    task = suite.task("kinto-packing-left")
    with Runtime(catalog, apps=kinto) as runtime:
        records = runtime.call("kinto.list_records", {"bucket": "trips",
                                                      "collection": "packing"}).body["data"]
    left = sum(1 for r in records if not r["packed"])
    outputs = [
        "I should look at the packing list.",                              # no Action: retried
        'Thought: list the packing records.\nAction: kinto.list_records\nAction Input: '
        '{"bucket": "trips", "collection": "packing"}\nObservation: {"data": []}',   # made up
        f"Thought: I counted the unpacked ones.\nFinal Answer: {left} still to pack.",
    ]
    model = ScriptedChatModel(messages=iter([AIMessage(o) for o in outputs]))
    agent = ReactAgent(model)
    runner = Runner(catalog, agent, tmp_path / "run", "live", tools="apps", apps=kinto)
    result = runner.run_one(task)
    trajectory = result.trajectory
    assert trajectory.outputs == outputs and trajectory.format_errors == 1
    assert trajectory.hallucinated_observations == 1 and trajectory.answer == f"{left} still " \
        "to pack."
    assert [c.api for c in trajectory.calls] == ["kinto.list_records"] and result.success
    # ToolEyes: one of three outputs is in the exact format (the made-up observation and
    # the missing keywords are not)
    assert result.scores["format_alignment"] == pytest.approx(1 / 3, abs=1e-4)
    assert result.errors["format_error"] == 1 and result.errors["hallucinated_observation"] == 1

    prompt = agent.system_prompt(ToolBox(Runtime(catalog), ["kinto.list_records"], Trajectory()))
    assert "- kinto.list_records: " in prompt and '"collection"' in prompt


def test_step_by_step_gives_the_gold_prefix_and_scores_each_prediction(
    suite: TaskSuite, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbed.harness import run_stepwise, step_cases
    from toolbed.harness.metrics import exact_similarity

    block_network(monkeypatch)        # prefixes come from the cassette; nothing is executed
    task = suite.task("kinto-library-collections")   # list_buckets, then list_collections
    purpose = catalog.api("kinto.list_buckets").description

    def call(name: str, **args: str) -> dict:
        return {"id": name, "name": f"kinto__{name}", "args": args}

    model = ScriptedChatModel(messages=iter([
        AIMessage('[{"name": "kinto__list_buckets", "args": {}}, '        # plan: one-to-one
                  '{"name": "kinto__list_collections", "args": {"bucket": "books"}}]'),
        AIMessage(purpose, tool_calls=[call("list_buckets")]),       # step 1, its thought
        AIMessage("", tool_calls=[call("list_buckets")]),            # instruct: exact
        AIMessage("Answer: A"),                                      # review: success, right
        AIMessage("", tool_calls=[call("list_collections", bucket="books")]),   # not the id
        AIMessage("", tool_calls=[call("list_collections", bucket="books")]),   # instruct
        AIMessage("It is C."),                                       # review: input error
        AIMessage("The library has one collection: Books on the shelves."),
    ]))
    [row] = run_stepwise(catalog, [task], model, similarity=exact_similarity)
    # three steps, all of the right kind; both tools right; one of two argument sets;
    # the answer right; one of two thoughts, one of two reviews; instruct 1 and 0.5
    assert row == {"task": task.id, "type": "fixed", "scenario": "multi", "inst_acc": 1.0,
                   "tool_acc": 1.0, "arg_acc": 0.5, "summ_acc": 1.0, "instruct": 0.75,
                   "plan": 1.0, "reason": 0.5, "retrieve": 1.0, "understand": 0.5,
                   "review": 0.5, "teval": round((0.75 + 1 + 0.5 + 1 + 0.5 + 0.5) / 6, 4)}

    from toolbed.connectors import Mode, Runtime
    from toolbed.harness import run_oracle
    from toolbed.tasks import task_cassette

    with Runtime(catalog, mode=Mode.REPLAY, cassette=task_cassette(task)) as replay:
        cases = step_cases(task, run_oracle(replay, task))
    assert [len(c.prefix) for c in cases] == [0, 1, 2] and cases[2].gold is None
    assert cases[1].prefix[0].observation.body["data"]       # what the app really returned


def test_review_is_scored_on_real_responses_and_one_from_another_app(
    suite: TaskSuite, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    from itertools import repeat

    from toolbed.connectors import Mode, Runtime
    from toolbed.harness import run_oracle, run_stepwise
    from toolbed.harness.metrics import exact_similarity, review_class
    from toolbed.tasks import task_cassette

    block_network(monkeypatch)
    bad_email = suite.task("ihatemoney-create-bad-email")   # the app refuses the address
    with Runtime(catalog, mode=Mode.REPLAY, cassette=task_cassette(bad_email)) as replay:
        [refused] = run_oracle(replay, bad_email).steps
    assert refused.observation.status == 400
    assert review_class(refused.observation.status, refused.observation.body) == "input_error"

    # a model that calls every response irrelevant is right only on the swapped one
    tasks = [suite.task("kinto-library-collections"), bad_email]
    model = ScriptedChatModel(messages=repeat(AIMessage("Answer: D")))
    rows = run_stepwise(catalog, tasks, model, similarity=exact_similarity)
    assert [r["review"] for r in rows] == [round(1 / 3, 4), 0.5]


@pytest.mark.live
def test_step_by_step_from_the_cli_records_the_model_and_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["eval", "--step-by-step", "--model", "scripted", "--app", "kinto", "--type",
            "fixed", "--limit", "2", "--split", "test"]
    with ScriptedOpenAI([{"content": "I do not know."}]) as model:
        recorded = CliRunner().invoke(cli, [*args, "--base-url", model.url, "--mode", "record",
                                            "--run-dir", str(tmp_path / "rec"),
                                            "--cassettes", str(tmp_path / "cassettes")])
        url = model.url
    assert recorded.exit_code == 0, recorded.output
    assert len(model.requests) >= 4                      # two tasks, at least two steps each
    block_network(monkeypatch)
    replayed = CliRunner().invoke(cli, [*args, "--base-url", url, "--mode", "replay",
                                        "--run-dir", str(tmp_path / "rep"),
                                        "--cassettes", str(tmp_path / "cassettes")])
    assert replayed.exit_code == 0, replayed.output
    rec = json.loads((tmp_path / "rec" / "steps.json").read_text())
    rep = json.loads((tmp_path / "rep" / "steps.json").read_text())
    assert (rec.pop("mode"), rep.pop("mode")) == ("record", "replay") and rec == rep
    assert (tmp_path / "rec" / "steps.jsonl").read_text() == \
        (tmp_path / "rep" / "steps.jsonl").read_text()
    # answering at every step: right kind only at the answer step, no tool right, no answer
    assert rec["tasks"] == 2 and rec["metrics"]["tool_acc"] == 0.0
    assert 0 < rec["metrics"]["inst_acc"] < 1 and rec["metrics"]["summ_acc"] == 0.0


def test_the_replay_command_keeps_the_options_and_names_the_runs_cassettes() -> None:
    from toolbed.cli._eval import replay_command

    run = Path("/runs/first run")
    assert replay_command(["eval", "--sample", "20", "--mode=record", "--run-dir", str(run),
                           "--cassettes", "/elsewhere"], run) == (
        "toolbed eval --sample 20 --mode replay --cassettes '/runs/first run/cassettes' "
        "--run-dir '/runs/first run-replay'")


def test_list_agents_names_every_registered_agent() -> None:
    from toolbed.registry import names

    result = CliRunner().invoke(cli, ["eval", "--list-agents"])
    assert result.exit_code == 0
    assert result.stdout.split() == names("agent") and "embedded" in names("agent")
