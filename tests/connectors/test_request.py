"""Requests are built from the catalog, validated first, and never leave the API's path."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from toolbed.connectors import Runtime, build_request
from toolbed.errors import ArgumentError, UnsafeArgumentError

BASE = "https://api.demo.example/v2"


def test_path_query_defaults_and_lists(demo_catalog):
    api = demo_catalog.api("demo.get_item")
    request = build_request(api, {"item_id": "a b", "expand": ["owner", "tags"]}, BASE)
    assert request.method == "GET"
    assert request.url.raw_path == b"/v2/items/a%20b?expand=owner&expand=tags&units=metric"


def test_an_object_in_the_query_spreads_into_one_parameter_per_key(demo_catalog):
    api = demo_catalog.api("demo.get_item")
    request = build_request(
        api, {"item_id": "1", "filters": {"min_due": "2026-01-01", "done": False}}, BASE
    )
    assert request.url.params.multi_items() == [
        ("min_due", "2026-01-01"), ("done", "false"), ("units", "metric")
    ]


def test_json_body_fields_nest_and_headers_are_set(demo_catalog):
    api = demo_catalog.api("demo.create_item")
    request = build_request(
        api, {"title": "Milk", "tags": ["food"], "request_id": "r-1"}, BASE,
        auth_params={"appid": "k"},
    )
    assert json.loads(request.content) == {"data": {"title": "Milk", "tags": ["food"]}}
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-request-id"] == "r-1"
    assert request.url.params["appid"] == "k"


def test_raw_text_body(demo_catalog):
    api = demo_catalog.api("demo.put_note")
    request = build_request(api, {"name": "todo", "text": "BEGIN:VCALENDAR\n"}, BASE)
    assert request.content == b"BEGIN:VCALENDAR\n"
    assert request.headers["content-type"] == "text/plain"


def test_xml_template_escapes_values(demo_catalog):
    api = demo_catalog.api("demo.find")
    request = build_request(api, {"phrase": 'a<b & "c"'}, BASE)
    assert request.content == b"<q><match>a&lt;b &amp; &quot;c&quot;</match></q>"
    assert request.headers["depth"] == "1"


@pytest.mark.parametrize(
    "value", ["../../admin", "..", ".", "", "http://evil.example", "a/b", "a\\b"]
)
def test_a_path_value_cannot_leave_the_path(demo_catalog, value):
    api = demo_catalog.api("demo.get_item")
    with pytest.raises(UnsafeArgumentError) as err:
        build_request(api, {"item_id": value}, BASE)
    assert "is not a single path segment" in str(err.value)
    assert "'item_id'" in str(err.value)


def test_characters_that_could_change_the_origin_are_encoded(demo_catalog):
    api = demo_catalog.api("demo.get_item")
    request = build_request(api, {"item_id": "@evil.example:80?x=#frag"}, BASE)
    assert request.url.host == "api.demo.example"
    assert request.url.raw_path.startswith(b"/v2/items/%40evil.example%3A80%3Fx%3D%23frag")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "'item_id' is a required property"),
        ({"item_id": 5}, "item_id: 5 is not of type 'string'"),
        ({"item_id": "x", "units": "kelvin"}, "units: 'kelvin' is not one of"),
        ({"item_id": "x", "colour": "red"}, "Additional properties are not allowed"),
    ],
)
def test_schema_violations_are_refused(demo_catalog, args, expected):
    with pytest.raises(ArgumentError) as err:
        build_request(demo_catalog.api("demo.get_item"), args, BASE)
    assert expected in str(err.value)
    assert str(err.value).startswith("demo.get_item: invalid arguments")


def test_a_bad_call_sends_nothing_and_becomes_an_error_observation(demo_catalog):
    sent = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200))
    with Runtime(demo_catalog, env={"DEMO_API_KEY": "k"}, transport=transport) as rt:
        bad = rt.observe("demo.get_item", {"item_id": "../../admin"})
        wrong_type = rt.observe("demo.get_item", {"item_id": 7})
        unknown = rt.observe("demo.get_itme", {})
    assert sent == []
    assert bad.error.type == "UnsafeArgumentError" and bad.status is None
    assert wrong_type.error.type == "ArgumentError"
    assert wrong_type.error.details == [
        {"path": "item_id", "message": "7 is not of type 'string'"}
    ]
    assert unknown.error.type == "UnknownApiError" and "demo.get_item" in unknown.error.message


@pytest.mark.parametrize(("args", "expected"), [
    ({"item_id": "\ud83d"}, "argument item_id is not valid Unicode (a lone surrogate"),
    ({"item_id": "a", "expand": ["x\udc00"]}, "argument expand[0] is not valid Unicode"),
    ({"item_id": "a", "expand": ["x" * 70_000]}, "the query is too long to send"),
    ({"item_id": "a", "filters": {"n": 10**5000}},
     "argument filters.n is an integer too large to send"),
])
def test_values_no_request_can_carry_are_refused_by_name(demo_catalog, args, expected):
    with pytest.raises(ArgumentError, match=re.escape(expected)):
        build_request(demo_catalog.api("demo.get_item"), args, BASE)


@pytest.mark.parametrize(("data", "expected"), [
    ({"n": float("nan")}, "argument data.n is nan, not a finite number"),
    ({"n": [float("inf")]}, "argument data.n[0] is inf, not a finite number"),
])
def test_a_non_finite_number_in_a_body_is_refused(demo_catalog, data, expected):
    args = {"title": "t", "tags": [], "request_id": "r", "data": data}
    api = demo_catalog.api("demo.create_item")
    with pytest.raises(ArgumentError, match=re.escape(expected)):
        build_request(api, {k: v for k, v in args.items() if k in api.args or k == "data"},
                      BASE)


@pytest.mark.parametrize("value", ["\u201cr-1\u201d", "r-1\r\nX-Injected: 1", "r\x00"])
def test_a_header_value_must_be_printable_ascii(demo_catalog, value):
    with pytest.raises(UnsafeArgumentError, match="header argument 'request_id'"):
        build_request(demo_catalog.api("demo.create_item"),
                      {"title": "t", "request_id": value}, BASE)


@pytest.mark.parametrize("destination", ["/../", "/./", "/..\\../", "/a/../b/", "..\\x/"])
def test_a_header_that_carries_a_path_gets_the_path_rules(catalog, destination):
    api = catalog.api("wsgidav.rename_folder")
    args = {**api.examples[0].args, "destination": destination} if api.examples else {}
    with pytest.raises(ArgumentError):
        build_request(api, args or {"folder": "a", "destination": destination},
                      "http://127.0.0.1:9/dav")


@pytest.mark.parametrize("args", [[], "", 0, False, [["item_id", "a"]]])
def test_arguments_that_are_not_an_object_are_refused_and_nothing_is_sent(demo_catalog, args):
    sent = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200))
    with Runtime(demo_catalog, env={"DEMO_API_KEY": "k"}, transport=transport) as rt:
        observation = rt.observe("demo.get_item", args)
    assert sent == [] and observation.error is not None
    assert "arguments must be a JSON object" in observation.error.message


def test_a_path_in_a_header_is_sent_percent_encoded_like_a_path_argument(catalog):
    request = build_request(catalog.api("wsgidav.move_file"), {
        "folder": "notes", "name": "todo.txt", "destination": "/家庭/待办 清单.txt"},
        "http://127.0.0.1:9/dav")
    assert request.headers["destination"] == (
        "/%E5%AE%B6%E5%BA%AD/%E5%BE%85%E5%8A%9E%20%E6%B8%85%E5%8D%95.txt")
    with pytest.raises(ArgumentError, match="destination"):     # a C1 control is not a name
        build_request(catalog.api("wsgidav.move_file"), {
            "folder": "notes", "name": "todo.txt", "destination": "/notes/a\x85b"},
            "http://127.0.0.1:9/dav")


def test_a_name_an_app_reads_tilde_encoded_is_sent_so(catalog):
    # Datasette finds a table only by its tilde-encoded name: 家 is ~E5~AE~B6, a space
    # '+', a dot ~2E (else it would run into the .json suffix), '/' ~2F
    request = build_request(catalog.api("datasette.list_rows"), {
        "database": "household", "table": "家 账本.v2/old"}, "http://127.0.0.1:9")
    assert request.url.raw_path.split(b"?")[0] == (
        b"/household/~E5~AE~B6+~E8~B4~A6~E6~9C~AC~2Ev2~2Fold.json")
    plain = build_request(catalog.api("datasette.list_rows"), {
        "database": "household", "table": "accounts_2026"}, "http://127.0.0.1:9")
    assert plain.url.raw_path.split(b"?")[0] == b"/household/accounts_2026.json"
    with pytest.raises(ArgumentError, match="table"):         # still a required value
        build_request(catalog.api("datasette.list_rows"), {"database": "household"},
                      "http://127.0.0.1:9")
