"""The direction of imports: each package imports only the packages below it.

    toolbed.errors, .paths, .registry, .stats     the ground floor (and ._lazy)
    apis                                          the catalog
    connectors                                    the call path, and the running apps' records
    launchers, rollback, retriever                beside each other, on connectors
    tasks                                         the task suite: format, loader, splits
    harness                                       agents, runner, scoring
    cli                                           commands over all of it

Every import counts, also one inside a function, because a lazy import is still a
dependency; the README's picture of the house is this table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from toolbed._lazy import exports

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {
    "toolbed.errors": 0, "toolbed.paths": 0, "toolbed.registry": 0, "toolbed._lazy": 0,
    "toolbed.stats": 0,
    "toolbed.apis": 1,
    "toolbed.connectors": 2,
    "toolbed.launchers": 3, "toolbed.rollback": 3, "toolbed.retriever": 3,
    "toolbed.tasks": 4,
    "toolbed.harness": 5,
    "toolbed.cli": 6,
}
FOLDERS = {"toolbed.apis": "apis", "toolbed.connectors": "connectors",
           "toolbed.launchers": "launchers",
           "toolbed.rollback": "rollback", "toolbed.retriever": "retriever",
           "toolbed.tasks": "tasks", "toolbed.harness": "harness", "toolbed.cli": "toolbed/cli"}


def package_of(module: str) -> str | None:
    """The entry of LAYERS that ``module`` belongs to (the longest prefix)."""
    hits = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    return max(hits, key=len) if hits else None


def modules() -> list[tuple[str, Path]]:
    found = [(f"toolbed.{p.stem}", p) for p in (ROOT / "toolbed").glob("*.py")
             if p.stem != "__init__"]
    for package, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join([package, *parts]).removesuffix(".__init__")
            found.append((name, path))
    return found


def imports(name: str, path: Path) -> set[str]:
    """Every toolbed module ``path`` imports, relative imports resolved."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.add(target)
            # a name a package re-exports counts as an import of the module defining it
            defined = EXPORTS.get(target, {})
            out |= {_resolve(target, defined[a.name]) for a in node.names if a.name in defined}
    return {m for m in out if m.startswith("toolbed")}


def _resolve(package: str, module: str) -> str:
    level = len(module) - len(module.lstrip("."))
    return module if not level else ".".join(
        [*package.split(".")[:len(package.split(".")) - level + 1], module[level:]])


def _reexports(init: Path) -> dict[str, str]:
    """What a package's ``__init__`` re-exports, lazily or not: ``{name: module}``."""
    found = exports(init)
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level and node.module:
            found |= {a.asname or a.name: "." * node.level + node.module for a in node.names}
    return found


EXPORTS = {name: _reexports(path) for name, path in modules() if path.name == "__init__.py"}


@pytest.mark.parametrize(("name", "path"), [pytest.param(n, p, id=n) for n, p in modules()])
def test_a_module_imports_nothing_from_a_higher_layer(name, path):
    own = package_of(name)
    assert own is not None, f"{name} is in no layer: add its package to LAYERS"
    upward = sorted(m for m in imports(name, path) if (p := package_of(m)) and p != own and (
        LAYERS[p] > LAYERS[own] or LAYERS[p] == LAYERS[own] > 0))     # peers stay apart
    assert upward == [], f"{name} ({own}, layer {LAYERS[own]}) imports {upward}"


def test_no_import_cycle_between_modules():
    """Also inside a package, also through an import deferred into a function; a
    package's ``__init__`` only names its exports, so it is not a node."""
    known = {name for name, path in modules() if path.name != "__init__.py"}
    graph = {name: {m for m in imports(name, path) if m in known and m != name}
             for name, path in modules() if name in known}
    cycles, state = [], dict.fromkeys(graph, 0)             # 0 new, 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state[nxt] == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if state[node] == 0:
            visit(node, [node])
    assert cycles == []
