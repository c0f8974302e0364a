"""Requests in several languages: which language a request is in, and one index per
language behind one search.

The catalog is shared, but a request in Chinese and a request in English are best
served by different documents (each carries the example requests of its language) and
different models (``DEFAULT_MODELS``). ``MultilingualIndex`` reads the language off
each request (any Chinese character makes it Chinese) and asks that language's index,
so an agent, ``toolbed eval`` or the MCP server serve both without being told.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from toolbed.errors import RetrieverError

from ._index import ToolIndex
from ._lexical import CHINESE_CHARS
from ._pipeline import Hit, Pipeline

__all__ = ["MultilingualIndex", "query_language"]

_CHINESE = re.compile(f"[{CHINESE_CHARS}]")


def query_language(text: str) -> str:
    """``zh`` for a request with a Chinese character in it, else ``en``."""
    return "zh" if _CHINESE.search(text) else "en"


class MultilingualIndex:
    """Several ``ToolIndex``es, one per language (``{"en": ..., "zh": ...}``); each
    request goes to its language's index, or the English one when its language has none."""

    def __init__(self, indexes: Mapping[str, ToolIndex]):
        if "en" not in indexes:
            raise RetrieverError("a multilingual index needs an English index")
        for lang, index in indexes.items():
            if index.lang != lang:
                raise RetrieverError(f"the index given for {lang!r} serves {index.lang!r}")
        self.indexes = dict(indexes)

    @property
    def pipeline(self) -> Pipeline:
        return self.indexes["en"].pipeline

    @property
    def model(self) -> Any:
        return self.indexes["en"].model

    def __len__(self) -> int:
        """The fewest documents any language's index holds (0: one is not built)."""
        return min(len(index) for index in self.indexes.values())

    def index_for(self, query: str) -> ToolIndex:
        return self.indexes.get(query_language(query), self.indexes["en"])

    def search(self, query: str, k: int = 5, where: dict[str, Any] | None = None) -> list[Hit]:
        return self.index_for(query).search(query, k, where)

    def search_many(self, queries: Sequence[str], k: int = 5,
                    where: dict[str, Any] | None = None) -> list[list[Hit]]:
        """``search`` for many queries, those of one language asked together."""
        out: list[list[Hit]] = [[] for _ in queries]
        groups: dict[int, list[int]] = {}
        for n, query in enumerate(queries):
            groups.setdefault(id(self.index_for(query)), []).append(n)
        for rows in groups.values():
            index = self.index_for(queries[rows[0]])
            for n, hits in zip(rows, index.search_many([queries[n] for n in rows], k, where),
                               strict=True):
                out[n] = hits
        return out
