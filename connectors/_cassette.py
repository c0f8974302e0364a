"""Live, record and replay: every run can be replayed offline from a VCR cassette.

vcrpy records (it patches httpx's transports while a recording runs); a replay reads
the same file once into a ``Recording`` (``_replay.py``) that answers through an httpx
transport, so tasks can replay side by side. This module holds the rules both share:

* **Matching.** Self-hosted apps start on a random port, so a request is matched on
  app + method + path + query + body, never on the port: before matching and before
  recording, a running app's origin (``http://127.0.0.1:54321``) is rewritten to its
  canonical origin (``http://kinto.toolbed.test``), which is also the base URL used
  in replay, when no app runs. JSON bodies compare as parsed JSON.
* **Secrets.** Auth headers, cookies and API-key query parameters are dropped;
  every known secret value is replaced by ``<ENV_NAME>`` in URLs, headers and
  bodies, of requests and responses, before anything is written.
* **Replay is offline.** A request with no recording raises ``ReplayMissError``
  listing the nearest recorded requests; it never reaches the network.
* **The clock.** A recording keeps the run's clock (``toolbed_clock``, seconds since
  the epoch, a key vcrpy ignores), and a replay runs at that clock, so an argument
  bound to "tomorrow at 09:00" (``_clock.py``) is the recorded one. It is also when
  the cassette was made, which ``toolbed cassettes list`` shows as its age.
* **What it was made against.** Beside the clock, ``toolbed_made_with`` names, per
  app called, the pinned version of an app toolbed installs, or the ``Server``
  header a hosted service answered with: when a pinned version moves, the cassettes
  made on the old one are known (``cassettes list``, ``cassettes drift``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import vcr
import yaml
from vcr.record_mode import RecordMode
from vcr.serializers import yamlserializer

from toolbed.apis import App
from toolbed.errors import CassetteError, CassetteNotFoundError, ToolbedError

from ._redact import SECRET_HEADERS, Redactor
from ._replay import Recording, replaying

__all__ = ["Cassette", "Mode", "canonical_origin", "json_body", "made_as", "made_when",
           "made_with", "parse_mode", "read_cassette"]

CANONICAL_DOMAIN = "toolbed.test"  # RFC 2606: a .test name never resolves
CLOCK_KEY = "toolbed_clock"
MADE_WITH_KEY = "toolbed_made_with"


class Mode(StrEnum):
    """How a run talks to the apps."""

    LIVE = "live"
    """Real calls, nothing recorded."""
    RECORD = "record"
    """Real calls, each exchange written to the cassette (which is started afresh)."""
    REPLAY = "replay"
    """No network: each call answered from the cassette, in recorded order."""

    # What a mode implies, asked here rather than decided again wherever it matters.

    @property
    def offline(self) -> bool:
        """No app is reached: answers come from the cassette, so no app need run, no
        credential is sent, and nothing a call does outlives the run."""
        return self is Mode.REPLAY

    @property
    def uses_cassette(self) -> bool:
        """The run reads or writes a cassette, so it needs a cassette path."""
        return self is not Mode.LIVE

    @property
    def can_restart(self) -> bool:
        """An app can be restarted or reset between tasks (there is one to restart)."""
        return not self.offline

    @property
    def concurrent(self) -> bool:
        """Calls of several tasks may run at once: live, and replay (each task answers
        from its own cassette). vcrpy patches httpx for the whole process while it
        records, so a recording runs one task at a time."""
        return self is not Mode.RECORD


def parse_mode(value: str | Mode) -> Mode:
    """``Mode`` from a string; the error lists the valid modes."""
    try:
        return Mode(value)
    except ValueError:
        valid = ", ".join(m.value for m in Mode)
        raise ToolbedError(f"unknown mode {value!r}; use one of: {valid}") from None


def canonical_origin(app: str) -> str:
    """The origin a self-hosted app has in cassettes and in replay mode."""
    return f"http://{app}.{CANONICAL_DOMAIN}"


def json_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: bodies are equal, comparing JSON bodies as parsed JSON."""
    if r1.body == r2.body:
        return
    if _as_json(r1.body) is not _NOT_JSON and _as_json(r1.body) == _as_json(r2.body):
        return
    raise AssertionError(f"body {_short(r1.body)} != {_short(r2.body)}")


