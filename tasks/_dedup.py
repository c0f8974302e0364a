"""Near-duplicate queries: tasks in different splits must not be paraphrases.

A test query that paraphrases a training query measures memory, not skill. Queries
are embedded with the retriever's default model of their language (all-MiniLM-L6-v2
for English, m3e-small for Chinese, both shipped offline) and every pair of one
language from different splits is compared by cosine similarity, on
all-MiniLM-L6-v2's scale (``english_scale``), so that one threshold holds for both.
Across languages the check is on what the tasks do instead: two tasks in different
splits and languages that make the same request (``same_request``: the same calls
with the same arguments) are one request asked twice, translated (similarity 1.0);
so are two dialogues whose turns make the same requests (``translated_dialogues``).

The catalog's example requests (``queries``, ``queries_zh``) are part of what the
retriever indexes, so they must not paraphrase a query it is scored on either:
``examples_near_tasks`` finds those of an API that come as close to a dev or test query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbed.apis import Catalog
from toolbed.retriever import default_model, english_scale, load_model

from ._dialogue import Dialogue
from ._splits import same_request
from ._task import Task

__all__ = ["PARAPHRASE_THRESHOLD", "Pair", "examples_near_tasks", "near_duplicates",
           "translated_dialogues"]

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
    their similarity (to see how close the suite comes). ``encoder`` replaces the
    English model."""
    import numpy as np

    pairs: list[Pair] = []
    for lang in sorted({t.lang for t in tasks}):
        group = [t for t in tasks if t.lang == lang]
        model = encoder if encoder and lang == "en" else load_model(default_model(lang))
        vectors = _vectors(model, [t.query for t in group])
        similarity = english_scale(vectors @ vectors.T, lang)
        splits = np.array([t.split for t in group])
        across = np.triu(splits[:, None] != splits[None, :], k=1)
        rows, cols = np.nonzero(across & (similarity >= (-1.0 if top else threshold)))
        pairs += [Pair(group[int(i)].id, group[int(j)].id, round(float(similarity[i, j]), 4))
                  for i, j in zip(rows, cols, strict=True)]
    pairs += _translated(tasks)
    pairs.sort(key=lambda p: -p.similarity)
    return pairs[:top] if top else pairs


def examples_near_tasks(
    tasks: Sequence[Task], catalog: Catalog, splits: Sequence[str] = ("dev", "test"),
    threshold: float = PARAPHRASE_THRESHOLD,
) -> list[Pair]:
    """Pairs (``<api>: <example request>``, task id) of a catalog example request and a
    query of a task in ``splits``, in the same language, at least ``threshold`` similar
    (the scale and models of ``near_duplicates``), most similar first."""
    pairs: list[Pair] = []
    for lang, field in (("en", "queries"), ("zh", "queries_zh")):
        group = [t for t in tasks if t.lang == lang and t.split in splits]
        examples = [(api.id, q) for api in catalog for q in getattr(api, field)]
        if not group or not examples:
            continue
        model = load_model(default_model(lang))
        similarity = english_scale(_vectors(model, [q for _, q in examples])
                                   @ _vectors(model, [t.query for t in group]).T, lang)
        rows, cols = (similarity >= threshold).nonzero()
        pairs += [Pair(f"{examples[i][0]}: {examples[i][1]}", group[j].id,
                       round(float(similarity[i, j]), 4)) for i, j in zip(rows, cols, strict=True)]
    pairs.sort(key=lambda p: -p.similarity)
    return pairs


def _vectors(model: Any, texts: list[str]) -> Any:
    """``texts`` embedded by ``model``, normalised, so that a dot product is a cosine."""
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                        batch_size=64)


def translated_dialogues(dialogues: Sequence[Dialogue]) -> list[Pair]:
    """Pairs of dialogues in different languages and splits whose turns make the same
    requests: one dialogue translated into another split."""
    return _translated(dialogues)


def _translated(items: Sequence[Task] | Sequence[Dialogue]) -> list[Pair]:
    """Pairs of tasks (or dialogues) in different languages and splits that make the
    same request."""
    by_request: dict[str, list[Task | Dialogue]] = {}
    for item in items:
        by_request.setdefault(same_request(item), []).append(item)
    return [Pair(a.id, b.id, 1.0) for group in by_request.values()
            for i, a in enumerate(group) for b in group[i + 1:]
            if a.lang != b.lang and a.split != b.split]
