"""BM25 over the tool documents: the lexical ranker of the pipeline and the baseline the
papers report beside their models. Strong where the dense model is weak: app names,
identifiers and rare words a user copies from what they see.

Chinese is written without spaces, so for documents and requests in Chinese a word is
not what the tokenizer can find: there each run of Chinese characters gives its
characters and its pairs of neighbouring characters (the usual unit of Chinese
full-text search, no dictionary needed), and Latin words count as words."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from typing import Any

from ._documents import ToolDocument
from ._pipeline import Hit

__all__ = ["BM25", "cjk_tokens"]

CHINESE_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
"""Chinese characters (the unified ideographs, their extensions, the compatibility
ones): what the tokenizer cuts into characters, and what makes a request Chinese."""
_CJK_OR_WORD = re.compile(f"([{CHINESE_CHARS}]+)|([^\\W_{CHINESE_CHARS}]{{2,}})")


def cjk_tokens(text: str) -> list[str]:
    """The tokens of a text in Chinese: each character of a run of Chinese characters
    and each pair of neighbours in it, and the other words (two letters or digits or
    more), lower-cased, full-width letters and digits read as their ASCII forms."""
    out: list[str] = []
    for run, word in _CJK_OR_WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if word:
            out.append(word)
        else:
            out += list(run) + [run[i:i + 2] for i in range(len(run) - 1)]
    return out


class BM25:
    """BM25 (bm25s, Lucene variant) over documents' text: English words less English
    stop words, or for ``lang="zh"`` Chinese characters and their pairs."""

    def __init__(self, documents: Sequence[ToolDocument], lang: str = "en"):
        import bm25s

        self.documents = list(documents)
        self.ids = [d.id for d in self.documents]
        self.lang = lang
        self.model = bm25s.BM25()
        if self.documents:                       # an empty index finds nothing
            self.model.index(self._tokenize([d.text for d in self.documents]),
                             show_progress=False)

    def _tokenize(self, texts: list[str]) -> Any:
        import bm25s

        if self.lang == "en":
            return bm25s.tokenize(texts, stopwords="en", show_progress=False)
        return [cjk_tokens(text) or [""] for text in texts]

    def search_many(
        self, queries: Sequence[str], k: int = 5, allowed: Collection[str] | None = None
    ) -> list[list[Hit]]:
        """The top ``k`` documents for each query that share a word with it, only among
        ``allowed`` ids when it is given."""
        import numpy as np

        if not queries or not self.ids:
            return [[] for _ in queries]
        mask = None
        if allowed is not None:
            mask = np.array([doc in allowed for doc in self.ids], dtype=np.float32)
        if self.lang == "en":
            tokens, asked = self._tokenize(list(queries)), list(range(len(queries)))
        else:       # given as lists, a query's tokens must all be in the index's vocabulary
            known = [[t for t in cjk_tokens(q) if t in self.model.vocab_dict] for q in queries]
            asked = [n for n, t in enumerate(known) if t]
            tokens = [known[n] for n in asked]
        out: list[list[Hit]] = [[] for _ in queries]
        if not asked:
            return out
        found, scores = self.model.retrieve(tokens, k=min(k, len(self.ids)), weight_mask=mask,
                                            show_progress=False)
        for n, row, srow in zip(asked, found, scores, strict=True):
            out[n] = [Hit(self.ids[int(i)], float(s), self.documents[int(i)].text,
                          self.documents[int(i)].metadata)
                      for i, s in zip(row, srow, strict=True) if s > 0]
        return out
