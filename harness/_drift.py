"""Drift of a task's cassette: its gold chain run again, live, and compared with the
recording, request by request (``connectors.compare``) and as a task.

A task is still valid when the oracle passes live and gives the recorded answer;
its answer moved when it passes with another answer (expected of a real-time
answer); it is broken when the oracle fails live (a fixed answer that changed, a
call the app refuses now). A chain that writes runs only when writes are allowed,
in the oracle's rollback scope as always. With ``update``, a task that passes live
has its cassette replaced by the fresh recording (``toolbed cassettes drift --update``).

``check_drift`` does the same for ``toolbed apis check --live``, which calls every read
API once with its catalog example rather than running tasks: each answer is compared
with that API's recordings in the task cassettes. ``drift_report`` puts both in one
report (JSON), and ``drift_html`` makes a page of it in the style of a run's report.html.
"""

from __future__ import annotations

import html
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from toolbed.apis import Api, Catalog
from toolbed.connectors import (
    Change,
    Drift,
    Health,
    Mode,
    RunningApp,
    Runtime,
    api_of,
    check_live,
    compare,
    exchange_key,
    read_cassette,
    request_pattern,
)
from toolbed.errors import ToolbedError
from toolbed.tasks._task import Task

from ._oracle import run_oracle
from ._report import html_page

__all__ = ["ALARMS", "VERDICTS", "TaskDrift", "check_drift", "drift_html", "drift_report",
           "drift_task"]

VERDICTS = ("still valid", "answer moved", "broken", "skipped")


@dataclass
class TaskDrift:
    """One task's verdict, and each recorded request's."""

    task: str
    verdict: str
    detail: str = ""
    requests: list[tuple[str, Drift]] = field(default_factory=list)
    """(API id, or the request's method and URI when no API matches; its verdict)."""
    updated: bool = False
    """The cassette was recorded again (``update``, and the task passed live)."""


def drift_task(
    catalog: Catalog, task: Task, cassette: Path, apps: dict[str, RunningApp] | None = None,
    allow_writes: bool = False, restart: Callable[[RunningApp], RunningApp] | None = None,
    update: bool = False, transport: httpx.BaseTransport | None = None,
    data: dict[str, Any] | None = None,
) -> TaskDrift:
    """Run ``task``'s gold chain live, recorded aside, and compare with ``cassette``;
    with ``update``, a chain that passes live replaces ``cassette`` with its recording.
    ``transport``: what the live calls go through (httpx's default: the network);
    ``data``: the cassette as already read (``read_cassette``), to spare a second read."""
    if not allow_writes and any(catalog.api(s.api).effect == "write" for s in task.chain):
        return TaskDrift(task.id, "skipped", "its chain writes (--allow-writes runs it)")
    recorded = (data or read_cassette(cassette))["interactions"]
    with Runtime(catalog, mode=Mode.REPLAY, cassette=cassette) as replay:
        before = run_oracle(replay, task, restart=restart)
    with tempfile.TemporaryDirectory(prefix="toolbed-drift-") as folder:
        fresh_path = Path(folder) / "fresh.yaml"
        try:
            with Runtime(catalog, mode=Mode.RECORD, cassette=fresh_path, apps=apps,
                         transport=transport) as live:
                now = run_oracle(live, task, restart=restart)
        except ToolbedError as exc:                   # an app down, a host that is gone
            return TaskDrift(task.id, "broken", str(exc), _pairs(catalog, recorded, []))
        fresh = read_cassette(fresh_path)["interactions"] if fresh_path.is_file() else []
        requests = _pairs(catalog, recorded, fresh)
        if not now.ok:
            return TaskDrift(task.id, "broken", "; ".join(now.problems), requests)
        updated = update and fresh_path.is_file()
        if updated:
            shutil.copyfile(fresh_path, cassette)
    if now.answer != before.answer:
        return TaskDrift(task.id, "answer moved",
                         f"{before.answer!r} is now {now.answer!r}", requests, updated)
    return TaskDrift(task.id, "still valid", "", requests, updated)


