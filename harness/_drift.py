"""Drift of a task's cassette: its gold chain run again, live, and compared with the
recording, request by request (``connectors.compare``) and as a task.

A task is still valid when the oracle passes live and gives the recorded answer;
its answer moved when it passes with another answer (expected of a real-time
answer); it is broken when the oracle fails live (a fixed answer that changed, a
call the app refuses now). A chain that writes runs only when writes are allowed,
in the oracle's rollback scope as always. With ``update``, a task that passes live
has its cassette replaced by the fresh recording (``toolbed cassettes drift --update``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from toolbed.apis import Catalog
from toolbed.connectors import (
    Change,
    Drift,
    Mode,
    RunningApp,
    Runtime,
    api_of,
    compare,
    exchange_key,
    read_cassette,
)
from toolbed.errors import ToolbedError
from toolbed.tasks._task import Task

from ._oracle import run_oracle

__all__ = ["VERDICTS", "TaskDrift", "drift_report", "drift_task"]

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
) -> TaskDrift:
    """Run ``task``'s gold chain live, recorded aside, and compare with ``cassette``;
    with ``update``, a chain that passes live replaces ``cassette`` with its recording.
    ``transport``: what the live calls go through (httpx's default: the network)."""
    if not allow_writes and any(catalog.api(s.api).effect == "write" for s in task.chain):
        return TaskDrift(task.id, "skipped", "its chain writes (--allow-writes runs it)")
    recorded = read_cassette(cassette)["interactions"]
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
    """Each recorded request's verdict, against the fresh answer to the same request,
    or else to the same call of the same API (the n-th with the n-th): an id the app
    made anew on this start changes a URI, not what the API answers."""
    same: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    by_api: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in fresh:
        same[exchange_key(item["request"])].append(item)
        by_api[_name(catalog, item["request"])].append(item)
    out = []
    for item in recorded:
        name = _name(catalog, item["request"])
        twins = same.get(exchange_key(item["request"])) or by_api.get(name) or []
        twin = twins[0] if twins else None
        if twin is not None:
            for pool in (same[exchange_key(twin["request"])], by_api[name]):
                if twin in pool:
                    pool.remove(twin)
        out.append((name, compare(item["response"], twin["response"] if twin else None)))
    return out


def _name(catalog: Catalog, request: dict[str, Any]) -> str:
    """The API a request called, or its method and URI when no API matches."""
    method, uri = str(request.get("method")), str(request.get("uri"))
    return api_of(catalog, method, uri) or f"{method} {uri}"


def drift_report(results: list[TaskDrift]) -> dict[str, Any]:
    """Per API its worst change (with what changed), per task its verdict, and counts."""
    apis: dict[str, dict[str, Any]] = {}
    for result in results:
        for name, verdict in result.requests:
            entry = apis.setdefault(name, {"change": Change.UNCHANGED, "detail": "",
                                           "requests": 0, "tasks": []})
            entry["requests"] += 1
            if result.task not in entry["tasks"]:
                entry["tasks"].append(result.task)
            if verdict.change > entry["change"]:
                entry["change"], entry["detail"] = verdict.change, verdict.detail
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
