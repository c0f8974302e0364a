"""Assign train / dev / test splits, deterministically, with some rare APIs held out.

Each task's split follows from a hash of its id (about 60 / 15 / 25 %). A quarter of
the APIs that only one task uses (chosen by a hash of the API id) are held out: their
tasks go to test, so test holds queries whose APIs the training split never shows,
which is what a retriever and an agent meet in the wild (ToolBench's unseen tools).
Adding a task never moves another one, except through the held-out rule, which counts
uses within a language: Chinese tasks never move English ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from ._dialogue import Dialogue
from ._task import Task

__all__ = ["HELD_OUT", "SHARES", "assign_splits", "same_request"]

SHARES = {"train": 0.60, "dev": 0.15, "test": 0.25}
HELD_OUT = 0.25
"""The share of single-use APIs whose task is held out in test."""


def _unit(task_id: str) -> float:
    digest = hashlib.sha256(task_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def same_request(item: Task | Dialogue) -> str:
    """What a task asks of the apps, whatever its language: its calls, each with the
    arguments it gives and binds, and what its answer takes from them (the expressions
    and values of its check, not the words of an open answer's references). A task asked
    in Chinese with the same request as an English one is that task translated. A
    dialogue's is its turns' requests, in order (a turn that asks: the value it asks
    for is in words, so only that it asks)."""
    turns = [item] if isinstance(item, Task) else item.turns
    return json.dumps([[
        t.answer.model_dump(mode="json", exclude={"references"}) if t.answer else "asks",
        *([s.api, s.args, sorted(s.bind)] for s in t.chain)] for t in turns],
        sort_keys=True, ensure_ascii=False, default=str)


def assign_splits(tasks: Sequence[Task]) -> dict[str, str]:
    """The split of each task id. A task in another language than English whose request
    is an English task's (``same_request``) takes that task's split, so a translation
    never lands in another split than its original."""
    uses = Counter((t.lang, api) for t in tasks for api in {s.api for s in t.chain})
    english: dict[str, str] = {}
    for task in sorted(tasks, key=lambda t: t.id):
        if task.lang == "en":
            english.setdefault(same_request(task), task.id)
    splits: dict[str, str] = {}
    for task in sorted(tasks, key=lambda t: t.lang != "en"):     # English first
        original = english.get(same_request(task)) if task.lang != "en" else None
        if original is not None:
            splits[task.id] = splits[original]
            continue
        if any(uses[task.lang, s.api] == 1 and _unit(s.api) < HELD_OUT for s in task.chain):
            splits[task.id] = "test"
            continue
        u = _unit(task.id)
        splits[task.id] = "train" if u < SHARES["train"] else \
            "dev" if u < SHARES["train"] + SHARES["dev"] else "test"
    return splits

