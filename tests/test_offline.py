"""Outside ``live``, a test can neither start an app nor open a connection, so
``pytest -m "not live"`` is an offline suite (the guard is in conftest.py)."""

from __future__ import annotations

import socket

import httpx
import pytest

from toolbed.launchers import get_launcher


def test_a_test_not_marked_live_cannot_start_an_app(catalog):
    with pytest.raises(pytest.fail.Exception, match="starts kinto: mark it"):
        get_launcher("kinto", catalog).start()


def test_a_test_not_marked_live_cannot_connect_even_to_loopback():
    with pytest.raises(OSError, match="network blocked"):
        socket.create_connection(("127.0.0.1", 9))
    with pytest.raises(httpx.ConnectError, match="network blocked"):
        httpx.get("http://127.0.0.1:9/")


@pytest.mark.live
def test_a_live_test_may_connect():
    with pytest.raises(ConnectionRefusedError), socket.socket() as sock:
        sock.connect(("127.0.0.1", 9))      # refused by the port, not by the guard
