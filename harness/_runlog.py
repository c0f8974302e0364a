"""A run folder's format, written and read here and nowhere else.

    <run dir>/run.json      RunSpec: what was asked for, and the format version
    <run dir>/results.db    SQLite, table ``results``: one ResultRow per task and trial

(``results.jsonl``, ``summary.json``, ``summary.md`` and ``report.html`` are reports
made from these two by ``_report.py``; they can always be rewritten.)

A step-by-step run (T-Eval / GTA mode: nothing is executed, each next step is scored
against the gold one) writes instead:

    <run dir>/steps.jsonl   one object of scores per task
    <run dir>/steps.json    the run's agent, mode, tools, task count and mean scores

The format has a version, ``FORMAT``. A folder written by another version, one with
results but no run.json (toolbed before the version existed), or a run.json that is
not toolbed's, is refused with one error that says what it is and what to do, before
anything is added to it: a resumed run never mixes rows of two formats.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import sqlite_utils
from pydantic import BaseModel, ConfigDict, ValidationError

from toolbed.errors import RunLogError

__all__ = ["FORMAT", "ResultRow", "RunLog", "RunSpec"]

FORMAT = 1
"""The version of the run folder's format; raise it when RunSpec or ResultRow change."""


class RunSpec(BaseModel):
    """What a run was asked to do (``run.json``)."""

    model_config = ConfigDict(extra="forbid")

    format: int = FORMAT
    agent: str
    model: str | None = None
    mode: str
    tools: str
    k: int | None = None
    retriever: str | None = None
    retriever_stages: str | None = None
    retriever_scope: str | None = None
    judge: str | None = None
    via: str = "direct"
    """How the agent's calls reached the apps: ``direct``, or over ``mcp``."""
    trials: int = 1
    tasks: list[str]


class ResultRow(BaseModel):
    """One task, one trial: what the agent did and how it scored (a row of results.db)."""

    model_config = ConfigDict(extra="forbid")

    task: str
    trial: int
    app: str
    domain: str
    scenario: str
    type: str
    category: str | None = None
    split: str | None = None
    lang: str = "en"
    success: bool
    completion: float
    tool_match: float
    scores: dict[str, float]
    errors: dict[str, int]
    problems: list[str]
    answer: str | None = None
    trajectory: dict[str, Any]
    seconds: float | None
    """The task's wall time; None in a replay, where it would time reading a file and
    make two replays of the same cassettes differ."""

    def columns(self) -> dict[str, Any]:
        """The row as SQLite stores it: nested values as JSON text, success as 0/1."""
        row = self.model_dump()
        row["success"] = int(self.success)
        for name in _JSON_COLUMNS:
            row[name] = json.dumps(row[name])
        return row


_JSON_COLUMNS = ("scores", "errors", "problems", "trajectory")


class RunLog:
    """A run folder: its spec and its result rows."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self._spec_path = self.run_dir / "run.json"
        self._db_path = self.run_dir / "results.db"
        self._open: sqlite_utils.Database | None = None

    # -- the spec ---------------------------------------------------------------------

    def spec(self) -> RunSpec | None:
        """The run's spec, or None for a folder with nothing in it yet."""
        if not self._spec_path.is_file():
            if self._db_path.is_file():
                raise RunLogError(
                    f"{self.run_dir} holds results but no run.json: it was written by an "
                    f"older toolbed (before run format {FORMAT}); score it with that "
                    "version, or run again into a new folder (--run-dir)")
            return None
        try:
            data = json.loads(self._spec_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RunLogError(f"{self._spec_path}: not a readable run.json ({exc}); run "
                              "again into a new folder (--run-dir)") from None
        if not isinstance(data, dict) or "format" not in data:
            raise RunLogError(f"{self._spec_path} has no run format version: it is not a "
                              "toolbed run, or one written before run format "
                              f"{FORMAT}; run again into a new folder (--run-dir)")
        if data["format"] != FORMAT:
            raise RunLogError(f"{self.run_dir} is a run of format {data['format']!r}; this "
                              f"toolbed reads format {FORMAT}: use the toolbed that wrote "
                              "it, or run again into a new folder (--run-dir)")
        try:
            return RunSpec.model_validate(data)
        except ValidationError as exc:
            raise RunLogError(f"{self._spec_path}: not a toolbed run.json "
                              f"({exc.errors()[0]['msg']} at "
                              f"{'.'.join(map(str, exc.errors()[0]['loc']))})") from None

    def start(self, spec: RunSpec) -> None:
        """Write ``spec`` for a new run, or for a rerun of a folder this version wrote
        (which then resumes); refuse any other folder."""
        self.spec()                          # raises for a folder of another format
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._spec_path.write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")

    # -- step by step ------------------------------------------------------------------

    def write_steps(self, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        """A step-by-step run's rows and summary (they replace an earlier one's)."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with (self.run_dir / "steps.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(r) + "\n" for r in rows)
        (self.run_dir / "steps.json").write_text(json.dumps(summary, indent=2) + "\n",
                                                  encoding="utf-8")

    # -- the rows ---------------------------------------------------------------------

    def _db(self) -> sqlite_utils.Database:
        """One connection per run log, opened when first needed (creating the file)."""
        if self._open is None:
            self._open = sqlite_utils.Database(self._db_path)
        return self._open

    def add(self, row: ResultRow) -> None:
        """Store one row, replacing an earlier one of the same task and trial."""
        # alter: a run log written before a column existed (``lang``) takes new rows too
        self._db().table("results").insert(row.columns(), pk=("task", "trial"), replace=True,
                                           alter=True)

    def done(self) -> set[tuple[str, int]]:
        """The (task, trial) pairs that have a row."""
        if not self._db_path.is_file() or "results" not in self._db().table_names():
            return set()
        return {(r["task"], r["trial"]) for r in self._db()["results"].rows}

    def rows(self) -> list[ResultRow]:
        """Every row, ordered by task and trial."""
        self.spec()
        if not self._db_path.is_file():
            raise RunLogError(f"no results in {self.run_dir}: run `toolbed eval --run-dir "
                              f"{self.run_dir}` first")
        out = []
        for raw in self._db()["results"].rows_where(order_by="task, trial"):
            try:
                for name in _JSON_COLUMNS:
                    raw[name] = json.loads(raw[name])
                out.append(ResultRow.model_validate(raw))
            except (KeyError, TypeError, json.JSONDecodeError, ValidationError):
                raise RunLogError(f"{self._db_path}: a row of task {raw.get('task')!r} is "
                                  f"not a format {FORMAT} result row") from None
        return out
