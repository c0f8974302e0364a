"""Ranking metrics with binary relevance: NDCG@k, Recall@k, COMP@k, MRR, and of the set
offered at k: its size, Precision@k and F1@k.

Each takes the ranked list of retrieved ids (best first; ties already broken, see
``rank``) and the set of relevant ids, for one query; averages are taken by the
caller. NDCG follows ToolLLM's use (binary gains, log2 discount, the ideal ranking
puts every relevant id first); COMP@k is COLT's completeness: all relevant in top k.
A ranking may hold fewer than k ids (a cut stopped it, or the corpus is small):
precision and F1 count what it holds, as that is what an agent is offered.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

__all__ = ["comp_at_k", "f1_at_k", "mrr", "ndcg_at_k", "precision_at_k", "rank",
           "recall_at_k"]


def rank(scores: Mapping[str, float]) -> list[str]:
    """Ids by score, best first; equal scores in id order, so a ranking is repeatable."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        raise ValueError("a query needs at least one relevant id")
    dcg = sum(1 / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if doc in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        raise ValueError("a query needs at least one relevant id")
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


def comp_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 when every relevant id is in the top k, else 0.0."""
    return float(set(relevant) <= set(ranked[:k]))


def mrr(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """The reciprocal rank of the first relevant id (0 when none was retrieved)."""
    return next((1 / (i + 1) for i, doc in enumerate(ranked) if doc in relevant), 0.0)


def precision_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """The share of the top k (of what the ranking holds, when it holds fewer) that is
    relevant; 0 for an empty ranking."""
    top = ranked[:k]
    return len(set(top) & set(relevant)) / len(top) if top else 0.0


def f1_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """The F1 of the top k as a set against the relevant ids: twice the relevant ids in it
    over its size plus theirs."""
    if not relevant:
        raise ValueError("a query needs at least one relevant id")
    top = set(ranked[:k])
    return 2 * len(top & set(relevant)) / (len(top) + len(set(relevant)))
