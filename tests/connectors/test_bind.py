"""Binding arguments from observations: an expression that does not fit the data is a
clear ArgumentError, never a Python error from inside jmespath."""

from __future__ import annotations

import pytest
from jmespath.exceptions import JMESPathError

from toolbed.connectors import bind_args
from toolbed.connectors._bind import evaluate
from toolbed.errors import ArgumentError


def test_a_function_given_the_wrong_kind_of_value_is_a_binding_error() -> None:
    # an undo that merges what a `before` read returned, when it was a list: jmespath
    # checks the type of merge's first argument only, and dict.update fails on the rest
    # (a ValueError that ended a whole `toolbed eval` run before)
    context = {"args": {"uuid": "w1"}, "before": {"body": ["tag_colour"]}}
    expression = 'merge(`{"tag_colour": ""}`, before.body)'
    with pytest.raises(JMESPathError, match="does not fit the data"):
        evaluate(expression, context)
    with pytest.raises(ArgumentError, match="binding 'changes' = .* failed"):
        bind_args({"changes": expression}, context)
    assert bind_args({"changes": expression}, {"before": {"body": {"title": "x"}}}) == {
        "changes": {"tag_colour": "", "title": "x"}}


def test_a_binding_that_finds_nothing_fails_unless_it_asks_for_null() -> None:
    before = {"before": {"body": {"parent_id": None, "name": "general"}}}
    with pytest.raises(ArgumentError, match="found nothing"):
        bind_args({"parent_id": "before.body.parent_id"}, before)
    assert bind_args({"parent_id": "before.body.parent_id || `null`",
                      "name": "before.body.name || `null`"}, before) == {
        "parent_id": None, "name": "general"}
    assert bind_args({"topic": "`null`"}, {}) == {"topic": None}


def test_pick_keeps_the_keys_a_write_changed_as_they_were_before() -> None:
    context = {"args": {"properties": {"Status": {"status": {"name": "Done"}}}},
               "before": {"body": {"properties": {
                   "Status": {"status": {"name": "To do"}}, "Total": {"formula": 3}}}}}
    assert bind_args({"properties": "pick(before.body.properties, keys(args.properties))"},
                     context) == {"properties": {"Status": {"status": {"name": "To do"}}}}


def test_unquote_gives_back_the_name_a_webdav_href_encodes() -> None:
    # the runtime percent-encodes a path argument itself: a folder name taken from an
    # href must be decoded first, or 家庭 is sent as %25E5%25AE... and read as a 404 page
    item = {"item": {"href": "/%E5%AE%B6%E5%BA%AD/%E8%A3%85%E4%BF%AE.csv"}}
    assert bind_args({"folder": "unquote(split(item.href, '/')[1])",
                      "name": "unquote(split(item.href, '/')[2])"}, item) == {
        "folder": "家庭", "name": "装修.csv"}
    assert evaluate("unquote('My%20files')", {}) == "My files"
