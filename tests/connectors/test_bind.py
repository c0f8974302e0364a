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
