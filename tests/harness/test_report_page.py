"""The report as a person sees it: report.html opened in a real headless browser
(Debian's Chromium), where each task's run shows its calls, their arguments, the
start of what came back and what rollback did with each write."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from toolbed.apis import Catalog
from toolbed.harness import OracleAgent, Runner, write_report
from toolbed.tasks import load_tasks

from ..conftest import block_network

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def rendered(page: Path, profile: Path) -> str:
    """The page's DOM after Chromium loaded it (headless, no network of its own)."""
    assert CHROMIUM, ("no Chromium: scripts/setup installs Debian's package "
                      "(or run `apt-get install chromium`)")
    shown = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True)
    return shown.stdout


class Runs(HTMLParser):
    """Each task run of the page: its id, and its calls' text by class."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[str, list[dict[str, str]]] = {}
        self._run: str | None = None
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        got = dict(attrs)
        if tag == "details" and "task-run" in (got.get("class") or ""):
            self._run = (got.get("id") or "").removeprefix("run-")
            self.runs[self._run] = []
        elif self._run and tag == "li" and got.get("class") == "call":
            self.runs[self._run].append({})
        elif self._run and self.runs[self._run] and got.get("class") in (
                "api", "observation", "undo"):
            self._field = got["class"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre", "p"):
            self._field = None
        if tag == "details":
            self._run = None

    def handle_data(self, data: str) -> None:
        if self._run and self._field:
            call = self.runs[self._run][-1]
            call[self._field] = call.get(self._field, "") + data


def test_each_tasks_calls_observations_and_undos_show_in_the_browser(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch,
) -> None:
    block_network(monkeypatch)        # the replay, and the page, reach nothing
    suite = load_tasks()
    tasks = [suite.task("kinto-add-sunscreen-record-id"), suite.task("kinto-packing-left")]
    run_dir = tmp_path / "run"
    assert all(r.success for r in Runner(catalog, OracleAgent(), run_dir, "replay").run(tasks))
    write_report(run_dir)

    page = Runs()
    page.feed(rendered(run_dir / "report.html", tmp_path / "profile"))
    [write] = page.runs["kinto-add-sunscreen-record-id-0"]
    assert write["api"] == "kinto.replace_record"
    assert '"id": "sunscreen"' in write["observation"]
    assert write["undo"].startswith("Rollback: undone by kinto.")     # its undo call
    [read] = page.runs["kinto-packing-left-0"]
    assert read["api"] == "kinto.list_records" and "passport" in read["observation"]
    assert "undo" not in read
