"""Assign train / dev / test splits, deterministically, with some rare APIs held out.

Each task's split follows from a hash of its id (about 60 / 15 / 25 %). A quarter of
the APIs that only one task uses (chosen by a hash of the API id) are held out: their
tasks go to test, so test holds queries whose APIs the training split never shows,
which is what a retriever and an agent meet in the wild (ToolBench's unseen tools).
Adding a task never moves another one, except through the held-out rule.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from ._task import Task

__all__ = ["HELD_OUT", "SHARES", "assign_splits"]

SHARES = {"train": 0.60, "dev": 0.15, "test": 0.25}
HELD_OUT = 0.25
"""The share of single-use APIs whose task is held out in test."""


def _unit(task_id: str) -> float:
    digest = hashlib.sha256(task_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign_splits(tasks: Sequence[Task]) -> dict[str, str]:
    """The split of each task id."""
    uses = Counter(api for t in tasks for api in {s.api for s in t.chain})
    splits = {}
    for task in tasks:
        if any(uses[s.api] == 1 and _unit(s.api) < HELD_OUT for s in task.chain):
            splits[task.id] = "test"
            continue
        u = _unit(task.id)
        splits[task.id] = "train" if u < SHARES["train"] else \
            "dev" if u < SHARES["train"] + SHARES["dev"] else "test"
    return splits

