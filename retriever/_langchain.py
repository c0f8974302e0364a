"""The index in LangChain's terms: a ``BaseRetriever`` of tool documents, and a
selector that hands an agent the top-k APIs for a query as tools it can call.

    retriever = ToolRetriever(index=ToolIndex(), k=5)
    retriever.invoke("is it going to rain in Oslo")     # [Document(metadata={"api": ...})]

    select = ToolSelector(ToolIndex(), runtime, k=5)
    tools = select("is it going to rain in Oslo")       # [StructuredTool, ...]
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool
from pydantic import ConfigDict

from toolbed.connectors import Caller, langchain_tools

from ._index import ToolIndex

__all__ = ["ToolRetriever", "ToolSelector"]


class ToolRetriever(BaseRetriever):
    """Tool documents for a query, best first; each document's metadata holds the API id
    (``api``), its cosine similarity (``score``) and its app, domain, tier and effect."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: ToolIndex
    k: int = 5
    where: dict[str, Any] | None = None
    """A chroma metadata filter, e.g. ``{"app": "kinto"}``."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [
            Document(id=hit.api, page_content=hit.text,
                     metadata={**hit.metadata, "api": hit.api, "score": hit.score})
            for hit in self.index.search(query, self.k, self.where)
        ]


class ToolSelector:
    """The ``k`` APIs the index ranks first for a query (fewer where its pipeline's
    cut stops them), as LangChain tools that call them through ``runtime`` (a
    ``Runtime`` or a ``RollbackScope``)."""

    def __init__(self, index: ToolIndex, runtime: Caller, k: int = 5,
                 where: dict[str, Any] | None = None):
        self.index, self.runtime, self.k, self.where = index, runtime, k, where

    def __call__(self, query: str) -> list[StructuredTool]:
        hits = self.index.search(query, self.k, self.where)
        return langchain_tools(self.runtime, [h.api for h in hits])
