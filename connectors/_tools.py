"""Each catalog API as an agent tool: a LangChain tool, an OpenAI tool schema or an MCP
tool.

Tool names cannot hold a dot, so ``kinto.create_record`` is offered as
``kinto__create_record``; ``api_id_of`` maps it back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from toolbed.apis import Api

from ._runtime import Caller

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool
    from mcp_types import Tool

__all__ = ["api_id_of", "langchain_tool", "langchain_tools", "mcp_tool", "openai_tool", "tool_name"]


def tool_name(api_id: str) -> str:
    """``kinto.create_record`` -> ``kinto__create_record`` (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return api_id.replace(".", "__", 1)


def api_id_of(name: str) -> str:
    """The inverse of ``tool_name``."""
    return name.replace("__", ".", 1)


def openai_tool(api: Api) -> dict[str, Any]:
    """The API in OpenAI's function-calling format."""
    return {
        "type": "function",
        "function": {
            "name": tool_name(api.id),
            "description": api.description,
            "parameters": api.parameters,
        },
    }


def mcp_tool(api: Api) -> Tool:
    """The API as a Model Context Protocol tool (a read says so in its annotations)."""
    from mcp_types import Tool, ToolAnnotations

    return Tool(name=tool_name(api.id), description=api.description,
                input_schema=api.parameters,
                annotations=ToolAnnotations(read_only_hint=api.effect == "read"))


def langchain_tool(runtime: Caller, api_id: str) -> StructuredTool:
    """A LangChain tool that calls the API through ``runtime`` (or a rollback scope)."""
    from langchain_core.tools import StructuredTool  # heavy: imported when first needed

    api = runtime.catalog.api(api_id)

    def run(**kwargs: Any) -> str:
        return runtime.observe(api.id, kwargs).model_dump_json()

    async def arun(**kwargs: Any) -> str:
        return (await runtime.aobserve(api.id, kwargs)).model_dump_json()

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=tool_name(api.id),
        description=api.description,
        args_schema=api.parameters,
    )


def langchain_tools(runtime: Caller, api_ids: Iterable[str] | None = None) -> list[StructuredTool]:
    """Tools for the given API ids (default: the whole catalog)."""
    ids = list(api_ids) if api_ids is not None else list(runtime.catalog.apis)
    return [langchain_tool(runtime, api_id) for api_id in ids]
