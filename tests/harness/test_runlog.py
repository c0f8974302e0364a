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
