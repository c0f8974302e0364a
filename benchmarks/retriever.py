"""What the tool index adds to raw sentence-transformers and raw chroma, in the same run.

    python -m benchmarks.retriever [--sizes 1000 10000 100000] [--queries 200]

Build throughput: the catalog's tool documents and their example requests embedded by
``model.encode`` alone (the baseline) against ``ToolIndex.build`` into an empty folder
(hashing, encoding, upserts with metadata), alternating, documents per second.

Search latency at each size: ``ToolIndex.search(query, k=10)`` with the whole default
pipeline (dense, BM25 and examples, fused, the rerank stage on: weights of 1 over the
train split's usage, as a stage's cost does not depend on its weights) and with the
dense ranker alone, against
``model.encode`` + ``collection.query`` on the same collection, alternating query by
query, p50 and p95 in milliseconds. Queries are the task suite's test split. Beyond
the real tool documents, a collection of N holds synthetic neighbours: each a real
document's embedding plus Gaussian noise, renormalised (embedding 100,000 texts on a
CPU would take hours and does not change what a query costs); the examples collection
holds the real example requests of the real documents it holds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from toolbed.retriever import (
    FEATURES,
    Pipeline,
    Reranker,
    ToolIndex,
    load_model,
    named_sources,
    tool_documents,
    usage_counts,
)
from toolbed.tasks import TaskSuite, load_tasks

from ._table import Row, pct

DENSE_ALONE = Pipeline(lexical=False, examples=False)


def reranker(suite: TaskSuite) -> Reranker:
    """A reranker that reads what a fitted one reads: the train split's usage and the
    catalog's named sources."""
    prior, follows = usage_counts([{s.api for s in t.chain}
                                   for t in suite.filter(splits=["train"])])
    return Reranker(dict.fromkeys(FEATURES, 1.0), 0.0, prior, follows,
                    named_sources(suite.catalog))


def build_throughput(model, docs, rounds: int) -> tuple[float, float]:
    texts = [d.text for d in docs] + [q for d in docs for q in d.examples]
    raw, built = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        model.encode(texts, normalize_embeddings=True, batch_size=64, show_progress_bar=False)
        raw.append(len(docs) / (time.perf_counter() - start))
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            ToolIndex(Path(tmp), encoder=model).build(docs)
            built.append(len(docs) / (time.perf_counter() - start))
    return statistics.median(raw), statistics.median(built)


def fill(index: ToolIndex, docs, vectors: np.ndarray, size: int, seed: int = 0) -> None:
    """Real documents first, then noisy copies of their embeddings (with their text, for
    BM25) up to ``size``."""
    rng = np.random.default_rng(seed)
    real = min(size, len(docs))
    ids = [d.id for d in docs[:real]]
    texts = [d.text for d in docs[:real]]
    rows = [vectors[:real]]
    extra = size - real
    if extra > 0:
        picked = rng.integers(0, len(docs), extra)
        base = vectors[picked]
        noisy = base + rng.normal(0, 0.04, base.shape).astype(np.float32)
        rows.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
        ids += [f"synthetic.{i}" for i in range(extra)]
        texts += [docs[int(i)].text for i in picked]
    embeddings = np.vstack(rows)
    for start in range(0, size, 5000):
        stop = min(size, start + 5000)
        index.collection.add(
            ids=ids[start:stop], embeddings=embeddings[start:stop],
            documents=texts[start:stop],
            metadatas=[{"app": i.split(".")[0], "hash": "-"} for i in ids[start:stop]])
    examples = [(f"{d.id}#{n}", d, q) for d in docs[:real] for n, q in enumerate(d.examples)]
    vectors = index.encoder.encode([q for _, _, q in examples], normalize_embeddings=True,
                                   batch_size=64, show_progress_bar=False)
    for start in range(0, len(examples), 5000):
        batch = examples[start:start + 5000]
        index.examples.add(ids=[i for i, _, _ in batch], documents=[q for _, _, q in batch],
                           embeddings=vectors[start:start + len(batch)],
                           metadatas=[{"app": d.metadata["app"], "api": d.id, "hash": "-"}
                                      for _, d, _ in batch])


def search_latency(
    fused: ToolIndex, dense: ToolIndex, model, queries: list[str]
) -> tuple[list[float], list[float], list[float]]:
    ours, alone, raw = [], [], []
    for query in queries:
        start = time.perf_counter()
        fused.search(query, k=10)
        ours.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        dense.search(query, k=10)
        alone.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        vector = model.encode([query], normalize_embeddings=True, show_progress_bar=False)
        fused.collection.query(query_embeddings=vector, n_results=10)
        raw.append((time.perf_counter() - start) * 1000)
    return ours, alone, raw


def bench(quick: bool = False) -> list[Row]:
    """Build throughput and search latency over the catalog's own documents."""
    suite = load_tasks()
    docs = tool_documents(suite.catalog)
    queries = [t.query for t in suite.filter(splits=["test"])][: 50 if quick else 200]
    model = load_model()
    model.encode(queries[:8], show_progress_bar=False)             # warm up
    raw_rate, build_rate = build_throughput(model, docs, 1)
    with tempfile.TemporaryDirectory() as tmp:
        index = ToolIndex(Path(tmp), encoder=model, reranker=reranker(suite))
        index.build(docs)
        dense = ToolIndex(Path(tmp), encoder=model, pipeline=DENSE_ALONE)
        index.search(queries[0], k=10)                              # warm up (BM25 index)
        ours, _, raw = search_latency(index, dense, model, queries)
    n = len(docs)
    return [
        Row(f"index build, {n:,} documents", "docs/s", build_rate, "raw encode", raw_rate),
        Row(f"search p95, the pipeline, {n:,} documents", "ms", pct(ours, .95),
            "raw encode + chroma query", pct(raw, .95), "<= 60 ms", pct(ours, .95) <= 60),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    suite = load_tasks()
    docs = tool_documents(suite.catalog)
    queries = [t.query for t in suite.filter(splits=["test"])][: args.queries]
    model = load_model()
    model.encode(queries[:8], show_progress_bar=False)             # warm up

    raw_rate, build_rate = build_throughput(model, docs, args.rounds)
    print(f"build, {len(docs)} documents and their examples: raw encode {raw_rate:.1f} docs/s, "
          f"ToolIndex.build {build_rate:.1f} docs/s, ratio {build_rate / raw_rate:.2f}")

    vectors = model.encode([d.text for d in docs], normalize_embeddings=True, batch_size=64,
                           show_progress_bar=False).astype(np.float32)
    print(f"{'documents':>10} {'pipeline p50':>13} {'p95':>8} {'dense p50':>10} {'p95':>8} "
          f"{'raw p50':>9} {'p95':>8}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            index = ToolIndex(Path(tmp), encoder=model, reranker=reranker(suite))
            dense = ToolIndex(Path(tmp), encoder=model, pipeline=DENSE_ALONE)
            fill(index, docs, vectors, size)
            index.search(queries[0], k=10)                          # warm up (BM25 index)
            ours, alone, raw = search_latency(index, dense, model, queries)
            print(f"{size:>10} {pct(ours, .5):>11.1f}ms {pct(ours, .95):>6.1f}ms "
                  f"{pct(alone, .5):>8.1f}ms {pct(alone, .95):>6.1f}ms "
                  f"{pct(raw, .5):>7.1f}ms {pct(raw, .95):>6.1f}ms")


if __name__ == "__main__":
    main()
