"""BM25 over the tool documents: the lexical ranker of the pipeline and the baseline the
papers report beside their models. Strong where the dense model is weak: app names,
identifiers and rare words a user copies from what they see."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ._documents import ToolDocument
from ._pipeline import Hit

__all__ = ["BM25"]


class BM25:
    """BM25 (bm25s, Lucene variant, English stop words removed) over documents' text."""

    def __init__(self, documents: Sequence[ToolDocument]):
        import bm25s

        self.documents = list(documents)
        self.ids = [d.id for d in self.documents]
        self.model = bm25s.BM25()
        if self.documents:                       # an empty index finds nothing
            self.model.index(bm25s.tokenize([d.text for d in self.documents], stopwords="en",
                                            show_progress=False), show_progress=False)

    def search_many(
        self, queries: Sequence[str], k: int = 5, allowed: Collection[str] | None = None
    ) -> list[list[Hit]]:
        """The top ``k`` documents for each query that share a word with it, only among
        ``allowed`` ids when it is given."""
        import bm25s
        import numpy as np

        if not queries or not self.ids:
            return [[] for _ in queries]
        mask = None
        if allowed is not None:
            mask = np.array([doc in allowed for doc in self.ids], dtype=np.float32)
        tokens = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
        found, scores = self.model.retrieve(tokens, k=min(k, len(self.ids)), weight_mask=mask,
                                            show_progress=False)
        return [[Hit(self.ids[int(i)], float(s), self.documents[int(i)].text,
                     self.documents[int(i)].metadata)
                 for i, s in zip(row, srow, strict=True) if s > 0]
                for row, srow in zip(found, scores, strict=True)]
