"""Each API is offered to agents as an OpenAI tool schema and as a LangChain tool."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from toolbed.connectors import (
    Runtime,
    api_id_of,
    langchain_tool,
    langchain_tools,
    openai_tool,
    tool_name,
)


def test_openai_schema_for_every_catalog_api(catalog):
    for api in catalog:
        tool = openai_tool(api)
        name = tool["function"]["name"]
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", name), name
        assert api_id_of(name) == api.id
        assert tool["function"]["parameters"] == api.parameters


def test_tool_names_round_trip():
    assert tool_name("kinto.create_record") == "kinto__create_record"
    assert api_id_of("kinto__create_record") == "kinto.create_record"


def test_langchain_tool_calls_the_api(demo_catalog):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={"id": "7"})

    with Runtime(demo_catalog, env={"DEMO_API_KEY": "k"},
                 transport=httpx.MockTransport(handler)) as rt:
        tool = langchain_tool(rt, "demo.get_item")
        assert tool.name == "demo__get_item"
        assert "item_id" in tool.args
        out = json.loads(tool.invoke({"item_id": "7"}))
    assert out["status"] == 200 and out["body"] == {"id": "7"}
    assert seen[0].url.path == "/v2/items/7"


def test_langchain_tool_returns_bad_arguments_to_the_agent(demo_catalog):
    transport = httpx.MockTransport(lambda r: pytest.fail("no request may be sent"))
    with Runtime(demo_catalog, env={"DEMO_API_KEY": "k"}, transport=transport) as rt:
        tool = langchain_tool(rt, "demo.get_item")
        out = json.loads(tool.func(item_id="../x"))
    assert out["error"]["type"] == "UnsafeArgumentError" and out["status"] is None


def test_langchain_tools_for_a_whole_catalog(catalog):
    with Runtime(catalog, apps={}) as rt:
        tools = langchain_tools(rt)
    assert len(tools) == len(catalog)
