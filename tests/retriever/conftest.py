"""A small external evaluation set: the kinto APIs as a corpus, three queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbed.apis import Catalog
from toolbed.retriever import tool_documents


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test has a $TOOLBED_HOME of its own: a model or index trained on this machine
    (the commands' defaults) never changes what a test sees."""
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def dataset(tmp_path: Path, catalog: Catalog) -> tuple[Path, Path]:
    """The kinto APIs as a corpus (with their example requests), with three queries of
    one or two relevant ids each."""
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    corpus = write_jsonl(tmp_path / "kinto-tools.jsonl", [
        {"id": d.id, "text": d.text, "metadata": {"effect": d.metadata["effect"]},
         "examples": list(d.examples)} for d in docs])
    queries = write_jsonl(tmp_path / "queries.jsonl", [
        {"query": "delete the bucket called trips", "relevant": ["kinto.delete_bucket"]},
        {"query": "list the records in my books collection",
         "relevant": ["kinto.list_records"]},
        {"query": "make a bucket and a collection inside it",
         "relevant": ["kinto.create_bucket", "kinto.create_collection"]},
    ])
    return queries, corpus