def _pairs(catalog: Catalog, recorded: list[dict[str, Any]], fresh: list[dict[str, Any]]
           ) -> list[tuple[str, Drift]]:
    """Each recorded request's verdict, against the fresh answer to the same request;
    else to the same request but for its ids (``request_pattern``), else to a call of
    the same API. Ids are made anew on each start of an app and a list of rooms can come
    back in another order, so among several fresh candidates the twin is the one whose
    answer changed least (the first of those): a real change of the API shows in all."""
    pools: list[dict[Any, list[dict[str, Any]]]] = [defaultdict(list) for _ in range(3)]

    def keys(item: dict[str, Any]) -> tuple[Any, ...]:
        request = item["request"]
        return exchange_key(request), request_pattern(request), _name(catalog, request)

    for item in fresh:
        for pool, key in zip(pools, keys(item), strict=True):
            pool[key].append(item)
    out = []
    for item in recorded:
        candidates = next((pool[key] for pool, key in zip(pools, keys(item), strict=True)
                           if pool.get(key)), [])
        verdicts = [compare(item["response"], c["response"]) for c in candidates]
        if not verdicts:
            out.append((keys(item)[2], compare(item["response"], None)))
            continue
        best = min(range(len(verdicts)), key=lambda i: verdicts[i].change)
        twin = candidates[best]
        for pool, key in zip(pools, keys(twin), strict=True):
            pool[key].remove(twin)
        out.append((keys(item)[2], verdicts[best]))
    return out


def _name(catalog: Catalog, request: dict[str, Any]) -> str:
    """The API a request called, or its method and URI when no API matches."""
    method, uri = str(request.get("method")), str(request.get("uri"))
    return api_of(catalog, method, uri) or f"{method} {uri}"


def check_drift(
    catalog: Catalog, apis: Iterable[Api], recordings: Iterable[Path],
    transport: httpx.BaseTransport | None = None,
) -> tuple[list[Health], list[tuple[str, Drift]]]:
    """Call each read API of ``apis`` once with its example (``check_live``), recorded
    aside, and compare each answer with the same API's answers in ``recordings`` (task
    cassettes): the same request's when one was recorded, else the least changed of
    the API's recorded answers to other requests (other arguments give other values,
    so only the status, content type and shape tell). An API never recorded is listed
    as such; one that could not be called (no key) has no verdict."""
    by_key: dict[tuple[str, str, str], dict[str, Any]] = {}
    by_api: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in recordings:
        for item in read_cassette(path)["interactions"]:
            by_key.setdefault(exchange_key(item["request"]), item)
            by_api[_name(catalog, item["request"])].append(item)
    with tempfile.TemporaryDirectory(prefix="toolbed-check-") as folder:
        fresh_path = Path(folder) / "check.yaml"
        with Runtime(catalog, mode=Mode.RECORD, cassette=fresh_path,
                     transport=transport) as live:
            health = check_live(live, apis)
        fresh = read_cassette(fresh_path)["interactions"] if fresh_path.is_file() else []
    out = []
    for item in fresh:
        name = _name(catalog, item["request"])
        twin = by_key.get(exchange_key(item["request"]))
        if twin is not None:
            out.append((name, compare(twin["response"], item["response"])))
            continue
        verdicts = [compare(r["response"], item["response"]) for r in by_api.get(name, [])]
        if not verdicts:
            out.append((name, compare(None, item["response"])))
            continue
        least = min(verdicts, key=lambda d: d.change)
        out.append((name, Drift(least.change, "against another request's recording"
                                + (f": {least.detail}" if least.detail else ""))))
    return health, out


