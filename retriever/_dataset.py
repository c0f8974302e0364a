"""Evaluation sets: queries with their relevant ids, over a corpus of documents.

The task suite gives one per split (each task's query, its gold APIs, the whole
catalog as corpus); a user's own data gives another, from two JSON Lines files:

    corpus.jsonl    {"id": "weather.forecast", "text": "Weather: the forecast for ..."}
    queries.jsonl   {"query": "will it rain in Oslo tomorrow", "relevant": ["weather.forecast"]}

BEIR's corpus lines (``_id``, ``title``, ``text``) are read as well; a corpus line
may carry a ``metadata`` object of strings, which the index stores for filtering, and
``examples``, a list of requests a user would make for it (the examples stage ranks
by them, as it does by the catalog's).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbed.errors import RetrieverError

from ._documents import ToolDocument

__all__ = ["EvalSet", "load_eval_set"]


@dataclass(frozen=True)
class EvalSet:
    """What a retriever is scored on: ``queries[i]`` should retrieve ``relevant[i]``."""

    name: str
    queries: list[str]
    relevant: list[set[str]]
    documents: list[ToolDocument]
    plain: list[ToolDocument] | None = None
    """The documents without example requests (the catalog's), for the ablation."""
    lang: str = "en"
    """The language of the documents (the catalog's carry example requests in each)."""


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RetrieverError(f"cannot read {path}: {exc.strerror or exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RetrieverError(f"{path}:{number}: not JSON ({exc.msg}); write one JSON "
                                 "object per line") from None
        if not isinstance(row, dict):
            raise RetrieverError(f"{path}:{number}: a line must be a JSON object")
        yield number, row


def load_eval_set(queries: str | Path, corpus: str | Path) -> EvalSet:
    """Read a queries file and a corpus file (JSON Lines, formats above); every relevant
    id must be in the corpus, and every query must have at least one."""
    queries, corpus = Path(queries), Path(corpus)
    documents: dict[str, ToolDocument] = {}
    for number, row in _lines(corpus):
        doc_id = row.get("id", row.get("_id"))
        text = " ".join(str(row.get(f, "")) for f in ("title", "text") if row.get(f))
        if not isinstance(doc_id, str) or not doc_id or not text:
            raise RetrieverError(f"{corpus}:{number}: a corpus line needs a string \"id\" "
                                 "and a non-empty \"text\"")
        if doc_id in documents:
            raise RetrieverError(f"{corpus}:{number}: id {doc_id!r} appears twice")
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise RetrieverError(f"{corpus}:{number}: \"metadata\" must be an object")
        examples = row.get("examples") or []
        if not isinstance(examples, list) or not all(
                isinstance(e, str) and e.strip() for e in examples):
            raise RetrieverError(f"{corpus}:{number}: \"examples\" must be a list of "
                                 "requests (non-empty strings)")
        documents[doc_id] = ToolDocument(doc_id, text, {k: str(v) for k, v in metadata.items()},
                                         tuple(examples))
    if not documents:
        raise RetrieverError(f"{corpus}: the corpus is empty")
    texts, relevant = [], []
    for number, row in _lines(queries):
        query, ids = row.get("query", row.get("text")), row.get("relevant")
        if not isinstance(query, str) or not query.strip():
            raise RetrieverError(f"{queries}:{number}: a query line needs a string \"query\"")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise RetrieverError(f"{queries}:{number}: \"relevant\" must be a non-empty list "
                                 "of corpus ids")
        missing = sorted(set(ids) - set(documents))
        if missing:
            raise RetrieverError(f"{queries}:{number}: relevant ids not in {corpus.name}: "
                                 f"{', '.join(missing)}")
        texts.append(query)
        relevant.append(set(ids))
    if not texts:
        raise RetrieverError(f"{queries}: there are no queries")
    return EvalSet(corpus.stem, texts, relevant, list(documents.values()))
