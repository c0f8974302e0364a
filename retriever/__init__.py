"""The tool retriever: the catalog's APIs embedded into chroma, the top k served per query.

    from toolbed.retriever import ToolIndex, tool_documents
    from toolbed.apis import load_catalog

    index = ToolIndex()                       # $TOOLBED_HOME/retriever/chroma
    index.build(tool_documents(load_catalog()))
    index.search("will it rain in Berlin tomorrow", k=5)   # [Hit(api=..., score=...)]
"""

from ._documents import TEMPLATE, ToolDocument, tool_document, tool_documents
from ._evaluate import BM25, KS, Ranker, evaluate, score_rankings
from ._index import BuildReport, Hit, ToolIndex, default_index_dir
from ._metrics import comp_at_k, mrr, ndcg_at_k, rank, recall_at_k
from ._model import DEFAULT_MODEL, load_model, model_name

__all__ = [
    "BM25",
    "DEFAULT_MODEL",
    "KS",
    "TEMPLATE",
    "BuildReport",
    "Hit",
    "Ranker",
    "ToolDocument",
    "ToolIndex",
    "comp_at_k",
    "default_index_dir",
    "evaluate",
    "load_model",
    "model_name",
    "mrr",
    "ndcg_at_k",
    "rank",
    "recall_at_k",
    "score_rankings",
    "tool_document",
    "tool_documents",
]
