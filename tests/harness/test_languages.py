"""Tasks and dialogues asked in Chinese (`lang: zh`) beside English ones: chosen with
`--lang`, counted and scored by language, split so that a translation stays in its
original's split and never moves an English task, caught by the near-duplicate check
across languages, and answered in the language they are asked in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Mode, Runtime
from toolbed.errors import TaskError
from toolbed.harness import LangChainAgent, ReactAgent, ScriptedChatModel, ToolBox, Trajectory
from toolbed.harness.agents import ANSWER_IN, SYSTEM_PROMPT
from toolbed.tasks import (
    LANGS,
    Dialogue,
    Pair,
    Task,
    assign_splits,
    dialogue_cassette,
    load_dialogues,
    load_tasks,
    near_duplicates,
    translated_dialogues,
)

LEFT: dict[str, Any] = {
    "id": "kinto-left", "query": "How many things on my Lisbon packing list are not packed?",
    "apps": ["kinto"], "scenario": "single", "category": "personal life", "split": "dev",
    "chain": [{"api": "kinto.list_records", "args": {"bucket": "trips", "collection": "packing"},
               "save": "packing"}],
    "answer": {"type": "realtime", "source": "length(packing.body.data[?packed == `false`])",
               "match": "number"}}
LEFT_ZH = {**LEFT, "id": "kinto-left-zh", "lang": "zh",
           "query": "去里斯本的行李清单上还有几样东西没装进包里？"}
BOOKS_ZH = {**LEFT, "id": "kinto-books-zh", "lang": "zh", "query": "我的书库里一共有几本书？",
            "chain": [{"api": "kinto.list_records", "save": "books",
                       "args": {"bucket": "library", "collection": "books"}}],
            "answer": {"type": "realtime", "source": "length(books.body.data)",
                       "match": "number"}}


def test_a_task_is_english_unless_it_says_otherwise() -> None:
    assert Task.model_validate(LEFT).lang == "en"
    assert Task.model_validate(LEFT_ZH).lang == "zh"


def test_a_translation_takes_its_original_s_split_and_moves_no_english_task() -> None:
    english = [Task.model_validate({**LEFT, "id": f"en-{i}"}) for i in range(40)]
    before = assign_splits(english)
    translated = [Task.model_validate({**LEFT_ZH, "id": f"zh-{i}"}) for i in range(10)]
    after = assign_splits([*english, *translated])
    assert {k: after[k] for k in before} == before
    original = min(t.id for t in english)                # the first English task with it
    assert {after[t.id] for t in translated} == {before[original]}


def test_a_translation_in_another_split_is_a_near_duplicate() -> None:
    tasks = [Task.model_validate({**LEFT, "split": "train"}),
             Task.model_validate({**LEFT_ZH, "split": "test"}),
             Task.model_validate({**BOOKS_ZH, "split": "dev"})]
    pairs = near_duplicates(tasks)
    assert [(p.first, p.second, p.similarity) for p in pairs] == \
        [("kinto-left", "kinto-left-zh", 1.0)]
    same_split = [tasks[0], Task.model_validate({**LEFT_ZH, "split": "train"})]
    assert near_duplicates(same_split) == []


def test_lang_picks_tasks_in_every_command(tmp_path: Path) -> None:
    path = tmp_path / "kinto.yaml"
    path.write_text(yaml.safe_dump([LEFT, LEFT_ZH, BOOKS_ZH], allow_unicode=True),
                    encoding="utf-8")
    suite = load_tasks(path)
    assert [t.id for t in suite.filter(lang="zh")] == ["kinto-left-zh", "kinto-books-zh"]
    assert len(suite.filter(lang="all")) == 3

    runner = CliRunner()
    stats = json.loads(runner.invoke(
        cli, ["tasks", "stats", "--tasks", str(path), "--lang", "zh", "--json"]).output)
    assert stats["total"] == 2 and stats["lang"] == {"zh": 2}
    listed = runner.invoke(cli, ["tasks", "list", "--tasks", str(path), "--lang", "en"])
    assert "kinto-left " in listed.output and "-zh" not in listed.output
    wrong = runner.invoke(cli, ["tasks", "list", "--tasks", str(path), "--lang", "fr"])
    assert wrong.exit_code != 0 and "no language 'fr'" in wrong.output
    assert "Traceback" not in wrong.output


def test_a_run_reports_its_scores_by_language(tmp_path: Path) -> None:
    """Replayed by the oracle, a task in each language: summary.md and report.html give
    each language its own row, and the Chinese answer is scored like the English one."""
    from toolbed.harness import OracleAgent, Runner, write_report

    suite = load_tasks()
    chosen = [next(t for t in suite if t.verified and t.lang == lang and t.apps == ["kinto"])
              for lang in ("en", "zh")]
    list(Runner(suite.catalog, OracleAgent(), tmp_path, "replay").run(chosen))
    summary = write_report(tmp_path)
    assert {lang: cell["runs"] for lang, cell in summary["per_lang"].items()} == \
        {"en": 1, "zh": 1}
    assert all(cell["success"] == 1.0 for cell in summary["per_lang"].values())
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "| zh | 1 | 100.0 | 100.0 | 100.0 |" in text and "| en | 1 |" in text
    assert "<h2>By language</h2>" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_open_answers_in_chinese_are_compared_by_a_chinese_encoder_on_the_english_scale(
) -> None:
    from toolbed.harness import OPEN_PASS
    from toolbed.harness.metrics import embedding_similarity
    from toolbed.retriever import load_model

    similarity = embedding_similarity()
    said = "书架上最早出版的是 Middlemarch，1871 年。"
    assert similarity(said, "Middlemarch 是最早的，出版于1871年。") >= OPEN_PASS
    assert similarity(said, "你有三个未读的通知。") < 0.5
    # English pairs keep all-MiniLM-L6-v2's own cosine (to float32 noise: a batch of two
    # and two batches of one are not summed in the same order on every CPU)
    english = load_model().encode(["It rains.", "Rain is falling."], normalize_embeddings=True)
    assert similarity("It rains.", "Rain is falling.") == pytest.approx(
        max(0.0, float(english[0] @ english[1])), abs=1e-5)


class _Listening(ScriptedChatModel):
    """Answers at once, keeping the messages it was given."""

    heard: list[list[Any]] = []

    def invoke(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.heard.append(list(messages))
        return super().invoke(messages, *args, **kwargs)


def test_an_agent_is_asked_to_answer_in_the_language_of_the_task(catalog: Catalog) -> None:
    def system_prompt(agent_class: type, lang: str) -> str:
        model = _Listening(messages=iter([AIMessage("Final Answer: 3")]), heard=[])
        task = Task.model_validate(LEFT_ZH if lang == "zh" else LEFT)
        agent_class(model).run(task, ToolBox(Runtime(catalog), ["kinto.list_records"],
                                             Trajectory()))
        return str(model.heard[0][0].content)

    for agent_class in (LangChainAgent, ReactAgent):
        english, chinese = system_prompt(agent_class, "en"), system_prompt(agent_class, "zh")
        # the same prompt; a Chinese run adds the language
        assert ANSWER_IN["zh"] not in english and "Chinese" not in english
        assert chinese == f"{english} {ANSWER_IN['zh']}"
    assert SYSTEM_PROMPT in system_prompt(LangChainAgent, "en")


def test_the_agent_is_told_the_run_s_date_that_tomorrow_is_bound_to() -> None:
    """A gold chain binds "tomorrow at 09:00" to the run's clock (the recording's, in a
    replay): the prompt names the same day, so the agent need not guess it."""
    from datetime import UTC, datetime

    from toolbed.connectors import evaluate, running_at
    from toolbed.harness.agents import prompt_in

    clock = int(datetime(2025, 3, 14, 8, 30, tzinfo=UTC).timestamp())
    with running_at(clock):
        told = prompt_in(SYSTEM_PROMPT, "en")
        tomorrow = evaluate("at(`1`, '09:00')", {})
    assert told == f"{SYSTEM_PROMPT} It is now Friday 14 March 2025, 08:30 UTC."
    assert datetime.fromtimestamp(tomorrow, UTC).strftime("%A %d") == "Saturday 15"
    assert prompt_in(SYSTEM_PROMPT, "zh", clock).endswith(f"08:30 UTC. {ANSWER_IN['zh']}")


# -- dialogues -------------------------------------------------------------------------

class _Heard:
    """A conversing agent that answers nothing and notes the language it was started in."""

    name, model_name = "heard", None

    def __init__(self) -> None:
        self.langs: list[str] = []

    def run(self, task: Task, tools: ToolBox) -> Trajectory:
        return Trajectory()

    def start(self, tools: ToolBox, lang: str = "en") -> Any:
        self.langs.append(lang)
        return self

    def reply(self, text: str) -> Trajectory:
        return Trajectory(answer="")


def _read_only(lang: str) -> Dialogue:
    """A shipped dialogue in ``lang`` that only reads (so the replayed agent makes no call)."""
    return next(d for d in load_dialogues() if d.lang == lang and all(
        t.answer is None or t.answer.type != "operational" for t in d.turns))


@pytest.mark.usefixtures("no_network")
def test_a_dialogue_in_chinese_is_held_in_chinese(catalog: Catalog) -> None:
    from toolbed.harness import run_agent_dialogue, run_dialogue, turn_history

    for lang in LANGS:
        dialogue = _read_only(lang)
        agent = _Heard()
        with Runtime(catalog, mode=Mode.REPLAY, cassette=dialogue_cassette(dialogue)) as rt:
            result = run_agent_dialogue(rt, agent, dialogue, [s.api for s in dialogue.chain],
                                        similarity=lambda a, b: 0.0)
        with Runtime(catalog, mode=Mode.REPLAY, cassette=dialogue_cassette(dialogue)) as rt:
            run = run_dialogue(rt, dialogue)
        assert agent.langs == [lang] and result.row()["lang"] == lang
        prompt = str(turn_history(run, 0)[0].content)     # turn by turn, the same prompt
        assert prompt.endswith(ANSWER_IN["zh"]) == (lang == "zh")


def test_dialogues_are_chosen_counted_and_scored_by_language(tmp_path: Path) -> None:
    from toolbed.harness import dialogue_markdown, dialogue_summary

    suite = load_dialogues()
    chinese = suite.filter(lang="zh")
    assert chinese and {d.lang for d in chinese} == {"zh"}
    assert len(suite.filter(lang="all")) == len(suite) == len(chinese) + len(
        suite.filter(lang="en"))
    with pytest.raises(TaskError, match="no language 'fr'"):
        suite.filter(lang="fr")
    listed = CliRunner().invoke(cli, ["dialogues", "list", "--lang", "zh", "--json"])
    assert {d["id"] for d in json.loads(listed.output)} == {d.id for d in chinese}

    def row(name: str, lang: str, success: bool) -> dict[str, Any]:
        return {"dialogue": name, "granularity": "M-S", "lang": lang, "success": success,
                "scores": {"sr": float(success)}, "problems": []}

    summary = dialogue_summary([row("a", "en", True), row("b", "zh", False),
                                row("c", "zh", True)])
    assert {k: (v["dialogues"], v["success"]) for k, v in summary["by_lang"].items()} == \
        {"en": (1, 1.0), "zh": (2, 0.5)}
    assert "| in zh | 2 | 0.500 |" in dialogue_markdown(summary)


def test_a_dialogue_translated_into_another_split_is_caught() -> None:
    english = next(d for d in load_dialogues() if d.lang == "en")
    chinese = english.model_copy(update={
        "id": "kinto-zh-dlg-copy", "lang": "zh",
        "turns": [t.model_copy(update={"query": "同一个请求，用中文问。"}) for t in english.turns]})
    elsewhere = "dev" if english.split != "dev" else "test"
    assert translated_dialogues([english, chinese.model_copy(update={"split": elsewhere})]) \
        == [Pair(english.id, "kinto-zh-dlg-copy", 1.0)]
    assert translated_dialogues([english, chinese]) == []          # the same split: fine
    assert translated_dialogues(list(load_dialogues())) == []      # none shipped
