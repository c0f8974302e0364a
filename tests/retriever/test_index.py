"""The chroma index: build, rebuild only what changed, search with filters, offline."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.retriever import BM25, ToolIndex, _model, evaluate, load_model, tool_documents

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
        assert set(scores) == {f"{m}@{k}" for k in (1, 5) for m in (
            "ndcg", "recall", "comp", "offered", "precision", "f1")} | {"mrr"}
        assert scores["offered@5"] == 5 and scores["offered@1"] == 1
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


def test_vectors_made_in_bfloat16_are_the_float32_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the CPU has bfloat16 in hardware the encoder runs in it (2.6 times as fast);
    its vectors must still be float32's to two places and rank alike, or an index built on
    one machine would answer differently when queried on another."""
    model = load_model(None)
    texts = ["delete the bucket called trips", "list the records in my books collection",
             "Kinto: delete a bucket and everything in it", "Kinto: list a collection's records",
             "will it rain in Berlin tomorrow", "Open-Meteo: the weather forecast for a place"]
    vectors = {}
    for native in (False, True):
        monkeypatch.setattr(_model, "bf16_native", lambda native=native: native)
        vectors[native] = _model.embed(model, texts)
    assert vectors[True].dtype == np.float32 and vectors[True].shape == vectors[False].shape
    assert np.allclose(np.linalg.norm(vectors[True], axis=1), 1, atol=1e-3)
    assert (vectors[True] * vectors[False]).sum(axis=1).min() > 0.99
    queries, documents = slice(0, 2), [2, 3, 5]
    assert (np.argsort(-vectors[True][queries] @ vectors[True][documents].T) ==
            np.argsort(-vectors[False][queries] @ vectors[False][documents].T)).all()
