"""When to send a request again, built on tenacity.

Only idempotent methods are retried (a POST that timed out may have been applied),
and only on connect failures, 429 and 5xx. A ``Retry-After`` header (seconds or an
HTTP date) sets the wait, capped by ``max_wait``; otherwise the wait doubles from
``backoff``.
"""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field

import httpx
import tenacity

__all__ = ["IDEMPOTENT_METHODS", "RetryPolicy"]

IDEMPOTENT_METHODS = frozenset(
    {"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PROPFIND", "PROPPATCH", "REPORT"}
)
RETRY_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry.

        RetryPolicy()                      # 3 attempts, 0.5 s then 1 s, Retry-After up to 30 s
        RetryPolicy(attempts=1)            # never retry
    """

    attempts: int = 3
    backoff: float = 0.5
    max_wait: float = 30.0
    statuses: frozenset[int] = field(default=frozenset({429, 500, 502, 503, 504}))
    waits: bool = True
    """Sleep between attempts. A replay does not: it sends the same attempts as the
    recording, whose answers already hold what waiting brought."""

    def should_retry(self, method: str) -> bool:
        return self.attempts > 1 and method.upper() in IDEMPOTENT_METHODS

    def _retry_on(self, state: tenacity.RetryCallState) -> bool:
        outcome = state.outcome
        if outcome is None:
            return False
        if outcome.failed:
            return isinstance(outcome.exception(), RETRY_ERRORS)
        return outcome.result().status_code in self.statuses

    def wait(self, state: tenacity.RetryCallState) -> float:
        """Seconds to wait before the next attempt."""
        if not self.waits:
            return 0.0
        outcome = state.outcome
        if outcome is not None and not outcome.failed:
            after = _retry_after(outcome.result().headers.get("retry-after"))
            if after is not None:
                return min(after, self.max_wait)
        return min(self.backoff * 2 ** (state.attempt_number - 1), self.max_wait)

    def _options(self) -> dict:
        return dict(
            stop=tenacity.stop_after_attempt(self.attempts),
            retry=self._retry_on,
            wait=self.wait,
            # after the last attempt hand back the last response, or raise the last error
            retry_error_callback=lambda state: state.outcome.result(),
        )

    def retrying(self) -> tenacity.Retrying:
        return tenacity.Retrying(**self._options())

    def async_retrying(self) -> tenacity.AsyncRetrying:
        return tenacity.AsyncRetrying(**self._options())


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
