"""Ranking metrics with binary relevance: NDCG@k, Recall@k, COMP@k, MRR.

Each takes the ranked list of retrieved ids (best first; ties already broken, see
``rank``) and the set of relevant ids, for one query; averages are taken by the
caller. NDCG follows ToolLLM's use (binary gains, log2 discount, the ideal ranking
puts every relevant id first); COMP@k is COLT's completeness: all relevant in top k.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

__all__ = ["comp_at_k", "mrr", "ndcg_at_k", "rank", "recall_at_k"]


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
