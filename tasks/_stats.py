"""Counts over a task suite: what `toolbed tasks stats` prints and the README shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from toolbed.apis import Catalog

from ._dialogue import Dialogue
from ._task import Task

__all__ = ["GROUPINGS", "api_coverage", "dialogue_stats", "task_stats", "task_table"]

GROUPINGS = ("app", "domain", "scenario", "granularity", "type", "category", "split", "lang",
             "calls")
"""The groupings of ``task_stats``; a task that spans apps counts once under each."""


def task_stats(tasks: Iterable[Task], catalog: Catalog) -> dict[str, Any]:
    """``{"total": n, "app": {...}, "domain": {...}, ...}``, each grouping's counts."""
    tasks = list(tasks)
    counts: dict[str, Counter[str]] = {g: Counter() for g in GROUPINGS}
    for task in tasks:
        counts["app"].update(task.apps)
        counts["domain"].update({catalog.app(a).domain for a in task.apps})
        counts["scenario"][task.scenario] += 1
        counts["granularity"]["S-S" if len(task.chain) <= 1 else "S-M"] += 1
        counts["type"][task.type] += 1
        counts["category"][task.category] += 1
        counts["split"][task.split] += 1
        counts["lang"][task.lang] += 1
        counts["calls"][str(len(task.chain))] += 1
    out: dict[str, Any] = {"total": len(tasks)}
    for grouping, counter in counts.items():
        keys = sorted(counter, key=int) if grouping == "calls" else sorted(counter)
        out[grouping] = {k: counter[k] for k in keys}
    return out


def dialogue_stats(dialogues: Iterable[Dialogue]) -> dict[str, Any]:
    """``{"total": n, "granularity": {...}, "turns": {...}, ...}`` over dialogues; ``apps``
    counts one-app and two-app dialogues, ``asks`` those with a turn that asks."""
    dialogues = list(dialogues)
    counts: dict[str, Counter[str]] = {g: Counter() for g in (
        "app", "granularity", "turns", "apps", "asks", "category", "split", "lang")}
    for d in dialogues:
        counts["app"].update(d.apps)
        counts["granularity"][d.granularity] += 1
        counts["turns"][str(len(d.turns))] += 1
        counts["apps"]["two apps" if len(d.apps) > 1 else "one app"] += 1
        counts["asks"]["a turn asks" if any(t.asks for t in d.turns) else "none asks"] += 1
        counts["category"][d.category] += 1
        counts["split"][d.split] += 1
        counts["lang"][d.lang] += 1
    out: dict[str, Any] = {"total": len(dialogues)}
    for grouping, counter in counts.items():
        keys = sorted(counter, key=int) if grouping == "turns" else sorted(counter)
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


def task_table(tasks: Iterable[Task], catalog: Catalog, dialogues: Iterable[Dialogue] = ()
               ) -> str:
    """Markdown: per app, tasks by granularity (S-S one call, S-M several), answer type
    and split, and with ``dialogues`` their M-S / M-M counts; then the totals and the
    ToolEyes categories; with tasks asked in Chinese, how many of each row's are. The
    README's task table is this function's output (`toolbed tasks stats --update
    README.md`; a test keeps the two equal)."""
    tasks, dialogues = list(tasks), list(dialogues)
    talk = " dialogues M-S / M-M |" if dialogues else ""
    chinese = any(t.lang == "zh" for t in tasks)
    lines = ["| app | tasks |" + (" in Chinese |" if chinese else "")
             + " S-S / S-M | fixed | realtime | open | operational "
             f"| train / dev / test |{talk}", "|---" * (8 + bool(dialogues) + chinese) + "|"]

    def row(name: str, group: list[Task], talks: list[Dialogue]) -> str:
        by = Counter(len(t.chain) > 1 for t in group), Counter(str(t.type) for t in group), \
            Counter(t.split for t in group)
        kinds = Counter(d.granularity for d in talks)
        zh = f" {sum(t.lang == 'zh' for t in group)} |" if chinese else ""
        return (f"| {name} | {len(group)} |{zh} {by[0][False]} / {by[0][True]} | "
                + " | ".join(str(by[1][k]) for k in _TYPES)
                + f" | {by[2]['train']} / {by[2]['dev']} / {by[2]['test']} |"
                + (f" {kinds['M-S']} / {kinds['M-M']} |" if dialogues else ""))

    for app in sorted({a for t in tasks for a in t.apps}):
        lines.append(row(app, [t for t in tasks if app in t.apps],
                         [d for d in dialogues if app in d.apps]))
    lines.append(row("2-3 apps (in the rows above too)", [t for t in tasks if len(t.apps) > 1],
                     [d for d in dialogues if len(d.apps) > 1]))
    lines.append(row("**all**", tasks, dialogues).replace(
        f"| {len(tasks)} |", f"| **{len(tasks)}** |", 1))
    categories = Counter(t.category for t in tasks)
    calls = Counter(len(t.chain) for t in tasks)
    lines += ["", "By ToolEyes scenario: " + ", ".join(
        f"{name} {count}" for name, count in categories.most_common()) + ".",
              "Calls per task: " + ", ".join(f"{n}: {calls[n]}" for n in sorted(calls)) + "."]
    if dialogues:
        stats = dialogue_stats(dialogues)
        two, asks = stats["apps"].get("two apps", 0), stats["asks"].get("a turn asks", 0)
        kinds = ", ".join(f"{k} {v}" for k, v in stats["granularity"].items())
        turns = ", ".join(f"{k}: {v}" for k, v in stats["turns"].items())
        zh = stats["lang"].get("zh", 0)
        chinese_talks = f", {zh} in Chinese" if zh else ""
        lines.append(
            f"Dialogues: {len(dialogues)}{chinese_talks} ({kinds}); "
            f"turns per dialogue: {turns}; "
            f"over two apps {two} ({100 * two / len(dialogues):.0f}%); with a turn that asks "
            f"{asks} ({100 * asks / len(dialogues):.0f}%); train / dev / test "
            f"{stats['split'].get('train', 0)} / {stats['split'].get('dev', 0)} / "
            f"{stats['split'].get('test', 0)}.")
    return "\n".join(lines) + "\n"
