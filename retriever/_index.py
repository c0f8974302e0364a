"""The tool index: tool documents embedded into a persistent chroma collection.

The collection lives under ``$TOOLBED_HOME/retriever/chroma`` (a build artefact, never
committed), one collection per embedding model, in cosine space, with each document's
app, domain, tier and effect as metadata for filtering, and its text hash, so that
``build`` re-embeds only the documents that changed and drops the APIs that are gone.
Chroma's telemetry is off. A team can share one index on a Chroma server instead
(``url="http://host:8000"``, ``--chroma-url`` on the command line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from toolbed.errors import RetrieverError
from toolbed.paths import home_dir

from ._documents import ToolDocument
from ._model import load_model, model_name

__all__ = ["BuildReport", "Hit", "ToolIndex", "default_index_dir"]


def default_index_dir() -> Path:
    return home_dir() / "retriever" / "chroma"


@dataclass(frozen=True)
class Hit:
    """One retrieved API: its id, cosine similarity, and (from the index) its document."""

    api: str
    score: float
    text: str = field(default="", compare=False)
    metadata: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class BuildReport:
    embedded: int
    removed: int
    unchanged: int


class ToolIndex:
    """``build`` documents into the collection, ``search`` it by query text."""

    def __init__(
        self, path: str | Path | None = None, model: str | Path | None = None,
        encoder: Any = None, url: str | None = None, collection: str = "tools",
    ):
        """``path``: the local chroma folder; ``url``: a Chroma server to use instead.
        ``collection``: the name's prefix (the model's name is added), so that another
        corpus, such as an external dataset, gets a collection of its own."""
        self.path = Path(path) if path else default_index_dir()
        self.url = url
        self.model = model
        self._encoder = encoder
        self.client = _client(self.path, url)
        name = f"{collection}-" + re.sub(r"[^a-zA-Z0-9_-]+", "-", model_name(model)).strip("-")
        try:
            self.collection = self.client.get_or_create_collection(
                name[:60], metadata={"hnsw:space": "cosine"}, embedding_function=None)
        except Exception as exc:  # chroma raises its own and httpx's errors here
            where = f"the Chroma server at {url}" if url else f"the chroma folder {self.path}"
            raise RetrieverError(f"cannot open the tool index in {where}: {exc}") from exc

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = load_model(self.model)
        return self._encoder

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self.encoder.encode(list(texts), normalize_embeddings=True, batch_size=64,
                                      convert_to_numpy=True, show_progress_bar=False)
        return [v.tolist() for v in vectors]

    def build(self, documents: Sequence[ToolDocument]) -> BuildReport:
        """Make the collection hold exactly ``documents``, embedding only what changed."""
        stored = self.collection.get(include=["metadatas"])
        hashes = {i: (m or {}).get("hash") for i, m in
                  zip(stored["ids"], stored["metadatas"] or [], strict=False)}
        changed = [d for d in documents if hashes.get(d.id) != d.hash]
        gone = sorted(set(hashes) - {d.id for d in documents})
        for start in range(0, len(changed), 256):
            batch = changed[start:start + 256]
            self.collection.upsert(
                ids=[d.id for d in batch], documents=[d.text for d in batch],
                embeddings=self._embed([d.text for d in batch]),
                metadatas=[{**d.metadata, "hash": d.hash} for d in batch],
            )
        if gone:
            self.collection.delete(ids=gone)
        return BuildReport(len(changed), len(gone), len(documents) - len(changed))

    def __len__(self) -> int:
        return self.collection.count()

    def search(self, query: str, k: int = 5, where: dict[str, Any] | None = None) -> list[Hit]:
        """The ``k`` APIs nearest to ``query``, best first; ``where`` filters on metadata,
        e.g. ``{"app": "kinto"}`` or ``{"tier": "selfhosted"}``."""
        return self.search_many([query], k, where)[0]

    def search_many(
        self, queries: Sequence[str], k: int = 5, where: dict[str, Any] | None = None
    ) -> list[list[Hit]]:
        """``search`` for many queries, embedded together. Queries go to chroma in
        batches, because chroma fetches the documents of all of a query's results in
        one SQL statement, whose number of variables SQLite limits."""
        if not queries:
            return []
        vectors = self._embed(queries)
        n = max(1, k)              # chroma returns fewer when the collection holds fewer
        step = max(1, 8000 // n)
        hits: list[list[Hit]] = []
        for start in range(0, len(vectors), step):
            found = self.collection.query(
                query_embeddings=vectors[start:start + step], n_results=n, where=where,
                include=["distances", "documents", "metadatas"])
            rows = zip(found["ids"], found["distances"] or [], found["documents"] or [],
                       found["metadatas"] or [], strict=True)
            hits += [[Hit(i, round(1 - d, 6), text or "",
                          {k: str(v) for k, v in (m or {}).items() if k != "hash"})
                      for i, d, text, m in zip(ids, dists, texts, metas, strict=True)]
                     for ids, dists, texts, metas in rows]
        return hits


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
