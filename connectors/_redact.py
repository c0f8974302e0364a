"""Keep secrets out of everything toolbed writes: cassettes, observations, logs, reports.

A secret is the value of an env var that some app's auth reads (a password, a
token, an API key) or a credential a launcher generated. The Redactor replaces each
such value, wherever it appears, with ``<NAME>``; and the value of any JSON key
that names a secret (``password``, ``token``, ...) with ``<redacted>``. Redaction
is idempotent, so a recorded-then-replayed observation equals the live one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["REDACTED", "SECRET_HEADERS", "SECRET_KEYS", "Redactor"]

REDACTED = "<redacted>"

SECRET_KEYS = frozenset(
    {
        "password", "passwd", "new_password", "old_password", "secret", "client_secret",
        "token", "access_token", "refresh_token", "api_key", "apikey", "authorization",
    }
)
"""JSON keys whose values are secrets whatever they hold."""

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
"""Headers never written to a cassette."""

_MIN_SECRET = 4  # shorter values would redact ordinary words


class Redactor:
    """Replace known secret values and secret-named JSON fields."""

    def __init__(self, secrets: Mapping[str, str] | None = None):
        pairs: list[tuple[str, str]] = []
        for name, value in (secrets or {}).items():
            if value and len(value) >= _MIN_SECRET:
                marker = f"<{name}>"
                pairs.append((value, marker))
                encoded = quote(value, safe="")
                if encoded != value:
                    pairs.append((encoded, marker))
        # longest first, so that a secret containing another is replaced whole
        self._pairs = sorted(pairs, key=lambda p: -len(p[0]))
        self.markers = frozenset(marker for _, marker in pairs) | {REDACTED}
        """What redacted text contains: ``<NAME>`` per secret and ``<redacted>``."""

    def text(self, text: str) -> str:
        for value, marker in self._pairs:
            text = text.replace(value, marker)
        return text

    def data(self, value: Any) -> Any:
        """Redact a parsed JSON value (or plain text)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(v) for v in value]
        if isinstance(value, dict):
            return {
                k: REDACTED if str(k).lower() in SECRET_KEYS and v not in (None, "")
                else self.data(v)
                for k, v in value.items()
            }
        return value

    def body(self, raw: bytes | None) -> bytes | None:
        """Redact a request or response body: JSON by structure, other text by value."""
        if not raw:
            return raw
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
        try:
            parsed = json.loads(text)
        except ValueError:
            return self.text(text).encode("utf-8")
        if not isinstance(parsed, dict | list):
            return self.text(text).encode("utf-8")
        return json.dumps(self.data(parsed), ensure_ascii=False).encode("utf-8")
