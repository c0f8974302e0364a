"""Drift verdicts on one request: a recorded answer against the one the app gives now."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbed.apis import Catalog
from toolbed.connectors import Change, api_of, compare, request_pattern


def answer(body: Any, status: int = 200, kind: str = "application/json") -> dict[str, Any]:
    text = json.dumps(body) if not isinstance(body, str) else body
    return {"status": {"code": status}, "headers": {"Content-Type": [kind]},
            "body": {"string": text}}


RECORDED = {"data": [{"id": "a", "title": "Dune", "year": 1965, "note": None},
                     {"id": "b", "title": "Emma", "year": 1815, "note": "gift", "tag": "x"}]}


@pytest.mark.parametrize(("fresh", "change", "detail"), [
    (answer(RECORDED), Change.UNCHANGED, ""),
    (answer({"data": [{"id": "c", "title": "Ubik", "year": 1969, "note": "ok"}]}),
     Change.VALUES, "same shape, other values"),          # 'tag' was optional: fine
    (answer({"data": [{"id": "a", "title": "Dune", "year": 1965, "note": None,
                       "isbn": "x"}]}), Change.VALUES, "$.data[].isbn is new"),
    (answer({"data": [{"id": "a", "year": 1965, "note": None}]}),
     Change.SHAPE, "$.data[].title is gone"),
    (answer({"data": [{"id": "a", "title": "Dune", "year": "1965", "note": None}]}),
     Change.SHAPE, "$.data[].year: number is now string"),
    (answer({"data": {"id": "a"}}), Change.SHAPE, "$.data: array is now object"),
    (answer(RECORDED, 404), Change.GONE, "status 200 is now 404"),
    (answer(RECORDED, 401), Change.AUTH, "status 200 is now 401"),
    (answer(RECORDED, 500), Change.SHAPE, "status 200 is now 500"),
    (answer("<p>moved</p>", kind="text/html"), Change.SHAPE,
     "content type application/json is now text/html"),
    (None, Change.GONE, "no answer now"),
])
def test_each_kind_of_change_gets_its_verdict(fresh: Any, change: Change, detail: str) -> None:
    verdict = compare(answer(RECORDED), fresh)
    assert (verdict.change, verdict.detail) == (change, detail)


def test_a_field_that_is_null_now_and_was_never_null_is_a_shape_change() -> None:
    verdict = compare(answer({"title": "Dune"}), answer({"title": None}))
    assert verdict.change is Change.SHAPE and "string is now null" in verdict.detail


def test_a_recorded_request_is_named_by_the_api_it_called(catalog: Catalog) -> None:
    uri = "http://kinto.toolbed.test/v1/buckets/trips/collections/packing/records/r1"
    assert api_of(catalog, "GET", uri) == "kinto.get_record"
    assert api_of(catalog, "GET", "http://nowhere.example/x") is None


def test_an_object_keyed_by_ids_is_compared_by_its_values_not_its_ids() -> None:
    before = {"5eda8d72-9a13-44d9-a3b2-e425fb114212": {"url": "https://a.example", "paused": False}}
    after = {"0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9": {"url": "https://b.example", "paused": True}}
    assert compare(answer(before), answer(after)).change is Change.VALUES
    renamed = {"0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9": {"link": "https://b.example",
                                                         "paused": True}}
    assert compare(answer(before), answer(renamed)).change is Change.SHAPE


def test_an_empty_array_beside_a_full_one_takes_any_items() -> None:
    # one item's tags are strings, a later one's are empty: the shape of tags' items is
    # still the strings', and a fresh answer whose tags are all empty is no change
    recorded = {"items": [{"tags": ["a"]}, {"tags": []}], "pages": [[1], []]}
    assert compare(answer(recorded), answer(recorded)).change is Change.UNCHANGED
    empty = {"items": [{"tags": []}], "pages": [[]]}
    assert compare(answer(recorded), answer(empty)).change is Change.VALUES
    assert compare(answer(empty), answer(recorded)).change is Change.VALUES
    typed = {"items": [{"tags": [1]}], "pages": [[1]]}
    assert compare(answer(recorded), answer(typed)).change is Change.SHAPE


def test_a_request_pattern_takes_any_id_for_an_id() -> None:
    room = "http://synapse.toolbed.test/_matrix/client/v3/rooms/%21naXS-GVYKw7bfT3lWUYFtWrHvnKh9f4_n10S9qVOIVU/state/m.room.topic"
    again = room.replace("naXS-GVYKw7bfT3lWUYFtWrHvnKh9f4_n10S9qVOIVU", "P4GSyOB6hrDxXSttcwAX2nAc")
    assert request_pattern({"method": "GET", "uri": room}) == \
        ("GET", "/_matrix/client/v3/rooms/{id}/state/m.room.topic?")
    assert request_pattern({"method": "GET", "uri": room}) == \
        request_pattern({"method": "GET", "uri": again})
    assert request_pattern({"method": "GET", "uri": "http://a.test/items?page=2&sort=name"}) \
        == ("GET", "/items?page={id}&sort=name")
    assert request_pattern({"method": "GET", "uri": room.replace("m.room.topic", "m.room.name")}) \
        != request_pattern({"method": "GET", "uri": room})


def test_a_header_that_bindings_read_and_is_gone_now_is_a_shape_change() -> None:
    tagged = {**answer(RECORDED), "headers": {"Content-Type": ["application/json"],
                                              "ETag": ['"1795"'], "Date": ["Fri"]}}
    untagged = {**tagged, "headers": {"Content-Type": ["application/json"], "Date": ["Sat"]}}
    retagged = {**tagged, "headers": {**tagged["headers"], "ETag": ['"1796"']}}
    assert compare(tagged, retagged).change is Change.UNCHANGED      # a new ETag: its value
    assert compare(untagged, tagged).change is Change.UNCHANGED      # one more: no reader breaks
    verdict = compare(tagged, untagged)
    assert (verdict.change, verdict.detail) == (Change.SHAPE, "header etag is gone")
