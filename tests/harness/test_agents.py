"""Agents are looked up by name, a plugin adds its own, and an evaluation runs any of
them from a script as `toolbed eval` does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed import registry
from toolbed.cli import app as cli
from toolbed.errors import AgentError, ToolbedError
from toolbed.harness import (
    AgentOptions,
    Evaluation,
    LangChainAgent,
    OracleAgent,
    ReactAgent,
    load_results,
    make_agent,
)
from toolbed.tasks import load_tasks

from ..conftest import block_network

PLUGIN = '''
from toolbed.harness import OracleAgent


class Echo(OracleAgent):
    """The gold chain under another name: enough to prove the plugin ran."""

    name = "echo"
    model_name = "echo-1"


def make(options):
    return Echo()


def broken(options):
    raise AssertionError("never called")
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed distribution (a dist-info folder on sys.path) whose entry points
    name an agent, and one whose module does not exist."""
    (tmp_path / "echo_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "echo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[toolbed.agents]\necho = echo_plugin:make\nghost = no_such_module:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_PLUGINS_LOADED", set())
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield
    sys.modules.pop("echo_plugin", None)


def test_the_built_in_agents_are_registered_by_name():
    assert {"oracle", "embedded", "langchain", "react"} <= set(registry.names("agent"))
    assert isinstance(make_agent("oracle"), OracleAgent)
    options = AgentOptions(model="demo-model", base_url="http://127.0.0.1:9/v1",
                           max_steps=3, strict_parse=True)
    react = make_agent("react", options)
    assert isinstance(react, ReactAgent) and react.strict and react.max_steps == 3
    assert react.model_name == "demo-model"
    assert isinstance(make_agent(None, options), LangChainAgent)   # a model: langchain


def test_an_unknown_agent_or_a_missing_model_is_one_clear_error():
    with pytest.raises(ToolbedError, match="no agent named 'gpt'.*oracle"):
        make_agent("gpt")
    with pytest.raises(AgentError, match="--agent react needs --model"):
        make_agent("react")


def test_a_plugin_agent_is_found_by_name_and_a_broken_one_is_named(plugin):
    assert {"echo", "ghost"} <= set(registry.names("agent"))
    agent = make_agent("echo")
    assert (agent.name, agent.model_name) == ("echo", "echo-1")
    with pytest.raises(ToolbedError, match="plugin 'ghost'.*no_such_module"):
        make_agent("ghost")


def test_an_evaluation_runs_from_a_script_like_toolbed_eval(tmp_path, monkeypatch):
    block_network(monkeypatch)
    suite = load_tasks()
    tasks = [t for t in suite.filter(splits=["dev"], tier="selfhosted")][:3]
    evaluation = Evaluation(suite.catalog, make_agent("oracle"), tasks, tmp_path / "run",
                            mode="replay")
    assert evaluation.pending() == len(tasks)
    summary = evaluation.run()
    assert summary["tasks"] == len(tasks) and summary["success"] == 1.0
    assert evaluation.pending() == 0 and evaluation.started == {}
    spec = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (spec["agent"], spec["mode"], spec["tools"]) == ("oracle", "replay", "gold")


def test_toolbed_eval_runs_a_plugin_agent(plugin, tmp_path, monkeypatch):
    block_network(monkeypatch)
    result = CliRunner().invoke(cli, ["eval", "--agent", "echo", "--mode", "replay",
                                      "--tools", "gold", "--split", "dev", "--limit", "1",
                                      "--cassettes", str(tmp_path / "none"),
                                      "--run-dir", str(tmp_path / "run")])
    spec = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (spec["agent"], spec["model"]) == ("echo", "echo-1"), result.output
    # it ran: with no cassette recorded for it, its one task fails with that reason
    [row] = load_results(tmp_path / "run")
    assert row["task"] == spec["tasks"][0] and "cassette" in " ".join(row["problems"])
