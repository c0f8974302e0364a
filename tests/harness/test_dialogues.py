"""Dialogues: the loader's refusals, the oracle over turns, and every shipped dialogue
live on fresh apps and replayed offline from its cassette."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage, HumanMessage
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Mode, Runtime, tool_name
from toolbed.errors import AgentError, TaskError
from toolbed.harness import (
    STOP,
    LangChainAgent,
    OracleAgent,
    ScriptedChatModel,
    SimulatedUser,
    chat_model,
    dialogue_markdown,
    dialogue_summary,
    run_agent_dialogue,
    run_dialogue,
    run_simulated_dialogue,
    run_turnwise,
    turn_history,
    user_errors,
)
from toolbed.harness._user import GREETING, goal_text, values_in
from toolbed.tasks import GRANULARITIES, dialogue_cassette, load_dialogues

from ..conftest import AppPool, block_network
from .conftest import ScriptedOpenAI

SHIPPED = load_dialogues()

RENAME: dict[str, Any] = {
    "id": "kinto-dlg-test-rename", "apps": ["kinto"], "category": "application manipulation",
    "split": "test",
    "turns": [
        {"query": "Make me a bucket called porto-trip.",
         "chain": [{"api": "kinto.create_bucket", "args": {"bucket": "porto-trip"},
                    "save": "made"}],
         "answer": {"type": "operational", "state": [{
             "api": "kinto.list_buckets",
             "expect": "length(body.data[?id == 'porto-trip']) == `1`"}]}},
        {"query": "Give the one you just made the title Porto.",
         "chain": [{"api": "kinto.update_bucket", "args": {"data": {"title": "Porto"}},
                    "bind": {"bucket": "made.body.data.id"}}],
         "answer": {"type": "operational", "state": [{
             "api": "kinto.get_bucket", "args": {"bucket": "porto-trip"},
             "expect": "body.data.title == 'Porto'"}]}},
        {"query": "What is it called now?",
         "chain": [{"api": "kinto.get_bucket", "args": {"bucket": "porto-trip"}, "save": "now"}],
         "answer": {"type": "fixed", "source": "now.body.data.title", "value": "Porto"}},
    ],
}


def write(tmp_path: Path, *dialogues: dict[str, Any]) -> Path:
    path = tmp_path / "dialogues.yaml"
    path.write_text(yaml.safe_dump(list(dialogues), sort_keys=False))
    return path


def refused(tmp_path: Path, catalog: Catalog, dialogue: dict[str, Any]) -> str:
    with pytest.raises(TaskError) as err:
        load_dialogues(write(tmp_path, dialogue), catalog=catalog)
    return str(err.value)


def test_a_dialogue_loads_with_its_granularity(tmp_path: Path, catalog: Catalog) -> None:
    [dialogue] = load_dialogues(write(tmp_path, RENAME), catalog=catalog)
    assert dialogue.granularity == "M-S" and len(dialogue.chain) == 3
    assert {d.granularity for d in SHIPPED} <= set(GRANULARITIES)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(turns=[]), "at least 1 item"),
    (lambda d: d["turns"][1]["chain"][0].update(api="kinto.rename_bucket"),
     "turns[1].chain[0]: unknown API 'kinto.rename_bucket'"),
    (lambda d: d["turns"][0].update(asks="the id of the bucket"), "makes no call"),
    (lambda d: d["turns"][2].pop("answer"), "a turn needs an `answer:`"),
    (lambda d: d["turns"][0]["answer"]["state"][0].update(api="kinto.delete_bucket",
                                                         args={"bucket": "x"}),
     "a state check must only read"),
    (lambda d: d.update(apps=["kinto", "radicale"]), "differ from the turns' apps"),
])
def test_a_bad_dialogue_is_refused_with_its_file_id_and_what_to_fix(
        tmp_path: Path, catalog: Catalog, change: Any, message: str) -> None:
    bad = copy.deepcopy(RENAME)
    change(bad)
    text = refused(tmp_path, catalog, bad)
    assert "dialogues.yaml: dialogue kinto-dlg-test-rename" in text and message in text


def test_each_turn_builds_on_the_last_and_everything_is_undone(
        tmp_path: Path, catalog: Catalog, pool: AppPool) -> None:
    [dialogue] = load_dialogues(write(tmp_path, RENAME), catalog=catalog)
    with Runtime(catalog, apps=pool.only("kinto")) as runtime:
        run = run_dialogue(runtime, dialogue)
        assert run.ok, run.summary()
        assert [t.passed for t in run.turns] == [True, True, True]
        assert run.report is not None and len(run.report.compensated) == 2
        # a later turn that depends on an earlier write fails when it was not done
        skipped = run_dialogue(runtime, dialogue, skip=[0])
    assert not skipped.ok and [t.number for t in skipped.turns] == [2, 3]
    assert "turn 2: gold call kinto.update_bucket failed: binding 'bucket' = " \
        "'made.body.data.id' found nothing" in skipped.summary()


def test_a_state_check_that_holds_before_its_turn_is_caught(
        tmp_path: Path, catalog: Catalog, pool: AppPool) -> None:
    idle = copy.deepcopy(RENAME)
    idle["turns"][0]["answer"]["state"][0]["expect"] = "length(body.data) > `0`"
    [dialogue] = load_dialogues(write(tmp_path, idle), catalog=catalog)
    with Runtime(catalog, apps=pool.only("kinto")) as runtime:
        run = run_dialogue(runtime, dialogue)
    assert not run.ok and "holds before the turn" in run.summary()


def test_record_then_replay_offline_from_the_command_line(
        tmp_path: Path, catalog: Catalog, pool: AppPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, RENAME)
    runner = CliRunner()
    kinto = pool.only("kinto")["kinto"]      # started from the installed apps, before the
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))   # home without them
    from toolbed.connectors import save_running

    save_running(kinto)
    args = ["--dialogues", str(path), "--cassettes", str(tmp_path / "cassettes")]
    recorded = runner.invoke(cli, ["dialogues", "record", *args])
    assert recorded.exit_code == 0, recorded.output
    assert "1 of 1 dialogues passed" in recorded.output
    replayed = runner.invoke(cli, ["dialogues", "validate", "--replay", *args])
    assert replayed.exit_code == 0, replayed.output
    listed = runner.invoke(cli, ["dialogues", "list", "--dialogues", str(path), "--json"])
    assert '"granularity": "M-S"' in listed.output


@pytest.mark.parametrize("dialogue_id", [d.id for d in SHIPPED])
def test_dialogue_passes_live(dialogue_id: str, catalog: Catalog, pool: AppPool) -> None:
    dialogue = SHIPPED.dialogue(dialogue_id)
    with Runtime(catalog, apps=pool.only(*dialogue.apps)) as runtime:
        run = run_dialogue(runtime, dialogue)
    assert run.ok, run.summary()


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("dialogue_id", [d.id for d in SHIPPED])
def test_dialogue_replays_offline(dialogue_id: str, catalog: Catalog) -> None:
    dialogue = SHIPPED.dialogue(dialogue_id)
    with Runtime(catalog, mode=Mode.REPLAY, cassette=dialogue_cassette(dialogue)) as rt:
        run = run_dialogue(rt, dialogue)
    assert run.ok, run.summary()


# -- an agent in a dialogue ----------------------------------------------------------

PORTO: dict[str, Any] = {
    **RENAME, "id": "kinto-dlg-test-porto",
    "turns": [{"query": "I want a new bucket for my Porto trip.",
               "asks": "the id to give the new bucket"},
              {**RENAME["turns"][0], "query": "Call it porto-trip."}, *RENAME["turns"][1:]],
}
OFFERED = ["kinto.create_bucket", "kinto.update_bucket", "kinto.get_bucket",
           "kinto.list_buckets"]


def call(n: int, name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": str(n), "name": f"kinto__{name}", "args": args}])


def good_user_turns() -> list[AIMessage]:
    return [
        AIMessage("What id should I give the new bucket?"),
        call(1, "create_bucket", bucket="porto-trip"), AIMessage("Created porto-trip."),
        call(2, "update_bucket", bucket="porto-trip", data={"title": "Porto"}),
        AIMessage("It is titled Porto now."),
        call(3, "get_bucket", bucket="porto-trip"), AIMessage("It is called Porto."),
    ]


def test_a_scripted_model_holds_a_four_turn_dialogue_recorded_and_replayed(
        tmp_path: Path, catalog: Catalog, pool: AppPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    assert dialogue.granularity == "M-S" and len(dialogue.turns) == 4
    cassette = tmp_path / "porto.yaml"
    agent = LangChainAgent(ScriptedChatModel(messages=iter(good_user_turns())))
    with Runtime(catalog, mode="record", cassette=cassette,
                 apps=pool.only("kinto")) as runtime:
        recorded = run_agent_dialogue(runtime, agent, dialogue, OFFERED)
    assert recorded.success, (recorded.right, recorded.problems)
    assert [[c.api for c in t.calls] for t in recorded.turns] == [
        [], ["kinto.create_bucket"], ["kinto.update_bucket"], ["kinto.get_bucket"]]
    assert recorded.scores["sr"] == recorded.scores["ats"] == 1.0
    assert recorded.scores["ts"] == recorded.scores["ps"] == 1.0

    block_network(monkeypatch)
    agent = LangChainAgent(ScriptedChatModel(messages=iter(good_user_turns())))
    with Runtime(catalog, mode="replay", cassette=cassette) as runtime:
        replayed = run_agent_dialogue(runtime, agent, dialogue, OFFERED)
    assert replayed.turns == recorded.turns and replayed.scores == recorded.scores


def test_a_turn_left_undone_fails_the_turns_that_build_on_it(
        tmp_path: Path, catalog: Catalog, pool: AppPool) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    lazy = [AIMessage("What id should I give the new bucket?"),
            AIMessage("Done, porto-trip is made."),                  # it made nothing
            call(2, "update_bucket", bucket="porto-trip", data={"title": "Porto"}),
            AIMessage("It is titled Porto now."),
            call(3, "get_bucket", bucket="porto-trip"),
            AIMessage("I cannot read that bucket: access is denied.")]   # as the app said
    agent = LangChainAgent(ScriptedChatModel(messages=iter(lazy)))
    with Runtime(catalog, apps=pool.only("kinto")) as runtime:
        result = run_agent_dialogue(runtime, agent, dialogue, OFFERED)
    assert result.right == [True, False, False, False] and not result.success
    assert result.scores["sr"] == 0.0 and result.scores["ats"] == 0.25
    assert result.scores["tpr"] == 0.25 and result.problems == []   # rolled back, verified


def test_an_agent_that_invents_the_missing_value_fails_the_asking_turn(
        tmp_path: Path, catalog: Catalog, pool: AppPool) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    eager = [call(0, "create_bucket", bucket="porto"), AIMessage("Made bucket porto."),
             *good_user_turns()[1:]]
    agent = LangChainAgent(ScriptedChatModel(messages=iter(eager)))
    with Runtime(catalog, apps=pool.only("kinto")) as runtime:
        result = run_agent_dialogue(runtime, agent, dialogue, OFFERED)
    assert result.right[0] is False and result.right[1:] == [True, True, True]
    assert result.problems == []             # its stray bucket was rolled back too
    assert result.errors[0]["did_not_ask"] == result.errors[0]["excess_tool"] == 1
    assert [sum(e.values()) for e in result.errors[1:]] == [0, 0, 0]
    assert dialogue_summary([result.row()])["errors"]["did_not_ask"] == 1


def test_an_agent_that_cannot_converse_is_a_clear_error(
        tmp_path: Path, catalog: Catalog) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    with Runtime(catalog, apps={}) as runtime, pytest.raises(AgentError, match="cannot hold"):
        run_agent_dialogue(runtime, OracleAgent(), dialogue, OFFERED)


@pytest.mark.usefixtures("no_network")
def test_eval_replays_every_shipped_dialogue_with_the_oracle_at_100_percent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, [
        "eval", "--agent", "oracle", "--mode", "replay", "--turns", "multi",
        "--split", "train", "--split", "dev", "--split", "test", "--lang", "all",
        "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "run" / "dialogues.json").read_text())
    assert summary["all"]["dialogues"] == len(SHIPPED) and summary["problems"] == 0
    assert {summary["all"][n] for n in ("success", "sr", "ats", "sats", "tpr", "tn", "to",
                                        "tool_match")} == {1.0}
    assert set(summary["by_granularity"]) == {d.granularity for d in SHIPPED}
    assert {lang: g["dialogues"] for lang, g in summary["by_lang"].items()} == \
        {lang: sum(d.lang == lang for d in SHIPPED) for lang in {d.lang for d in SHIPPED}}
    assert set(summary["errors"].values()) == {0}
    assert f"| all | {len(SHIPPED)} | 1.000 |" in (tmp_path / "run" / "dialogues.md").read_text()
    assert "<h2>Dialogues</h2>" in (tmp_path / "run" / "report.html").read_text()


# -- a simulated user ------------------------------------------------------------------

USER_SAYS = ["I want a new bucket for my Porto trip.", "Call it porto-trip.",
             "Give the one you just made the title Porto.", "What is it called now?", STOP]


def openai_calls(*steps: tuple[str, dict[str, Any]] | str) -> list[dict[str, Any]]:
    """Chat-completion replies: a text, or a (tool, arguments) call of kinto's."""
    return [{"content": s} if isinstance(s, str) else {"content": None, "tool_calls": [{
        "id": f"call_{n}", "type": "function", "function": {
            "name": f"kinto__{s[0]}", "arguments": json.dumps(s[1])}}]}
        for n, s in enumerate(steps)]


