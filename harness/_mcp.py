"""The testbed behind one MCP server, and an MCP client session that calls it like a
runtime.

``toolbed mcp serve`` puts the catalog's APIs behind a server built on the official
``mcp`` SDK, over stdio or streamable HTTP on 127.0.0.1:

    testbed = McpTestbed(catalog, tools, testbed_session(catalog, mode="live"))
    await serve_stdio(testbed)

Two guarantees hold for every client:

- every write goes through one rollback scope, opened when the testbed session
  starts and undone when it ends (stdio: the client disconnects; HTTP: the server
  stops), unless the writes are kept, and then they stay open in the journal for
  ``toolbed rollback``; a server that is killed leaves them there too;
- a bad argument, a refused write or an app that is down is a tool error the client
  reads (``isError``), never a crash and never a request sent with bad data.

With a retriever the server lists one tool, ``find_tools(query, k)``; each call adds
the index's top k to the listed tools and tells the client so (``tools/list_changed``),
so an agent can reach the whole catalog without loading it. ``McpCaller`` is the other
side: an MCP client session to a testbed, called like a rollback scope, which is how
``toolbed eval --via mcp`` offers tools to an agent.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from toolbed import __version__
from toolbed.apis import Catalog
from toolbed.connectors import (
    Caller,
    CallError,
    Mode,
    Observation,
    RunningApp,
    Runtime,
    api_id_of,
    mcp_tool,
    tool_name,
)
from toolbed.errors import ToolbedError
from toolbed.rollback import OPEN, RollbackScope

__all__ = [
    "FIND_TOOLS",
    "McpCaller",
    "McpTestbed",
    "given",
    "mcp_caller",
    "serve_http",
    "serve_stdio",
    "testbed_session",
]

FIND_TOOLS = "find_tools"
"""The one tool a server with a retriever lists before anything is found."""

MAX_K = 20
"""The most tools one ``find_tools`` call may add."""

Session = Callable[[], AbstractAsyncContextManager[Caller]]
"""Opens what the testbed's calls go through for one session (a rollback scope)."""


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # stdout is the protocol's over stdio


@asynccontextmanager
async def testbed_session(
    catalog: Catalog, mode: Mode | str = Mode.LIVE, cassette: str | Path | None = None,
    keep_writes: bool = False, log: Callable[[str], None] = _log,
    apps: dict[str, RunningApp] | None = None,
) -> AsyncIterator[Caller]:
    """A runtime and a rollback scope around it for one MCP session; on the way out the
    writes are undone (or kept, listed in the journal), and a recording is saved.
    ``apps``: the running self-hosted apps (default: those `toolbed apps up` started)."""
    with Runtime(catalog, mode=mode, cassette=cassette, apps=apps) as runtime:
        scope = RollbackScope(runtime, task_id="mcp")
        await scope.__aenter__()
        try:
            yield scope
        finally:
            with anyio.CancelScope(shield=True):        # a client gone or a signal: undo
                if keep_writes:
                    writes = len(scope.journal.entries(run_id=scope.run_id, statuses=OPEN))
                    log(f"kept {writes} write(s) of run {scope.run_id}: `toolbed rollback "
                        f"status --run {scope.run_id}` lists them, `toolbed rollback recover "
                        f"--run {scope.run_id}` undoes them")
                else:
                    await scope.__aexit__(None, None, None)
                    assert scope.report is not None
                    log(scope.report.summary())


