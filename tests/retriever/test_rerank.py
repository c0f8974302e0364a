"""The rerank stage: it orders the top by its weights, learns them from labelled rankings,
is skipped when off or absent, and a damaged file is one clear error."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.errors import RetrieverError
from toolbed.retriever import (
    RERANKER_FILE,
    Candidates,
    Pipeline,
    Reranker,
    ToolIndex,
    fit_reranker,
    load_reranker,
    named_sources,
    rank,
    tool_documents,
    usage_counts,
)
from toolbed.retriever._model import model_path

from ..conftest import block_network

TOP = Candidates(["a.edit", "a.delete", "a.search", "b.find"],
                 dense={"a.edit": 0.9, "a.delete": 0.8, "a.search": 0.7},
                 lexical={"a.edit": 4.0, "a.search": 8.0},
                 examples={"a.delete": 0.95, "a.edit": 0.6})


def test_the_reranker_orders_the_top_by_its_weights_and_leaves_the_rest() -> None:
    assert rank(Reranker({"dense": 1.0}).rerank(TOP))[:3] == ["a.edit", "a.delete", "a.search"]
    assert rank(Reranker({"lexical": 1.0}).rerank(TOP))[0] == "a.search"
    assert rank(Reranker({"examples": 1.0}).rerank(TOP))[0] == "a.delete"
    by_use = Reranker({"prior": 1.0}, prior={"b.find": 0.5, "a.delete": 0.2})
    assert rank(by_use.rerank(TOP))[:2] == ["b.find", "a.delete"]
    # the search a chain that uses the edit also uses, and the lookup an argument names
    follows = Reranker({"follows": 1.0}, follows={"a.edit": {"a.search": 0.6}})
    assert rank(follows.rerank(TOP))[0] == "a.search"
    source = Reranker({"source": 1.0, "dense": 0.01}, sources={"a.edit": ["b.find"]})
    assert rank(source.rerank(TOP))[0] == "b.find"
    # only the top ``depth`` is scored again: the rest keep their place after it
    assert list(Reranker({"lexical": 1.0}, depth=2).rerank(TOP)) == ["a.edit", "a.delete"]


def test_a_ranker_that_did_not_run_changes_no_order() -> None:
    without_dense = Candidates(TOP.ranked, lexical=TOP.lexical)
    both = Reranker({"dense": 5.0, "lexical": 1.0})
    assert rank(both.rerank(without_dense)) == rank(Reranker({"lexical": 1.0}).rerank(
        without_dense))


def test_fitting_learns_the_feature_that_marks_the_gold_api() -> None:
    """Gold is always the one BM25 scores highest, never the nearest: the fit must weigh
    BM25 up and the dense gap down, and put gold first on a ranking it has not seen."""
    rankings, gold = [], []
    for n in range(40):
        apis = [f"app.x{n}_{i}" for i in range(6)]
        target = apis[1 + n % 5]
        rankings.append(Candidates(apis, dense={a: 0.9 - 0.05 * i for i, a in enumerate(apis)},
                                   lexical={a: 10.0 if a == target else 1.0 + i % 3
                                            for i, a in enumerate(apis)}))
        gold.append({target})
    fitted = fit_reranker(rankings, gold, {}, {}, {})
    assert fitted.weights["lexical"] > 0
    unseen = Candidates(["q.a", "q.b", "q.c"], dense={"q.a": 0.9, "q.b": 0.85, "q.c": 0.8},
                        lexical={"q.a": 2.0, "q.b": 1.0, "q.c": 10.0})
    assert rank(fitted.rerank(unseen))[0] == "q.c"
    with pytest.raises(RetrieverError, match="no gold API among their top hits"):
        fit_reranker([TOP], [{"z.none"}], {}, {}, {})


def test_usage_counts_are_shares_of_the_train_chains() -> None:
    prior, follows = usage_counts([{"a.search", "a.edit"}, {"a.search", "a.edit"}, {"a.edit"},
                                   {"b.find"}])
    assert prior["a.edit"] == round(3 / (3 + 2), 4) > prior["a.search"] == round(2 / 5, 4)
    assert follows["a.edit"]["a.search"] == round(2 / (3 + 2), 4)
    assert follows["a.search"]["a.edit"] == round(2 / (2 + 2), 4)
    assert "b.find" not in follows


def test_every_named_source_is_another_api_of_the_same_app_named_by_a_required_argument(
    catalog: Catalog,
) -> None:
    sources = named_sources(catalog)
    assert sources, "no required argument of the catalog names the API its value comes from"
    for api_id, found in sources.items():
        api = catalog.apis[api_id]
        text = " ".join(str((api.args[a].schema_ or {}).get("description", ""))
                        for a in api.required if a in api.args)
        for source in found:
            assert source != api_id and source.split(".")[0] == api_id.split(".")[0]
            assert re.search(rf"\b{source.split('.', 1)[1]}\b", text), (api_id, source)


@pytest.fixture
def kinto_index(tmp_path: Path, catalog: Catalog) -> ToolIndex:
    """The kinto APIs in an index over a model folder of their own (a copy of the
    packaged model), as `retriever train` leaves one."""
    model = tmp_path / "model"
    shutil.copytree(model_path(), model)
    index = ToolIndex(tmp_path / "chroma", model, pipeline=Pipeline(apps=0))
    index.build(tool_documents(Catalog([catalog.app("kinto")])))
    return index


QUERY = "make a new bucket called trips"


@pytest.fixture
def before(kinto_index: ToolIndex, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kinto index's top 5 for ``QUERY`` with no reranker yet, the network blocked."""
    block_network(monkeypatch)
    return [h.api for h in kinto_index.search(QUERY, 5)]


