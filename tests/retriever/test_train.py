"""Training examples, a one-step fine-tune with no network, and the trained model in use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.retriever import (
    RERANKER_FILE,
    EvalSet,
    ToolDocument,
    ToolIndex,
    dense_miner,
    dev_ndcg,
    fit_rerank_stage,
    load_eval_set,
    load_model,
    tool_documents,
    train,
    training_examples,
)

from ..conftest import block_network


def doc(api: str, app: str, domain: str) -> ToolDocument:
    return ToolDocument(api, f"{app} {api} text", {"app": app, "domain": domain})


def test_each_gold_api_gives_one_example_with_a_negative_from_its_app_or_domain() -> None:
    docs = [doc("notes.add", "notes", "office"), doc("notes.find", "notes", "office"),
            doc("notes.drop", "notes", "office"), doc("mail.send", "mail", "office"),
            doc("maps.route", "maps", "travel")]
    examples = training_examples(
        ["write a note and find it", "mail my boss"], [{"notes.add", "notes.find"}, {"mail.send"}],
        docs)
    assert [(e.query, e.positive) for e in examples] == [
        ("write a note and find it", "notes notes.add text"),
        ("write a note and find it", "notes notes.find text"),
        ("mail my boss", "mail mail.send text"),
    ]
    # the only other notes API that is not gold; mail has no other API, so same domain
    assert [e.negative for e in examples[:2]] == ["notes notes.drop text"] * 2
    assert examples[2].negative in {"notes notes.add text", "notes notes.find text",
                                    "notes notes.drop text"}
    # the draw depends on the seed, the query and the API, not on the order of queries
    again = training_examples(["mail my boss"], [{"mail.send"}], docs)
    assert again == examples[2:]
    with pytest.raises(ValueError, match="'mail.forward' of query 'x' is not in the corpus"):
        training_examples(["x"], [{"mail.forward"}], docs)


def test_with_a_ranking_the_negative_is_one_the_retriever_placed_high_and_not_gold() -> None:
    docs = [doc("notes.add", "notes", "office"), doc("notes.find", "notes", "office"),
            doc("mail.send", "mail", "office"), doc("maps.route", "maps", "travel")]
    ranked = [["notes.add", "maps.route", "notes.find", "mail.send"]]
    [one] = training_examples(["write a note"], [{"notes.add"}], docs, ranked=ranked, mined=1)
    assert one.negative == "maps maps.route text"    # the best-ranked id that is not gold
    drawn = {training_examples(["write a note"], [{"notes.add"}], docs, seed=s,
                               ranked=ranked, mined=2)[0].negative for s in range(20)}
    assert drawn == {"maps maps.route text", "notes notes.find text"}
    with pytest.raises(ValueError, match="one ranking per query"):
        training_examples(["a", "b"], [{"notes.add"}, {"mail.send"}], docs, ranked=ranked)


def test_with_a_dev_set_each_epoch_is_scored_and_the_best_one_is_kept(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    dev = EvalSet("dev", ["delete the bucket called trips", "list my books"],
                  [{"kinto.delete_bucket"}, {"kinto.list_records"}], docs)
    examples = training_examples(["make a new bucket named trips"], [{"kinto.create_bucket"}],
                                 docs)
    report = train(examples, tmp_path / "model", epochs=2, batch_size=1, progress=False,
                   dev=dev, patience=5)
    assert report.steps == 2 and len(report.dev) == 2 and 1 <= report.best_epoch <= 2
    assert all(0 <= score <= 1 for score in report.dev)
    kept = dev_ndcg(load_model(tmp_path / "model"), dev)
    assert kept == pytest.approx(max(report.dev), abs=1e-3)    # the best epoch was saved


def test_one_training_step_then_build_and_search_with_the_trained_model_offline(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)          # training, saving and loading use local files only
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    examples = training_examples(
        ["make a new bucket named trips", "what records are in the books collection"],
        [{"kinto.create_bucket"}, {"kinto.list_records"}], docs)
    report = train(examples, tmp_path / "model", batch_size=2, max_steps=1, progress=False)
    assert (report.examples, report.steps) == (2, 1) and report.loss > 0
    assert load_model(tmp_path / "model").max_seq_length == 96

    index = ToolIndex(tmp_path / "chroma", model=tmp_path / "model")
    assert index.build(docs).embedded == len(docs)
    assert index.collection.name == "tools-model"   # one collection per model
    hits = index.search("make a new bucket named trips", k=5)
    assert len(hits) == 5 and "kinto.create_bucket" in [h.api for h in hits]


def test_a_model_trained_again_into_the_same_folder_is_embedded_again(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documents did not change, the model did: vectors from the old weights must not
    stay in the index beside queries encoded with the new ones."""
    block_network(monkeypatch)
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    examples = training_examples(["make a new bucket named trips"], [{"kinto.create_bucket"}],
                                 docs)
    train(examples, tmp_path / "model", max_steps=1, progress=False)
    first = ToolIndex(tmp_path / "chroma", model=tmp_path / "model").build(docs)
    assert first.embedded == len(docs) and first.examples == sum(len(d.examples) for d in docs)
    assert ToolIndex(tmp_path / "chroma", model=tmp_path / "model").build(docs).embedded == 0
    train(examples, tmp_path / "model", max_steps=1, progress=False, learning_rate=1e-3)
    again = ToolIndex(tmp_path / "chroma", model=tmp_path / "model").build(docs)
    assert (again.embedded, again.examples) == (first.embedded, first.examples)


