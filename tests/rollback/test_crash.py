"""kill -9 at any point of a run, then `toolbed rollback recover`: nothing is left behind.

A child process makes ten writes over Kinto and Radicale inside a rollback scope and
is killed with SIGKILL: at points drawn at random (with a fixed seed) from every phase
of a write's life, including between "sent" and "answer journalled", and in the middle
of the rollback; plus a few kills at a random moment chosen by the clock. After each
kill, `toolbed rollback recover` runs and both apps' state probes must equal the state
before the child started, with no journal entry left open.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from toolbed.apis import Catalog
from toolbed.cli import app as cli
from toolbed.connectors import RunningApp, Runtime
from toolbed.rollback import OPEN, Journal, diff, snapshot

CHILD = Path(__file__).with_name("crash_child.py")
WRITES = 10
PHASES = ["before_journal", "after_journal", "after_send", "after_applied", "mid_rollback"]


def kill_points() -> list[tuple[str, int]]:
    rng = random.Random(20261121)
    points = [(phase, rng.randint(1, WRITES)) for phase in PHASES for _ in range(4)]
    points += [("none", 0)] * 4  # killed by the parent at a random moment
    return points


def state(catalog: Catalog, apps: dict[str, RunningApp]) -> dict:
    with Runtime(catalog, apps=apps) as rt:
        return {name: snapshot(rt.call, catalog.app(name)) for name in ("kinto", "radicale")}


def run_child(journal: Path, phase: str, k: int, rng: random.Random) -> int:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(journal), phase, str(k)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    if phase == "none":
        time.sleep(rng.uniform(0.5, 3.0))
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
    _, err = child.communicate(timeout=120)
    assert child.returncode in (-signal.SIGKILL, 0), err.decode()[-2000:]
    return child.returncode


def test_recover_after_kill_9_leaves_nothing_behind(
    home: Path, catalog: Catalog, fresh_apps: dict[str, RunningApp]
) -> None:
    baseline = state(catalog, fresh_apps)
    rng = random.Random(7)
    killed = 0
    for n, (phase, k) in enumerate(kill_points()):
        journal = home / f"journal-{n}.db"
        code = run_child(journal, phase, k, rng)
        killed += code == -signal.SIGKILL

        result = CliRunner().invoke(cli, ["rollback", "recover", "--journal", str(journal)])
        assert result.exit_code == 0, f"{phase}@{k}: {result.output}"

        assert Journal(journal).entries(statuses=OPEN) == [], f"{phase}@{k}"
        left = [str(d) for name in baseline
                for d in diff(baseline[name], state(catalog, fresh_apps)[name])]
        assert left == [], f"after a kill at {phase}@{k}: {left}"
    assert killed >= 20
