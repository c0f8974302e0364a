"""``toolbed cassettes drift``: has an app changed under the recorded cassettes?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from toolbed.connectors import RunningApp
from toolbed.errors import ToolbedError
from toolbed.tasks import TASK_CASSETTES, task_cassette

from ._output import JsonOpt, console, print_json, table
from ._tasks import AppsOpt, TierOpt, _select

__all__ = ["app", "drift"]

app = typer.Typer(help="Recorded cassettes: check them against the apps as they are now.",
                  no_args_is_help=True, add_completion=False)


@app.callback()
def _cassettes() -> None:
    # a callback keeps `drift` a subcommand (`toolbed cassettes drift`)
    pass


@app.command()
def drift(
    app_: AppsOpt = None, tier: TierOpt = None,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Also run chains that write (rolled back, as always).")
                            ] = False,
    cassettes: Annotated[Path, typer.Option(
        help="Folder of the tasks' cassettes (<app>/<task id>.yaml).")] = TASK_CASSETTES,
    out: Annotated[Path | None, typer.Option(help="Write the report as JSON here.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Run each task's gold chain live and compare every answer with its recording:
    per API unchanged, values changed, shape changed, auth changed or gone; per task
    still valid, answer moved (expected of real-time answers) or broken. Self-hosted
    and MCP apps that are not running are started, and stopped after; exit 1 when a
    shape changed, an API is gone or a task broke."""
    from toolbed.connectors import own
    from toolbed.harness import drift_report, drift_task, stop_started
    from toolbed.launchers import get_launcher, restart_app

    suite, chosen = _select(None, app_, None, None, None, tier or "selfhosted")
    chosen = [t for t in chosen if t.verified and task_cassette(t, cassettes).is_file()]
    if not chosen:
        raise ToolbedError("no recorded task matches these filters (`toolbed tasks list`)")
    local = sorted({a for t in chosen for a in t.apps if suite.catalog.app(a).local})
    apps: dict[str, RunningApp] = {}

    def restart(running: RunningApp) -> RunningApp:
        apps[running.app] = own(restart_app(running, suite.catalog))
        return apps[running.app]

    try:
        # fresh instances, seeded as the recordings' were: what another run left in a
        # long-lived one (history, extra objects) is no drift of the app
        for name in local:
            console.print(f"starting {name}", markup=False)
            apps[name] = own(get_launcher(name, suite.catalog).start())
        results = []
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task(f"drift of {len(chosen)} tasks", total=len(chosen))
            for task in chosen:
                results.append(drift_task(suite.catalog, task, task_cassette(task, cassettes),
                                          apps, allow_writes, restart))
                progress.advance(bar)
    finally:
        stop_started(apps)
    report = drift_report(results)
    if out is not None:
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    if json_:
        print_json(report)
    else:
        changed = {k: v for k, v in report["apis"].items() if v["change"] != "unchanged"}
        table(f"APIs: {report['summary']['apis']}", ["api", "change", "requests", "first"],
              [[k, v["change"], v["requests"], v["detail"]] for k, v in changed.items()])
        odd = {k: v for k, v in report["tasks"].items() if v["verdict"] != "still valid"}
        table(f"tasks: {report['summary']['tasks']}", ["task", "verdict", "detail"],
              [[k, v["verdict"], v["detail"]] for k, v in odd.items()])
    worst = report["summary"]
    if worst["apis"]["shape changed"] or worst["apis"]["gone"] or worst["apis"]["auth changed"] \
            or worst["tasks"]["broken"]:
        raise typer.Exit(1)
