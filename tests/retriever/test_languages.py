"""Requests in Chinese: their own documents, tokens, model and index, chosen per request."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.errors import RetrieverError
from toolbed.retriever import (
    BM25,
    MultilingualIndex,
    ToolIndex,
    cjk_tokens,
    query_language,
    tool_document,
    tool_documents,
)

from ..conftest import block_network


@pytest.fixture(scope="module")
def kinto(catalog: Catalog) -> Catalog:
    return Catalog([catalog.app("kinto")])


def test_a_request_with_a_chinese_character_is_chinese() -> None:
    assert query_language("will it rain in Hangzhou tomorrow") == "en"
    assert query_language("杭州明天会下雨吗") == "zh"
    assert query_language("把 Kinto 里的 trips bucket 删掉") == "zh"        # mixed scripts
    assert query_language("𠀀 is outside the Basic Multilingual Plane") == "zh"


def test_chinese_is_tokenized_into_characters_and_their_pairs() -> None:
    assert cjk_tokens("新建书签") == ["新", "建", "书", "签", "新建", "建书", "书签"]
    # Latin words stay words; full-width digits read as ASCII ones
    assert cjk_tokens("Kinto 的 bucket ２０２５") == ["kinto", "的", "bucket", "2025"]


def test_chinese_documents_carry_the_chinese_requests_and_english_ones_do_not(
    kinto: Catalog,
) -> None:
    api = kinto.api("kinto.create_record")
    assert api.queries_zh, "the catalog gives every API requests in Chinese"
    english = tool_document(api, kinto.app("kinto"))
    chinese = tool_document(api, kinto.app("kinto"), lang="zh")
    assert chinese.examples == tuple(api.queries_zh)
    assert all(q in chinese.text for q in api.queries_zh)
    assert not any(q in english.text for q in api.queries_zh)
    assert english.examples == tuple(api.queries)
    plain = tool_documents(kinto, lang="zh", expansion=False)[0]
    assert not any(q in plain.text for q in kinto.apis[plain.id].queries_zh)

    # an edited Chinese request re-embeds the Chinese document only
    edited = api.model_copy(update={"queries_zh": [*api.queries_zh[:-1], "在书单里加一本《三体》"]})
    assert tool_document(edited, kinto.app("kinto"), lang="zh").hash != chinese.hash
    assert tool_document(edited, kinto.app("kinto")).hash == english.hash


def test_bm25_finds_chinese_by_characters() -> None:
    from toolbed.retriever import ToolDocument

    docs = [ToolDocument("a.add", "新建一个书签"), ToolDocument("a.drop", "删除书签 bookmark")]
    bm25 = BM25(docs, lang="zh")
    found = bm25.search_many(["帮我新建书签", "没有共同字", "bookmark"], k=2)
    assert [h.api for h in found[0]] == ["a.add", "a.drop"]
    assert found[1] == []                        # no character in common: nothing
    assert [h.api for h in found[2]] == ["a.drop"]


def test_each_request_goes_to_its_languages_index(
    tmp_path: Path, kinto: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    block_network(monkeypatch)                   # both models load from local files
    english = ToolIndex(tmp_path / "chroma")
    chinese = ToolIndex(tmp_path / "chroma", lang="zh")
    assert chinese.model == "m3e-small"
    assert chinese.collection.name != english.collection.name
    english.build(tool_documents(kinto))
    chinese.build(tool_documents(kinto, lang="zh"))
    both = MultilingualIndex({"en": english, "zh": chinese})
    asked = ["delete the bucket called trips", "把名为 trips 的 bucket 整个删掉"]
    found = both.search_many(asked, k=5)
    assert "kinto.delete_bucket" in [h.api for h in found[0]]
    assert "kinto.delete_bucket" in [h.api for h in found[1]]
    # the Chinese request was answered from the Chinese documents
    assert any(q in found[1][0].text for q in kinto.apis[found[1][0].api].queries_zh)
    assert found[0] == english.search(asked[0], 5) and found[1] == chinese.search(asked[1], 5)


def test_an_unknown_language_is_one_clear_error(tmp_path: Path, kinto: Catalog) -> None:
    with pytest.raises(RetrieverError, match="language 'fr'.*en, zh"):
        ToolIndex(tmp_path / "chroma", lang="fr")
    with pytest.raises(RetrieverError, match="language 'fr'"):
        tool_documents(kinto, lang="fr")
    with pytest.raises(RetrieverError, match="English index"):
        MultilingualIndex({"zh": ToolIndex(tmp_path / "chroma", lang="zh")})
    result = CliRunner().invoke(cli, ["retriever", "evaluate", "--lang", "all"])
    said = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 2 and "one language at a time, en or zh" in said
