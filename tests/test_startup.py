"""Start-up: a command imports only what it uses, and its help costs no import.

The times themselves are a benchmark (``benchmarks/startup.py``), not a test."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolbed._lazy import exports
from toolbed.cli import COMMANDS, load_command

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sentence_transformers", "torch", "chromadb", "langchain", "langchain_core",
         "llama_cpp", "matplotlib")
"""What only the retriever, the agents and the plots need."""

_PROBE = """
import json, sys
from toolbed.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(m.split(".")[0] for m in sys.modules)))
"""


@pytest.mark.parametrize("args", [
    ["--help"],
    ["apis", "list", "--app", "kinto"],
    ["apis", "show", "kinto.create_record"],
    ["call", "kinto.list_buckets", "--mode", "replay", "--cassette",
     "cassettes/exercise/kinto.yaml"],
    ["apps", "status"],
    ["rollback", "status"],
])
def test_catalog_call_apps_and_rollback_commands_import_no_model_or_agent_library(args):
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert loaded & set(HEAVY) == set()
    if args == ["--help"]:
        assert not any(m.startswith("_") and m in COMMANDS for m in loaded)
        assert "toolbed" in loaded and "httpx" not in loaded and "yaml" not in loaded


@pytest.mark.parametrize("name", COMMANDS)
def test_the_line_toolbed_help_shows_is_the_command_s_own_help(name):
    command = load_command(name)
    first_paragraph = inspect.cleandoc(command.help or "").split("\n\n")[0]
    assert COMMANDS[name][2] == " ".join(first_paragraph.split())


@pytest.mark.parametrize("package", ["toolbed", "toolbed.apis", "toolbed.connectors",
                                     "toolbed.rollback", "toolbed.retriever", "toolbed.tasks"])
def test_a_lazy_package_exports_exactly_its_type_checking_imports(package):
    module = importlib.import_module(package)
    assert set(exports(module.__file__)) == set(module.__all__)
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
