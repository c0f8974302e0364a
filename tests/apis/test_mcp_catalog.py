"""The catalog entries of the MCP apps say what their servers say: each server is
started (behind toolbed's bridge) and its own ``tools/list`` answer is compared with
the entry: the same tools, each with the same arguments, types, required ones and
enums, and an effect that agrees with the server's read-only hint."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from toolbed.apis import Catalog, load_catalog
from toolbed.launchers import launch

MCP_APPS = sorted(name for name, app in load_catalog().apps.items() if app.tier == "mcp")


def types_of(schema: dict[str, Any]) -> set[str]:
    """A property's JSON types, whether written as ``type`` or as ``anyOf`` of types."""
    if "anyOf" in schema:
        return set().union(*(types_of(s) for s in schema["anyOf"]))
    kind = schema.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


@pytest.mark.live
@pytest.mark.parametrize("name", MCP_APPS)
def test_the_catalog_entry_matches_the_servers_tool_list(name: str, catalog: Catalog) -> None:
    app = catalog.app(name)
    with launch(name, catalog) as running:
        listed = httpx.get(f"{running.base_url}/tools", timeout=30).json()["tools"]
    tools = {t["name"]: t for t in listed}
    assert set(tools) == {api.name for api in app.apis}
    for api in app.apis:
        schema = tools[api.name]["inputSchema"]
        properties = schema.get("properties", {})
        assert set(properties) == set(api.args), api.id
        assert set(schema.get("required", [])) == set(api.required), api.id
        for arg, spec in api.args.items():
            server = properties[arg]
            assert types_of(spec.schema_) == types_of(server), f"{api.id}: {arg}"
            assert spec.schema_.get("enum") == server.get("enum"), f"{api.id}: {arg}"
        hint = (tools[api.name].get("annotations") or {}).get("readOnlyHint")
        if hint is not None:
            assert (api.effect == "read") == hint, api.id


def mcp_app(**changes: Any) -> dict[str, Any]:
    app = {"app": "notes", "name": "Notes", "domain": "notes", "tier": "mcp",
           "version": "1.0.0", "docs": "https://example.org/notes",
           "mcp": {"registry": "npm", "package": "notes-mcp"},
           "apis": [{"name": "list_notes", "description": "List every note with its title.",
                     "effect": "read", "http": {"method": "POST", "path": "/tools/list_notes"}}]}
    return {**app, **changes}


@pytest.mark.parametrize(("changes", "message"), [
    ({"mcp": None}, "an app of tier mcp names its server"),
    ({"tier": "selfhosted"}, "an app of tier mcp names its server"),
    ({"base_url": "http://127.0.0.1:9"}, "a mcp app takes no base_url"),
    ({"apis": [{"name": "list_notes", "description": "List every note with its title.",
                "effect": "read", "http": {"method": "GET", "path": "/notes"}}]},
     "list_notes: an MCP tool is called as POST /tools/list_notes"),
])
def test_an_mcp_entry_names_its_server_and_calls_tools_by_their_route(
    changes: dict[str, Any], message: str,
) -> None:
    from pydantic import ValidationError

    from toolbed.apis import App

    assert App.model_validate(mcp_app()).local
    with pytest.raises(ValidationError, match=message):
        App.model_validate(mcp_app(**changes))
