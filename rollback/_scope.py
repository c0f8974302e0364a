"""The rollback scope: journal every write of a task, undo them all when it ends.

    with RollbackScope(runtime, task_id="t1", verify=["kinto"]) as scope:
        scope.call("kinto.create_bucket", {"bucket": "trip"})
        ...
    scope.report.clean       # True: every write undone, kinto's state as before

Inside, a scope is called like a ``Runtime`` (``call``, ``observe`` and their async
forms), so agents and tools take either. Reads pass through. A write is journalled
before it is sent, with the ``before`` read its undo needs; its answer binds the undo.
On exit, normal or by exception, the undos run newest first; each failure is retried,
then reported. With ``verify``, each named app's state probe is snapshot on entry and
compared after rollback: anything that differs is reported as collateral damage.

A write whose catalog entry has no undo is refused (``IrreversibleWriteError``, nothing
sent) unless the scope allows irreversible writes; allowed ones are listed in the report.
The same rules hold in every mode, so a replay makes exactly the calls its recording did.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from toolbed.apis import Api, Catalog
from toolbed.connectors import AGENT_ERRORS, Observation, Runtime
from toolbed.errors import ArgumentError, CassetteError, IrreversibleWriteError, ToolbedError

from ._journal import OPEN, Entry, Journal, Status
from ._probe import Difference, Snapshot, diff, snapshot
from ._undo import UndoPolicy, bind_undo, read_before, undo_entry

__all__ = ["RollbackReport", "RollbackScope"]


class RollbackReport(BaseModel):
    """What rollback did for one scope: every write's fate, and what was left different."""

    run_id: str
    task_id: str | None = None
    entries: list[Entry] = []
    collateral: list[Difference] = []
    """Objects whose state after rollback differs from before the task."""
    verify_errors: list[str] = []
    """Apps whose state could not be probed (so nothing is known about them)."""

    @property
    def failed(self) -> list[Entry]:
        return [e for e in self.entries if e.is_open]

    @property
    def irreversible(self) -> list[Entry]:
        return [e for e in self.entries if e.status is Status.IRREVERSIBLE]

    @property
    def compensated(self) -> list[Entry]:
        return [e for e in self.entries if e.status is Status.COMPENSATED]

    @property
    def clean(self) -> bool:
        """Every write undone (or allowed irreversible) and no collateral damage."""
        return not (self.failed or self.collateral or self.verify_errors)

    def summary(self) -> str:
        lines = [
            f"run {self.run_id}: {len(self.entries)} write(s), {len(self.compensated)} undone, "
            f"{len(self.failed)} left open, {len(self.irreversible)} irreversible, "
            f"{len(self.collateral)} collateral difference(s)"
        ]
        lines += [f"  open: #{e.seq} {e.api} [{e.status}] {e.error or ''}" for e in self.failed]
        lines += [f"  irreversible: #{e.seq} {e.api}" for e in self.irreversible]
        lines += [f"  collateral: {d}" for d in self.collateral]
        lines += [f"  not verified: {m}" for m in self.verify_errors]
        return "\n".join(lines)


