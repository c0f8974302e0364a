"""One registry for the parts users pick by name: launchers, metrics and agents.

    @register("launcher", "kinto")
    class KintoLauncher(Launcher): ...

    lookup("launcher", "kinto")   # -> KintoLauncher

A plugin adds its own without touching toolbed: an installed distribution that names
an object under the entry-point group ``toolbed.<kind>s`` (``toolbed.agents``,
``toolbed.launchers``, ``toolbed.metrics``) has it registered under the entry point's
name the first time that kind is looked up or listed::

    [project.entry-points."toolbed.agents"]
    my-agent = "my_package.agents:make_my_agent"
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Literal, TypeVar

from toolbed.errors import ToolbedError

__all__ = ["Kind", "lookup", "names", "register"]

Kind = Literal["launcher", "metric", "retriever", "scorer", "agent"]
T = TypeVar("T")

_REGISTRY: dict[tuple[str, str], Any] = {}
_PLUGINS_LOADED: set[str] = set()


def register(kind: Kind, name: str) -> Callable[[T], T]:
    """Class or function decorator that makes ``obj`` findable as ``(kind, name)``."""

    def add(obj: T) -> T:
        _REGISTRY[(kind, name)] = obj
        return obj

    return add


def lookup(kind: Kind, name: str) -> Any:
    """The object registered under ``(kind, name)``; the error lists the valid names."""
    _load_plugins(kind)
    try:
        found = _REGISTRY[(kind, name)]
    except KeyError:
        valid = ", ".join(names(kind)) or "none"
        raise ToolbedError(f"no {kind} named {name!r}; known {kind}s: {valid}") from None
    if isinstance(found, _Broken):
        raise ToolbedError(found.message)
    return found


def names(kind: Kind) -> list[str]:
    """Registered names of one kind, sorted."""
    _load_plugins(kind)
    return sorted(n for k, n in _REGISTRY if k == kind)


def _load_plugins(kind: str) -> None:
    """Register the entry points of group ``toolbed.<kind>s``, once; a name toolbed
    registers itself is kept (a plugin adds parts, it does not replace them)."""
    if kind in _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED.add(kind)
    for point in entry_points(group=f"toolbed.{kind}s"):
        if (kind, point.name) in _REGISTRY:
            continue
        try:
            _REGISTRY[(kind, point.name)] = point.load()
        except Exception as exc:      # named when it is asked for; the others still work
            _REGISTRY[(kind, point.name)] = _Broken(
                f"the {kind} plugin {point.name!r} ({point.value}) cannot be loaded: "
                f"{type(exc).__name__}: {exc}; fix or uninstall its package")


class _Broken:
    """A plugin whose entry point failed to load: looking it up raises why."""

    def __init__(self, message: str):
        self.message = message
