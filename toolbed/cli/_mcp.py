"""``toolbed mcp serve``: the testbed behind one MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import functools
import signal
from typing import Annotated, Any

import anyio
import typer

from toolbed.apis import load_catalog
from toolbed.connectors import RunningApp, parse_mode
from toolbed.errors import ToolbedError
from toolbed.retriever import metadata_filter

from ._output import CassetteOpt, ModeOpt
from ._retriever import IndexOpt, ModelOpt, OffOpt, build_index, open_index

__all__ = ["app", "serve"]

app = typer.Typer(help="Serve the testbed to MCP clients: the catalog's APIs as tools, every "
                  "write rolled back.", no_args_is_help=True,
                  add_completion=False)

TRANSPORTS = ("stdio", "http")


@app.callback()
def _mcp() -> None:
    # a callback keeps `serve` a subcommand (`toolbed mcp serve`), room for more
    pass


def _say(line: str) -> None:
    typer.echo(line, err=True)        # over stdio, stdout is the protocol's


@app.command()
def serve(
    app_: Annotated[list[str] | None, typer.Option(
        "--app", help="Only this app's APIs (repeat for more).")] = None,
    domain: Annotated[str | None, typer.Option(help="Only this domain's APIs.")] = None,
    tier: Annotated[str | None, typer.Option(help="Only selfhosted, hosted or mcp APIs.")
                    ] = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP).")
                         ] = "stdio",
    port: Annotated[int, typer.Option(help="The HTTP port on 127.0.0.1.")] = 8765,
    mode: ModeOpt = "live",
    cassette: CassetteOpt = None,
    keep_writes: Annotated[bool, typer.Option(
        "--keep-writes", help="Leave the writes in place when the session ends (listed by "
        "`toolbed rollback status`).")] = False,
    up: Annotated[bool, typer.Option(
        "--up", help="Start the chosen self-hosted apps that are not running, for the "
        "server's life.")] = False,
    retriever: Annotated[bool, typer.Option(
        "--retriever", help="List only find_tools; what it finds is added to the list.")
                         ] = False,
    k: Annotated[int, typer.Option("-k", help="How many tools find_tools adds.")] = 5,
    index: IndexOpt = None, model: ModelOpt = None, off: OffOpt = None,
) -> None:
    """Serve the catalog's APIs as MCP tools, every write rolled back.

    The writes are undone when the session ends: over stdio when the client disconnects,
    over http when the server stops (Ctrl-C)."""
    from toolbed.harness import (
        McpTestbed,
        serve_http,
        serve_stdio,
        start_missing,
        stop_started,
        testbed_session,
    )

    if transport not in TRANSPORTS:
        raise ToolbedError(f"--transport {transport!r}: choose stdio or http")
    parsed = parse_mode(mode)
    if parsed.uses_cassette and cassette is None:
        raise ToolbedError(f"--mode {parsed.value} needs --cassette FILE")
    catalog = load_catalog()
    for name in app_ or []:
        catalog.app(name)                   # an unknown app: one error naming the known
    tools = [a.id for a in catalog.filter(domain=domain, tier=tier)
             if not app_ or a.app in app_]
    if not tools:
        raise ToolbedError("no API matches --app/--domain/--tier; `toolbed apis list` "
                           "shows what there is")
    found = None
    if retriever:
        found = open_index(index, model, off, lang="all")
        _say(f"retriever index: {build_index(found)}")
    started: dict[str, RunningApp] = {}
    apps = None
    if up and not parsed.offline:
        chosen = {catalog.api(a).app for a in tools}
        apps = start_missing(catalog, sorted(a for a in chosen
                                             if catalog.app(a).local),
                             started, {}, _say)
    try:
        session = functools.partial(testbed_session, catalog, parsed, cassette, keep_writes,
                                    log=_say, apps=apps)
        testbed = McpTestbed(catalog, tools, session, index=found, k=k,
                             where=metadata_filter(app_, domain, tier))
        _say(f"toolbed MCP server: {len(tools)} tools, {parsed.value} mode"
             + (f", at http://127.0.0.1:{port}/mcp" if transport == "http" else ", on stdio"))
        # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again:
        # both end here as an interrupt, after the session's writes were undone
        signal.signal(signal.SIGTERM, _interrupt)
        if transport == "http":
            anyio.run(serve_http, testbed, port)
        else:
            anyio.run(serve_stdio, testbed)
    except KeyboardInterrupt:
        _say("stopped")
    finally:
        stop_started(started)


def _interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


