"""toolbed's bridge to an MCP server that speaks stdio: its tools as HTTP routes.

An app of tier ``mcp`` is a real MCP server from npm or PyPI. Its transport, stdio,
ties it to the one process that started it, so toolbed starts it behind this bridge,
which holds one client session to it (the official SDK's) and serves each tool on
127.0.0.1 as ``POST /tools/<name>``, the JSON body being the tool's arguments. Every
app then reaches the runtime the same way: the same request checks, retries,
cassettes (a recording holds each tool call and the server's ``CallToolResult``
verbatim), rollback, probes and restarts.

    python -m toolbed.launchers._bridge --port 8123 --token-file T --cwd DIR -- CMD ARGS

Answers: 200 with the ``CallToolResult`` (``content``, ``structuredContent``,
``isError``); 422 with the same when the tool reports an error (``isError``), so a
failed tool call is a failed call everywhere in toolbed; 400 with a JSON-RPC error
object when the server refuses the request itself (unknown tool, bad parameters);
401 without the per-run bearer token. ``GET /health`` names the server and counts its
tools; ``GET /tools`` is the server's own ``tools/list`` answer, which a test holds the
catalog entry to. Calls are made one at a time, in the order they arrive.
"""

from __future__ import annotations

import argparse
import hmac
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp import Client, MCPError, StdioServerParameters
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["bridge_app", "main"]


def bridge_app(command: list[str], cwd: str, token: str) -> Starlette:
    """The bridge's ASGI app: it starts the server with ``command`` in ``cwd`` when the
    app starts (and stops it with the app), and checks ``token`` on every tool call."""
    state: dict[str, Any] = {}
    lock = anyio.Lock()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        server = StdioServerParameters(command=command[0], args=command[1:], cwd=cwd,
                                       env=dict(os.environ))
        async with Client(server, mode="legacy") as client:
            state["client"] = client
            state["tools"] = {t.name for t in (await client.list_tools()).tools}
            yield

    async def health(_request: Request) -> JSONResponse:
        client: Client = state["client"]
        info = client.server_info
        return JSONResponse({"server": info.name if info else None,
                             "version": info.version if info else None,
                             "tools": len(state["tools"])})

    async def tools(_request: Request) -> JSONResponse:
        listed = await state["client"].list_tools()
        return JSONResponse(listed.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def call(request: Request) -> JSONResponse:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return JSONResponse({"error": "a bearer token is needed"}, status_code=401)
        name = request.path_params["name"]
        if name not in state["tools"]:
            return _rpc_error(-32602, f"unknown tool {name!r}", 404)
        try:
            arguments = await request.json() if await request.body() else {}
        except ValueError:
            return _rpc_error(-32700, "the body is not JSON", 400)
        if not isinstance(arguments, dict):
            return _rpc_error(-32602, "the body must be a JSON object of arguments", 400)
        async with lock:
            try:
                result = await state["client"].call_tool(name, arguments)
            except MCPError as exc:
                return _rpc_error(exc.error.code, exc.error.message, 400)
        body = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        body.pop("resultType", None)
        return JSONResponse(body, status_code=422 if result.is_error else 200)

    return Starlette(routes=[Route("/health", health), Route("/tools", tools),
                             Route("/tools/{name}", call, methods=["POST"])],
                     lifespan=lifespan)


def _rpc_error(code: int, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--cwd", required=True, help="The server's working directory.")
    parser.add_argument("command", nargs="+", help="The MCP server's command (after --).")
    args = parser.parse_args(argv)
    token = args.token_file.read_text(encoding="utf-8").strip()
    app = bridge_app(args.command, args.cwd, token)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
