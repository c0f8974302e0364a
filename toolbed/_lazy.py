"""Package exports imported on first use (PEP 562).

``import toolbed`` and every ``toolbed`` command used to import the whole library:
vcrpy (which imports aiohttp to patch it), jsonschema, LangChain, sqlite-utils,
before doing anything. A package that calls ``attach`` instead imports a submodule
only when one of its names is first read, so a command pays for what it touches.

A package states its exports once, as ordinary imports under ``if TYPE_CHECKING:``,
which is what type checkers and readers see; ``attach`` reads that block from the
package's own source and serves each name from its submodule::

    from typing import TYPE_CHECKING
    from toolbed._lazy import attach as _attach

    if TYPE_CHECKING:
        from ._runtime import Runtime

    __getattr__, __dir__ = _attach(__name__, __file__)
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["attach", "exports"]


def exports(init_file: str | Path) -> dict[str, str]:
    """``{name: module}`` for every name the ``if TYPE_CHECKING:`` block of ``init_file``
    imports (``from ._runtime import Runtime`` gives ``{"Runtime": "._runtime"}``)."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                for alias in stmt.names:
                    where[alias.asname or alias.name] = "." * stmt.level + stmt.module
    return where


def attach(package: str, init_file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: a name of its
    ``TYPE_CHECKING`` imports is imported from its submodule when first read, then
    kept on the package, so later reads cost nothing; a subpackage's name imports it
    (``toolbed.apis`` after ``import toolbed``), as an eager package's would."""
    where = exports(init_file)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}"):
            value = importlib.import_module(f"{package}.{name}")   # ``toolbed.apis``
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
