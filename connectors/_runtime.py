"""The runtime: call any catalog API by id, live, recorded or replayed.

    with Runtime(mode="record", cassette="cassettes/demo.yaml") as rt:
        obs = rt.call("kinto.create_bucket", {"id": "household"})
        obs.status, obs.body

``call`` raises a ``ToolbedError`` when a call cannot be made (bad arguments,
unknown API, app unreachable); an HTTP error status is not an exception but an
observation. ``observe`` is what an agent gets: the same call, with the agent's own
mistakes turned into an error observation instead of an exception.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import httpx

from toolbed.apis import Api, App, Catalog, load_catalog
from toolbed.errors import (
    AppNotRunningError,
    ArgumentError,
    CredentialError,
    ToolbedError,
    TransportError,
    UnknownApiError,
)

from ._auth import auth_for
from ._cassette import Cassette, Mode, canonical_origin, made_as, parse_mode
from ._clock import running_at
from ._observation import CallError, Observation, observe_response
from ._redact import Redactor
from ._replay import ReplayTransport
from ._request import build_request
from ._retry import RetryPolicy
from ._running import RunningApp, running_apps

__all__ = ["AGENT_ERRORS", "Caller", "Runtime"]

AGENT_ERRORS = (ArgumentError, UnknownApiError, TransportError, CredentialError)
"""Errors an agent's call can meet; ``observe`` returns them as observations (a hosted
tool offered in a run that has no key for it is a failed call, as any other)."""


class Caller(Protocol):
    """What agents, tools and exercises call: a ``Runtime`` or a rollback scope around one."""

    @property
    def catalog(self) -> Catalog: ...

    def call(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation: ...

    async def acall(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation: ...

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation: ...

    async def aobserve(
        self, api_id: str, args: Mapping[str, Any] | None = None
    ) -> Observation: ...


class Runtime:
    """Calls catalog APIs over one pooled httpx client, sync or async.

    Args:
        catalog: the catalog (default: the shipped one).
        mode: ``live``, ``record`` or ``replay``.
        cassette: the cassette file for ``record`` and ``replay``.
        apps: running self-hosted apps by name (default: those ``toolbed apps up``
            started). Not needed in replay, where each app has its canonical URL.
        env: where credentials are read (default: ``os.environ``); a running app's
            generated credentials are laid over it.
        timeout: seconds for connect/read/write.
        retry: the retry policy for idempotent requests.
        max_chars: the size cap of an observation's body.
        transport: an httpx transport to use instead of the network (tests). A replay
            answers every call from its cassette and uses none.
    """

    def __init__(
        self,
        catalog: Catalog | None = None,
        *,
        mode: Mode | str = Mode.LIVE,
        cassette: str | Path | None = None,
        apps: Mapping[str, RunningApp] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        max_chars: int = 32_000,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.catalog = catalog or load_catalog()
        self.mode = parse_mode(mode)
        if self.mode.uses_cassette and cassette is None:
            raise ToolbedError(f"mode {self.mode.value} needs a cassette path (--cassette FILE)")
        self.apps: dict[str, RunningApp] = dict(
            running_apps() if apps is None and not self.offline else (apps or {})
        )
        base_env = dict(os.environ if env is None else env)
        for app in self.apps.values():
            base_env.update(app.env)
        self.env = base_env
        self.retry = retry or RetryPolicy()
        if self.offline:
            self.retry = replace(self.retry, waits=False)
        self.max_chars = max_chars
        self.redactor = Redactor(self._secrets())
        self.cassette = (
            Cassette(cassette, self.mode, self._origins, self.redactor, self._secret_params())
            if cassette is not None else None
        )
        if self.offline:
            replayed = self.cassette
            assert replayed is not None
            transport = async_transport = ReplayTransport(lambda: replayed.played)
        limits = httpx.Limits(max_connections=20, max_keepalive_connections=10)
        self._client = httpx.Client(timeout=timeout, limits=limits, transport=transport)
        # the async client is made on first use: building one costs an SSL context
        self._aclient: httpx.AsyncClient | None = None
        self._async_options = (timeout, limits, async_transport)
        self._entered = False
        self.clock = int(time.time())
        """The run's clock (``_clock.py``): now, or in a replay the recording's."""
        self._clock: AbstractContextManager[None] | None = None

    @property
    def offline(self) -> bool:
        """This run reaches no app (replay): see ``Mode.offline``."""
        return self.mode.offline

    @property
    def can_restart(self) -> bool:
        """Apps of this run can be restarted or reset (not in replay)."""
        return self.mode.can_restart

    # -- lifecycle ----------------------------------------------------------------------

    def __enter__(self) -> Runtime:
        self.open()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close(*exc_info)

    async def __aenter__(self) -> Runtime:
        self.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
        self.close(*exc_info)

    def open(self) -> None:
        """Start recording or replaying, and run at this runtime's clock."""
        if self._entered:
            return
        if self.cassette is not None:
            self.cassette.__enter__()
            if self.offline and self.cassette.clock is not None:
                self.clock = self.cassette.clock          # replay at the recording's time
            self.cassette.clock = self.clock              # what a recording keeps
        self._clock = running_at(self.clock)
        self._clock.__enter__()
        self._entered = True

    def close(self, *exc_info: Any) -> None:
        """Write the cassette (record mode) and close the connection pool."""
        if self._entered and self.cassette is not None:
            self.cassette.__exit__(*(exc_info or (None, None, None)))
        if self._clock is not None:
            clock, self._clock = self._clock, None
            # closed from another thread or task, whose clock went with it: nothing to reset
            with suppress(ValueError):
                clock.__exit__(None, None, None)
        self._entered = False
        self._client.close()

    # -- calls ---------------------------------------------------------------------------

    def call(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """Make the call; raise ``ToolbedError`` if it cannot be made."""
        api = self.catalog.api(api_id)
        return self.send(api, self.prepare(api, {} if args is None else args))

    async def acall(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``call`` for asyncio."""
        api = self.catalog.api(api_id)
        return await self.asend(api, self.prepare(api, {} if args is None else args))

    def send(self, api: Api, request: httpx.Request) -> Observation:
        """Send a request ``prepare`` built for ``api`` and observe the answer. A rollback
        scope prepares a write (refusing bad arguments), journals it, then sends the
        same request: a write is validated and built once."""
        response = self._send(request)
        self._made_with(api, response)
        return observe_response(api.id, response, cap=self.max_chars, redactor=self.redactor)

    async def asend(self, api: Api, request: httpx.Request) -> Observation:
        """``send`` for asyncio."""
        response = await self._asend(request)
        self._made_with(api, response)
        return observe_response(api.id, response, cap=self.max_chars, redactor=self.redactor)

    def _made_with(self, api: Api, response: httpx.Response) -> None:
        """Note in a recording what ``api``'s app was: its pinned version when toolbed
        installs it, else the ``Server`` header the service answered with."""
        if self.cassette is None or self.mode is not Mode.RECORD:
            return
        app = self.catalog.app_of(api)
        self.cassette.made_with.setdefault(app.app,
                                           self.redactor.text(made_as(app, response)))

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``call``, with the agent's mistakes returned as an error observation."""
        try:
            return self.call(api_id, args)
        except AGENT_ERRORS as exc:
            return self.error_observation(api_id, exc)

    async def aobserve(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``observe`` for asyncio."""
        try:
            return await self.acall(api_id, args)
        except AGENT_ERRORS as exc:
            return self.error_observation(api_id, exc)

    def error_observation(self, api_id: str, exc: ToolbedError) -> Observation:
        details = getattr(exc, "errors", [])
        return Observation(
            api=api_id,
            error=CallError(
                type=type(exc).__name__, message=self.redactor.text(str(exc)), details=details
            ),
        )

    def prepare(self, api: Api, args: Mapping[str, Any]) -> httpx.Request:
        """Validate the arguments and build the authenticated request (nothing is sent)."""
        app = self.catalog.app_of(api)
        base_url = self.base_url(app)
        headers, params = ({}, {}) if self.offline else auth_for(app, self.env, args)
        try:
            return build_request(api, args, base_url, auth_headers=headers, auth_params=params)
        except ToolbedError:
            raise
        except Exception as exc:
            # build_request names every refusal it knows; anything else it met is still
            # the arguments' fault, and an agent must get it as an observation, not a crash
            raise ArgumentError(f"{api.id}: the arguments cannot be made into a request "
                                f"({type(exc).__name__}: {exc})",
                                [{"path": "", "message": str(exc)}]) from exc

    def base_url(self, app: App) -> str:
        """Where ``app`` answers in this run."""
        if app.tier == "hosted":
            assert app.base_url is not None
            return app.base_url
        if self.offline:
            return canonical_origin(app.app)
        running = self.apps.get(app.app)
        if running is None:
            raise AppNotRunningError(
                f"{app.app} is not running; start it with `toolbed apps up {app.app}` "
                f"(or replay a cassette with --mode replay)"
            )
        return running.base_url

    # -- sending -------------------------------------------------------------------------

    def _send(self, request: httpx.Request) -> httpx.Response:
        attempts = self.retry.retrying() if self.retry.should_retry(request.method) else None
        try:
            if attempts is None:
                return self._send_once(request)
            return attempts(self._send_once, request)
        except httpx.HTTPError as exc:
            raise self._transport_error(request, exc) from exc

    async def _asend(self, request: httpx.Request) -> httpx.Response:
        attempts = (
            self.retry.async_retrying() if self.retry.should_retry(request.method) else None
        )
        try:
            if attempts is None:
                return await self._asend_once(request)
            return await attempts(self._asend_once, request)
        except httpx.HTTPError as exc:
            raise self._transport_error(request, exc) from exc

    def _send_once(self, request: httpx.Request) -> httpx.Response:
        response = self._client.send(request)
        response.read()
        return response

    async def _asend_once(self, request: httpx.Request) -> httpx.Response:
        if self._aclient is None:
            timeout, limits, transport = self._async_options
            self._aclient = httpx.AsyncClient(timeout=timeout, limits=limits, transport=transport)
        response = await self._aclient.send(request)
        await response.aread()
        return response

    def _transport_error(self, request: httpx.Request, exc: httpx.HTTPError) -> TransportError:
        url = self.redactor.text(str(request.url.copy_with(query=None)))
        return TransportError(
            f"{request.method} {url} failed: {type(exc).__name__}: {self.redactor.text(str(exc))}"
        )

    # -- cassette support ---------------------------------------------------------------

    def _origins(self) -> dict[str, str]:
        return {
            running.base_url.rstrip("/"): canonical_origin(name)
            for name, running in self.apps.items()
        }

    def _secret_params(self) -> frozenset[str]:
        return frozenset(    # the query parameters an app's auth puts a credential in
            name for app in self.catalog.apps.values()
            for name in app.auth.carriers[1])

    def _secrets(self) -> dict[str, str]:
        names = {var for app in self.catalog.apps.values() for var in app.auth.secret_env_vars}
        return {name: self.env[name] for name in sorted(names) if self.env.get(name)}
