"""What an agent did on a task, and the one door its calls go through.

Every agent calls APIs through a ``ToolBox``: a ``Caller`` (so LangChain tools can be
bound to it) that lets through only the APIs the agent was offered, turns every
refusal into an observation the agent can read, and writes each call down. The
``Trajectory`` it fills is what the metrics score: the calls, the final answer, and
for text-protocol agents the raw outputs and their format errors.

``calls_via`` picks the road a run's calls take to the apps: straight to the rollback
scope, or over an MCP client session to a testbed server around it (``--via mcp``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from toolbed.apis import Catalog
from toolbed.connectors import Caller, CallError, Observation, api_id_of
from toolbed.errors import TaskError

if TYPE_CHECKING:
    from toolbed.rollback import Entry

__all__ = ["EXCERPT", "VIA", "Call", "ToolBox", "Trajectory", "calls_via", "excerpt",
           "note_undos"]

VIA = ("direct", "mcp")
"""How calls reach the apps: straight through the caller, or over MCP."""


@contextmanager
def calls_via(via: str, caller: Caller, tools: Sequence[str]) -> Iterator[Caller]:
    """``caller`` itself (``direct``), or a caller whose calls of ``tools`` are MCP
    ``tools/call`` requests to a testbed server in front of it (``mcp``): the same
    observations, through the protocol an external agent would speak."""
    if via == "direct":
        yield caller
        return
    if via != "mcp":
        raise TaskError(f"--via {via!r}: choose one of {', '.join(VIA)}")
    from ._mcp import McpTestbed, given, mcp_caller  # the mcp SDK: imported when used

    with mcp_caller(McpTestbed(caller.catalog, tools, lambda: given(caller))) as client:
        yield client


class Call(BaseModel):
    """One call an agent made, as the metrics see it."""

    api: str
    """The API id; for a name that is no offered API, the name as the agent wrote it."""
    args: dict[str, Any] = {}
    valid: bool = True
    """False when the agent named an API it was not offered (or that does not exist)."""
    status: int | None = None
    ok: bool = False
    error: str | None = None
    excerpt: str | None = None
    """The start of what came back (``EXCERPT`` characters), for a person reading the
    report; the scorer reads the observations themselves, never this."""
    undo: str | None = None
    """A write's fate in rollback: undone (and by which call), irreversible, nothing to
    undo, or left open; None for a read."""


EXCERPT = 300
"""Characters of each observation a trajectory keeps for the report."""


class Trajectory(BaseModel):
    """One agent run on one task."""

    calls: list[Call] = []
    answer: str | None = None
    """The final answer; None when the agent stopped without one."""
    outputs: list[str] = []
    """Raw model outputs of a text-protocol (ReAct) agent, one per round."""
    thoughts: list[str] = []
    """What the model said with each of its calls (ReAct's Thought, a tool-calling
    model's text beside its calls), one per call; ToolEyes' judge reads them."""
    format_errors: int = 0
    hallucinated_observations: int = 0
    steps: int = 0
    """Model rounds (or, for the oracle, calls)."""
    offered: list[str] = Field(default_factory=list)
    error: str | None = None
    """Why the agent stopped early (its model could not be reached, ...)."""


class ToolBox:
    """The APIs offered to an agent on one task, called through ``caller`` (a rollback
    scope), each call recorded in ``trajectory``."""

    def __init__(self, caller: Caller, offered: Iterable[str], trajectory: Trajectory):
        self.caller = caller
        self.offered = list(dict.fromkeys(offered))
        self.trajectory = trajectory
        trajectory.offered = list(self.offered)

    @property
    def catalog(self) -> Catalog:
        return self.caller.catalog

    def resolve(self, name: str) -> str | None:
        """The offered API id for ``name`` (an API id or its tool name), else None."""
        for candidate in (name, api_id_of(name)):
            if candidate in self.offered:
                return candidate
        return None

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """Call an offered API; anything else is an error observation, and no request."""
        resolved, raw, kept, refused = self._check(api_id, args)
        if refused is not None:
            return refused
        return self._record(resolved, kept, self.caller.observe(resolved, raw))

    async def aobserve(self, api_id: str, args: Mapping[str, Any] | None = None
                       ) -> Observation:
        """``observe`` for asyncio: the call awaits the caller's own async path."""
        resolved, raw, kept, refused = self._check(api_id, args)
        if refused is not None:
            return refused
        return self._record(resolved, kept, await self.caller.aobserve(resolved, raw))

    def call(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        return self.observe(api_id, args)

    async def acall(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        return await self.aobserve(api_id, args)

    def _check(self, api_id: str, args: Mapping[str, Any] | None
               ) -> tuple[str, Any, dict[str, Any], Observation | None]:
        """The offered API ``api_id`` names, the arguments as sent and as the trajectory
        keeps them, and for a tool that was not offered the error observation (recorded)."""
        raw = {} if args is None else args
        kept = _kept(raw)
        resolved = self.resolve(api_id)
        if resolved is not None:
            return resolved, raw, kept, None
        obs = Observation(api=api_id, error=CallError(
            type="UnknownTool", message=f"{api_id!r} is not one of the tools offered; "
            "call one of: " + ", ".join(self.offered)))
        self.trajectory.calls.append(Call(api=api_id, args=kept, valid=False,
                                          error=obs.error.message if obs.error else None))
        return api_id, raw, kept, obs

    def _record(self, api: str, kept: dict[str, Any], obs: Observation) -> Observation:
        self.trajectory.calls.append(Call(
            api=api, args=kept, status=obs.status, ok=obs.ok,
            error=obs.error.message if obs.error else None, excerpt=excerpt(obs.body)))
        return obs


def excerpt(body: Any) -> str | None:
    """The start of an observation's body, as a trajectory keeps it for the report."""
    if body is None:
        return None
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    text = _recordable(text)
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "..."


def note_undos(trajectory: Trajectory, entries: Iterable[Entry]) -> None:
    """Write each journalled write's fate onto the call that made it: the n-th write of
    an API is its n-th successful call in the trajectory."""
    calls: dict[str, list[Call]] = {}
    for call in trajectory.calls:
        if call.valid and call.error is None:
            calls.setdefault(call.api, []).append(call)
    for entry in sorted(entries, key=lambda e: e.seq):
        made = calls.get(entry.api)
        if not made:
            continue
        call = made.pop(0)
        undo = (entry.compensation or {}).get("api")
        call.undo = {
            "compensated": f"undone by {undo}",
            "irreversible": "irreversible (no undo; allowed for this task)",
            "noop": "nothing to undo (the write did not take)",
        }.get(str(entry.status), f"left {entry.status}: {entry.error or 'see the journal'}")


def _kept(raw: Any) -> dict[str, Any]:
    return _recordable(dict(raw)) if isinstance(raw, Mapping) else {}


def _recordable(value: Any, depth: int = 0) -> Any:
    """The arguments as the trajectory keeps them: what an agent sent, made safe to
    score, store and report (JSON, SQLite and HTML take no lone surrogate, NaN, integer
    of thousands of digits or nesting a thousand deep; the call itself was refused)."""
    if depth > 32:
        return "..."
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    if isinstance(value, Mapping):
        return {_recordable(str(k)): _recordable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_recordable(v, depth + 1) for v in value]
    return value
