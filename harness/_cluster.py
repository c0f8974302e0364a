"""An evaluation spread over a Ray cluster: ``toolbed eval --ray ADDRESS``.

The driver (the ``toolbed eval`` process) keeps everything that makes a run one run:
the task list, the retriever's offered tools, scoring, the run log and the report. The
workers only execute, as the replay processes of ``Runner.run`` do: each is a Ray actor
holding one CPU, with a home of its own on its node (``$TOOLBED_HOME/ray/<run>/worker-N``,
the node's installed apps linked in), where it starts its own instances of the apps its
tasks touch, on its own loopback, and rolls every write back there. So a task on one
worker never sees another's writes, and nothing is shared but the cluster. An app the
node lacks is installed there first, once for all of the node's workers, from the
package registry the node's pip or npm is set up to use.

A task travels as itself with its offered tools and, in a replay, its cassette's bytes;
what comes back is what executing it gave and, in a recording, the cassette's bytes,
which the driver writes where a single-process run would have. Results are stored in
task order, so a run on the cluster writes the same rows as a run in one process.

A worker that dies (its process killed, its node lost) is replaced in the same slot,
on the same node when it still exists; the new worker first undoes what the dead one's
journal still owes, against the dead one's apps while they live, then stops them. Its
unfinished task runs again; one that has killed two workers fails with that reason
instead. A rerun of the same folder resumes as always, and reuses the workers' homes,
so it also recovers what a killed driver's workers left.

Ray's own servers listen on the node's address, not loopback only (Ray resolves
127.0.0.1 to the node's IP on Linux); a local cluster started here requires a token
generated for it (Ray's token authentication), and the apps the workers start bind
127.0.0.1 as everywhere else.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from toolbed.apis import Catalog, load_catalog
from toolbed.connectors import (
    Mode,
    RunningApp,
    Runtime,
    parse_mode,
    reap_orphans,
    running_apps,
)
from toolbed.errors import AppError, ClusterError
from toolbed.launchers import get_launcher, restart_recorded
from toolbed.paths import home_dir
from toolbed.rollback import Journal, open_entries, recover
from toolbed.tasks._task import Task

from ._evaluation import start_missing, stop_started
from ._runner import Executed, Runner
from ._trajectory import Trajectory
from .agents import AgentOptions, make_agent
from .scoring import Reference

__all__ = ["RayCluster", "check_address"]

Item = tuple[Task, int, list[str]]
"""A run to do: the task, the trial, the tools it is offered."""

QUEUED = 2
"""Runs sent to a worker at once: one running, one waiting its turn in the actor."""

DEATHS_PER_TASK = 2
"""A task whose worker died this many times fails with that, instead of killing more."""

WORKER_START_TIMEOUT = 300.0
"""Seconds a new worker has to load the catalog and its agent (a model, perhaps)."""

CONNECT_TIMEOUT = 5.0
"""Seconds to reach a cluster's address before saying it cannot be reached."""


def check_address(address: str) -> tuple[str, int] | None:
    """The (host, port) of a cluster address, reachable within ``CONNECT_TIMEOUT``
    seconds; None for ``local`` (a new cluster on this machine) and ``auto`` (the
    cluster `ray start` runs here). Anything else is one ``ClusterError``."""
    if address in ("local", "auto"):
        return None
    match = re.fullmatch(r"(?:ray://)?\[?([^\s\[\]/]+?)\]?:(\d{1,5})", address)
    if not match or not 0 < int(match.group(2)) < 65536:
        raise ClusterError(f"--ray {address!r}: give local (a new cluster on this machine), "
                           "auto (the one `ray start` runs here), HOST:PORT (the head node's "
                           "GCS port, 6379 by default) or ray://HOST:PORT (Ray Client)")
    host, port = match.group(1), int(match.group(2))
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as sock:
            grpc = _answers_http2(sock)
    except OSError as exc:
        raise ClusterError(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}); start its "
            "head with `ray start --head` (or leave out the address: --ray local runs a "
            "cluster on this machine)") from None
    if not grpc:        # Ray would retry such an address for minutes
        raise ClusterError(
            f"{address} answers, but not as a Ray cluster (Ray's head speaks gRPC there): "
            "give the head's GCS port (6379 unless `ray start --head --port` said "
            "otherwise), not the dashboard's or another server's")
    return host, port


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")
"""What an HTTP/2 client sends first (RFC 9113, 3.4): the preface, then an empty
SETTINGS frame. A gRPC server (Ray's head) answers with a SETTINGS frame of its own."""


