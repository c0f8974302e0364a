"""The tool retriever: the catalog's APIs embedded into chroma, the top k served per query.

    from toolbed.retriever import ToolIndex, tool_documents
    from toolbed.apis import load_catalog

    index = ToolIndex()                       # $TOOLBED_HOME/retriever/chroma
    index.build(tool_documents(load_catalog()))
    index.search("will it rain in Berlin tomorrow", k=5)   # [Hit(api=..., score=...)]

Behind ``search`` runs a pipeline whose every stage can be switched off (``Pipeline``):
documents expanded with example requests, dense and BM25 rankings fused, optionally
the best apps first, the top ordered again by a reranker fitted on the dev split. Train on
the task suite's train split, then score BM25, the untrained model, the trained one
and each stage's ablation side by side (``compare``), or serve the index to a
LangChain agent (``ToolRetriever``, ``ToolSelector``). Requests in Chinese have an
index of their own (``ToolIndex(lang="zh")``: the catalog's Chinese example requests,
m3e-small); ``MultilingualIndex`` sends each request to its language's index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from ._dataset import EvalSet, load_eval_set
    from ._documents import (
        PLAIN_TEMPLATE,
        TEMPLATE,
        TEMPLATES,
        ToolDocument,
        tool_document,
        tool_documents,
    )
    from ._evaluate import (
        KS,
        Ranker,
        Variant,
        ablations,
        against,
        baselines,
        compare,
        evaluate,
        query_scores,
        rank_all,
        score_all,
        score_rankings,
        with_cuts,
    )
    from ._index import BuildReport, ToolIndex, default_index_dir, metadata_filter
    from ._langchain import ToolRetriever, ToolSelector
    from ._languages import MultilingualIndex, query_language
    from ._lexical import BM25, cjk_tokens
    from ._metrics import (
        comp_at_k,
        f1_at_k,
        mrr,
        ndcg_at_k,
        precision_at_k,
        rank,
        recall_at_k,
    )
    from ._misses import Miss, misses, summarise_misses
    from ._model import (
        DEFAULT_MODEL,
        DEFAULT_MODELS,
        default_model,
        english_scale,
        load_model,
        model_fingerprint,
        model_name,
    )
    from ._pipeline import STAGES, Hit, Pipeline, keep_best_apps, reciprocal_rank_fusion
    from ._plot import plot_ndcg
    from ._rerank import (
        FEATURES,
        RERANKER_FILE,
        Candidates,
        Reranker,
        fit_reranker,
        load_reranker,
        named_sources,
        pipeline_for,
        usage_counts,
    )
    from ._train import (
        TrainingExample,
        TrainReport,
        default_model_dir,
        dense_miner,
        dev_ndcg,
        fit_rerank_stage,
        train,
        training_examples,
    )

__getattr__, __dir__ = _attach(__name__, __file__)

__all__ = [
    "BM25",
    "DEFAULT_MODEL",
    "DEFAULT_MODELS",
    "FEATURES",
    "KS",
    "PLAIN_TEMPLATE",
    "RERANKER_FILE",
    "STAGES",
    "TEMPLATE",
    "TEMPLATES",
    "BuildReport",
    "Candidates",
    "EvalSet",
    "Hit",
    "Miss",
    "MultilingualIndex",
    "Pipeline",
    "Ranker",
    "Reranker",
    "ToolDocument",
    "ToolIndex",
    "ToolRetriever",
    "ToolSelector",
    "TrainReport",
    "TrainingExample",
    "Variant",
    "ablations",
    "against",
    "baselines",
    "cjk_tokens",
    "comp_at_k",
    "compare",
    "default_index_dir",
    "default_model",
    "default_model_dir",
    "dense_miner",
    "dev_ndcg",
    "english_scale",
    "evaluate",
    "f1_at_k",
    "fit_rerank_stage",
    "fit_reranker",
    "keep_best_apps",
    "load_eval_set",
    "load_model",
    "load_reranker",
    "metadata_filter",
    "misses",
    "model_fingerprint",
    "model_name",
    "mrr",
    "named_sources",
    "ndcg_at_k",
    "pipeline_for",
    "plot_ndcg",
    "precision_at_k",
    "query_language",
    "query_scores",
    "rank",
    "rank_all",
    "recall_at_k",
    "reciprocal_rank_fusion",
    "score_all",
    "score_rankings",
    "summarise_misses",
    "tool_document",
    "tool_documents",
    "train",
    "training_examples",
    "usage_counts",
    "with_cuts",
]
