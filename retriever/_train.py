"""Fine-tune the embedding model on (query, tool document) pairs.

Each training query gives one example per gold API: the query, that API's document
(the positive) and a hard negative, another API of the same app (or, for an app with
one API, of the same domain) that is not gold for the query. The loss is
MultipleNegativesRankingLoss: each query must rank its positive above every other
document in the batch, its hard negative included. Batches never hold the same text
twice, so a document that is gold for two queries is never used as a negative for
either.

Training runs on the CPU from local files; the result is a sentence-transformers
model directory that ``ToolIndex(model=...)`` and ``toolbed retriever build --model``
load like the default one.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolbed.paths import home_dir

from ._documents import ToolDocument
from ._model import load_model, model_name

__all__ = ["TrainReport", "TrainingExample", "default_model_dir", "train", "training_examples"]


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


def training_examples(
    queries: Sequence[str], relevant: Sequence[set[str]], documents: Sequence[ToolDocument],
    seed: int = 0,
) -> list[TrainingExample]:
    """One example per (query, gold API), with a hard negative from the same app or domain.

    The negative is drawn with a random generator seeded by ``seed``, the query and
    the API, so the examples do not depend on the order of the queries."""
    by_id = {d.id: d for d in documents}
    by_app: dict[str, list[ToolDocument]] = defaultdict(list)
    by_domain: dict[str, list[ToolDocument]] = defaultdict(list)
    for doc in documents:
        by_app[doc.metadata.get("app", "")].append(doc)
        by_domain[doc.metadata.get("domain", "")].append(doc)
    examples = []
    for query, gold in zip(queries, relevant, strict=True):
        for api in sorted(gold):
            if api not in by_id:
                raise ValueError(f"gold API {api!r} of query {query!r} is not in the corpus")
            doc = by_id[api]
            key = f"{seed}\0{query}\0{api}".encode()
            rng = random.Random(hashlib.sha256(key).digest())
            pool = [d for d in by_app[doc.metadata.get("app", "")] if d.id not in gold]
            pool = pool or [d for d in by_domain[doc.metadata.get("domain", "")]
                            if d.id not in gold]
            pool = pool or [d for d in documents if d.id not in gold]
            examples.append(TrainingExample(query, doc.text, rng.choice(pool).text))
    return examples


def train(
    examples: Sequence[TrainingExample], out: str | Path, base: str | Path | None = None,
    epochs: float = 1.0, batch_size: int = 32, learning_rate: float = 2e-5,
    max_steps: int = -1, max_seq_length: int | None = 128, seed: int = 0,
    progress: bool = True,
) -> TrainReport:
    """Fine-tune ``base`` (default: all-MiniLM-L6-v2) on ``examples`` and save it to ``out``.

    ``max_seq_length`` (default 128 tokens; None keeps the base model's) is saved with
    the model, so the index encodes with the length it was trained on. On two CPU
    cores it halves a step's time against 256: a quarter of the tool documents are
    longer, and lose only the tail of their argument list."""
    import math
    import time

    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

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
    model = load_model(base)
    if max_seq_length:
        model.max_seq_length = max_seq_length
    steps = max_steps if max_steps > 0 else math.ceil(len(examples) / batch_size * epochs)
    data = Dataset.from_dict({
        "anchor": [e.query for e in examples],
        "positive": [e.positive for e in examples],
        "negative": [e.negative for e in examples],
    })
    with tempfile.TemporaryDirectory(prefix="toolbed-train-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch, num_train_epochs=epochs, max_steps=max_steps,
            per_device_train_batch_size=batch_size, learning_rate=learning_rate,
            warmup_steps=steps // 10, seed=seed, data_seed=seed, use_cpu=True, report_to="none",
            save_strategy="no", logging_strategy="no", disable_tqdm=not progress,
            batch_sampler="no_duplicates", dataloader_num_workers=0,
        )
        trainer = SentenceTransformerTrainer(
            model=model, args=args, train_dataset=data,
            loss=MultipleNegativesRankingLoss(model),
        )
        result = trainer.train()
    out = Path(out)
    model.save(str(out))
    return TrainReport(len(examples), result.global_step, round(result.training_loss, 4),
                       round(time.perf_counter() - started, 1), out)
