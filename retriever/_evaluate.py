"""Score retrievers on tasks: each task's query against its gold APIs, over the whole
catalog as the corpus (as ToolLLM does), with NDCG@k, Recall@k, COMP@k and MRR.

Two retrievers come with it: the embedding index (``ToolIndex``) and BM25 over the
same documents (bm25s), the lexical baseline the papers report beside their models.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ._dataset import EvalSet
from ._documents import ToolDocument
from ._index import Hit, ToolIndex
from ._metrics import comp_at_k, mrr, ndcg_at_k, recall_at_k
from ._model import model_name

__all__ = ["BM25", "KS", "Ranker", "compare", "evaluate", "score_rankings"]

KS = (1, 3, 5, 10)
"""The cut-offs the papers report (ToolLLM and CToolEval: 1, 3, 5) and 10."""


class Ranker(Protocol):
    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]: ...


class BM25:
    """BM25 (bm25s, Lucene variant) over the tool documents' text."""

    def __init__(self, documents: Sequence[ToolDocument]):
        import bm25s

        self.ids = [d.id for d in documents]
        self.model = bm25s.BM25()
        self.model.index(bm25s.tokenize([d.text for d in documents], stopwords="en",
                                        show_progress=False), show_progress=False)

    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]:
        import bm25s

        k = min(k, len(self.ids))
        tokens = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        found, scores = self.model.retrieve(tokens, k=k, show_progress=False)
        return [[Hit(self.ids[int(i)], float(s)) for i, s in zip(row, srow, strict=True)]
                for row, srow in zip(found, scores, strict=True)]


def score_rankings(
    rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], ks: Sequence[int] = KS
) -> dict[str, float]:
    """Mean of each metric over the queries: ``{"ndcg@1": ..., "recall@5": ..., "mrr": ...}``."""
    if len(rankings) != len(relevant) or not rankings:
        raise ValueError("one ranking per query, and at least one query")
    pairs = list(zip(rankings, relevant, strict=True))
    out: dict[str, float] = {}
    for k in ks:
        out[f"ndcg@{k}"] = sum(ndcg_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"recall@{k}"] = sum(recall_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"comp@{k}"] = sum(comp_at_k(r, g, k) for r, g in pairs) / len(pairs)
    out["mrr"] = sum(mrr(r, g) for r, g in pairs) / len(pairs)
    return {name: round(value, 4) for name, value in out.items()}


def evaluate(
    ranker: Ranker, queries: Sequence[str], relevant: Sequence[set[str]],
    ks: Sequence[int] = KS, depth: int = 100,
) -> dict[str, float]:
    """Retrieve ``depth`` ids for each query and score them."""
    hits = ranker.search_many(queries, k=max(depth, *ks))
    return score_rankings([[h.api for h in row] for row in hits], relevant, ks)


def compare(
    evalset: EvalSet, models: Sequence[str | Path | None] = (None,), bm25: bool = True,
    path: str | Path | None = None, url: str | None = None, collection: str = "tools",
    ks: Sequence[int] = tuple(range(1, 11)),
) -> dict[str, dict[str, float]]:
    """Score BM25 and each embedding model (None: the default, untrained one) on the
    same queries and corpus: ``{"bm25": {"ndcg@5": ...}, "all-MiniLM-L6-v2": {...}}``.

    Each model's index is built (re-embedding only what changed) in ``collection``
    under ``path``, or on the Chroma server at ``url``."""
    results: dict[str, dict[str, float]] = {}
    if bm25:
        results["bm25"] = evaluate(BM25(evalset.documents), evalset.queries, evalset.relevant,
                                   ks)
    for model in models:
        index = ToolIndex(path, model, url=url, collection=collection)
        index.build(evalset.documents)
        results[model_name(model)] = evaluate(index, evalset.queries, evalset.relevant, ks)
    return results
