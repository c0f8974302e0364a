"""Counts over a task suite: what `toolbed tasks stats` prints and the README shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from toolbed.apis import Catalog

from ._task import Task

__all__ = ["GROUPINGS", "api_coverage", "task_stats", "task_table"]

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


_TYPES = ("fixed", "realtime", "open", "operational")


def task_table(tasks: Iterable[Task], catalog: Catalog) -> str:
    """Markdown: per app, tasks by scenario, answer type and split, then the totals
    and the ToolEyes categories. The README's task table is this function's output
    (`toolbed tasks stats --update README.md`; a test keeps the two equal)."""
    tasks = list(tasks)
    lines = ["| app | tasks | single / multi | fixed | realtime | open | operational "
             "| train / dev / test |", "|---|---|---|---|---|---|---|---|"]

    def row(name: str, group: list[Task]) -> str:
        by = Counter(t.scenario for t in group), Counter(str(t.type) for t in group), \
            Counter(t.split for t in group)
        return (f"| {name} | {len(group)} | {by[0]['single']} / {by[0]['multi']} | "
                + " | ".join(str(by[1][k]) for k in _TYPES)
                + f" | {by[2]['train']} / {by[2]['dev']} / {by[2]['test']} |")

    for app in sorted({a for t in tasks for a in t.apps}):
        lines.append(row(app, [t for t in tasks if app in t.apps]))
    lines.append(row("2-3 apps (in the rows above too)", [t for t in tasks if len(t.apps) > 1]))
    lines.append(row("**all**", tasks).replace(f"| {len(tasks)} |", f"| **{len(tasks)}** |", 1))
    categories = Counter(t.category for t in tasks)
    calls = Counter(len(t.chain) for t in tasks)
    lines += ["", "By ToolEyes scenario: " + ", ".join(
        f"{name} {count}" for name, count in categories.most_common()) + ".",
              "Calls per task: " + ", ".join(f"{n}: {calls[n]}" for n in sorted(calls)) + "."]
    return "\n".join(lines) + "\n"
