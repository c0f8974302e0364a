"""The tool box an agent calls through: only offered tools, every call recorded, and
the async path awaiting the caller's own async path (no event loop blocked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbed.apis import Catalog
from toolbed.connectors import Observation
from toolbed.harness import ToolBox, Trajectory


class Caller:
    """A caller that answers every call and notes which path each took."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.paths: list[str] = []

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        self.paths.append("sync")
        return Observation(api=api_id, status=200, body=dict(args or {}))

    async def aobserve(self, api_id: str, args: Mapping[str, Any] | None = None
                       ) -> Observation:
        self.paths.append("async")
        return Observation(api=api_id, status=200, body=dict(args or {}))


async def test_async_calls_take_the_callers_async_path_and_are_recorded(demo_catalog):
    caller, trajectory = Caller(demo_catalog), Trajectory()
    box = ToolBox(caller, ["demo.get_item"], trajectory)
    obs = await box.acall("demo.get_item", {"item_id": "a1"})
    refused = await box.aobserve("demo.delete_everything", {})
    assert obs.ok and caller.paths == ["async"]
    assert refused.error is not None and refused.error.type == "UnknownTool"
    assert [(c.api, c.args, c.valid) for c in trajectory.calls] == [
        ("demo.get_item", {"item_id": "a1"}, True),
        ("demo.delete_everything", {}, False)]


def test_sync_calls_take_the_sync_path(demo_catalog):
    caller, trajectory = Caller(demo_catalog), Trajectory()
    ToolBox(caller, ["demo.get_item"], trajectory).call("demo.get_item", {"item_id": "a1"})
    assert caller.paths == ["sync"] and trajectory.calls[0].status == 200
