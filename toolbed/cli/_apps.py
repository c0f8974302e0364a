"""``toolbed apps install|up|down|status|exercise``: the self-hosted apps."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Annotated

import httpx
import typer

from toolbed.apis import load_catalog
from toolbed.connectors import (
    Runtime,
    StepResult,
    damaged_records,
    forget_running,
    run_exercise,
    running_apps,
    save_running,
    stop_app,
)
from toolbed.errors import ToolbedError
from toolbed.launchers import Launcher, get_launcher, launcher_names
from toolbed.rollback import RollbackReport, RollbackScope

from ._output import CassetteOpt, JsonOpt, ModeOpt, console, print_json, table

app = typer.Typer(help="Install, start, stop and exercise the self-hosted apps.",
                  no_args_is_help=True, add_completion=False)

NamesArg = Annotated[
    list[str] | None, typer.Argument(help="App names (default: every self-hosted app).")
]


def _names(names: list[str] | None) -> list[str]:
    known = launcher_names()
    for name in names or []:
        if name not in known:
            raise ToolbedError(f"no self-hosted app {name!r}; known: {', '.join(known)}")
    return list(names) if names else known


@app.command()
def install(
    names: NamesArg = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Apps installed at once.")] = 4,
) -> None:
    """Install each app, at its pinned version, in its own virtualenv or npm prefix
    (idempotent; several at once, since most of the time goes to downloads)."""
    catalog = load_catalog()
    launchers = [get_launcher(name, catalog) for name in _names(names)]

    def one(launcher: Launcher) -> tuple[Launcher, bool, float]:
        started = time.monotonic()
        fresh = launcher.install()
        return launcher, fresh, time.monotonic() - started

    failures: list[str] = []
    with console.status(f"installing {len(launchers)} app(s) ..."), \
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, launcher) for launcher in launchers]
        for future in as_completed(futures):
            try:
                launcher, fresh, seconds = future.result()
            except ToolbedError as exc:
                failures.append(str(exc))
                continue
            what = "installed" if fresh else "already installed"
            console.print(f"{launcher.app.app}: {what} {launcher.requirement} "
                          f"({seconds:.1f} s) in {launcher.install_dir}")
    if failures:
        raise ToolbedError("\n".join(failures))


@app.command()
def up(names: NamesArg = None) -> None:
    """Start each app on 127.0.0.1 (free port, temporary data, fresh credentials)."""
    catalog = load_catalog()
    already = running_apps(owned=False)           # not those a running eval started
    damaged = damaged_records()
    for name in _names(names):
        if name in damaged:
            raise ToolbedError(
                f"{damaged[name]} is damaged, so toolbed cannot tell whether {name} still "
                f"runs: stop it if it does (look for it with `ps`), delete the file, then "
                f"`toolbed apps up {name}`")
        if name in already:
            console.print(f"{name}: already running at {already[name].base_url}")
            continue
        started = time.monotonic()
        running = get_launcher(name, catalog).start()
        save_running(running)
        console.print(f"{name} {running.version}: up at {running.base_url} "
                      f"(pid {running.pid}, ready in {time.monotonic() - started:.2f} s)")


@app.command()
def down(names: NamesArg = None) -> None:
    """Stop each running app and delete its temporary data."""
    running = running_apps()
    for name in _names(names):
        if name in running:
            stop_app(running[name])
            forget_running(running[name])
            console.print(f"{name}: stopped")
        else:
            console.print(f"{name}: not running")
        forget_running(name)


@app.command()
def status(as_json: JsonOpt = False) -> None:
    """Each app's install state, URL, version and health."""
    catalog = load_catalog()
    running = running_apps()
    damaged = damaged_records()
    rows = []
    for name in launcher_names():
        launcher = get_launcher(name, catalog)
        app_run = running.get(name)
        health = f"unknown: {damaged[name]} is damaged" if name in damaged else None
        if app_run:
            try:
                code = httpx.get(app_run.base_url + launcher.health_path, timeout=3).status_code
                health = "ok" if code < 500 else f"HTTP {code}"
            except httpx.HTTPError as exc:
                health = f"down ({type(exc).__name__})"
        rows.append({
            "app": name,
            "version": launcher.app.version,
            "installed": launcher.installed_version() == launcher.app.version,
            "running": app_run is not None,
            "url": app_run.base_url if app_run else None,
            "pid": app_run.pid if app_run else None,
            "health": health,
        })
    if as_json:
        print_json(rows)
        return
    table("self-hosted apps", ["app", "version", "installed", "running", "url", "health"],
          [[r["app"], r["version"], r["installed"], r["running"], r["url"], r["health"]]
           for r in rows])


@app.command()
def exercise(
    names: NamesArg = None,
    mode: ModeOpt = "live",
    cassette: CassetteOpt = None,
    rollback: Annotated[bool, typer.Option(
        "--rollback", help="Journal every write, undo them all afterwards, verify the state.",
    )] = False,
    allow_irreversible: Annotated[bool, typer.Option(
        "--allow-irreversible", help="With --rollback: send writes that cannot be undone.",
    )] = False,
    as_json: JsonOpt = False,
) -> None:
    """Call every API of each app once (its catalog exercise); exit 1 if any call fails."""
    selected = _names(names)
    results: list[StepResult] = []
    reports: list[RollbackReport] = []
    with Runtime(mode=mode, cassette=cassette) as runtime:
        for name in selected:
            if not rollback:
                results += run_exercise(runtime, name)
                continue
            with RollbackScope(runtime, verify=[name],
                               allow_irreversible=allow_irreversible) as scope:
                results += run_exercise(scope, name)
            assert scope.report is not None
            reports.append(scope.report)
    rows = [
        {"api": r.api_id, "status": r.observation.status, "ok": r.ok,
         "error": r.observation.error.message if r.observation.error else None}
        for r in results
    ]
    failed = sum(not r["ok"] for r in rows)
    if as_json:
        print_json({"calls": rows, "rollback": [r.model_dump(mode="json") for r in reports]}
                   if rollback else rows)
    else:
        table(f"{len(rows)} calls, {len(rows) - failed} ok, {failed} failed",
              ["api", "status", "ok", "error"],
              [[r["api"], r["status"], "yes" if r["ok"] else "NO", r["error"]] for r in rows])
        for report in reports:
            console.print(report.summary())
    if failed or not all(r.clean for r in reports):
        raise typer.Exit(1)
