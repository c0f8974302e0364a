"""The tool retriever: the catalog's APIs embedded into chroma, the top k served per query.

    from toolbed.retriever import ToolIndex, tool_documents
    from toolbed.apis import load_catalog

    index = ToolIndex()                       # $TOOLBED_HOME/retriever/chroma
    index.build(tool_documents(load_catalog()))
    index.search("will it rain in Berlin tomorrow", k=5)   # [Hit(api=..., score=...)]

Train on the task suite's train split, then score BM25, the default model and the
trained one side by side (``compare``), or serve the index to a LangChain agent
(``ToolRetriever``, ``ToolSelector``).
"""

from ._dataset import EvalSet, load_eval_set
from ._documents import TEMPLATE, ToolDocument, tool_document, tool_documents
from ._evaluate import BM25, KS, Ranker, compare, evaluate, score_rankings
from ._index import BuildReport, Hit, ToolIndex, default_index_dir
from ._langchain import ToolRetriever, ToolSelector
from ._metrics import comp_at_k, mrr, ndcg_at_k, rank, recall_at_k
from ._model import DEFAULT_MODEL, load_model, model_name
from ._plot import plot_ndcg
from ._train import TrainingExample, TrainReport, default_model_dir, train, training_examples

__all__ = [
    "BM25",
    "DEFAULT_MODEL",
    "KS",
    "TEMPLATE",
    "BuildReport",
    "EvalSet",
    "Hit",
    "Ranker",
    "ToolDocument",
    "ToolIndex",
    "ToolRetriever",
    "ToolSelector",
    "TrainReport",
    "TrainingExample",
    "comp_at_k",
    "compare",
    "default_index_dir",
    "default_model_dir",
    "evaluate",
    "load_eval_set",
    "load_model",
    "model_name",
    "mrr",
    "ndcg_at_k",
    "plot_ndcg",
    "rank",
    "recall_at_k",
    "score_rankings",
    "tool_document",
    "tool_documents",
    "train",
    "training_examples",
]
