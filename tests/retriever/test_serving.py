"""Serving the index: to LangChain as documents and as tools, and from a Chroma server."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import Runtime, tool_name
from toolbed.errors import RetrieverError
from toolbed.launchers import free_port
from toolbed.retriever import ToolIndex, ToolRetriever, ToolSelector, tool_documents


@pytest.fixture(scope="module")
def kinto_index(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> ToolIndex:
    index = ToolIndex(tmp_path_factory.mktemp("chroma"))
    index.build(tool_documents(Catalog([catalog.app("kinto")])))
    return index


def test_langchain_retriever_returns_tool_documents_with_their_api_ids(
    kinto_index: ToolIndex,
) -> None:
    retriever = ToolRetriever(index=kinto_index, k=3)
    docs = retriever.invoke("add a new record to my collection")
    assert len(docs) == 3 and "kinto.create_record" in [d.metadata["api"] for d in docs]
    first = docs[0]
    assert first.id == first.metadata["api"] and first.page_content.startswith("Kinto")
    assert first.metadata["app"] == "kinto" and 0 < first.metadata["score"] <= 1
    assert "hash" not in first.metadata

    reads = ToolRetriever(index=kinto_index, k=4, where={"effect": "read"}).invoke("delete")
    assert {d.metadata["effect"] for d in reads} == {"read"}


def test_selector_hands_the_agent_the_top_k_as_callable_tools(
    kinto_index: ToolIndex, catalog: Catalog
) -> None:
    select = ToolSelector(kinto_index, Runtime(catalog), k=5)
    tools = select("add a new record to my collection")
    assert len(tools) == 5
    assert tool_name("kinto.create_record") in [t.name for t in tools]
    record = next(t for t in tools if t.name == tool_name("kinto.create_record"))
    assert {"bucket", "collection"} <= set(record.args)


def test_a_team_index_on_a_chroma_server(chroma_server: str, catalog: Catalog,
                                         tmp_path: Path) -> None:
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    index = ToolIndex(url=chroma_server)
    assert index.build(docs).embedded == len(docs)
    assert ToolIndex(url=chroma_server).build(docs).embedded == 0   # the server kept it
    assert not (tmp_path / "home" / "retriever" / "chroma").exists()  # nothing local

    found = CliRunner().invoke(cli, ["retriever", "search", "delete the bucket called trips",
                                     "-k", "3", "--chroma-url", chroma_server, "--json"])
    assert found.exit_code == 0, found.output
    assert "kinto.delete_bucket" in found.output


def test_a_bad_or_unreachable_chroma_url_is_one_clear_error() -> None:
    with pytest.raises(RetrieverError, match="is not an http"):
        ToolIndex(url="127.0.0.1:8000")
    result = CliRunner().invoke(cli, ["retriever", "search", "x", "--chroma-url",
                                      f"http://127.0.0.1:{free_port()}"])
    assert result.exit_code == 1 and "Chroma server" in result.output
    assert "Traceback" not in result.output