AGENT_SAYS = openai_calls(
    "What id should I give the new bucket?", ("create_bucket", {"bucket": "porto-trip"}),
    "Created porto-trip.", ("update_bucket", {"bucket": "porto-trip", "data": {"title": "Porto"}}),
    "It is titled Porto now.", ("get_bucket", {"bucket": "porto-trip"}), "It is called Porto.")


def test_the_simulated_user_gets_the_turns_as_a_goal_and_holds_back_what_it_is_asked(
        tmp_path: Path, catalog: Catalog) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    goal = goal_text(dialogue)
    assert goal.splitlines()[0] == (
        "1. I want a new bucket for my Porto trip. (Leave out the id to give the new bucket: "
        "give it only when the assistant asks for it. Then say: Call it porto-trip.)")
    assert len(goal.splitlines()) == 3 and goal.splitlines()[2].startswith("3. What is it")
    assert values_in('Move "Dinner" to 19:30 with ana@example.org in porto-trip') == {
        "dinner", "19:30", "ana@example.org", "porto-trip"}


def overlap(a: str, b: str) -> float:
    """Word overlap: a similarity with no model, for the user checks."""
    x, y = set(a.lower().split()), set(b.lower().split())
    return len(x & y) / max(1, len(x | y))


def test_the_simulated_users_own_mistakes_are_told_apart(tmp_path: Path, catalog: Catalog
                                                        ) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    good = user_errors(dialogue, USER_SAYS[:4], [a.get("content") or "" for a in AGENT_SAYS
                                                 if a.get("content")], True, overlap)
    assert not good.any and good.unmade == []
    # all at once, the held-back id before anyone asked, then STOP with turns unmade
    rushed = user_errors(dialogue, ["New bucket porto-trip for my Porto trip please."],
                         ["Done."], True, overlap)
    assert rushed.leaked and rushed.stopped_early and rushed.unmade == [4]
    wandered = user_errors(dialogue, [*USER_SAYS[:4], "Also, what is the weather like there?"],
                           ["What id?", "ok", "ok", "Porto.", "No idea."], False, overlap)
    assert wandered.left_goal and not wandered.stopped_early and not wandered.leaked


