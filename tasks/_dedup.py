"""Near-duplicate queries: tasks in different splits must not be paraphrases.

A test query that paraphrases a training query measures memory, not skill. Queries
are embedded with the retriever's default model (all-MiniLM-L6-v2, shipped offline)
and every pair from different splits is compared by cosine similarity. That model is
English-only, so across languages (a Chinese query against an English one) the check
is on what the tasks do instead: two tasks in different splits and languages that make
the same request (``same_request``: the same calls with the same arguments) are one
request asked twice, translated (similarity 1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbed.retriever import load_model

from ._splits import same_request
from ._task import Task

__all__ = ["PARAPHRASE_THRESHOLD", "Pair", "near_duplicates"]

PARAPHRASE_THRESHOLD = 0.9
"""Cosine similarity at or above which two queries count as paraphrases."""


@dataclass(frozen=True)
class Pair:
    first: str
    second: str
    similarity: float


def near_duplicates(
    tasks: Sequence[Task], encoder: Any = None, threshold: float = PARAPHRASE_THRESHOLD,
    top: int = 0,
) -> list[Pair]:
    """Pairs of tasks in different splits whose queries are at least ``threshold``
    similar, most similar first; with ``top``, the ``top`` most similar pairs whatever
    their similarity (to see how close the suite comes)."""
    import numpy as np

    encoder = encoder or load_model()
    vectors = encoder.encode([t.query for t in tasks], normalize_embeddings=True,
                             convert_to_numpy=True, batch_size=64)
    similarity = vectors @ vectors.T
    splits = np.array([t.split for t in tasks])
    langs = np.array([t.lang for t in tasks])
    across = np.triu(splits[:, None] != splits[None, :], k=1)
    same_lang = langs[:, None] == langs[None, :]
    rows, cols = np.nonzero(across & same_lang
                            & (similarity >= (-1.0 if top else threshold)))
    pairs = [Pair(tasks[int(i)].id, tasks[int(j)].id, round(float(similarity[i, j]), 4))
             for i, j in zip(rows, cols, strict=True)]
    pairs += _translated(tasks)
    pairs.sort(key=lambda p: -p.similarity)
    return pairs[:top] if top else pairs


def _translated(tasks: Sequence[Task]) -> list[Pair]:
    """Pairs of tasks in different languages and splits that make the same request."""
    by_request: dict[str, list[Task]] = {}
    for task in tasks:
        by_request.setdefault(same_request(task), []).append(task)
    return [Pair(a.id, b.id, 1.0) for group in by_request.values()
            for i, a in enumerate(group) for b in group[i + 1:]
            if a.lang != b.lang and a.split != b.split]
