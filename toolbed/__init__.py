"""toolbed: a live, real-world API testbed for tool-using LLM agents.

    >>> import toolbed
    >>> catalog = toolbed.load_catalog()
    >>> with toolbed.launch("kinto") as kinto, toolbed.Runtime(apps={"kinto": kinto}) as rt:
    ...     rt.call("kinto.list_buckets").status
    200

The parts live in their own packages: ``toolbed.apis`` (the catalog),
``toolbed.connectors`` (runtime, cassettes, agent tools), ``toolbed.launchers`` (the
self-hosted apps' processes); errors are in ``toolbed.errors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbed._lazy import attach as _attach

if TYPE_CHECKING:
    from toolbed.apis import Api, App, Catalog, load_catalog
    from toolbed.connectors import (
        Mode,
        Observation,
        RetryPolicy,
        RunningApp,
        Runtime,
        langchain_tools,
        openai_tool,
        run_exercise,
    )
    from toolbed.errors import ToolbedError
    from toolbed.launchers import launch

__getattr__, __dir__ = _attach(__name__, __file__)

__version__ = "0.1.0"

__all__ = [
    "Api",
    "App",
    "Catalog",
    "Mode",
    "Observation",
    "RetryPolicy",
    "RunningApp",
    "Runtime",
    "ToolbedError",
    "langchain_tools",
    "launch",
    "load_catalog",
    "openai_tool",
    "run_exercise",
]