class RollbackScope:
    """Journal the writes made through it; undo them on exit.

    Args:
        runtime: the runtime that makes the calls (any mode).
        journal: where writes are journalled (default: the shared journal file in live
            and record mode, a journal in memory in replay mode, where nothing real
            was changed).
        run_id: groups the entries of this scope (default: a fresh uuid).
        task_id: the task the writes belong to, for reports.
        allow_irreversible: send writes that have no undo (and report them).
        verify: apps whose state probe is compared before and after.
        policy: retries of a failing undo.
    """

    def __init__(
        self,
        runtime: Runtime,
        journal: Journal | None = None,
        *,
        run_id: str | None = None,
        task_id: str | None = None,
        allow_irreversible: bool = False,
        verify: Iterable[str] = (),
        policy: UndoPolicy | None = None,
    ):
        self.runtime = runtime
        if journal is None:
            journal = Journal(":memory:" if runtime.offline else None)
        self.journal = journal
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.task_id = task_id
        self.allow_irreversible = allow_irreversible
        self.verify = list(verify)
        self.policy = policy or UndoPolicy()
        self.report: RollbackReport | None = None
        self._before: dict[str, Snapshot] = {}
        self._probe_errors: list[str] = []

    @property
    def catalog(self) -> Catalog:
        return self.runtime.catalog

    # -- lifecycle ----------------------------------------------------------------------

    def __enter__(self) -> RollbackScope:
        self._snapshot_all()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.report is None:  # not rolled back by an explicit call already
            self.rollback()

    async def __aenter__(self) -> RollbackScope:
        await asyncio.to_thread(self._snapshot_all)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self.report is None:
            await asyncio.to_thread(self.rollback)

    # -- calls ---------------------------------------------------------------------------

    def call(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``Runtime.call``, with a write journalled and its undo bound."""
        api = self.catalog.api(api_id)
        if api.effect == "read":
            return self.runtime.call(api.id, args)
        return self._write(api, {} if args is None else args)

    async def acall(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``call`` for asyncio (the journal is local SQLite; writes run in a thread)."""
        api = self.catalog.api(api_id)
        if api.effect == "read":
            return await self.runtime.acall(api.id, args)
        return await asyncio.to_thread(self._write, api, {} if args is None else args)

    def observe(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        """``call``, with the agent's mistakes (and refused writes) as error observations."""
        try:
            return self.call(api_id, args)
        except (*AGENT_ERRORS, IrreversibleWriteError) as exc:
            return self.runtime.error_observation(api_id, exc)

    async def aobserve(self, api_id: str, args: Mapping[str, Any] | None = None) -> Observation:
        try:
            return await self.acall(api_id, args)
        except (*AGENT_ERRORS, IrreversibleWriteError) as exc:
            return self.runtime.error_observation(api_id, exc)

    def _write(self, api: Api, args: Mapping[str, Any]) -> Observation:
        rt = self.runtime
        request = rt.prepare(api, args)  # bad arguments are refused before any journal row
        args = dict(args)
        safe_args = rt.redactor.data(args)
        if api.undo is None:
            if not self.allow_irreversible:
                raise IrreversibleWriteError(
                    f"{api.id} cannot be undone ({api.irreversible}); it was not sent. "
                    "Allow it with --allow-irreversible (allow_irreversible=True)"
                )
            seq = self._begin(api, safe_args, status=Status.IRREVERSIBLE)
            obs = rt.send(api, request)
            self.journal.update(seq, Status.IRREVERSIBLE, http_status=obs.status,
                                response=obs.bindable())
            return obs

        before = read_before(rt, api, safe_args)
        compensation = None
        if not api.undo.needs_response:
            try:
                compensation = bind_undo(api, safe_args, before)
            except ArgumentError:
                compensation = None  # e.g. nothing to restore; bound again after the answer
        seq = self._begin(api, safe_args, before=before, compensation=compensation)
        try:
            obs = rt.send(api, request)
        except CassetteError as exc:
            self.journal.update(seq, Status.NOOP, error=f"not sent: {exc}")
            raise
        except ToolbedError as exc:
            # it may or may not have reached the app: rollback finds out with the lookup
            self.journal.update(seq, Status.PENDING, error=str(exc))
            raise
        self._settle(api, seq, safe_args, before, compensation, obs)
        return obs

    def _begin(self, api: Api, args: dict[str, Any], **fields: Any) -> int:
        running = self.runtime.apps.get(api.app)
        return self.journal.begin(
            run_id=self.run_id, task_id=self.task_id, app=api.app, api=api.id,
            mode=self.runtime.mode.value, args=args,
            instance=running.data_dir if running and not self.runtime.offline else None,
            **fields,
        )

    def _settle(
        self, api: Api, seq: int, args: dict[str, Any], before: Any,
        compensation: dict[str, Any] | None, obs: Observation,
    ) -> None:
        response = obs.bindable()
        if obs.status is not None and 400 <= obs.status < 500:
            self.journal.update(seq, Status.NOOP, http_status=obs.status, response=response,
                                error=f"the app refused the write ({obs.status})")
            return
        if not obs.ok:
            # a 5xx may have half-happened: leave it pending for the lookup to settle
            self.journal.update(seq, Status.PENDING, http_status=obs.status, response=response)
            return
        try:
            compensation = bind_undo(api, args, before, response)
        except ArgumentError as exc:
            self.journal.update(seq, Status.FAILED, http_status=obs.status, response=response,
                                error=f"cannot bind the undo: {exc}")
            return
        self.journal.update(seq, Status.APPLIED, http_status=obs.status, response=response,
                            compensation=compensation)

    # -- rollback -----------------------------------------------------------------------

    def rollback(self) -> RollbackReport:
        """Undo this scope's open writes, newest first; verify; return the report."""
        for entry in reversed(self.journal.entries(run_id=self.run_id, statuses=OPEN)):
            undo_entry(self.runtime, self.journal, entry, self.policy)
        collateral: list[Difference] = []
        errors = list(self._probe_errors)
        for app, before in self._before.items():
            try:
                changed = self._compare(app, before)
            except ToolbedError as exc:
                errors.append(f"{app}: {exc}")
                continue
            collateral.extend(changed)
            if not changed:
                self._settle_moot_undos(app)
        self.report = RollbackReport(
            run_id=self.run_id, task_id=self.task_id,
            entries=self.journal.entries(run_id=self.run_id),
            collateral=collateral, verify_errors=errors,
        )
        return self.report

    def _settle_moot_undos(self, app: str) -> None:
        """Close failed undos of an app whose whole state is verified as before.

        An undo can fail because a later write removed its target for good (a calendar
        deleted with its events makes "re-create the event" impossible); when the
        state probe shows the app exactly as before the task, nothing is left to undo.
        """
        for entry in self.journal.entries(run_id=self.run_id, statuses=(Status.FAILED,)):
            if entry.app == app:
                self.journal.update(
                    entry.seq, Status.NOOP,
                    error=f"{entry.error}; nothing left to undo: {app}'s state probe "
                    "equals its state before the task",
                )

    def _compare(self, app: str, before: Snapshot) -> list[Difference]:
        """The differences between ``before`` and now, once the app has settled."""
        return diff(before, self._settled(app, until=lambda now: not diff(before, now)))

    def _settled(self, app: str, until: Callable[[Snapshot], bool]) -> Snapshot:
        """Probe ``app`` until ``until`` holds or its catalog ``settle`` time is spent.

        Some apps bring part of their state up to date in background tasks after a
        write (Synapse's room statistics); they are probed again, with growing pauses.
        An app with no ``settle`` costs one probe. A replay takes the same path as the
        recording, since ``until`` sees the recorded answers, but without the pauses.
        """
        deadline = time.monotonic() + self.catalog.app(app).settle
        pause = 0.0 if self.runtime.offline else 0.1
        now = self._probe(app)
        while not until(now) and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(pause, left))
            pause *= 2
            now = self._probe(app)
        return now

    def _snapshot_all(self) -> None:
        """The state before; for an app that settles, once two probes in a row agree."""
        for app in self.verify:
            try:
                last = self._probe(app)

                def unchanged(now: Snapshot) -> bool:
                    nonlocal last
                    same, last = not diff(last, now), now
                    return same

                self._before[app] = self._settled(app, until=unchanged) if \
                    self.catalog.app(app).settle else last
            except ToolbedError as exc:
                self._probe_errors.append(f"{app}: {exc}")

    def _probe(self, app: str) -> Snapshot:
        return snapshot(self.runtime.call, self.catalog.app(app))