def test_an_index_reranks_with_its_models_reranker_and_not_with_the_stage_off(
    tmp_path: Path, kinto_index: ToolIndex, before: list[str]
) -> None:
    assert kinto_index.pipeline.name == "expansion+dense+lexical+examples"   # none saved yet
    favourite = before[3]
    Reranker({"prior": 1.0}, prior={favourite: 0.9}).save(kinto_index.model / RERANKER_FILE)
    reranked = ToolIndex(tmp_path / "chroma", kinto_index.model, pipeline=Pipeline(apps=0))
    assert reranked.pipeline.rerank and reranked.reranker is not None
    hits = reranked.search(QUERY, 5)
    assert [h.api for h in hits] == [favourite] + [a for a in before if a != favourite][:4]
    assert hits[0].score > hits[1].score
    off = ToolIndex(tmp_path / "chroma", kinto_index.model,
                    pipeline=Pipeline(apps=0).without("rerank"))
    assert [h.api for h in off.search(QUERY, 5)] == before
    # the candidates it reads are the pipeline's ranking before it, with each ranker's scores
    [candidates] = reranked.candidates([QUERY])
    assert candidates.ranked[:5] == before
    assert set(candidates.dense) & set(candidates.lexical) & set(candidates.examples)


def test_a_damaged_reranker_is_one_clear_error(
    tmp_path: Path, kinto_index: ToolIndex
) -> None:
    (kinto_index.model / RERANKER_FILE).write_text('{"weights": {"colour": 1}}')
    with pytest.raises(RetrieverError, match="is damaged"):
        load_reranker(kinto_index.model)
    result = CliRunner().invoke(cli, ["retriever", "search", "make a bucket", "--index",
                                      str(tmp_path / "chroma"), "--model",
                                      str(kinto_index.model)])
    assert result.exit_code == 1, result.output
    assert "Error: the reranker" in result.output and "delete the file" in result.output
    assert "Traceback" not in result.output


def test_a_cut_offers_after_the_first_hit_only_those_the_reranker_is_sure_of(
    tmp_path: Path, kinto_index: ToolIndex, before: list[str]
) -> None:
    sure = before[2:4]               # the reranker gives these two 0.99, the rest 0.007
    Reranker({"prior": 10.0}, -5.0, prior={sure[0]: 1.0, sure[1]: 0.99}).save(
        kinto_index.model / RERANKER_FILE)

    def search(cut: float) -> list[str]:
        index = ToolIndex(tmp_path / "chroma", kinto_index.model, pipeline=Pipeline(
            apps=0, cut=cut))
        assert index.pipeline.name.endswith("+rerank" + (f"+cut{cut:g}" if cut else ""))
        return [h.api for h in index.search(QUERY, 5)]

    assert search(0.0) == sure + [a for a in before if a not in sure][:3]
    assert search(0.5) == search(0.99) == sure
    assert search(0.995) == sure[:1]        # the first hit is always offered
    Reranker({"prior": 10.0}, -5.0).save(kinto_index.model / RERANKER_FILE)
    assert search(0.5) == before[:1]


def test_a_cut_without_a_reranker_to_read_is_one_clear_error(
    tmp_path: Path, kinto_index: ToolIndex
) -> None:
    assert not (kinto_index.model / RERANKER_FILE).exists()
    with pytest.raises(RetrieverError, match="has no reranker"):
        ToolIndex(tmp_path / "chroma", kinto_index.model, pipeline=Pipeline(cut=0.4))
    for args, says in [(["--cut", "1.5"], "a probability from 0"),
                       (["--cut", "0.4", "--off", "rerank"], "needs the rerank stage")]:
        result = CliRunner().invoke(cli, ["retriever", "search", "make a bucket", "--index",
                                          str(tmp_path / "chroma"), "--model",
                                          str(kinto_index.model), *args])
        assert result.exit_code != 0 and says in result.output, result.output
        assert "Traceback" not in result.output
