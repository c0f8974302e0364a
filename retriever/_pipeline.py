"""The retrieval pipeline: which stages run, and how their rankings become one.

    expansion  each document carries the requests a user would make for its API
    dense      the embedding index ranks documents by cosine similarity (chroma)
    lexical    BM25 ranks the same documents by their words (bm25s)
    examples   each example request is embedded on its own, and an API ranks by its
               nearest one to the query (Re-Invoke, Tool2Vec: a request is closer to
               another request than to a description)
    fusion     reciprocal rank fusion of the rankings: a document scores
               sum over rankers of weight / (rrf_k + rank), rank counted from 1
    apps       app, then API: keep only the APIs of the ``apps`` best apps (an app
               scores as its best API), then rank inside them
    rerank     the top hits scored again by a model fitted on the dev split over the
               rankers' scores and the train split's usage (``_rerank``); a model that
               `retriever train` did not save one for skips it
    cut        optional, off by default: after the first hit, offer only those the
               reranker gives at least ``cut`` probability of being a gold API, so a
               confident search offers fewer tools (fewer to choose wrongly among)

Every stage can be switched off (``Pipeline().without("lexical")``), which is how
``toolbed retriever evaluate --ablation`` measures each one. The defaults are the best
pipeline on the dev split; the README has the table that chose them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from toolbed.errors import RetrieverError

__all__ = ["STAGES", "Hit", "Pipeline", "keep_best_apps", "reciprocal_rank_fusion"]

STAGES = ("expansion", "dense", "lexical", "examples", "apps", "rerank")
"""The stages a user can switch off by name."""


@dataclass(frozen=True)
class Hit:
    """One retrieved API: its id, the score of the last stage that ranked it (cosine
    similarity, BM25 or fused score), and its document."""

    api: str
    score: float
    text: str = field(default="", compare=False)
    metadata: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Pipeline:
    """Which stages run, and their settings."""

    expansion: bool = True
    dense: bool = True
    lexical: bool = True
    examples: bool = True
    apps: int = 2
    """Keep the APIs of this many best apps (0: rank all APIs flat)."""
    lexical_weight: float = 0.75
    """BM25's weight in the fusion; the dense ranking's is 1."""
    examples_weight: float = 0.25
    """The examples ranking's weight in the fusion."""
    rerank: bool = True
    """Order the top hits again with the model's reranker, when it has one."""
    cut: float = 0.0
    """Keep hits after the first only while the reranker's probability that they are a
    gold API is at least this (0: always the top k). Needs the rerank stage."""
    rrf_k: int = 10
    depth: int = 100
    """How many documents each ranker hands the fusion."""

    def __post_init__(self) -> None:
        if not (self.dense or self.lexical):
            raise RetrieverError("a pipeline needs the dense or the lexical ranker (or both)")
        if self.apps < 0 or self.depth < 1 or self.rrf_k < 0 or self.examples_weight < 0:
            raise RetrieverError(f"bad pipeline settings: {self}")
        if not 0 <= self.cut < 1:
            raise RetrieverError(f"cut {self.cut}: a probability from 0 (no cut) to below 1")
        if self.cut and not self.rerank:
            raise RetrieverError(f"cut {self.cut} needs the rerank stage, whose probabilities "
                                 "it reads: keep rerank on, over a model `toolbed retriever "
                                 "train` saved a reranker for, or leave the cut out")

    def without(self, *stages: str) -> Pipeline:
        """The same pipeline with the named stages off."""
        unknown = sorted(set(stages) - set(STAGES))
        if unknown:
            raise RetrieverError(f"unknown stage {unknown[0]!r}; the stages are "
                                 f"{', '.join(STAGES)}")
        off: dict[str, Any] = {s: 0 if s == "apps" else False for s in stages}
        return replace(self, **off)

    @property
    def name(self) -> str:
        """The stages that are on, e.g. ``expansion+dense+lexical+examples+apps2``, and
        the cut when there is one (``+cut0.4``)."""
        return "+".join([*(f"{s}{self.apps}" if s == "apps" else s
                           for s in STAGES if getattr(self, s)),
                         *([f"cut{self.cut:g}"] if self.cut else [])])


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], weights: Sequence[float], k: int = 30
) -> dict[str, float]:
    """Each id's fused score: the sum over rankings of ``weight / (k + rank)``, rank from 1;
    an id a ranking does not hold gets nothing from it (Cormack et al., SIGIR 2009)."""
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranking, 1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    return scores


def keep_best_apps(scores: Mapping[str, float], app_of: Mapping[str, str], n: int
                   ) -> dict[str, float]:
    """Only the ids of the ``n`` apps whose best id scores highest (app, then API)."""
    best: dict[str, float] = {}
    for doc, score in scores.items():
        app = app_of.get(doc, "")
        best[app] = max(best.get(app, score), score)
    keep = set(sorted(best, key=lambda a: (-best[a], a))[:n])
    return {doc: s for doc, s in scores.items() if app_of.get(doc, "") in keep}
