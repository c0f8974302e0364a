"""Counts over a task suite: what `toolbed tasks stats` prints and the README shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from toolbed.apis import Catalog

from ._task import Task

__all__ = ["GROUPINGS", "api_coverage", "task_stats"]

GROUPINGS = ("app", "domain", "scenario", "type", "category", "split", "calls")
"""The groupings of ``task_stats``; a task that spans apps counts once under each."""


def task_stats(tasks: Iterable[Task], catalog: Catalog) -> dict[str, Any]:
    """``{"total": n, "app": {...}, "domain": {...}, ...}``, each grouping's counts."""
    tasks = list(tasks)
    counts: dict[str, Counter[str]] = {g: Counter() for g in GROUPINGS}
    for task in tasks:
        counts["app"].update(task.apps)
        counts["domain"].update({catalog.app(a).domain for a in task.apps})
        counts["scenario"][task.scenario] += 1
        counts["type"][task.type] += 1
        counts["category"][task.category] += 1
        counts["split"][task.split] += 1
        counts["calls"][str(len(task.chain))] += 1
    out: dict[str, Any] = {"total": len(tasks)}
    for grouping, counter in counts.items():
        keys = sorted(counter, key=int) if grouping == "calls" else sorted(counter)
        out[grouping] = {k: counter[k] for k in keys}
    return out


def api_coverage(
    tasks: Iterable[Task], catalog: Catalog, tier: str, apps: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Which of a tier's (or some apps') APIs the gold chains use, and which they do not."""
    used = {step.api for task in tasks for step in task.chain}
    apps = set(apps)
    ids = [api.id for api in catalog
           if catalog.app_of(api).tier == tier and (not apps or api.app in apps)]
    return {"used": [i for i in ids if i in used], "unused": [i for i in ids if i not in used]}
