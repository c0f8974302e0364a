"""Replay without vcrpy's patching: a cassette loaded once, answering through httpx.

vcrpy records (``_cassette.py``), and a replay reads the same files, but answering a
request does not need vcrpy's machinery: it patches httpx for the whole process, so
only one task can replay at a time, and it matches each request against every
recording in turn. Here a cassette is read once into an index, request key ->
recordings in recorded order, and two promises hold:

* **The same answers as vcrpy.** A request matches a recording on method, scheme,
  host, path, query (vcrpy's own matchers) and body (``json_body``), after the same
  scrubbing vcrpy applies; each recording plays once, the first unplayed one first.
  A request with none raises ``ReplayMissError`` naming the nearest recordings and
  what differs.
* **One cassette per task, several tasks at once.** The runtime's client answers from
  its ``ReplayTransport``. Other clients in the task (a chat model's, a judge's, whose
  traffic was recorded into the same cassette; httpx's or its fork httpx2's, as vcrpy
  covers both) are answered by the recording that ``replaying`` made current in their
  thread or task; a thread with none reaches the network as usual.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
from vcr import matchers
from vcr.request import Request as VcrRequest
from vcr.serializers import compat

from toolbed.errors import ReplayMissError

__all__ = ["Recording", "ReplayTransport", "replaying"]

Scrub = Callable[[Any], Any]


def _key(request: VcrRequest) -> tuple[Any, ...]:
    """What ``method``, ``scheme``, ``host``, ``path`` and ``query`` compare."""
    return (request.method, request.scheme, request.host, request.path or "/",
            tuple(request.query))


class _Exchange:
    __slots__ = ("request", "response", "played")

    def __init__(self, request: VcrRequest, response: dict[str, Any]):
        self.request, self.response, self.played = request, response, False


class Recording:
    """A cassette's exchanges, indexed for replay, each to be played once.

    ``interactions`` are the cassette's items as read from the file; ``scrub_request``
    and ``scrub_response`` are the filters the recording ran (vcrpy runs them again on
    what it loads, and on each request before matching, so this does too)."""

    def __init__(self, path: str | Path, interactions: list[dict[str, Any]],
                 scrub_request: Scrub, scrub_response: Scrub,
                 body_matcher: Callable[[Any, Any], None]):
        self.path = Path(path)
        self._scrub = scrub_request
        self._body_matcher = body_matcher
        self._lock = threading.Lock()
        self._exchanges: list[_Exchange] = []
        self._index: dict[tuple[Any, ...], list[_Exchange]] = {}
        for item in interactions:
            request = scrub_request(VcrRequest._from_dict(item["request"]))
            response = scrub_response(compat.convert_to_bytes(item["response"]))
            exchange = _Exchange(request, response)
            self._exchanges.append(exchange)
            self._index.setdefault(_key(request), []).append(exchange)

    def __len__(self) -> int:
        return len(self._exchanges)

    def play(self, request: Any, http: Any = httpx) -> Any:
        """The recorded response to ``request`` (its body already read), built by
        ``http``: httpx, or httpx2, the fork that some clients (openai's) use."""
        asked = self._scrub(VcrRequest(request.method, str(request.url), request.content,
                                       dict(request.headers)))
        with self._lock:
            for exchange in self._index.get(_key(asked), ()):
                if not exchange.played and self._same_body(exchange.request, asked):
                    exchange.played = True
                    return _response(exchange.response, http)
        raise self._miss(asked)

    def _same_body(self, recorded: VcrRequest, asked: VcrRequest) -> bool:
        try:
            self._body_matcher(recorded, asked)
        except AssertionError:
            return False
        return True

    # -- a miss ---------------------------------------------------------------------------

    def _miss(self, asked: VcrRequest) -> ReplayMissError:
        """The error for a request with no unplayed recording: the three recordings that
        agree with it on the most matchers, and where they differ."""
        checks = (matchers.method, matchers.scheme, matchers.host, matchers.path,
                  matchers.query, self._body_matcher)
        scored = []
        for n, exchange in enumerate(self._exchanges):
            _, failed = matchers.get_matchers_results(exchange.request, asked, checks)
            scored.append((len(failed), n, exchange, failed))
        scored.sort(key=lambda s: (s[0], s[1]))
        lines = []
        for _, n, exchange, failed in scored[:3]:
            recorded = f"#{n + 1} {exchange.request.method} {exchange.request.uri}"
            if not failed:
                lines.append(f"  {recorded}: the same request, already played (a run "
                             "repeats a call its recording made once)")
            else:
                why = "; ".join(f"{name}: {_first_line(message)}" for name, message in failed)
                lines.append(f"  {recorded}: differs in {why}")
        nearest = ("the nearest recordings:\n" + "\n".join(lines)) if lines \
            else "the cassette holds no recordings"
        return ReplayMissError(
            f"replay: {self.path} has no recorded response for {asked.method} {asked.uri}; "
            f"the run differs from the recording (re-record with --mode record).\n{nearest}")


def _first_line(message: str) -> str:
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else "differs"
    return line if len(line) < 160 else line[:157] + "..."


def _response(recorded: dict[str, Any], http: Any) -> Any:
    """An httpx response from a recorded one, as vcrpy's httpx stub builds it."""
    message = recorded["status"].get("message")
    return http.Response(
        recorded["status"]["code"],
        headers=[(name, value) for name, values in recorded["headers"].items()
                 for value in values],
        stream=http.ByteStream(recorded["body"]["string"] or b""),
        extensions={"reason_phrase": message.encode("ascii")} if message else None,
    )


class ReplayTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport that answers from the recording ``current()`` returns."""

    def __init__(self, current: Callable[[], Recording]):
        self._current = current

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        return self._current().play(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        return self._current().play(request)


# -- other clients: the recording current in this thread or task ----------------------

_CURRENT: contextvars.ContextVar[Recording | None] = contextvars.ContextVar(
    "toolbed_replay", default=None)
_ROUTED: list[tuple[Any, type, str]] = [(httpx, httpx.HTTPTransport, "handle_request"),
                                        (httpx, httpx.AsyncHTTPTransport, "handle_async_request")]
try:                        # the fork of httpx that openai's client uses, where installed
    import httpx2
except ImportError:
    pass
else:
    _ROUTED += [(httpx2, httpx2.HTTPTransport, "handle_request"),
                (httpx2, httpx2.AsyncHTTPTransport, "handle_async_request")]
_patch_lock = threading.Lock()
_users = 0
_originals: dict[tuple[type, str], Any] = {}


def _routed(http: Any, original: Any, name: str) -> Any:
    if name == "handle_request":
        def handle_request(self: Any, request: Any) -> Any:
            recording = _CURRENT.get()
            if recording is None:
                return original(self, request)
            request.read()
            return recording.play(request, http)
        return handle_request

    async def handle_async_request(self: Any, request: Any) -> Any:
        recording = _CURRENT.get()
        if recording is None:
            return await original(self, request)
        await request.aread()
        return recording.play(request, http)
    return handle_async_request


@contextmanager
def replaying(recording: Recording) -> Iterator[Recording]:
    """Answer every httpx request made in this thread (or asyncio task) from
    ``recording``. httpx's network transports are wrapped while any replay is open."""
    global _users
    with _patch_lock:
        if _users == 0:
            for http, cls, name in _ROUTED:
                _originals[cls, name] = original = getattr(cls, name)
                setattr(cls, name, _routed(http, original, name))
        _users += 1
    token = _CURRENT.set(recording)
    try:
        yield recording
    finally:
        with suppress(ValueError):      # closed from another thread: its context went
            _CURRENT.reset(token)
        with _patch_lock:
            _users -= 1
            if _users == 0:
                for (cls, name), original in _originals.items():
                    setattr(cls, name, original)
                _originals.clear()
