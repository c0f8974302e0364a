"""The retrieval pipeline: fusion and app-first order, each stage switched off alone,
example requests in the documents (and in their hash), and clear errors for a bad
stage or a bad model folder. Tiny data, no network."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.errors import RetrieverError
from toolbed.retriever import (
    BM25,
    PLAIN_TEMPLATE,
    Pipeline,
    ToolIndex,
    _model,
    keep_best_apps,
    rank,
    reciprocal_rank_fusion,
    tool_documents,
)
from toolbed.retriever._model import UPSTREAM_SHA256, model_path, verify_weights

from ..conftest import block_network


def test_fusion_ranks_first_what_both_rankers_place_high() -> None:
    dense, lexical = ["a", "b", "c"], ["b", "c", "d"]
    assert rank(reciprocal_rank_fusion([dense, lexical], [1.0, 1.0], k=30)) == [
        "b", "c", "a", "d"]
    # a heavier lexical weight lets BM25's first beat the dense ranker's first
    assert rank(reciprocal_rank_fusion([["a", "b"], ["b", "a"]], [1.0, 2.0], k=0))[0] == "b"
    assert reciprocal_rank_fusion([[], []], [1.0, 1.0]) == {}


def test_apps_first_keeps_only_the_apis_of_the_best_apps() -> None:
    scores = {"kinto.a": 0.9, "kinto.b": 0.1, "mail.a": 0.5, "maps.a": 0.4}
    app_of = {api: api.split(".")[0] for api in scores}
    assert keep_best_apps(scores, app_of, 2) == {"kinto.a": 0.9, "kinto.b": 0.1, "mail.a": 0.5}
    assert keep_best_apps(scores, app_of, 1) == {"kinto.a": 0.9, "kinto.b": 0.1}


def test_stages_are_switched_off_by_name_and_a_bad_one_is_named() -> None:
    assert Pipeline().name == "expansion+dense+lexical+examples+apps2+rerank"
    assert Pipeline().without("lexical", "expansion", "examples", "apps", "rerank"
                              ).name == "dense"
    assert Pipeline(apps=3).without("expansion").name == "dense+lexical+examples+apps3+rerank"
    with pytest.raises(RetrieverError, match="unknown stage 'crossencoder'; the stages are "
                       "expansion, dense, lexical, examples, apps, rerank"):
        Pipeline().without("crossencoder")
    with pytest.raises(RetrieverError, match="needs the dense or the lexical ranker"):
        Pipeline().without("dense", "lexical")


@pytest.fixture(scope="module")
def kinto(catalog: Catalog) -> Catalog:
    return Catalog([catalog.app("kinto")])


def test_a_stage_switched_off_gives_the_other_rankers_own_ranking(
    tmp_path: Path, kinto: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    # float32 throughout: the check below is arithmetic to 1e-4, and in bfloat16 a text's
    # vector rounds differently in another batch (test_index checks bfloat16 ranks alike)
    monkeypatch.setattr(_model, "bf16_native", lambda: False)
    docs = tool_documents(kinto)
    queries = ["tick the phone charger off my Lisbon packing list",
               "who can read the library bucket"]
    flat = Pipeline(apps=0)               # one app here: the app-first stage changes nothing
    fused = ToolIndex(tmp_path / "chroma", pipeline=flat)
    fused.build(docs)
    two = ToolIndex(tmp_path / "chroma", pipeline=flat.without("examples"))
    dense = ToolIndex(tmp_path / "chroma", pipeline=flat.without("lexical", "examples"))
    lexical = ToolIndex(tmp_path / "chroma", pipeline=flat.without("dense", "examples"))
    assert len(dense) == len(docs)                      # the same collection, built once
    nearest = fused._embed([q for d in docs for q in d.examples])
    for query in queries:
        alone = [h.api for h in dense.dense([query], 5)[0]]
        assert [h.api for h in dense.search(query, 5)] == alone
        words = [h.api for h in BM25(docs).search_many([query], 5)[0]]
        assert [h.api for h in lexical.search(query, 5)] == words
        # the examples ranker: each API by its nearest example request
        [q] = fused._embed([query])
        sims = [sum(a * b for a, b in zip(q, e, strict=True)) for e in nearest]
        owners = [d.id for d in docs for _ in d.examples]
        best = {api: max(s for s, o in zip(sims, owners, strict=True) if o == api)
                for api in set(owners)}
        [nearest_first] = fused._by_examples([q], 100, None)
        by_examples = list(nearest_first)
        assert by_examples == rank(best)[:len(by_examples)]
        assert all(abs(nearest_first[a] - best[a]) < 1e-4 for a in by_examples)
        dense_100 = [h.api for h in dense.dense([query], 100)[0]]
        bm25_100 = [h.api for h in BM25(docs).search_many([query], 100)[0]]
        expected = rank(reciprocal_rank_fusion([dense_100, bm25_100, by_examples],
                                               [1.0, flat.lexical_weight,
                                                flat.examples_weight], flat.rrf_k))
        three = fused.search(query, 5)
        assert [h.api for h in three] == expected[:5]
        assert three == sorted(three, key=lambda h: -h.score)
        # examples off: the fusion of the other two, as before that stage existed
        expected = rank(reciprocal_rank_fusion([dense_100, bm25_100],
                                               [1.0, flat.lexical_weight], flat.rrf_k))
        assert [h.api for h in two.search(query, 5)] == expected[:5]
    # a filter holds for both rankers
    writes = fused.search("get rid of the trips bucket", 5, where={"effect": "write"})
    assert writes and all(h.metadata["effect"] == "write" and h.text for h in writes)
    # the documents are read back in pages (one read of a large collection is too many
    # SQL variables for chroma): pages of 7 give the same corpus and the same hits
    paged = ToolIndex(tmp_path / "chroma", pipeline=flat)
    paged.page_size = 7
    assert paged.build(docs).unchanged == len(docs)
    assert paged.search(queries[0], 5) == fused.search(queries[0], 5)
    assert paged.search("get rid of the trips bucket", 5, where={"effect": "write"}) == writes


def test_example_requests_are_in_the_document_and_an_edited_one_re_embeds_its_api(
    tmp_path: Path, kinto: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    app = kinto.app("kinto")
    first = app.apis[0]
    assert first.queries and all(q in tool_documents(kinto)[0].text for q in first.queries)
    assert not any(q in tool_documents(kinto, template=PLAIN_TEMPLATE)[0].text
                   for q in first.queries)

    index = ToolIndex(tmp_path / "chroma")
    built = index.build(tool_documents(kinto))
    assert built.embedded == len(app.apis)
    assert built.examples == sum(len(a.queries) for a in app.apis) == index.examples.count()
    edited = first.model_copy(update={"queries": [*first.queries[:-1], "Is Kinto up at all?"]})
    catalog = Catalog([app.model_copy(update={"apis": [edited, *app.apis[1:]]})])
    again = index.build(tool_documents(catalog))
    assert (again.embedded, again.unchanged, again.examples) == (1, len(app.apis) - 1, 1)
    assert index.examples.get(ids=[f"{first.id}#{len(first.queries) - 1}"])["documents"] == \
        ["Is Kinto up at all?"]
    assert index.build(tool_documents(catalog)).examples == 0     # unchanged: nothing embedded
    # a build cut short between the two collections: an example of an API that is gone
    # from the documents is skipped, not served
    index.collection.delete(ids=[first.id])
    hits = index.search("Is Kinto up at all?", 5)
    assert hits and first.id not in {h.api for h in hits}

    plain = ToolIndex(tmp_path / "chroma", pipeline=Pipeline(expansion=False))
    assert plain.collection.name == "tools-all-MiniLM-L6-v2-plain"   # apart from the other
    assert plain.build(tool_documents(catalog, expansion=False)).embedded == len(app.apis)


def test_a_missing_or_corrupt_model_folder_is_one_clear_error(
    tmp_path: Path, dataset: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)
    queries, corpus = dataset
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "config.json").write_text("{not json")
    (corrupt / "model.safetensors").write_bytes(b"\0" * 64)
    for folder, message in ((tmp_path / "missing", "no embedding model in"),
                            (corrupt, "cannot load the embedding model")):
        result = CliRunner().invoke(cli, [
            "retriever", "evaluate", "--queries", str(queries), "--corpus", str(corpus),
            "--index", str(tmp_path / "chroma"), "--model", str(folder)])
        assert result.exit_code == 1, result.output
        assert f"Error: {message}" in result.output and "Traceback" not in result.output


def test_the_packaged_weights_are_the_upstream_ones_and_a_tampered_copy_is_refused(
    tmp_path: Path,
) -> None:
    packaged = Path(model_path()) / "model.safetensors"      # verified on the way
    verify_weights(packaged, UPSTREAM_SHA256["all-MiniLM-L6-v2"])
    tampered = tmp_path / "model.safetensors"
    shutil.copyfile(packaged, tampered)
    with tampered.open("r+b") as handle:
        handle.seek(-1, 2)
        last = handle.read(1)
        handle.seek(-1, 2)
        handle.write(bytes([last[0] ^ 1]))
    for _ in range(2):                           # a failed check is not remembered
        with pytest.raises(RetrieverError, match="does not match the upstream model's"):
            verify_weights(tampered, UPSTREAM_SHA256["all-MiniLM-L6-v2"])
