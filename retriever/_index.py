"""The tool index: tool documents embedded into a persistent chroma collection.

The collection lives under ``$TOOLBED_HOME/retriever/chroma`` (a build artefact, never
committed), one collection per embedding model, in cosine space, with each document's
app, domain, tier and effect as metadata for filtering, and its text hash, so that
``build`` re-embeds only the documents that changed and drops the APIs that are gone.
Chroma's telemetry is off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbed.paths import home_dir

from ._documents import ToolDocument
from ._model import load_model, model_name

__all__ = ["BuildReport", "Hit", "ToolIndex", "default_index_dir"]


def default_index_dir() -> Path:
    return home_dir() / "retriever" / "chroma"


@dataclass(frozen=True)
class Hit:
    api: str
    score: float


@dataclass(frozen=True)
class BuildReport:
    embedded: int
    removed: int
    unchanged: int


class ToolIndex:
    """``build`` documents into the collection, ``search`` it by query text."""

    def __init__(
        self, path: str | Path | None = None, model: str | Path | None = None,
        encoder: Any = None,
    ):
        import chromadb
        from chromadb.config import Settings

        self.path = Path(path) if path else default_index_dir()
        self.model = model
        self._encoder = encoder
        self.client = chromadb.PersistentClient(
            path=str(self.path), settings=Settings(anonymized_telemetry=False))
        name = "tools-" + re.sub(r"[^a-zA-Z0-9_-]+", "-", model_name(model)).strip("-")
        self.collection = self.client.get_or_create_collection(
            name[:60], metadata={"hnsw:space": "cosine"}, embedding_function=None)

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
                embeddings=self._embed([d.text for d in batch]),  # type: ignore[arg-type]
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
        if not queries:
            return []
        found = self.collection.query(
            query_embeddings=self._embed(queries),  # type: ignore[arg-type]
            n_results=max(1, min(k, len(self))), where=where, include=["distances"])
        distances = found["distances"] or []
        return [[Hit(i, round(1 - d, 6)) for i, d in zip(ids, dists, strict=True)]
                for ids, dists in zip(found["ids"], distances, strict=True)]
