"""Score retrievers on tasks: each task's query against its gold APIs, over the whole
catalog as the corpus (as ToolLLM does), with NDCG@k, Recall@k, COMP@k and MRR, and
what the top k offers an agent: how many tools, Precision@k and F1@k (a cut offers
fewer than k).

A row of a comparison is a ``Variant``: an embedding model and the pipeline stages that
run. ``baselines`` gives the rows the papers report (BM25 and the
untrained encoder, on documents without example requests), ``ablations`` the full
pipeline with each stage switched off in turn, so one table shows what each stage adds;
``against`` says, query by query, whether a row differs from another by more than the
queries drawn would (a paired bootstrap). A variant serves requests in one language
(``lang``), with that language's documents, tokenizer and default model; the requests
are whatever the evaluation set holds, so English documents can be scored on Chinese
requests too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from toolbed.stats import Difference, paired_bootstrap

from ._dataset import EvalSet
from ._documents import ToolDocument
from ._index import ToolIndex
from ._lexical import BM25
from ._metrics import comp_at_k, f1_at_k, mrr, ndcg_at_k, precision_at_k, recall_at_k
from ._model import default_model, model_name
from ._pipeline import STAGES, Hit, Pipeline

__all__ = ["BM25", "KS", "Ranker", "Variant", "ablations", "against", "baselines", "compare",
           "evaluate", "query_scores", "rank_all", "score_all", "score_rankings",
           "with_cuts"]

KS = (1, 3, 5, 10)
"""The cut-offs the papers report (ToolLLM and CToolEval: 1, 3, 5) and 10."""


class Ranker(Protocol):
    def search_many(self, queries: Sequence[str], k: int = 5) -> list[list[Hit]]: ...


@dataclass(frozen=True)
class Variant:
    """One retriever to score: a model (None: the language's default), its pipeline, and
    the language of its documents."""

    name: str
    model: str | Path | None = None
    pipeline: Pipeline = Pipeline()
    lang: str = "en"


def baselines(model: str | Path | None = None, lang: str = "en") -> list[Variant]:
    """BM25 alone and the untrained encoder alone, both on the documents without example
    requests: the retriever as it was before the pipeline, and the papers' baselines."""
    plain = Pipeline(expansion=False, lexical=False, examples=False, apps=0)
    return [Variant("bm25", model, replace(plain, dense=False, lexical=True), lang),
            Variant(model_name(model or default_model(lang)), model, plain, lang)]


def ablations(best: Variant) -> list[Variant]:
    """``best`` and, for each stage it runs, the same with that stage off (and, when
    ``best`` ranks flat, with the app-first stage on). Each row is named by its model
    and the stages that are on."""
    pipelines = [best.pipeline.without(stage) for stage in STAGES
                 if getattr(best.pipeline, stage)
                 and not (stage == "dense" and not best.pipeline.lexical)
                 and not (stage == "lexical" and not best.pipeline.dense)]
    if not best.pipeline.apps:
        pipelines.append(replace(best.pipeline, apps=2))
    return [best] + [_variant(best, p) for p in pipelines]


def with_cuts(best: Variant, cuts: Sequence[float]) -> list[Variant]:
    """``best`` with each of ``cuts`` (each once; a cut of 0 is ``best`` itself, already
    scored, and adds none), so one table shows what each cut offers."""
    pipelines = [replace(best.pipeline, cut=cut) for cut in dict.fromkeys(cuts)]
    return [_variant(best, p) for p in pipelines if p != best.pipeline]


def _variant(best: Variant, pipeline: Pipeline) -> Variant:
    """``best``'s model with another pipeline, named by both."""
    return replace(best, name=f"{model_name(best.model)} {pipeline.name}", pipeline=pipeline)


_AT_K: dict[str, Callable[[Sequence[str], set[str], int], float]] = {
    "ndcg": ndcg_at_k, "recall": recall_at_k, "comp": comp_at_k,
    "offered": lambda ranked, _, k: len(ranked[:k]), "precision": precision_at_k,
    "f1": f1_at_k,
}


def query_scores(
    rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], metric: str
) -> list[float]:
    """``metric`` (``"ndcg@5"``, ``"recall@10"``, ``"mrr"``...) of each query's ranking."""
    if len(rankings) != len(relevant) or not rankings:
        raise ValueError("one ranking per query, and at least one query")
    name, _, k = metric.partition("@")
    if metric == "mrr":
        return [mrr(r, g) for r, g in zip(rankings, relevant, strict=True)]
    if name not in _AT_K or not k.isdigit():
        raise ValueError(f"unknown metric {metric!r}: one of {', '.join(_AT_K)} at a cut-off "
                         "(ndcg@5), or mrr")
    return [_AT_K[name](r, g, int(k)) for r, g in zip(rankings, relevant, strict=True)]