_NOT_JSON = object()


def _as_json(body: bytes | None) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return _NOT_JSON


def _short(body: bytes | None) -> str:
    text = repr(body)
    return text if len(text) < 80 else text[:77] + "..."


def read_cassette(path: str | Path) -> dict[str, Any]:
    """A cassette file as vcrpy wrote it: ``interactions`` (each a ``request`` and a
    ``response``) and the run's clock. A damaged file, an empty or a garbled one is
    named as such."""
    path = Path(path)
    fix = "restore it (git checkout) or record it again with --mode record"
    try:
        data = yamlserializer.deserialize(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteNotFoundError(f"no cassette at {path}") from None
    except UnicodeDecodeError as exc:
        raise CassetteError(f"{path} is damaged: not UTF-8 text (byte "
                            f"{exc.start}); {fix}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CassetteError(f"{path} is damaged: not YAML{where} "
                            f"({getattr(exc, 'problem', None) or exc}); {fix}") from None
    interactions = data.get("interactions") if isinstance(data, dict) else None
    if not isinstance(interactions, list) or not all(
            isinstance(i, dict) and "request" in i and "response" in i for i in interactions):
        raise CassetteError(f"{path} is not a cassette (no list of recorded "
                            f"requests and responses); {fix}")
    return data


def made_when(data: Mapping[str, Any]) -> int | None:
    """When a cassette (as ``read_cassette`` gives it) was recorded: its clock, in
    seconds since the epoch; None for one recorded before toolbed kept it."""
    clock = data.get(CLOCK_KEY)
    return clock if isinstance(clock, int) and not isinstance(clock, bool) else None


def made_as(app: App, response: httpx.Response | None = None) -> str:
    """What a recording notes an app was: the version toolbed pinned for an app it
    installs, or the ``Server`` header of a hosted service's ``response``."""
    if app.local:
        return f"version {app.version}" if app.version else "version unpinned"
    server = response.headers.get("server") if response is not None else None
    return f"server {server or 'unnamed'}"


def made_with(data: Mapping[str, Any]) -> dict[str, str]:
    """What a cassette was recorded against, per app (see the module's docstring);
    empty for one recorded before toolbed kept it."""
    made = data.get(MADE_WITH_KEY)
    return {str(k): str(v) for k, v in made.items()} if isinstance(made, dict) else {}


class Cassette:
    """A context manager that records or replays every httpx call made inside it.

        with Cassette("cassettes/demo.yaml", Mode.RECORD, origins, redactor):
            runtime.call(...)
    """

    MATCH_ON = ("method", "scheme", "host", "path", "query", "json_body")

    def __init__(
        self,
        path: str | Path,
        mode: Mode,
        origins: Callable[[], Mapping[str, str]],
        redactor: Redactor,
        secret_params: frozenset[str] = frozenset(),
    ):
        """``origins()`` maps each live origin to its canonical one, read at match time;
        ``secret_params`` are query parameters that carry credentials (dropped)."""
        self.path = Path(path)
        self._recording = self.path.with_name(f".{self.path.stem}.recording{self.path.suffix}")
        self._keep = True
        self._secret_params = secret_params
        self.mode = parse_mode(mode)
        self._origins = origins
        self._redactor = redactor
        self._context: Any = None
        self._played: Recording | None = None
        self.clock: int | None = None
        """The run's clock: set by the runtime before a recording, read from the file
        for a replay (None in a cassette recorded before toolbed kept it)."""
        self.made_with: dict[str, str] = {}
        """Per app called while recording, what it was (``made_with`` of the runtime)."""

    def __enter__(self) -> Cassette:
        if self.mode is Mode.LIVE:
            return self
        if self.mode is Mode.REPLAY and not self.path.is_file():
            raise CassetteNotFoundError(
                f"no cassette at {self.path}; record one first with --mode record "
                "(against the running apps), then replay it"
            )
        if self.mode is Mode.REPLAY:
            self._played = Recording(self.path, self._read(), self._scrub_request,
                                     self._scrub_response, json_body)
            self._context = replaying(self._played)
            self._context.__enter__()
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._recording.unlink(missing_ok=True)
        self._keep = True
        recorder = vcr.VCR(
            serializer="yaml",
            record_mode=RecordMode.ALL,
            match_on=self.MATCH_ON,
            before_record_request=self._scrub_request,
            before_record_response=self._scrub_response,
            decode_compressed_response=True,
        )
        recorder.register_matcher("json_body", json_body)
        self._context = recorder.use_cassette(str(self._recording))
        self._context.__enter__()
        return self

    @property
    def played(self) -> Recording:
        """The recording a replay answers from (while the cassette is open)."""
        if self._played is None:
            raise CassetteError(f"{self.path} is not open for replay; open the runtime "
                                "(with Runtime(...) as rt) before calling")
        return self._played

    def _read(self) -> list[dict[str, Any]]:
        """The cassette's recorded exchanges (and ``clock`` set from it)."""
        data = read_cassette(self.path)
        self.clock = made_when(data)
        return data["interactions"]

    def __exit__(self, *exc_info: Any) -> None:
        """Stop; a recording replaces the cassette only if it ended without an error.

        A recording goes to a hidden file next to the cassette, so a run that fails half
        way (an app that is down, Ctrl-C, a ``discard``) leaves the earlier cassette as it
        was; a clean run that recorded nothing leaves no cassette.
        """
        if self._context is None:
            return
        context, self._context = self._context, None
        context.__exit__(*exc_info)
        if self.mode is not Mode.RECORD:
            self._played = None
            return
        if self._keep and not any(exc_info):
            if self._recording.is_file():
                # top-level keys after vcrpy's own, which it ignores when it reads
                extra: dict[str, Any] = {CLOCK_KEY: int(self.clock)} if self.clock else {}
                if self.made_with:
                    extra[MADE_WITH_KEY] = dict(sorted(self.made_with.items()))
                if extra:
                    with self._recording.open("a", encoding="utf-8") as out:
                        out.write(yaml.safe_dump(extra, sort_keys=False, allow_unicode=True))
                self._recording.replace(self.path)
            else:
                self.path.unlink(missing_ok=True)
        self._recording.unlink(missing_ok=True)

    def discard(self) -> None:
        """Drop this recording at exit and keep the earlier cassette (a run that failed)."""
        self._keep = False

    # -- filters (vcrpy calls these before matching and before writing) -----------------

    def _scrub_request(self, request: Any) -> Any:
        request = copy.copy(request)        # every field it has is replaced below
        uri = request.uri
        for live, canonical in self._origins().items():
            if uri.startswith(live + "/") or uri == live:
                uri = canonical + uri[len(live):]
                break
        if self._secret_params:
            parts = urlsplit(uri)
            query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                     if k not in self._secret_params]
            uri = urlunsplit(parts._replace(query=urlencode(query)))
        request.uri = self._redactor.text(uri)
        headers = {}
        for name, value in request.headers.items():
            if name.lower() in SECRET_HEADERS or name.lower() == "host":
                continue
            headers[name] = self._redactor.text(value)
        request.headers = headers
        request.body = self._redactor.body(request.body)
        return request

    def _scrub_response(self, response: dict[str, Any]) -> dict[str, Any]:
        response["headers"] = {
            name: [self._redactor.text(v) for v in values]
            for name, values in response["headers"].items()
            if name.lower() not in SECRET_HEADERS
        }
        body = response.get("body", {})
        if isinstance(body.get("string"), bytes | str):
            raw = body["string"]
            raw = raw.encode("utf-8") if isinstance(raw, str) else raw
            scrubbed = self._redactor.body(raw)
            if scrubbed != raw:
                body["string"] = scrubbed
                for name in response["headers"]:
                    if name.lower() == "content-length":
                        response["headers"][name] = [str(len(scrubbed or b""))]
        return response
