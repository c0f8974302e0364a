"""Fresh instances of the self-hosted apps for task validation (see tests/conftest.py),
and a scripted OpenAI-compatible server for the models of agents, users and judges."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from toolbed.apis import Catalog

from ..conftest import AppPool


@pytest.fixture(scope="package")
def pool(catalog: Catalog) -> Iterator[AppPool]:
    with ExitStack() as stack:
        yield AppPool(catalog, stack)


class ScriptedOpenAI:
    """A local OpenAI-compatible server that answers chat completions from a script
    (its last reply repeats)."""

    def __init__(self, replies: list[dict[str, Any]]):
        self.replies, self.requests = list(replies), []
        script = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                script.requests.append((self.path, dict(self.headers), json.loads(body)))
                message = script.replies.pop(0) if len(script.replies) > 1 \
                    else script.replies[0]                 # the last reply repeats
                answer = json.dumps({
                    "id": f"chatcmpl-{len(script.requests)}", "object": "chat.completion",
                    "created": 0, "model": "scripted",
                    "choices": [{"index": 0, "message": {"role": "assistant", **message},
                                 "finish_reason": "tool_calls" if "tool_calls" in message
                                 else "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
