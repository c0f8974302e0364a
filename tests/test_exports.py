"""Each package's ``__all__`` lists exactly what it exports."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    ["toolbed", "toolbed.apis", "toolbed.connectors", "toolbed.errors", "toolbed.rollback",
     "toolbed.tasks", "toolbed.harness", "toolbed.harness.metrics", "toolbed.retriever"],
)
def test_all_is_complete_and_importable(module):
    mod = importlib.import_module(module)
    public = {n for n in vars(mod) if not n.startswith("_") and not isinstance(
        getattr(mod, n), type(importlib)) and getattr(getattr(mod, n), "__module__", "")
        .startswith("toolbed")}
    assert public <= set(mod.__all__), sorted(public - set(mod.__all__))
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_every_error_derives_from_toolbed_error():
    from toolbed import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.ToolbedError)