def score_rankings(
    rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], ks: Sequence[int] = KS
) -> dict[str, float]:
    """Mean of each metric over the queries: ``{"ndcg@1": ..., "recall@5": ..., "mrr": ...}``;
    ``offered@k`` is the mean number of ids in the top k."""
    metrics = [f"{name}@{k}" for k in ks for name in _AT_K] + ["mrr"]
    return {m: round(sum(scores) / len(scores), 4)
            for m in metrics for scores in [query_scores(rankings, relevant, m)]}


def against(
    rankings: dict[str, list[list[str]]], relevant: Sequence[set[str]], reference: str,
    metrics: Sequence[str] = ("ndcg@5", "recall@5", "comp@5"), rounds: int = 1000,
) -> dict[str, dict[str, Difference]]:
    """Each ranker's difference from ``reference`` in each metric, query by query, with a
    paired bootstrap interval: ``{"bm25": {"ndcg@5": Difference(-0.31, ...)}, ...}``."""
    base = {m: query_scores(rankings[reference], relevant, m) for m in metrics}
    return {name: {m: paired_bootstrap(query_scores(ranked, relevant, m), base[m], rounds)
                   for m in metrics}
            for name, ranked in rankings.items() if name != reference}


def evaluate(
    ranker: Ranker, queries: Sequence[str], relevant: Sequence[set[str]],
    ks: Sequence[int] = KS, depth: int = 100,
) -> dict[str, float]:
    """Retrieve ``depth`` ids for each query and score them."""
    return score_rankings(_ranked(ranker, queries, max(depth, *ks)), relevant, ks)


def _ranked(ranker: Ranker, queries: Sequence[str], depth: int) -> list[list[str]]:
    return [[h.api for h in row] for row in ranker.search_many(queries, k=depth)]


def compare(
    evalset: EvalSet, variants: Sequence[Variant], path: str | Path | None = None,
    url: str | None = None, collection: str = "tools",
    ks: Sequence[int] = tuple(range(1, 11)),
    documents_in: Callable[[str, bool], list[ToolDocument]] | None = None,
) -> dict[str, dict[str, float]]:
    """Score each variant on the same queries: ``{"bm25": {"ndcg@5": ...}, ...}`` (the
    rankings come from ``rank_all``, which says how each is made)."""
    rankings = rank_all(evalset, variants, path, url, collection, documents_in=documents_in)
    return score_all(rankings, evalset.relevant, ks)


def score_all(
    rankings: dict[str, list[list[str]]], relevant: Sequence[set[str]],
    ks: Sequence[int] = tuple(range(1, 11)),
) -> dict[str, dict[str, float]]:
    """``score_rankings`` of each ranker's rankings (``rank_all``'s), at k = 1..10 by
    default, the curve ``plot_ndcg`` draws."""
    return {name: score_rankings(ranked, relevant, ks) for name, ranked in rankings.items()}


def rank_all(
    evalset: EvalSet, variants: Sequence[Variant], path: str | Path | None = None,
    url: str | None = None, collection: str = "tools", depth: int = 100,
    documents_in: Callable[[str, bool], list[ToolDocument]] | None = None,
) -> dict[str, list[list[str]]]:
    """Each variant's ranking of each query, ``depth`` ids deep: ``{"bm25": [[ids], ...]}``.

    A variant without expansion is scored on ``evalset.plain`` (the documents without
    example requests) when the set has them. ``documents_in(lang, expansion)`` gives
    the documents of a variant in another language than the set's. Each model's index is
    built (re-embedding only what changed) in ``collection`` under ``path``, or on the
    Chroma server at ``url``; variants of one model and language share it."""
    rankings: dict[str, list[list[str]]] = {}
    for variant in variants:
        documents, pipeline = evalset.documents, variant.pipeline
        if evalset.plain is None:             # a user's corpus: one set of documents
            pipeline = replace(pipeline, expansion=True)
        elif variant.lang != evalset.lang and documents_in is not None:
            documents = documents_in(variant.lang, pipeline.expansion)
        elif not pipeline.expansion:
            documents = evalset.plain
        ranker: Ranker
        if not (pipeline.dense or pipeline.examples or pipeline.apps):
            ranker = BM25(documents, variant.lang)     # no need to embed anything
        else:
            index = ToolIndex(path, variant.model, url=url, collection=collection,
                              pipeline=pipeline, lang=variant.lang)
            index.build(documents)
            ranker = index
        rankings[variant.name] = _ranked(ranker, evalset.queries, depth)
    return rankings