class McpTestbed:
    """One MCP server over the catalog APIs ``tools``.

    Args:
        catalog: the catalog the tools come from.
        tools: the API ids a client may call (and, without an index, sees listed).
        session: opens the caller the calls go through, once per testbed session.
        index: a ``ToolIndex``: list ``find_tools`` and what it finds instead.
        k: how many tools ``find_tools`` adds when the client does not say.
        where: the index's metadata filter that matches ``tools`` (e.g. one tier).
    """

    def __init__(
        self, catalog: Catalog, tools: Sequence[str], session: Session, *,
        index: Any = None, k: int = 5, where: dict[str, Any] | None = None,
    ):
        self.catalog = catalog
        self.tools = list(dict.fromkeys(tools))
        self._allowed = set(self.tools)
        self.index, self.k, self.where = index, k, where
        self.found: list[str] = []
        """What ``find_tools`` found so far, in the order found: the listed tools."""
        self._session = session
        self._caller: Caller | None = None
        self._lock = anyio.Lock()
        self.bus = InMemorySubscriptionBus()
        self.server: Server[dict[str, Any]] = Server(
            "toolbed", version=__version__, lifespan=self._lifespan,
            instructions=self._instructions(),
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    def _instructions(self) -> str:
        text = ("toolbed: real app APIs. Writes are rolled back when this session ends; "
                "a failed call comes back as a tool error with the reason.")
        if self.index is not None:
            text += (f" Call {FIND_TOOLS} with what you want to do to get the tools "
                     f"for it, out of {len(self.tools)}.")
        return text

    @property
    def listed(self) -> list[str]:
        """The API ids ``tools/list`` shows now."""
        return list(self.found) if self.index is not None else list(self.tools)

    def initialization_options(self) -> Any:
        """What a handshake-era client is told: the tool list can change."""
        return self.server.create_initialization_options(
            notification_options=NotificationOptions(tools_changed=self.index is not None))

    @asynccontextmanager
    async def _lifespan(self, _server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async with self._session() as caller:
            self._caller = caller
            try:
                yield {}
            finally:
                self._caller = None

    # -- the handlers ---------------------------------------------------------------------

    async def _list_tools(self, _ctx: Any, _params: Any) -> types.ListToolsResult:
        tools = [find_tools_tool(self.k)] if self.index is not None else []
        tools += [mcp_tool(self.catalog.api(api)) for api in self.listed]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams
                         ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name == FIND_TOOLS and self.index is not None:
            return await self._find(ctx, arguments)
        api = api_id_of(params.name)
        if api not in self._allowed:
            hint = f"call {FIND_TOOLS} to find one" if self.index is not None \
                else "the tools/list request lists them"
            return _error(f"no tool {params.name!r} on this server; {hint}")
        if self._caller is None:
            return _error("the testbed session is not open; reconnect")
        async with self._lock:      # one call at a time: the journal keeps their order
            try:
                observation = await self._caller.aobserve(api, arguments)
            except ToolbedError as exc:         # an app down, a replay that does not match
                observation = Observation(api=api, error=CallError(
                    type=type(exc).__name__, message=str(exc)))
        return observation_result(observation)

    async def _find(self, ctx: Any, arguments: dict[str, Any]) -> types.CallToolResult:
        query, k = arguments.get("query"), arguments.get("k", self.k)
        if not isinstance(query, str) or not query.strip():
            return _error(f"{FIND_TOOLS} needs 'query': what you want to do, in words")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            return _error(f"{FIND_TOOLS}: 'k' must be a whole number from 1 to {MAX_K}")
        hits = await anyio.to_thread.run_sync(self.index.search, query, k, self.where)
        apis = [h.api for h in hits if h.api in self._allowed]
        new = [a for a in apis if a not in self.found]
        self.found += new
        if new:
            await self.bus.publish(ToolsListChanged())     # listening 2026-era clients
            await ctx.session.send_tool_list_changed()     # handshake-era clients
        found = [{"name": tool_name(a), "description": self.catalog.api(a).description}
                 for a in apis]
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(found, ensure_ascii=False))],
            structured_content={"tools": found})


def find_tools_tool(k: int) -> types.Tool:
    """``find_tools`` as an MCP tool."""
    return types.Tool(
        name=FIND_TOOLS,
        description=("Find the tools for a task: say what you want to do in plain words; "
                     "the best matching tools are added to your tool list and named here."),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do."},
                "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": k,
                      "description": "How many tools to find."},
            },
            "required": ["query"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def observation_result(observation: Observation) -> types.CallToolResult:
    """An observation as a tool result: the JSON an agent reads, the same object as
    structured content, and ``isError`` when the call failed or the app said no."""
    data = observation.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=observation.model_dump_json())],
        structured_content=data, is_error=not observation.ok)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                is_error=True)


# -- serving ----------------------------------------------------------------------------


async def serve_stdio(testbed: McpTestbed) -> None:
    """Serve one client over stdin and stdout until it disconnects or a signal comes."""
    async with anyio.create_task_group() as group:
        group.start_soon(_cancel_on_signal, group.cancel_scope)
        async with stdio_server() as (read, write):
            await testbed.server.run(read, write, testbed.initialization_options())
        group.cancel_scope.cancel()


async def _cancel_on_signal(scope: anyio.CancelScope) -> None:
    """SIGTERM or SIGINT ends the session the same way a disconnect does: undone."""
    import signal

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


async def serve_http(testbed: McpTestbed, port: int, host: str = "127.0.0.1") -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until SIGINT or SIGTERM."""
    import uvicorn

    app = testbed.server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


# -- the client side --------------------------------------------------------------------


class McpCaller:
    """A caller (as a runtime or a rollback scope) whose every call is an MCP
    ``tools/call`` to a testbed, made by the SDK's client over its session. Over MCP
    every failure comes back as a tool result, so ``call`` gives what ``observe``
    gives: the observation, with its error when the call failed."""

    def __init__(self, client: Client, portal: BlockingPortal, catalog: Catalog):
        self._client, self._portal, self.catalog = client, portal, catalog

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        return self._portal.call(self._observe, api_id, dict(args or {}))

    async def aobserve(self, api_id: str, args: Mapping[str, Any] | None = None
                       ) -> Observation:
        return await asyncio.to_thread(self.observe, api_id, args)

    call, acall = observe, aobserve

    async def _observe(self, api_id: str, args: dict[str, Any]) -> Observation:
        result = await self._client.call_tool(tool_name(api_id), args)
        if isinstance(result.structured_content, dict):
            return Observation.model_validate(result.structured_content)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        return Observation(api=api_id, error=CallError(type="ToolError", message=text))


@contextmanager
def mcp_caller(testbed: McpTestbed) -> Iterator[McpCaller]:
    """An MCP client session to ``testbed``, in this process, for the ``with`` block:
    the testbed's session opens with it and closes (its writes undone) after it."""
    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(testbed.server, mode="legacy")) as client:
        yield McpCaller(client, portal, testbed.catalog)


@asynccontextmanager
async def given(caller: Caller) -> AsyncIterator[Caller]:
    """A session that is a caller someone else opened and will close (a task's scope)."""
    yield caller
