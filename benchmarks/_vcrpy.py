"""Replay as toolbed did before its replay index: vcrpy's player patched over httpx,
with the cassette's own filters and matchers. The replay benchmark times the index
against it, and a test compares their result rows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import httpx
import vcr
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.record_mode import RecordMode

from toolbed.connectors import Runtime, json_body
from toolbed.connectors._cassette import Cassette
from toolbed.errors import ReplayMissError

_send_once = Runtime._send_once


def _enter(self: Cassette) -> Cassette:
    self._read()                                       # checks the file, reads the clock
    player = vcr.VCR(serializer="yaml", record_mode=RecordMode.NONE,
                     match_on=Cassette.MATCH_ON,
                     before_record_request=self._scrub_request,
                     before_record_response=self._scrub_response,
                     decode_compressed_response=True)
    player.register_matcher("json_body", json_body)
    self._context = player.use_cassette(str(self.path), allow_playback_repeats=False)
    self._context.__enter__()
    return self


def _network(current: Any) -> httpx.HTTPTransport:
    return httpx.HTTPTransport()                       # vcrpy's patch answers it


def _send_once_or_miss(self: Runtime, request: httpx.Request) -> httpx.Response:
    """vcrpy's miss as toolbed's error, as the runtime turned it before the index."""
    try:
        return _send_once(self, request)
    except CannotOverwriteExistingCassetteException as exc:
        raise ReplayMissError(str(exc)) from None


@contextmanager
def vcrpy_replay() -> Iterator[None]:
    """Inside, a replaying ``Runtime`` is answered by vcrpy (one task at a time)."""
    with mock.patch.object(Cassette, "__enter__", _enter), \
            mock.patch.object(Runtime, "_send_once", _send_once_or_miss), \
            mock.patch("toolbed.connectors._runtime.ReplayTransport", _network):
        yield
