"""The run's clock: what "now" means in a binding, the same when a run is replayed.

A task that schedules a message "for tomorrow at 09:00" cannot carry a fixed timestamp:
the day it names passes, and the task breaks. Its chain binds the time instead, with
the functions ``_bind.py`` adds to JMESPath (``at(`1`, '09:00')``), evaluated against
this clock: the wall time a live or recorded run started at, and in a replay the time
its recording started at, which the cassette keeps, so that a replayed request is the
recorded one.

A ``Runtime`` sets the clock while it is open (``running_at``); outside any runtime the
clock is the wall time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta

__all__ = ["at", "now", "running_at"]

_CLOCK: ContextVar[int | None] = ContextVar("toolbed_clock", default=None)


def now() -> int:
    """The run's clock, in whole seconds since the epoch."""
    clock = _CLOCK.get()
    return int(time.time()) if clock is None else clock


@contextmanager
def running_at(clock: int) -> Iterator[None]:
    """Make ``clock`` the run's clock inside the block (a block may nest another)."""
    token = _CLOCK.set(clock)
    try:
        yield
    finally:
        _CLOCK.reset(token)


def at(days: int, hh_mm: str) -> int:
    """The time ``hh_mm`` (UTC, ``"09:00"``) on the day ``days`` after the clock's day
    (0: today, 1: tomorrow, -1: yesterday), in seconds since the epoch."""
    hours, _, minutes = hh_mm.partition(":")
    if not (hours.isdigit() and minutes.isdigit() and int(hours) < 24 and int(minutes) < 60):
        raise ValueError(f"at(): {hh_mm!r} is not a time of day like '09:00'")
    day = datetime.fromtimestamp(now(), UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    when = day + timedelta(days=days, hours=int(hours), minutes=int(minutes))
    return int(when.timestamp())
