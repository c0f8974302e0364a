"""Assign train / dev / test splits, deterministically, with rare APIs held out.

Each task's split follows from a hash of its id (about 60 / 15 / 25 %), except that
a task whose chain uses an API no other task uses goes to test: the test split then
holds queries whose APIs the training split never shows, which is what a retriever
and an agent meet in the wild (CToolEval keeps such a split; ToolBench calls it
unseen tools). Adding a task never moves another one, except through that rule.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from ._task import Task

__all__ = ["SHARES", "assign_splits", "write_splits"]

SHARES = {"train": 0.60, "dev": 0.15, "test": 0.25}


def _unit(task_id: str) -> float:
    digest = hashlib.sha256(task_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign_splits(tasks: Sequence[Task]) -> dict[str, str]:
    """The split of each task id."""
    uses = Counter(api for t in tasks for api in {s.api for s in t.chain})
    splits = {}
    for task in tasks:
        if any(uses[s.api] == 1 for s in task.chain):
            splits[task.id] = "test"
            continue
        u = _unit(task.id)
        splits[task.id] = "train" if u < SHARES["train"] else \
            "dev" if u < SHARES["train"] + SHARES["dev"] else "test"
    return splits


def write_splits(text: str, splits: Sequence[str]) -> str:
    """A task file's text with the n-th task's ``split:`` set to ``splits[n]``.

    Tasks are the file's top-level list items (lines starting ``- ``); only their
    ``split:`` lines change, so comments and layout stay as written.
    """
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- ")]
    if len(starts) != len(splits):
        raise ValueError(f"{len(starts)} top-level tasks, {len(splits)} splits")
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        for i in range(start, end):
            head, sep, _ = lines[i].partition("split:")
            if sep and not head.strip(" -"):
                newline = "\n" if lines[i].endswith("\n") else ""
                lines[i] = f"{head}split: {splits[n]}{newline}"
                break
        else:
            raise ValueError(f"task #{n + 1} has no split: line")
    return "".join(lines)
