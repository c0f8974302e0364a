"""Scoring retrievers side by side on a user's own dataset: JSON, a plot, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.cli import app as cli
from toolbed.errors import RetrieverError
from toolbed.retriever import (
    STAGES,
    EvalSet,
    Pipeline,
    ToolDocument,
    Variant,
    ablations,
    load_eval_set,
    misses,
    summarise_misses,
    with_cuts,
)

from ..conftest import block_network
from .conftest import write_jsonl


def test_evaluate_on_an_external_dataset_writes_json_a_plot_and_a_paired_bootstrap(
    tmp_path: Path, dataset: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    queries, corpus = dataset
    block_network(monkeypatch)
    out, plot = tmp_path / "out" / "scores.json", tmp_path / "out" / "ndcg.png"
    result = CliRunner().invoke(cli, [
        "retriever", "evaluate", "--queries", str(queries), "--corpus", str(corpus),
        "--index", str(tmp_path / "chroma"), "--out", str(out), "--plot", str(plot),
        "--bootstrap", "200", "--misses", str(tmp_path / "out" / "misses.jsonl")])
    assert result.exit_code == 0, result.output
    assert "3 queries (kinto-tools), 34 documents" in result.output
    assert "bootstrap" in result.output        # the table of the differences (wrapped)
    missed = [json.loads(line) for line in (tmp_path / "out" / "misses.jsonl").open()]
    assert all(set(m["missing"]) <= set(m["relevant"]) and len(m["top"]) == 5 for m in missed)
    assert " ".join(result.output.split()).count(" queries miss a gold API in the top 5") == (
        1 if missed else 0)

    scores = json.loads(out.read_text())
    assert list(scores) == ["bm25", "all-MiniLM-L6-v2",
                            "all-MiniLM-L6-v2 expansion+dense+lexical+examples+apps2"]
    for metrics in scores.values():
        assert {f"ndcg@{k}" for k in range(1, 11)} <= set(metrics) and "mrr" in metrics
        assert 0 < metrics["ndcg@10"] <= 1 and metrics["comp@10"] <= metrics["recall@10"]
    # each row against the last, the pipeline: the mean difference inside its interval
    best = scores["all-MiniLM-L6-v2 expansion+dense+lexical+examples+apps2"]
    for name in ("bm25", "all-MiniLM-L6-v2"):
        row = scores[name]
        assert row["diff ndcg@5"] == pytest.approx(row["ndcg@5"] - best["ndcg@5"], abs=1e-3)
        assert row["diff ndcg@5 low"] <= row["diff ndcg@5"] <= row["diff ndcg@5 high"]
        assert {"diff recall@5", "diff comp@5 high"} <= set(row)
    assert "diff ndcg@5" not in best
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # the external corpus has a collection of its own; the catalog's is untouched
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(str(tmp_path / "chroma"),
                                       settings=Settings(anonymized_telemetry=False))
    names = {c.name for c in client.list_collections()}
    assert names == {"data-kinto-tools-all-MiniLM-L6-v2",
                     "data-kinto-tools-all-MiniLM-L6-v2-examples"}   # the corpus's examples


def test_bad_dataset_files_are_named_with_their_line(tmp_path: Path,
                                                    dataset: tuple[Path, Path]) -> None:
    queries, corpus = dataset
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "ok", "relevant": ["kinto.list_buckets"]}\n{"query": \n')
    with pytest.raises(RetrieverError, match=r"broken.jsonl:2: not JSON"):
        load_eval_set(broken, corpus)
    unknown = write_jsonl(tmp_path / "unknown.jsonl",
                          [{"query": "mail it", "relevant": ["mail.send"]}])
    with pytest.raises(RetrieverError, match=r"unknown.jsonl:1: relevant ids not in "
                       r"kinto-tools.jsonl: mail.send"):
        load_eval_set(unknown, corpus)
    odd = write_jsonl(tmp_path / "odd.jsonl", [{"id": "a", "text": "t", "examples": "hi"}])
    with pytest.raises(RetrieverError, match=r"odd.jsonl:1: \"examples\" must be a list"):
        load_eval_set(queries, odd)
    no_text = write_jsonl(tmp_path / "c.jsonl", [{"id": "a"}])
    with pytest.raises(RetrieverError, match=r'c.jsonl:1: a corpus line needs a string "id" '
                       r'and a non-empty "text"'):
        load_eval_set(queries, no_text)

    beir = write_jsonl(tmp_path / "beir.jsonl", [{"_id": "kinto.list_buckets", "title": "Kinto",
                                                  "text": "list buckets"}])
    one = write_jsonl(tmp_path / "one.jsonl", [{"query": "buckets?",
                                                "relevant": ["kinto.list_buckets"]}])
    data = load_eval_set(one, beir)
    assert data.documents[0].text == "Kinto list buckets" and data.relevant == [
        {"kinto.list_buckets"}]

    result = CliRunner().invoke(cli, ["retriever", "evaluate", "--queries", str(unknown),
                                      "--corpus", str(corpus)])
    assert result.exit_code == 1 and "relevant ids not in kinto-tools.jsonl" in result.output
    assert "Traceback" not in result.output
    alone = CliRunner().invoke(cli, ["retriever", "evaluate", "--queries", str(queries)])
    assert alone.exit_code == 2 and "--queries and --corpus go together" in alone.output


def test_a_comparison_has_one_row_per_distinct_cut_and_one_per_stage_switched_off() -> None:
    best = Variant("mine expansion+dense+lexical+examples+apps2+rerank", "mine", Pipeline())
    cuts = with_cuts(best, [0.5, 0.99, 0, 0.5])
    assert [v.name for v in cuts] == ["mine expansion+dense+lexical+examples+apps2+rerank+cut0.5",
                                      "mine expansion+dense+lexical+examples+apps2+rerank+cut0.99"]
    assert [v.pipeline.cut for v in cuts] == [0.5, 0.99]
    assert all(v.model == "mine" and v.pipeline.rerank for v in cuts)
    assert with_cuts(best, []) == with_cuts(best, [0]) == []

    rows = ablations(best)
    assert rows[0] == best
    names = [v.name for v in rows[1:]]
    assert len(names) == len(set(names)) == len(STAGES)    # each stage off in turn
    assert "mine dense+lexical+examples+apps2+rerank" in names           # expansion off
    assert "mine expansion+dense+lexical+examples+rerank" in names       # flat
    flat = Variant("mine flat", "mine", Pipeline(apps=0))
    assert ablations(flat)[-1].pipeline.apps == 2        # a flat pipeline is also tried app-first


def test_misses_name_each_gold_api_left_out_its_rank_and_whether_its_app_was_offered() -> None:
    documents = [ToolDocument(api, api, {"app": api.split(".")[0]}) for api in (
        "notes.add", "notes.find", "mail.send", "maps.route", "maps.geocode")]
    data = EvalSet("tiny", ["route me home", "mail the note", "add a note"],
                   [{"maps.geocode", "maps.route"}, {"notes.find", "mail.send"}, {"notes.add"}],
                   documents)
    rankings = [["maps.route", "notes.add", "maps.geocode"],       # geocode 3rd: out of top 2
                ["mail.send", "notes.add"],                        # notes.find never ranked
                ["notes.add", "mail.send"]]                        # all found: no miss
    found = misses(data, rankings, k=2)
    assert [m.query for m in found] == ["route me home", "mail the note"]
    assert found[0].missing == {"maps.geocode": 3} and found[0].app_offered is True
    assert found[1].missing == {"notes.find": None} and found[1].app_offered is True
    assert found[0].top == ["maps.route", "notes.add"]
    assert json.loads(json.dumps(found[1].as_json()))["relevant"] == ["mail.send", "notes.find"]
    said = summarise_misses(found, len(data.queries), k=2)
    assert said.startswith("2 of 3 queries miss a gold API in the top 2")
    assert "of the 2 gold APIs missed, 1 ranked 3-4, 0 5-8 and 1 lower or not at all" in said
    assert "2 found some of their gold APIs but not all" in said
    assert "in 2 of 2 every missing API's app was offered" in said

    nameless = EvalSet("bare", data.queries, data.relevant,
                       [ToolDocument(d.id, d.text) for d in documents])   # a user's corpus
    assert all(m.app_offered is None for m in misses(nameless, rankings, k=2))
    assert "app was offered" not in summarise_misses(misses(nameless, rankings, 2), 3, 2)
    assert summarise_misses([], 3) == (
        "every one of the 3 queries has all its gold APIs in the top 5")
