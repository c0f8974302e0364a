"""Score retrievers on tasks: each task's query against its gold APIs, over the whole
catalog as the corpus (as ToolLLM does), with NDCG@k, Recall@k, COMP@k and MRR, and
what the top k offers an agent: how many tools, Precision@k and F1@k (a cut offers
fewer than k).

A row of a comparison is a ``Variant``: an embedding model and the pipeline stages that
run. ``baselines`` gives the rows the papers report (BM25 and the
untrained encoder, on documents without example requests), ``ablations`` the full
pipeline with each stage switched off in turn, so one table shows what each stage adds.
A variant serves requests in one language (``lang``), with that language's documents,
tokenizer and default model; the requests are whatever the evaluation set holds, so
English documents can be scored on Chinese requests too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from ._dataset import EvalSet
from ._documents import ToolDocument
from ._index import ToolIndex
from ._lexical import BM25
from ._metrics import comp_at_k, f1_at_k, mrr, ndcg_at_k, precision_at_k, recall_at_k
from ._model import default_model, model_name
from ._pipeline import STAGES, Hit, Pipeline

__all__ = ["BM25", "KS", "Ranker", "Variant", "ablations", "baselines", "compare", "evaluate",
           "score_rankings", "with_cuts"]

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


def score_rankings(
    rankings: Sequence[Sequence[str]], relevant: Sequence[set[str]], ks: Sequence[int] = KS
) -> dict[str, float]:
    """Mean of each metric over the queries: ``{"ndcg@1": ..., "recall@5": ..., "mrr": ...}``;
    ``offered@k`` is the mean number of ids in the top k."""
    if len(rankings) != len(relevant) or not rankings:
        raise ValueError("one ranking per query, and at least one query")
    pairs = list(zip(rankings, relevant, strict=True))
    out: dict[str, float] = {}
    for k in ks:
        out[f"ndcg@{k}"] = sum(ndcg_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"recall@{k}"] = sum(recall_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"comp@{k}"] = sum(comp_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"offered@{k}"] = sum(len(r[:k]) for r, _ in pairs) / len(pairs)
        out[f"precision@{k}"] = sum(precision_at_k(r, g, k) for r, g in pairs) / len(pairs)
        out[f"f1@{k}"] = sum(f1_at_k(r, g, k) for r, g in pairs) / len(pairs)
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
    evalset: EvalSet, variants: Sequence[Variant], path: str | Path | None = None,
    url: str | None = None, collection: str = "tools",
    ks: Sequence[int] = tuple(range(1, 11)),
    documents_in: Callable[[str, bool], list[ToolDocument]] | None = None,
) -> dict[str, dict[str, float]]:
    """Score each variant on the same queries: ``{"bm25": {"ndcg@5": ...}, ...}``.

    A variant without expansion is scored on ``evalset.plain`` (the documents without
    example requests) when the set has them. ``documents_in(lang, expansion)`` gives
    the documents of a variant in another language than the set's. Each model's index is
    built (re-embedding only what changed) in ``collection`` under ``path``, or on the
    Chroma server at ``url``; variants of one model and language share it."""
    results: dict[str, dict[str, float]] = {}
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
        results[variant.name] = evaluate(ranker, evalset.queries, evalset.relevant, ks)
    return results