def _answers_http2(sock: socket.socket) -> bool:
    """Whether the server on ``sock`` speaks HTTP/2, as a gRPC server does: its first
    frame's type (the fourth byte) is SETTINGS (4); an HTTP/1 server says "HTTP/1.1"."""
    sock.settimeout(CONNECT_TIMEOUT)
    sock.sendall(HTTP2_PREFACE)
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return False
        head += chunk
    return head[3] == 0x04


@dataclass(frozen=True)
class WorkerPlan:
    """What a worker needs to build its own runner: the agent, made on the worker, and
    the driver runner's settings."""

    agent: str | None
    options: AgentOptions
    mode: str
    tools: str
    k: int
    trials: int
    scope: str
    via: str
    run: str
    """The run folder's name: the workers' homes are named after it, so a rerun of the
    folder finds (and recovers) what the last one's workers left."""


class _Worker:
    """A Ray actor: one slot's runner, with its own home and apps."""

    def __init__(self, slot: int, plan: WorkerPlan):
        node_home = home_dir()
        self.home = node_home / "ray" / plan.run / f"worker-{slot}"
        self.home.mkdir(parents=True, exist_ok=True)
        apps = self.home / "apps"
        if not apps.is_symlink() and not apps.exists():   # installs go to the node's apps
            (node_home / "apps").mkdir(parents=True, exist_ok=True)
            apps.symlink_to(node_home / "apps")
        os.environ["TOOLBED_HOME"] = str(self.home)       # this process is the worker's
        self.catalog = load_catalog()
        self.recovered = _recover_dead(self.catalog)
        self.started: dict[str, RunningApp] = {}
        self.notes: list[str] = []
        """What this worker did that the driver should say (apps it installed)."""
        mode = parse_mode(plan.mode)
        self.runner = Runner(
            self.catalog, make_agent(plan.agent, plan.options), self.home / "run", mode,
            plan.tools, plan.k, plan.trials, self.home / "cassettes",
            apps=None if mode.offline else {}, restart=self._restart, scope=plan.scope,
            via=plan.via)

    def hello(self) -> tuple[int, str, list[str]]:
        """This worker's pid, node and what it recovered from the slot's last worker."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id(), self.recovered

    def execute(self, task: Task, trial: int, offered: list[str], cassette: bytes | None
                ) -> tuple[Executed, bytes | None, list[str]]:
        """Run one task here: what executing it gave, the cassette it recorded, and what
        else the worker did for it that the driver should say."""
        runner = self.runner
        path = runner.cassette(task, trial)
        if path is not None and cassette is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(cassette)
        self._start_apps(task, offered)
        executed = runner.execute(task, trial, offered)
        recorded = path.read_bytes() if path is not None and runner.mode is Mode.RECORD \
            and path.exists() else None
        notes, self.notes = self.notes, []
        return executed, recorded, notes

    def stop(self) -> None:
        stop_started(self.started)

    def _start_apps(self, task: Task, offered: list[str]) -> None:
        runner = self.runner
        if runner.apps is None:
            return
        need = {a for a in runner.touches(task, offered) if self.catalog.app(a).local}
        need -= set(runner.apps) | set(runner.unavailable)
        self._install(need)
        need -= set(runner.unavailable)
        if need:
            runner.apps.update(start_missing(self.catalog, need, self.started,
                                             runner.unavailable, lambda _: None))

    def _install(self, names: set[str]) -> None:
        """Install on this node each of ``names`` it lacks; one that cannot be is
        unavailable, with why, like one that will not start (its tasks fail with it)."""
        for name in sorted(names):
            launcher = get_launcher(name, self.catalog)
            began = time.monotonic()
            try:
                if launcher.install():       # False: installed already, or by a neighbour
                    self.notes.append(f"installed {launcher.requirement} on its node "
                                      f"({time.monotonic() - began:.1f} s)")
            except AppError as exc:
                self.runner.unavailable[name] = f"it is not installed on the Ray " \
                                                f"worker's node, where {exc}"

    def _restart(self, app: RunningApp) -> RunningApp:
        new = restart_recorded(app, self.catalog)
        if app.app in self.started:
            self.started[app.app] = new
        return new


def _recover_dead(catalog: Catalog) -> list[str]:
    """In a worker's home: undo what a dead worker's journal still owes (against its
    apps, which outlive it), then stop those apps; a line for each thing done."""
    said: list[str] = []
    journal = Journal()
    try:
        if open_entries(journal):
            with Runtime(catalog, apps=running_apps()) as runtime:
                for entry in recover(runtime, journal):
                    said.append(f"{entry.app}: {entry.api} {entry.status.value}")
    finally:
        journal.close()
    said += [f"stopped {app.app} (pid {app.pid}) of the dead worker" for app in reap_orphans()]
    return said


@dataclass
class _Slot:
    number: int
    actor: Any = None
    node: str | None = None
    pid: int | None = None


@dataclass
class RayCluster:
    """Where an evaluation's runs execute: a Ray cluster at ``address`` (``local``
    starts one on this machine with ``workers`` CPUs), ``workers`` actors on it
    (default: one per CPU of the cluster).

        with RayCluster("local", workers=2) as cluster:
            Evaluation(..., cluster=cluster).run()
    """

    address: str = "local"
    workers: int | None = None
    agent: str | None = None
    options: AgentOptions = field(default_factory=AgentOptions)
    say: Callable[[str], None] = field(default=lambda _: None, repr=False)
    slots: list[_Slot] = field(default_factory=list, init=False, repr=False)
    _started: bool = field(default=False, init=False, repr=False)
    _plan: WorkerPlan | None = field(default=None, init=False, repr=False)

    def __enter__(self) -> RayCluster:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        """Join the cluster (or start the local one); bad or unreachable addresses and a
        cluster with no CPU are one ``ClusterError``, before anything runs."""
        if self.workers is not None and self.workers < 1:
            raise ClusterError(f"--workers {self.workers}: at least 1 on a Ray cluster")
        check_address(self.address)
        if self.address == "local":
            # a token of this run's own (read when ray is imported): Ray's servers
            # listen beyond loopback
            os.environ.setdefault("RAY_AUTH_MODE", "token")
            if os.environ["RAY_AUTH_MODE"] == "token":
                os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
        import ray

        try:
            if self.address == "local":
                ray.init(address="local", num_cpus=self.workers or os.cpu_count() or 1,
                         include_dashboard=False, log_to_driver=False,
                         configure_logging=False, namespace="toolbed")
            else:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False,
                         namespace="toolbed")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ClusterError(f"cannot join the Ray cluster at {self.address}: {exc}"
                               ) from None
        self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            self.close()
            raise ClusterError(f"the Ray cluster at {self.address} has no CPU to run on")
        if self.workers is not None and self.workers > cpus:
            self.close()
            raise ClusterError(f"--workers {self.workers}: the Ray cluster at {self.address} "
                               f"has {cpus} CPUs and each worker holds one; give at most "
                               f"{cpus}")
        self.workers = self.workers or cpus

    def close(self) -> None:
        """Stop the workers' apps and the workers; leave the cluster (a local one ends)."""
        if not self._started:
            return
        import ray

        self._stop_workers()
        ray.shutdown()
        self._started = False

    def _stop_workers(self) -> None:
        """Each worker stops its apps, then the worker goes."""
        import ray

        stopping = [s.actor.stop.remote() for s in self.slots if s.actor is not None]
        with suppress(Exception):    # a dead worker's apps: the next run in its home reaps them
            ray.get(stopping, timeout=60)
        for slot in self.slots:
            if slot.actor is not None:
                ray.kill(slot.actor)
        self.slots.clear()

    def worker_pids(self) -> dict[int, int]:
        """Each slot's worker process id (on its node)."""
        return {s.number: s.pid for s in self.slots if s.pid is not None}

    def execute(self, runner: Runner, todo: Sequence[Item]) -> Iterator[Executed]:
        """What executing each of ``todo`` gave, in order (like ``Executor.map``). Each
        worker holds ``QUEUED`` runs, so that it never waits for the driver between two."""
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        plan = WorkerPlan(self.agent, self.options, runner.mode.value, runner.tools,
                          runner.k, runner.trials, runner.scope, runner.via,
                          runner.run_dir.resolve().name)
        if plan != self._plan:           # another agent or run: workers of its own
            self._stop_workers()
            self._plan = plan
        if not self.slots:
            self.slots = [_Slot(n) for n in range(self.workers or 1)]
        self._spawn([s for s in self.slots if s.actor is None], plan)
        queue: deque[int] = deque(range(len(todo)))
        deaths = [0] * len(todo)
        done: dict[int, Executed] = {}
        busy: dict[Any, tuple[_Slot, Any, int]] = {}    # in the order they were sent
        following = 0
        while following < len(todo):
            for slot in self.slots:
                while queue and sum(s is slot for s, _, _ in busy.values()) < QUEUED:
                    n = queue.popleft()
                    task, trial, offered = todo[n]
                    # a replay's cassette goes with its task, for a worker on any machine;
                    # a missing one fails here, naming the driver's path as in one process
                    path = runner.cassette(task, trial) if runner.mode.offline else None
                    if path is not None and not path.exists():
                        done[n] = runner.execute(task, trial, offered)
                        continue
                    cassette = path.read_bytes() if path is not None else None
                    ref = slot.actor.execute.remote(task, trial, offered, cassette)
                    busy[ref] = (slot, slot.actor, n)
            while following in done:
                yield done.pop(following)
                following += 1
            if not busy:
                continue
            ready, _ = ray.wait(list(busy), num_returns=1)   # the oldest ready first
            slot, actor, n = busy.pop(ready[0])
            task, trial, offered = todo[n]
            try:
                executed, recorded, notes = ray.get(ready[0])
            except RayActorError as exc:
                if actor is not slot.actor:     # a run queued behind the one that died
                    queue.appendleft(n)
                    continue
                deaths[n] += 1
                self.say(f"worker {slot.number} (pid {slot.pid}) died running {task.id}: "
                         f"{_first_line(exc)}")
                if deaths[n] >= DEATHS_PER_TASK:
                    done[n] = Executed(Trajectory(), Reference(), [
                        f"the Ray worker running it died {deaths[n]} times"], 0.0)
                else:
                    queue.appendleft(n)
                self._spawn([slot], plan)
            except RayTaskError as exc:       # a bug in the worker: this task fails with it
                done[n] = Executed(Trajectory(), Reference(), [
                    f"the Ray worker failed: {_first_line(exc)}"], 0.0)
            else:
                for line in notes:
                    self.say(f"worker {slot.number}: {line}")
                if recorded is not None:
                    path = runner.cassette(task, trial)
                    assert path is not None
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(recorded)
                done[n] = executed

    def _spawn(self, slots: list[_Slot], plan: WorkerPlan) -> None:
        """Start the slots' workers, side by side (again: on the dead one's node, if it
        is still up), and wait until each has loaded its agent and recovered."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        for slot in slots:
            options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0}
            if slot.node is not None:
                options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(slot.node,
                                                                                soft=True)
            if slot.actor is not None:
                ray.kill(slot.actor)
            slot.actor = ray.remote(_Worker).options(**options).remote(slot.number, plan)
        for slot in slots:
            try:
                slot.pid, slot.node, recovered = ray.get(slot.actor.hello.remote(),
                                                         timeout=WORKER_START_TIMEOUT)
            except Exception as exc:
                raise ClusterError(f"a Ray worker would not start: {_first_line(exc)} (does "
                                   "every node have toolbed installed, with scripts/setup?)"
                                   ) from None
            for line in recovered:
                self.say(f"worker {slot.number} recovered: {line}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

