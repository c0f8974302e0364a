"""Fine-tune the embedding model on (query, tool document) pairs.

Each training query gives one example per gold API: the query, that API's document
(the positive) and a hard negative. The negative is mined by the retriever itself
when its ranking is given: one of the documents it ranks highest that is not gold
(the near misses it must learn to push down); otherwise another API of the same app
(or, for an app with one API, of the same domain). The loss is
MultipleNegativesRankingLoss: each query must rank its positive above every other
document in the batch, its hard negative included. Batches never hold the same text
twice, so a document that is gold for two queries is never used as a negative for
either.

With a dev set, the model is scored (dense NDCG@5) after each epoch; the best epoch
is the one saved, and training stops after ``patience`` epochs without a gain.
Training runs on the CPU from local files; the result is a sentence-transformers
model directory that ``ToolIndex(model=...)`` and ``toolbed retriever build --model``
load like the default one. ``fit_rerank_stage`` then fits the rerank stage for it on
the dev split and saves it in the same folder.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolbed.apis import Catalog
from toolbed.paths import home_dir

from ._dataset import EvalSet
from ._documents import ToolDocument
from ._evaluate import score_rankings
from ._index import ToolIndex
from ._model import bf16_native, embed, load_model, model_name
from ._pipeline import Pipeline
from ._rerank import RERANKER_FILE, fit_reranker, named_sources, usage_counts

__all__ = ["TrainReport", "TrainingExample", "default_model_dir", "dense_miner",
           "fit_rerank_stage", "train", "training_examples"]


def default_model_dir(base: str | Path | None = None) -> Path:
    """Where ``toolbed retriever train`` saves by default:
    ``$TOOLBED_HOME/retriever/models/<base>-toolbed``."""
    return home_dir() / "retriever" / "models" / f"{model_name(base)}-toolbed"


@dataclass(frozen=True)
class TrainingExample:
    query: str
    positive: str
    negative: str


@dataclass(frozen=True)
class TrainReport:
    examples: int
    steps: int
    loss: float
    seconds: float
    path: Path
    dev: list[float] = field(default_factory=list)
    """Dense NDCG@5 on the dev set after each epoch (empty without one)."""
    best_epoch: int = 0


def training_examples(
    queries: Sequence[str], relevant: Sequence[set[str]], documents: Sequence[ToolDocument],
    seed: int = 0, ranked: Sequence[Sequence[str]] | None = None, mined: int = 10,
) -> list[TrainingExample]:
    """One example per (query, gold API), each with a hard negative: with ``ranked`` (the
    current retriever's ranking of each query), one of the ``mined`` best-ranked ids
    that are not gold; otherwise one from the same app or domain.

    The negative is drawn with a random generator seeded by ``seed``, the query and
    the API, so the examples do not depend on the order of the queries."""
    by_id = {d.id: d for d in documents}
    by_app: dict[str, list[ToolDocument]] = defaultdict(list)
    by_domain: dict[str, list[ToolDocument]] = defaultdict(list)
    for doc in documents:
        by_app[doc.metadata.get("app", "")].append(doc)
        by_domain[doc.metadata.get("domain", "")].append(doc)
    if ranked is not None and len(ranked) != len(queries):
        raise ValueError("one ranking per query")
    examples = []
    for n, (query, gold) in enumerate(zip(queries, relevant, strict=True)):
        near = [by_id[i] for i in (ranked[n] if ranked else []) if i not in gold and i in by_id]
        for api in sorted(gold):
            if api not in by_id:
                raise ValueError(f"gold API {api!r} of query {query!r} is not in the corpus")
            doc = by_id[api]
            key = f"{seed}\0{query}\0{api}".encode()
            rng = random.Random(hashlib.sha256(key).digest())
            pool = near[:mined] or [d for d in by_app[doc.metadata.get("app", "")]
                                    if d.id not in gold]
            pool = pool or [d for d in by_domain[doc.metadata.get("domain", "")]
                            if d.id not in gold]
            pool = pool or [d for d in documents if d.id not in gold]
            examples.append(TrainingExample(query, doc.text, rng.choice(pool).text))
    return examples


def dev_ndcg(model: object, dev: EvalSet, k: int = 5) -> float:
    """The dense ranker's NDCG@k on ``dev``, with ``model`` as it is now (in memory)."""
    rankings = dense_rankings(model, dev.queries, dev.documents, k)
    return score_rankings(rankings, dev.relevant, (k,))[f"ndcg@{k}"]


def dense_rankings(model: object, queries: Sequence[str], documents: Sequence[ToolDocument],
                   k: int) -> list[list[str]]:
    """The ``k`` documents ``model`` (as it is now, in memory) puts nearest each query."""
    import numpy as np

    ids = [d.id for d in documents]
    scores = embed(model, queries) @ embed(model, [d.text for d in documents]).T
    top = np.argsort(-scores, axis=1)[:, :k]
    return [[ids[i] for i in row] for row in top]


Miner = Callable[[object], list["TrainingExample"]]
"""Given the model as training has left it so far, the examples of the next epoch."""


def dense_miner(
    queries: Sequence[str], relevant: Sequence[set[str]], documents: Sequence[ToolDocument],
    seed: int = 0, lexical: Sequence[Sequence[str]] | None = None,
    lexical_weight: float = 0.75, rrf_k: int = 10, depth: int = 20, mined: int = 10,
) -> Miner:
    """A ``Miner`` whose negatives come from the model being trained: each query's
    ``depth`` nearest documents by the model as it is now, fused with ``lexical`` (BM25's
    ranking of the same queries, which training does not change) the way the pipeline
    fuses them. As the model learns to push the first negatives down, others take their
    place near the top; mining again between epochs hands it those (ANCE's idea)."""
    from ._metrics import rank
    from ._pipeline import reciprocal_rank_fusion

    def mine(model: object) -> list[TrainingExample]:
        dense = dense_rankings(model, queries, documents, depth)
        ranked: list[list[str]] = dense
        if lexical is not None:
            ranked = []
            for by_dense, by_words in zip(dense, lexical, strict=True):
                fused = reciprocal_rank_fusion([by_dense, list(by_words)[:depth]],
                                               [1.0, lexical_weight], rrf_k)
                ranked.append(rank(fused)[:depth])
        return training_examples(queries, relevant, documents, seed, ranked, mined)

    return mine


def train(
    examples: Sequence[TrainingExample], out: str | Path, base: str | Path | None = None,
    epochs: float = 2.0, batch_size: int = 32, learning_rate: float = 6e-5,
    max_steps: int = -1, max_seq_length: int | None = 96, seed: int = 0,
    progress: bool = True, dev: EvalSet | None = None, patience: int = 1,
    remine: Miner | None = None,
) -> TrainReport:
    """Fine-tune ``base`` (default: all-MiniLM-L6-v2) on ``examples`` and save it to ``out``.

    ``max_seq_length`` (default 96 tokens; None keeps the base model's) is saved with
    the model, so the index encodes with the length it was trained on. On two CPU
    cores a step takes a third of its time at 256: the documents put their arguments
    last, so what is cut is mostly the tail of the argument list. With ``dev``, the epoch
    that scores best on it is saved, and training stops after ``patience`` epochs that
    do not beat it. With ``remine``, each epoch after the first trains on the examples
    it mines with the model as the epochs before left it (one learning-rate schedule
    runs over all the epochs). On a CPU with bfloat16 in hardware (``bf16_native``)
    the steps run under bfloat16 autocast, the weights kept in float32."""
    import math
    import time

    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from transformers import get_linear_schedule_with_warmup

    try:  # sentence-transformers 6 moved the losses; 3 to 5 have them here
        from sentence_transformers.sentence_transformer.losses import (
            MultipleNegativesRankingLoss,
        )
    except ImportError:  # pragma: no cover - older sentence-transformers
        from sentence_transformers.losses import (  # type: ignore[no-redef]
            MultipleNegativesRankingLoss,
        )

    if not examples:
        raise ValueError("no training examples: the split has no tasks")
    started = time.perf_counter()
    out = Path(out)
    model = load_model(base)
    if max_seq_length:
        model.max_seq_length = max_seq_length
    steps = max_steps if max_steps > 0 else math.ceil(len(examples) / batch_size * epochs)
    # one optimizer and one schedule (warm-up, then linear decay) across all the epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = get_linear_schedule_with_warmup(optimizer, steps // 10, steps)
    loss = MultipleNegativesRankingLoss(model)
    scores: list[float] = []
    done, taken, loss_sum, epoch = 0.0, 0, 0.0, 0
    with tempfile.TemporaryDirectory(prefix="toolbed-train-") as scratch:
        while done < epochs and taken < steps:
            part = min(1.0, epochs - done)
            args = SentenceTransformerTrainingArguments(
                output_dir=scratch, num_train_epochs=part,
                max_steps=steps - taken if max_steps > 0 else -1,
                per_device_train_batch_size=batch_size, learning_rate=learning_rate,
                seed=seed + epoch, data_seed=seed + epoch, use_cpu=True,
                report_to="none", save_strategy="no", logging_strategy="no",
                disable_tqdm=not progress, batch_sampler="no_duplicates",
                dataloader_num_workers=0, bf16=bf16_native(),
            )
            data = Dataset.from_dict({
                "anchor": [e.query for e in examples],
                "positive": [e.positive for e in examples],
                "negative": [e.negative for e in examples],
            })
            result = SentenceTransformerTrainer(
                model=model, args=args, train_dataset=data, loss=loss,
                optimizers=(optimizer, schedule)).train()
            taken += result.global_step
            loss_sum += result.training_loss * result.global_step
            done, epoch = done + part, epoch + 1
            if dev is not None:
                scores.append(round(dev_ndcg(model, dev), 4))
                if scores[-1] >= max(scores):
                    model.save(str(out))
                elif len(scores) - 1 - scores.index(max(scores)) >= patience:
                    break
            if remine is not None and done < epochs and taken < steps:
                examples = remine(model)
    if dev is None or not scores:
        model.save(str(out))
    return TrainReport(len(examples), taken, round(loss_sum / max(1, taken), 4),
                       round(time.perf_counter() - started, 1), out, scores,
                       scores.index(max(scores)) + 1 if scores else 0)


def fit_rerank_stage(model: Path, dev: EvalSet, chains: list[set[str]], catalog: Catalog,
                     lang: str, index_dir: Path | None = None) -> str:
    """Fit the rerank stage for ``model`` on ``dev`` (the train ``chains`` give its usage
    features, ``catalog`` the arguments that name their source), save it in the model's
    folder; what it did, in words. The model's index is built (by default in the default
    folder, where `retriever build` would put it) to rank the dev queries."""
    index = ToolIndex(index_dir, model, lang=lang, pipeline=Pipeline().without("rerank"))
    index.build(dev.documents)
    candidates = index.candidates(dev.queries)
    prior, follows = usage_counts(chains)
    fitted = fit_reranker(candidates, dev.relevant, prior, follows,
                          named_sources(catalog))
    fitted.save(model / RERANKER_FILE)
    before = score_rankings([c.ranked for c in candidates], dev.relevant, (5,))["ndcg@5"]
    after = score_rankings([fitted.order(c) for c in candidates], dev.relevant,
                           (5,))["ndcg@5"]
    return (f"reranker fitted on {len(dev.queries)} dev queries and saved to "
            f"{model / RERANKER_FILE}; the pipeline's NDCG@5 on those same queries "
            f"{before} without it, {after} with it (the fit has seen them: the test split "
            "is the honest measure)")