def drift_report(results: list[TaskDrift], checks: Iterable[tuple[str, Drift]] = ()
                 ) -> dict[str, Any]:
    """Per API its worst change (with what changed), per task its verdict, and counts;
    ``checks``: verdicts of ``check_drift`` (an API's example called), counted beside
    the tasks' requests (``checked``: how many)."""
    apis: dict[str, dict[str, Any]] = {}

    def count(name: str, verdict: Drift, task: str | None) -> None:
        entry = apis.setdefault(name, {"change": Change.UNCHANGED, "detail": "",
                                       "requests": 0, "checked": 0, "tasks": []})
        entry["requests"] += 1
        if task is None:
            entry["checked"] += 1
        elif task not in entry["tasks"]:
            entry["tasks"].append(task)
        if verdict.change > entry["change"] or (not entry["detail"] and verdict.detail
                                                and verdict.change == entry["change"]):
            entry["change"], entry["detail"] = verdict.change, verdict.detail

    for result in results:
        for name, verdict in result.requests:
            count(name, verdict, result.task)
    for name, verdict in checks:
        count(name, verdict, None)
    by_change: dict[str, int] = dict.fromkeys((c.label for c in Change), 0)
    for entry in apis.values():
        by_change[entry["change"].label] += 1
        entry["change"] = entry["change"].label
    by_verdict = dict.fromkeys(VERDICTS, 0)
    for result in results:
        by_verdict[result.verdict] += 1
    return {
        "apis": dict(sorted(apis.items())),
        "tasks": {r.task: {"verdict": r.verdict, "detail": r.detail, "updated": r.updated}
                  for r in results},
        "summary": {"tasks": by_verdict, "apis": by_change},
    }


ALARMS = ("shape changed", "auth changed", "gone")
"""The API changes a drift run fails on (exit 1), with a broken task."""


def drift_html(report: dict[str, Any], title: str = "Drift") -> str:
    """A drift report as a page like a run's report.html: the counts, then the APIs
    that changed (worst first, with the first difference and the tasks that call
    them), the tasks that did not stay valid, and, folded, the APIs that did not
    change."""
    esc = html.escape
    order = {c.label: c.value for c in Change}
    apis = report["apis"]
    changed = sorted((k for k, v in apis.items() if v["change"] != "unchanged"),
                     key=lambda k: (-order[apis[k]["change"]], k))

    def api_row(name: str) -> str:
        entry = apis[name]
        tasks = ", ".join(entry["tasks"][:5]) + (" ..." if len(entry["tasks"]) > 5 else "")
        return (f'<tr class="api {esc(entry["change"].replace(" ", "-"))}" id="api-{esc(name)}">'
                f"<td><code>{esc(name)}</code></td><td>{esc(entry['change'])}</td>"
                f"<td>{entry['requests']}</td><td>{esc(entry.get('detail') or '')}</td>"
                f"<td>{esc(tasks)}</td></tr>")

    head = "<tr><th>API</th><th>change</th><th>requests</th><th>first difference</th>" \
           "<th>tasks</th></tr>"
    summary = report["summary"]
    parts = [f"<p>Made {esc(report['made'])}.</p>" if report.get("made") else "",
             "<p>Tasks: " + esc(", ".join(f"{v} {k}" for k, v in summary["tasks"].items()))
             + ". APIs: " + esc(", ".join(f"{v} {k}" for k, v in summary["apis"].items()))
             + ".</p>",
             f"<h2>APIs that changed ({len(changed)})</h2>",
             f"<table>{head}{''.join(api_row(k) for k in changed)}</table>" if changed
             else "<p>None.</p>"]
    odd = {k: v for k, v in report["tasks"].items() if v["verdict"] != "still valid"}
    if report["tasks"]:
        rows = "".join(
            f'<tr class="task {esc(v["verdict"].replace(" ", "-"))}"><td>{esc(k)}</td>'
            f"<td>{esc(v['verdict'])}</td><td>{esc(v['detail'])}</td>"
            f"<td>{'recorded again' if v['updated'] else ''}</td></tr>"
            for k, v in sorted(odd.items(), key=lambda kv: (VERDICTS.index(kv[1]['verdict']),
                                                            kv[0])))
        parts += [f"<h2>Tasks not still valid ({len(odd)} of {len(report['tasks'])})</h2>",
                  f"<table><tr><th>task</th><th>verdict</th><th>detail</th><th></th></tr>"
                  f"{rows}</table>" if odd else "<p>None.</p>"]
    same = [k for k, v in apis.items() if v["change"] == "unchanged"]
    if same:
        parts.append(f"<details><summary>APIs unchanged ({len(same)})</summary>"
                     f"<table>{head}{''.join(api_row(k) for k in same)}</table></details>")
    style = ("<style>th{text-align:left}"
             "tr.shape-changed td,tr.gone td,tr.auth-changed td,tr.broken td{background:#fdd}"
             "tr.values-changed td,tr.answer-moved td{background:#ffd}</style>")
    return html_page(title, style + "\n".join(p for p in parts if p))
