"""Every write API of every local app (self-hosted or MCP): called, rolled back, state
verified equal.

Parametrised over the catalog, so a new app is covered the day its YAML lands. Each
write gets the arguments its app's exercise uses; the exercise steps before it run
first, in a setup scope of their own, so that what the write needs exists.
"""

from __future__ import annotations

import pytest

from toolbed.apis import Catalog, load_catalog
from toolbed.connectors import Runtime, bind_args, run_steps
from toolbed.errors import IrreversibleWriteError
from toolbed.rollback import Journal, RollbackScope, Status

from ..conftest import AppPool

CATALOG = load_catalog()
WRITES = [
    api.id for api in CATALOG
    if api.effect == "write" and CATALOG.app_of(api).local
]


@pytest.mark.parametrize("api_id", WRITES)
def test_write_is_undone_and_state_is_as_before(
    api_id: str, catalog: Catalog, pool: AppPool, journal: Journal
) -> None:
    api = catalog.api(api_id)
    app = catalog.app_of(api)
    index = next(i for i, s in enumerate(app.exercise) if s.api == api.name)
    step = app.exercise[index]

    with Runtime(catalog, apps=pool.only(app.app)) as rt, \
            RollbackScope(rt, journal, run_id="setup", allow_irreversible=True) as setup_scope:
        saved: dict = {}
        setup = run_steps(setup_scope, app.app, app.exercise[:index], saved)
        assert all(r.ok for r in setup), [r.api_id for r in setup if not r.ok]
        args = bind_args(step.bind, saved, step.args)

        with RollbackScope(rt, journal, verify=[app.app]) as scope:
            if api.undo is None:
                with pytest.raises(IrreversibleWriteError):
                    scope.call(api.id, args)
            else:
                obs = scope.call(api.id, args)
                assert step.accepts(obs.status), obs

        report = scope.report
        assert report is not None
        assert report.collateral == [], report.summary()
        assert report.clean, report.summary()
        expected = [] if api.undo is None else [Status.COMPENSATED]
        assert [e.status for e in report.entries] == expected
