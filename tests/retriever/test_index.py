"""The chroma index: build, rebuild only what changed, search with filters, offline."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.retriever import BM25, ToolIndex, evaluate, tool_documents

from ..conftest import block_network


@pytest.fixture(scope="module")
def kinto_docs(catalog: Catalog) -> list:
    return tool_documents(Catalog([catalog.app("kinto")]))


def test_build_search_and_rebuild_with_the_network_blocked(
    tmp_path: Path, kinto_docs: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)           # the model and chroma work from local files only
    index = ToolIndex(tmp_path / "chroma")
    first = index.build(kinto_docs)
    assert (first.embedded, first.unchanged, first.removed) == (len(kinto_docs), 0, 0)
    assert len(index) == len(kinto_docs) == 34

    hits = index.search("add a new record with these fields to my collection", k=3)
    assert "kinto.create_record" in [h.api for h in hits]
    assert all(0 < h.score <= 1 for h in hits) and hits == sorted(hits, key=lambda h: -h.score)
    writes = index.search("get rid of it", k=5, where={"effect": "write"})
    assert len(writes) == 5 and all(h.api in {
        d.id for d in kinto_docs if d.metadata["effect"] == "write"} for h in writes)

    # a new process opens the same collection: nothing changed, nothing re-embedded
    again = ToolIndex(tmp_path / "chroma").build(kinto_docs)
    assert (again.embedded, again.unchanged) == (0, len(kinto_docs))
    edited = [replace(kinto_docs[0], text=kinto_docs[0].text + " Edited."), *kinto_docs[1:-1]]
    changed = ToolIndex(tmp_path / "chroma").build(edited)
    assert (changed.embedded, changed.removed, changed.unchanged) == (1, 1, len(kinto_docs) - 2)


def test_the_model_and_bm25_are_scored_on_the_same_queries(
    tmp_path: Path, kinto_docs: list
) -> None:
    queries = ["delete the whole bucket called trips", "which records are in my books list"]
    relevant = [{"kinto.delete_bucket"}, {"kinto.list_records"}]
    index = ToolIndex(tmp_path / "chroma")
    index.build(kinto_docs)
    for ranker in (index, BM25(kinto_docs)):
        scores = evaluate(ranker, queries, relevant, ks=(1, 5), depth=10)
        assert set(scores) == {"ndcg@1", "recall@1", "comp@1", "ndcg@5", "recall@5", "comp@5",
                               "mrr"}
        assert 0 < scores["mrr"] <= 1 and scores["recall@5"] >= scores["recall@1"]


def test_search_from_the_command_line(tmp_path: Path, kinto_docs: list) -> None:
    ToolIndex(tmp_path / "chroma").build(kinto_docs)
    runner = CliRunner()
    found = runner.invoke(cli, ["retriever", "search", "change my account password",
                                "-k", "2", "--index", str(tmp_path / "chroma"), "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    assert len(hits) == 2 and hits[0]["api"] == "kinto.change_account_password"
    empty = runner.invoke(cli, ["retriever", "search", "anything", "--index",
                                str(tmp_path / "empty")])
    assert empty.exit_code != 0 and "toolbed retriever build" in empty.output


def test_search_many_answers_a_thousand_queries_at_once(tmp_path: Path, kinto_docs: list) -> None:
    # 1,000 queries x 34 results is more than one SQLite statement may bind
    index = ToolIndex(tmp_path / "chroma")
    index.build(kinto_docs)
    queries = [f"list the records of collection number {i}" for i in range(1000)]
    hits = index.search_many(queries, k=50)
    assert len(hits) == 1000 and {len(row) for row in hits} == {34}
    assert all(row[0].text and row[0].metadata["app"] == "kinto" for row in hits)
