"""One registry for the parts users pick by name: launchers now; metrics, retrievers
and scorers later.

    @register("launcher", "kinto")
    class KintoLauncher(Launcher): ...

    lookup("launcher", "kinto")   # -> KintoLauncher
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from toolbed.errors import ToolbedError

__all__ = ["Kind", "lookup", "names", "register"]

Kind = Literal["launcher", "metric", "retriever", "scorer", "agent"]
T = TypeVar("T")

_REGISTRY: dict[tuple[str, str], Any] = {}


def register(kind: Kind, name: str) -> Callable[[T], T]:
    """Class or function decorator that makes ``obj`` findable as ``(kind, name)``."""

    def add(obj: T) -> T:
        _REGISTRY[(kind, name)] = obj
        return obj

    return add


def lookup(kind: Kind, name: str) -> Any:
    """The object registered under ``(kind, name)``; the error lists the valid names."""
    try:
        return _REGISTRY[(kind, name)]
    except KeyError:
        valid = ", ".join(names(kind)) or "none"
        raise ToolbedError(f"no {kind} named {name!r}; known {kind}s: {valid}") from None


def names(kind: Kind) -> list[str]:
    """Registered names of one kind, sorted."""
    return sorted(n for k, n in _REGISTRY if k == kind)