def test_a_served_model_plays_agent_and_simulated_user_records_and_replays_identically(
        tmp_path: Path, catalog: Catalog, pool: AppPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    cassette = tmp_path / "porto.yaml"

    def play(mode: str, agent_url: str, user_url: str) -> Any:
        agent = LangChainAgent(chat_model("scripted-agent", base_url=agent_url))
        user = SimulatedUser(chat_model("scripted-user", base_url=user_url))
        with Runtime(catalog, mode=mode, cassette=cassette,
                     apps=pool.only("kinto") if mode == "record" else None) as runtime:
            return run_simulated_dialogue(runtime, agent, user, dialogue, OFFERED)

    with ScriptedOpenAI(AGENT_SAYS) as agent, ScriptedOpenAI(
            [{"content": said} for said in USER_SAYS]) as user:
        recorded = play("record", agent.url, user.url)
    prompt = user.requests[0][2]["messages"][0]["content"]
    assert "Leave out the id to give the new bucket" in prompt and STOP in prompt
    assert user.requests[0][2]["messages"][1]["content"] == GREETING
    assert recorded.said == USER_SAYS[:4] and recorded.success, recorded.problems
    assert recorded.right == [True, True, True] and recorded.scores["goal"] == 1.0
    assert recorded.user is not None and not recorded.user.any
    assert [[c.api for c in t.calls] for t in recorded.turns] == [
        [], ["kinto.create_bucket"], ["kinto.update_bucket"], ["kinto.get_bucket"]]
    assert "scripted-user" in cassette.read_text()

    block_network(monkeypatch)            # both model servers are gone too
    replayed = play("replay", agent.url, user.url)
    assert replayed.row() == recorded.row()


def test_an_agent_that_skips_a_request_misses_the_goal_however_the_user_plays(
        tmp_path: Path, catalog: Catalog, pool: AppPool) -> None:
    [dialogue] = load_dialogues(write(tmp_path, PORTO), catalog=catalog)
    lazy = openai_calls("What id should I give the new bucket?",
                        ("create_bucket", {"bucket": "porto-trip"}), "Created it.",
                        "Sure, done.", "It has no title.")
    with ScriptedOpenAI(lazy) as agent, ScriptedOpenAI(
            [{"content": said} for said in USER_SAYS]) as user, \
            Runtime(catalog, apps=pool.only("kinto")) as runtime:
        result = run_simulated_dialogue(
            runtime, LangChainAgent(chat_model("lazy", base_url=agent.url)),
            SimulatedUser(chat_model("user", base_url=user.url)), dialogue, OFFERED)
    assert result.right == [True, False, False] and not result.success
    assert result.scores["goal"] == round(1 / 3, 4) and not result.problems


def test_trials_give_pass_hat_k_by_granularity_and_the_users_error_shares() -> None:
    def row(name: str, kind: str, success: bool, leaked: bool = False) -> dict[str, Any]:
        return {"dialogue": name, "granularity": kind, "success": success,
                "scores": {"goal": float(success)}, "problems": [],
                "user_errors": {"stopped_early": False, "left_goal": False,
                                "leaked": leaked, "unmade": []}}

    rows = [row("a", "M-S", True), row("a", "M-S", True), row("b", "M-M", True),
            row("b", "M-M", False, leaked=True)]
    summary = dialogue_summary(rows, user="simulated")
    assert summary["all"]["pass_hat_k"] == {"1": 0.75, "2": 0.5}
    assert summary["by_granularity"]["M-M"]["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    assert summary["user_errors"] == {"stopped_early": 0.0, "left_goal": 0.0,
                                      "leaked": 0.25, "any": 0.25}
    text = dialogue_markdown(summary)
    assert "pass^k: k=1: 0.750, k=2: 0.500" in text and "| 0.000 | 0.000 | 0.250 | 0.250 |" \
        in text


# -- turn by turn, after the gold history ----------------------------------------------

def gold_moves(run: Any) -> list[AIMessage]:
    """What a perfect model says at each turn, given the gold history."""
    moves = []
    for turn in run.turns:
        if turn.steps:
            first = turn.steps[0]
            moves.append(AIMessage("", tool_calls=[{
                "id": "m", "name": tool_name(first.api_id), "args": first.args}]))
        elif turn.turn.asks is not None:
            moves.append(AIMessage(f"Could you tell me {turn.turn.asks}?"))
        else:
            moves.append(AIMessage(turn.answer))
    return moves


@pytest.mark.usefixtures("no_network")
def test_turn_by_turn_each_move_is_scored_after_the_gold_history(catalog: Catalog) -> None:
    dialogue = next(d for d in SHIPPED if any(t.asks for t in d.turns)
                    and any(t.chain for t in d.turns))
    with Runtime(catalog, mode=Mode.REPLAY, cassette=dialogue_cassette(dialogue)) as rt:
        run = run_dialogue(rt, dialogue)
    history = turn_history(run, len(run.turns) - 1)
    assert [m.text for m in history if isinstance(m, HumanMessage)] == \
        [t.query for t in dialogue.turns]
    assert sum(len(m.tool_calls) for m in history if isinstance(m, AIMessage)) == \
        sum(len(t.steps) for t in run.turns[:-1])

    def score(moves: list[AIMessage]) -> dict[str, Any]:
        [row] = run_turnwise(catalog, [dialogue], ScriptedChatModel(messages=iter(moves)),
                             similarity=lambda a, b: float(a == b))
        return row

    perfect = score(gold_moves(run))
    assert perfect["turn"] == perfect["ts"] == perfect["ps"] == perfect["asks"] == 1.0
    silent = score([AIMessage("I cannot help with that.")] * len(run.turns))
    assert silent["ts"] == silent["ps"] == silent["asks"] == 0.0
