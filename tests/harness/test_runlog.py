"""The run folder has one versioned format; anything else is refused with one error."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from toolbed.cli import app as cli
from toolbed.errors import RunLogError
from toolbed.harness import FORMAT, ResultRow, RunLog, RunSpec


def a_row(task: str = "kinto-count-buckets", trial: int = 0, **changes) -> ResultRow:
    fields = dict(task=task, trial=trial, app="kinto", domain="data storage",
                  scenario="single", type="fixed", category="read", split="test",
                  success=True, completion=1.0, tool_match=1.0,
                  scores={"completion": 1.0, "tool_match": 1.0}, errors={"refused": 0},
                  problems=[], answer="3 buckets", trajectory={"calls": [], "answer": "3"},
                  seconds=0.25)
    return ResultRow(**{**fields, **changes})


SPEC = RunSpec(agent="oracle", mode="replay", tools="gold", tasks=["kinto-count-buckets"])


def test_rows_come_back_as_they_were_written_and_a_rerun_resumes(tmp_path):
    log = RunLog(tmp_path / "run")
    log.start(SPEC)
    log.add(a_row())
    log.add(a_row(trial=1, success=False, problems=["kinto was down"]))
    log.add(a_row(trial=1, success=True))                  # the same task and trial: replaced
    again = RunLog(tmp_path / "run")
    assert again.spec() == SPEC and again.spec().format == FORMAT
    assert again.rows() == [a_row(), a_row(trial=1, success=True)]
    assert again.done() == {("kinto-count-buckets", 0), ("kinto-count-buckets", 1)}
    again.start(SPEC)                                      # same format: it resumes
    assert len(again.rows()) == 2


def damage_older(run):        # results, but no run.json: toolbed before the format existed
    sqlite3.connect(run / "results.db").execute("create table results (task text)").close()


def damage_newer(run):
    (run / "run.json").write_text(json.dumps({**SPEC.model_dump(), "format": FORMAT + 1}))


def damage_foreign(run):
    (run / "run.json").write_text(json.dumps({"name": "my notes"}))


def damage_garbage(run):
    (run / "run.json").write_bytes(b"\x00\xff not json")


@pytest.mark.parametrize(("damage", "message"), [
    (damage_older, "no run.json: it was written by an older toolbed"),
    (damage_newer, f"a run of format {FORMAT + 1}; this toolbed reads format {FORMAT}"),
    (damage_foreign, "has no run format version"),
    (damage_garbage, "not a readable run.json"),
])
def test_an_old_or_foreign_folder_is_one_clear_error_and_is_left_as_it_was(
        tmp_path, damage, message):
    run = tmp_path / "run"
    run.mkdir()
    damage(run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    with pytest.raises(RunLogError, match=message):
        RunLog(run).start(SPEC)
    for args in (["report", str(run)], ["compare", str(run), str(run)],
                 ["eval", "--agent", "oracle", "--mode", "replay", "--app", "kinto",
                  "--limit", "1", "--run-dir", str(run)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert result.output.startswith("Error: ") and message in result.output.replace("\n", " ")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def test_a_row_that_is_not_this_format_is_refused(tmp_path):
    log = RunLog(tmp_path / "run")
    log.start(SPEC)
    log.add(a_row())
    with sqlite3.connect(tmp_path / "run" / "results.db") as db:
        db.execute("update results set scores = 'not json'")
    with pytest.raises(RunLogError, match="task 'kinto-count-buckets' is not a format"):
        log.rows()


def test_compare_says_whether_the_tasks_both_ran_can_tell_two_runs_apart(tmp_path):
    tasks = [f"kinto-task-{i}" for i in range(20)]
    a, b = RunLog(tmp_path / "a"), RunLog(tmp_path / "b")
    for log in (a, b):
        log.start(RunSpec(agent="oracle", mode="replay", tools="gold", tasks=tasks))
    for i, task in enumerate(tasks):
        a.add(a_row(task))
        a.add(a_row(task, trial=1, success=i % 4 != 0))  # A: a task's trials are averaged
        b.add(a_row(task, success=i % 2 == 0, scores={"completion": 1.0, "tool_match": 0.5}))
    b.add(a_row("kinto-only-in-b"))                      # not in A: not compared
    out = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                   "--bootstrap", "500", "--json"])
    assert out.exit_code == 0, out.output
    compared = json.loads(out.output)
    assert compared["tasks"] == 20
    success = compared["metrics"]["success"]
    assert (success["a"], success["b"]) == (0.875, 0.5)
    assert success["b - a"]["mean"] == -0.375 and success["b - a"]["high"] < 0   # told apart
    assert compared["metrics"]["tool_match"]["b - a"] == {"mean": -0.5, "low": -0.5,
                                                           "high": -0.5}
    assert compared["metrics"]["completion"]["b - a"]["mean"] == 0.0
    table = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                     "--bootstrap", "500"])
    assert table.exit_code == 0 and "95%" in table.output and "[-0.500, -0.500]" in table.output
    plain = CliRunner().invoke(cli, ["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                     "--json"])
    assert "b - a" not in json.loads(plain.output)["metrics"]["success"]