def test_cli_trains_for_a_step_fits_a_reranker_and_evaluates_it_beside_bm25_and_the_default(
    tmp_path: Path, dataset: tuple[Path, Path], catalog: Catalog,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBED_HOME", str(tmp_path / "home"))
    block_network(monkeypatch)
    runner = CliRunner()
    # the reranker is fitted below on the small dataset: on the dev split it would embed
    # the whole catalog with the one-step model first
    trained = runner.invoke(cli, ["retriever", "train", "--max-steps", "1", "--batch-size", "4",
                                  "--no-mine", "--no-early-stopping", "--no-reranker"])
    assert trained.exit_code == 0, trained.output
    model_dir = tmp_path / "home" / "retriever" / "models" / "all-MiniLM-L6-v2-toolbed"
    assert "1 steps" in trained.output and (model_dir / "config.json").is_file()
    assert f"toolbed retriever build --model {model_dir}\n" in trained.output
    assert not (model_dir / RERANKER_FILE).exists()

    queries, corpus = dataset
    evaluate = ["retriever", "evaluate", "--queries", str(queries), "--corpus", str(corpus),
                "--index", str(tmp_path / "chroma"), "--model", str(model_dir), "--json"]
    scored = runner.invoke(cli, evaluate)
    assert scored.exit_code == 0, scored.output
    pipeline = "expansion+dense+lexical+examples+apps2"
    assert list(json.loads(scored.output[scored.output.index("{"):])) == [
        "bm25", "all-MiniLM-L6-v2", f"all-MiniLM-L6-v2 {pipeline}",
        f"all-MiniLM-L6-v2-toolbed {pipeline}"]

    dev = load_eval_set(queries, corpus)
    said = fit_rerank_stage(model_dir, dev, [{"kinto.create_bucket", "kinto.create_collection"},
                                             {"kinto.list_records"}], catalog, "en",
                            tmp_path / "chroma")
    assert f"fitted on 3 dev queries and saved to {model_dir / RERANKER_FILE}" in said
    scored = runner.invoke(cli, [*evaluate, "--ablation"])
    assert scored.exit_code == 0, scored.output
    scores = json.loads(scored.output[scored.output.index("{"):])
    assert f"all-MiniLM-L6-v2-toolbed {pipeline}+rerank" in scores    # the model has one now
    assert f"all-MiniLM-L6-v2-toolbed {pipeline}" in scores           # and the ablation's row
    assert f"all-MiniLM-L6-v2 {pipeline}" in scores                   # the default never has
    assert all(0 < s["mrr"] <= 1 for s in scores.values())

    # a cut offers fewer tools, never fewer than the first hit, which stays where it was
    out = tmp_path / "cuts.json"
    cut = runner.invoke(cli, [*evaluate[:-1], "--cut", "0.5", "--cut", "0.99", "--cut", "0",
                              "--cut", "0.5", "--out", str(out)])
    assert cut.exit_code == 0 and "what the top 5 offers an agent" in cut.output, cut.output
    scores = json.loads(out.read_text())
    # one row for each distinct cut: "--cut 0" is the uncut row, a repeat adds nothing
    assert [name for name in scores if "+cut" in name] == [
        f"all-MiniLM-L6-v2-toolbed {pipeline}+rerank+cut{c}" for c in ("0.5", "0.99")]
    whole, half, sure = (scores[f"all-MiniLM-L6-v2-toolbed {pipeline}+rerank{c}"]
                         for c in ("", "+cut0.5", "+cut0.99"))
    assert 1 <= sure["offered@5"] <= half["offered@5"] <= whole["offered@5"]
    assert sure["ndcg@1"] == half["ndcg@1"] == whole["ndcg@1"]
    assert sure["recall@5"] <= whole["recall@5"]
    no_rerank = runner.invoke(cli, [*evaluate, "--cut", "0.5", "--off", "rerank"])
    assert no_rerank.exit_code != 0 and "needs the rerank stage" in no_rerank.output
    assert "Traceback" not in no_rerank.output


class Pointing:
    """A stand-in encoder that puts each query next to one chosen document."""

    def __init__(self, near: str):
        self.near = near

    def encode(self, texts: list[str], **_: object) -> object:
        import numpy as np

        return np.array([[1.0, 0.0] if t.startswith(("q:", self.near)) else [0.0, 1.0]
                         for t in texts])


def test_the_miner_draws_negatives_from_what_the_model_as_it_is_now_ranks_first() -> None:
    docs = [doc("notes.add", "notes", "office"), doc("notes.find", "notes", "office"),
            doc("mail.send", "mail", "office"), doc("maps.route", "maps", "travel")]
    mine = dense_miner(["q: write a note"], [{"notes.add"}], docs, mined=1)
    assert mine(Pointing("maps"))[0].negative == "maps maps.route text"
    assert mine(Pointing("mail"))[0].negative == "mail mail.send text"   # another model
    # BM25's ranking is fused in: at rank 1 there, notes.find beats the model's 2nd pick
    fused = dense_miner(["q: write a note"], [{"notes.add"}], docs, mined=1,
                        lexical=[["notes.find", "notes.add"]], lexical_weight=2.0)
    assert fused(Pointing("maps"))[0].negative == "notes notes.find text"
    assert all(e.negative != e.positive for e in mine(Pointing("notes notes.add")))


def test_between_epochs_the_negatives_are_mined_again_with_the_model_trained_so_far(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    docs = tool_documents(Catalog([catalog.app("kinto")]))
    dev = EvalSet("dev", ["delete the bucket called trips"], [{"kinto.delete_bucket"}], docs)
    first = training_examples(["make a new bucket named trips"], [{"kinto.create_bucket"}],
                              docs)
    again = training_examples(["make a new bucket named trips"], [{"kinto.create_bucket"}],
                              docs, seed=1)
    seen: list[float] = []

    def remine(model: object) -> list:
        seen.append(dev_ndcg(model, dev))
        return again

    report = train(first, tmp_path / "model", epochs=3, batch_size=1, progress=False,
                   dev=dev, patience=5, remine=remine)
    assert report.steps == 3 and len(report.dev) == 3
    # mined before epochs 2 and 3, each time with the model the epochs before had left
    assert seen == pytest.approx(report.dev[:2], abs=1e-3)
