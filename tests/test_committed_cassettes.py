"""The cassettes committed under cassettes/ replay offline, deterministically.

``cassettes/exercise/<app>.yaml`` is each app's exercise recorded live with
``toolbed apps exercise APP --mode record --cassette cassettes/exercise/APP.yaml``.
When a catalog entry changes, re-record it the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbed.connectors import Runtime, run_exercise
from toolbed.launchers import launcher_names

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes"


@pytest.mark.parametrize("name", launcher_names())
def test_exercise_cassette_replays_every_api(catalog, name):
    cassette = CASSETTES / "exercise" / f"{name}.yaml"
    runs = []
    for _ in range(2):
        with Runtime(catalog, mode="replay", cassette=cassette) as rt:
            runs.append(run_exercise(rt, name))
    first, second = runs
    assert all(r.ok for r in first), [r.api_id for r in first if not r.ok]
    assert {r.api_id for r in first} == {api.id for api in catalog.filter(app=name)}
    assert [r.observation for r in first] == [r.observation for r in second]
