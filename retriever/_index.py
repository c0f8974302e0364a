"""The tool index: tool documents embedded into a persistent chroma collection, searched
by the retrieval pipeline (``_pipeline``: dense and lexical rankings, fused).

The collection lives under ``$TOOLBED_HOME/retriever/chroma`` (a build artefact, never
committed), one collection per embedding model and document template, in cosine space,
with each document's app, domain, tier and effect as metadata for filtering, and its
text hash, so that ``build`` re-embeds only the documents that changed and drops the
APIs that are gone. The examples stage keeps each API's example requests, one vector
each, in a collection of their own beside it (``...-examples``), built the same way.
BM25 reads the same documents back from the collection, so both rankers always see
one corpus. Chroma's telemetry is off. A team can share one index
on a Chroma server instead (``url="http://host:8000"``, ``--chroma-url``).

An index serves requests in one language (``lang``): its documents are that language's
(``tool_documents(..., lang=...)``), its default model is that language's packaged one,
BM25 tokenizes that language, and its collections carry the language in their names
(English ones keep the names they always had). ``MultilingualIndex`` puts one index per
language behind one ``search``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolbed.errors import RetrieverError
from toolbed.paths import home_dir

from ._documents import ToolDocument, text_hash
from ._lexical import BM25
from ._metrics import rank
from ._model import default_model, embed, load_model, model_fingerprint, model_name
from ._pipeline import Hit, Pipeline, keep_best_apps, reciprocal_rank_fusion
from ._rerank import Candidates, Reranker, load_reranker

__all__ = ["BuildReport", "Hit", "ToolIndex", "default_index_dir", "metadata_filter"]


def default_index_dir() -> Path:
    return home_dir() / "retriever" / "chroma"


def metadata_filter(apps: Sequence[str] | None = None, domain: str | None = None,
                    tier: str | None = None) -> dict[str, Any] | None:
    """The ``where`` of ``ToolIndex.search`` that keeps only these apps' (any of them),
    this domain's and this tier's APIs; None when nothing is chosen."""
    filters: list[dict[str, Any]] = []
    if apps:
        filters.append({"app": apps[0]} if len(apps) == 1 else {"app": {"$in": list(apps)}})
    filters += [{"domain": domain}] if domain else []
    filters += [{"tier": tier}] if tier else []
    return filters[0] if len(filters) == 1 else ({"$and": filters} if filters else None)


@dataclass(frozen=True)
class BuildReport:
    embedded: int
    removed: int
    unchanged: int
    examples: int = 0
    """Example requests embedded (the examples stage; only the new or edited ones)."""


class ToolIndex:
    """``build`` documents into the collection, ``search`` it by query text."""

    page_size = 5000
    """Documents read from chroma at once: a larger read exceeds SQLite's variable limit."""

    def __init__(
        self, path: str | Path | None = None, model: str | Path | None = None,
        encoder: Any = None, url: str | None = None, collection: str = "tools",
        pipeline: Pipeline | None = None, lang: str = "en", reranker: Reranker | None = None,
    ):
        """``path``: the local chroma folder; ``url``: a Chroma server to use instead.
        ``collection``: the name's prefix (the model's name is added, and ``-plain`` for
        documents without example requests), so that another corpus, such as an
        external dataset, gets a collection of its own. ``pipeline``: the stages that
        run (default: the best pipeline). ``lang``: the language of the requests it serves
        and of its documents. ``reranker``: the rerank stage's model (default: the one
        `retriever train` saved in the model's folder, if any)."""
        self.path = Path(path) if path else default_index_dir()
        self.url = url
        self.lang = lang
        self.model = model if model is not None else default_model(lang)
        self._encoder = encoder
        self.pipeline = pipeline or Pipeline()
        self.reranker = reranker or (load_reranker(self.model) if self.pipeline.rerank
                                     else None)
        if self.reranker is None and self.pipeline.cut:
            raise RetrieverError(
                f"a cut ({self.pipeline.cut:g}) reads the rerank stage's probabilities, and "
                f"the model {self.model} has no reranker: train one (`toolbed retriever "
                "train`) or leave the cut out")
        if self.reranker is None:       # the stage runs only with a reranker to run
            self.pipeline = self.pipeline.without("rerank")
        self._lexical: BM25 | None = None
        self._allowed: dict[str, set[str]] = {}
        self.client = _client(self.path, url)
        prefix = collection if lang == "en" else f"{collection}-{lang}"
        name = f"{prefix}-" + re.sub(r"[^a-zA-Z0-9_-]+", "-", model_name(self.model)).strip("-")
        try:
            self.collection = self.client.get_or_create_collection(
                name[:54] + ("" if self.pipeline.expansion else "-plain"),
                metadata={"hnsw:space": "cosine"}, embedding_function=None)
            self.examples = self.client.get_or_create_collection(
                name[:54] + "-examples", metadata={"hnsw:space": "cosine"},
                embedding_function=None) if self.pipeline.examples else None
        except Exception as exc:  # chroma raises its own and httpx's errors here
            where = f"the Chroma server at {url}" if url else f"the chroma folder {self.path}"
            raise RetrieverError(f"cannot open the tool index in {where}: {exc}") from exc

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = load_model(self.model)
        return self._encoder

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [v.tolist() for v in embed(self.encoder, texts)]

    def build(self, documents: Sequence[ToolDocument]) -> BuildReport:
        """Make the collection hold exactly ``documents``, embedding only what changed:
        a document's text, or the model's weights (a model trained again re-embeds all)."""
        weights = model_fingerprint(self.model)
        stored = self._stored(["metadatas"])
        seen = {i: ((m or {}).get("hash"), (m or {}).get("model")) for i, m in
                zip(stored["ids"], stored["metadatas"], strict=False)}
        changed = [d for d in documents if seen.get(d.id) != (d.hash, weights)]
        gone = sorted(set(seen) - {d.id for d in documents})
        for start in range(0, len(changed), 256):
            batch = changed[start:start + 256]
            self.collection.upsert(
                ids=[d.id for d in batch], documents=[d.text for d in batch],
                embeddings=self._embed([d.text for d in batch]),
                metadatas=[{**d.metadata, "hash": d.hash, "model": weights} for d in batch],
            )
        if gone:
            self.collection.delete(ids=gone)
        self._lexical, self._allowed = None, {}
        return BuildReport(len(changed), len(gone), len(documents) - len(changed),
                           self._build_examples(documents, weights))

    def _build_examples(self, documents: Sequence[ToolDocument], weights: str) -> int:
        """Make the examples collection hold each document's example requests (id
        ``<api>#<n>``), embedding only the new or edited ones and those another model
        (``weights``) embedded; how many were."""
        if self.examples is None:
            return 0
        stored = _read_all(self.examples, ["metadatas"], self.page_size)
        seen = {i: ((m or {}).get("hash"), (m or {}).get("model")) for i, m in
                zip(stored["ids"], stored["metadatas"], strict=False)}
        wanted = {f"{d.id}#{n}": (d, text) for d in documents
                  for n, text in enumerate(d.examples)}
        changed = [(i, d, text) for i, (d, text) in wanted.items()
                   if seen.get(i) != (text_hash(text), weights)]
        for start in range(0, len(changed), 256):
            batch = changed[start:start + 256]
            self.examples.upsert(
                ids=[i for i, _, _ in batch], documents=[text for _, _, text in batch],
                embeddings=self._embed([text for _, _, text in batch]),
                metadatas=[{**d.metadata, "api": d.id, "hash": text_hash(text),
                            "model": weights} for _, d, text in batch])
        gone = sorted(set(seen) - set(wanted))
        if gone:
            self.examples.delete(ids=gone)
        return len(changed)

    def __len__(self) -> int:
        return self.collection.count()

    def search(self, query: str, k: int = 5, where: dict[str, Any] | None = None) -> list[Hit]:
        """The ``k`` APIs the pipeline ranks first for ``query`` (fewer where its cut
        stops them), best first; ``where`` filters on metadata, e.g. ``{"app":
        "kinto"}`` or ``{"tier": "selfhosted"}``."""
        return self.search_many([query], k, where)[0]

    def search_many(
        self, queries: Sequence[str], k: int = 5, where: dict[str, Any] | None = None
    ) -> list[list[Hit]]:
        """``search`` for many queries: they are embedded together, the dense ranker
        finds the nearest documents, BM25 ranks the same documents, the examples ranker
        the nearest example requests; reciprocal rank fusion merges the rankings, the
        best apps are kept if the pipeline says so, and the reranker, when the model has
        one, orders the top again; with a cut, hits after the first stop at the first
        the reranker is less sure of. A hit's score is its last stage's: the reranker's,
        fused when two rankers or more run, else that ranker's own."""
        ranked, docs = self._rank(queries, max(k, self.pipeline.depth), where)
        reranker = self.reranker if self.pipeline.rerank else None
        out = []
        for candidates, scores in ranked:
            order = candidates.ranked
            if reranker is not None:
                again = reranker.rerank(candidates)
                order = reranker.order(candidates, again)
                scores = {**scores, **again}
                if self.pipeline.cut:     # ``again`` is best first: this keeps a prefix
                    order = order[:1] + [
                        api for api in order[1:k] if reranker.probability(
                            again.get(api, -math.inf)) >= self.pipeline.cut]
            out.append([Hit(api, round(scores[api], 6), docs[api].text, docs[api].metadata)
                        for api in order[:k]])
        return out

    def candidates(self, queries: Sequence[str], where: dict[str, Any] | None = None
                   ) -> list[Candidates]:
        """Each query's ranking before the rerank stage, with every ranker's scores:
        what the reranker reads, and is fitted on."""
        return [c for c, _ in self._rank(queries, self.pipeline.depth, where)[0]]

    def _rank(self, queries: Sequence[str], depth: int, where: dict[str, Any] | None
              ) -> tuple[list[tuple[Candidates, dict[str, float]]], dict[str, Hit]]:
        """The pipeline up to the rerank stage: for each query its candidates and their
        scores; and the documents of every id ranked."""
        p, queries = self.pipeline, list(queries)
        none: list[list[Hit]] = [[] for _ in queries]
        vectors = self._embed(queries) if queries and (p.dense or p.examples) else []
        dense = self._nearest(vectors, depth, where) if p.dense else none
        lexical = self.lexical(queries, depth, where) if p.lexical else none
        by_examples = self._by_examples(vectors, depth, where) if p.examples else \
            [{} for _ in queries]
        docs = {h.api: h for hits in [*lexical, *dense] for h in hits}
        only_examples = {a for apis in by_examples for a in apis} - set(docs)
        docs |= self._documents(sorted(only_examples)) if only_examples else {}
        # an example whose API the collection no longer holds (a build cut short) is skipped
        by_examples = [{a: s for a, s in apis.items() if a in docs} for apis in by_examples]
        out = []
        for by_dense, by_words, by_example in zip(dense, lexical, by_examples, strict=True):
            used = [(r, w) for r, w, on in zip(
                ([h.api for h in by_dense], [h.api for h in by_words], list(by_example)),
                (1.0, p.lexical_weight, p.examples_weight),
                (p.dense, p.lexical, p.examples), strict=True) if on]
            if len(used) > 1:
                scores = reciprocal_rank_fusion([r for r, _ in used], [w for _, w in used],
                                                p.rrf_k)
            else:
                scores = {h.api: h.score for h in by_dense or by_words}
            if p.apps:
                scores = keep_best_apps(scores, {a: docs[a].metadata.get("app", "")
                                                 for a in scores}, p.apps)
            out.append((Candidates(rank(scores), {h.api: h.score for h in by_dense},
                                   {h.api: h.score for h in by_words}, by_example), scores))
        return out, docs

    def dense(
        self, queries: Sequence[str], k: int, where: dict[str, Any] | None = None
    ) -> list[list[Hit]]:
        """The embedding ranker alone: the ``k`` documents nearest each query (cosine).
        Queries go to chroma in batches, because chroma fetches the documents of all of
        a query's results in one SQL statement, whose number of variables SQLite limits."""
        return self._nearest(self._embed(queries) if queries else [], k, where)

    def _nearest(self, vectors: list[list[float]], k: int, where: dict[str, Any] | None
                 ) -> list[list[Hit]]:
        if not vectors:
            return []
        n = max(1, k)              # chroma returns fewer when the collection holds fewer
        step = max(1, 8000 // n)
        hits: list[list[Hit]] = []
        for start in range(0, len(vectors), step):
            found = self.collection.query(
                query_embeddings=vectors[start:start + step], n_results=n, where=where,
                include=["distances", "documents", "metadatas"])
            rows = zip(found["ids"], found["distances"] or [], found["documents"] or [],
                       found["metadatas"] or [], strict=True)
            hits += [[Hit(i, round(1 - d, 6), text or "", _metadata(m))
                      for i, d, text, m in zip(ids, dists, texts, metas, strict=True)]
                     for ids, dists, texts, metas in rows]
        return hits

    def _by_examples(self, vectors: list[list[float]], k: int, where: dict[str, Any] | None
                     ) -> list[dict[str, float]]:
        """The examples ranker: for each query vector, the APIs of the ``k`` nearest
        example requests, best first, each scored by its nearest one's cosine (an id is
        ``<api>#<n>``, so chroma need read back nothing but distances)."""
        if self.examples is None or not vectors:
            return [{} for _ in vectors]
        step = max(1, 8000 // max(1, k))
        out: list[dict[str, float]] = []
        for start in range(0, len(vectors), step):
            found = self.examples.query(query_embeddings=vectors[start:start + step],
                                        n_results=max(1, k), where=where,
                                        include=["distances"])
            for ids, distances in zip(found["ids"], found["distances"] or [], strict=True):
                nearest: dict[str, float] = {}
                for i, d in zip(ids, distances, strict=True):
                    nearest.setdefault(i.rpartition("#")[0], round(1 - d, 6))
                out.append(nearest)
        return out

    def _documents(self, ids: Sequence[str]) -> dict[str, Hit]:
        """The stored documents of ``ids`` (text and metadata), as unscored hits."""
        got = self.collection.get(ids=list(ids), include=["documents", "metadatas"])
        return {i: Hit(i, 0.0, text or "", _metadata(m)) for i, text, m in
                zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True)}

    def lexical(
        self, queries: Sequence[str], k: int, where: dict[str, Any] | None = None
    ) -> list[list[Hit]]:
        """The BM25 ranker alone, over the documents the collection holds (read back
        once, and again after a build); ``where`` is chroma's own filter."""
        if self._lexical is None:
            stored = self._stored(["documents", "metadatas"])
            self._lexical = BM25([
                ToolDocument(i, text or "", _metadata(m)) for i, text, m in
                zip(stored["ids"], stored["documents"], stored["metadatas"], strict=True)],
                self.lang)
        allowed = None
        if where:
            key = json.dumps(where, sort_keys=True)
            if key not in self._allowed:
                self._allowed[key] = set(self._stored([], where)["ids"])
            allowed = self._allowed[key]
        return self._lexical.search_many(queries, k, allowed)


    def _stored(self, include: list[str], where: dict[str, Any] | None = None
                ) -> dict[str, list[Any]]:
        """Everything the collection holds (``ids`` and the ``include`` fields)."""
        return _read_all(self.collection, include, self.page_size, where)


def _read_all(collection: Any, include: list[str], page_size: int,
              where: dict[str, Any] | None = None) -> dict[str, list[Any]]:
    """Everything ``collection`` holds (``ids`` and the ``include`` fields), read
    ``page_size`` documents at a time."""
    out: dict[str, list[Any]] = {"ids": [], **{field: [] for field in include}}
    while True:
        got = collection.get(include=include, where=where, limit=page_size,
                             offset=len(out["ids"]))
        out["ids"] += got["ids"]
        for field in include:
            out[field] += got[field] or [None] * len(got["ids"])
        if len(got["ids"]) < page_size:
            return out


def _metadata(stored: Any) -> dict[str, str]:
    """A document's metadata as a hit carries it: without the build's bookkeeping."""
    return {k: str(v) for k, v in (stored or {}).items() if k not in ("hash", "model")}


def _client(path: Path, url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if url is None:
        return chromadb.PersistentClient(path=str(path), settings=settings)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RetrieverError(f"--chroma-url {url!r} is not an http(s) URL; "
                             "write it like http://127.0.0.1:8000")
    try:
        return chromadb.HttpClient(
            host=parts.hostname, port=parts.port or (443 if parts.scheme == "https" else 8000),
            ssl=parts.scheme == "https", settings=settings)
    except Exception as exc:
        raise RetrieverError(f"cannot reach the Chroma server at {url}: {exc}; start it with "
                             "`chroma run --host 127.0.0.1 --port 8000` or fix the URL") from exc
