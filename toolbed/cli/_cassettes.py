"""``toolbed cassettes``: the tasks' recordings, how old they are and what they were
made against (``list``), and whether an app has changed under them (``drift``)."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import Progress

from toolbed.connectors import RunningApp, made_as, made_when, made_with, read_cassette
from toolbed.errors import ToolbedError
from toolbed.tasks import TASK_CASSETTES, Task, TaskSuite, task_cassette

from ._output import HtmlOpt, JsonOpt, OutOpt, console, print_json, table
from ._tasks import AppsOpt, CassettesOpt, TasksOpt, TierOpt, _select

if TYPE_CHECKING:
    from toolbed.harness import TaskDrift

__all__ = ["app", "drift", "list_", "show_drift"]

SinceOpt = Annotated[datetime | None, typer.Option(
    formats=["%Y-%m-%d"], help="Only cassettes recorded on or after this day (YYYY-MM-DD); "
    "one recorded before toolbed kept the date is older than any.")]

app = typer.Typer(help="Recorded cassettes: check them against the apps as they are now.",
                  no_args_is_help=True, add_completion=False)


@app.callback()
def _cassettes() -> None:
    # a callback keeps `drift` a subcommand (`toolbed cassettes drift`)
    pass


def _recorded(tasks: Path | None, tier: str | None, apps: list[str] | None, cassettes: Path,
              since: datetime | None) -> tuple[TaskSuite, list[tuple[Task, dict[str, Any]]]]:
    """The chosen tier's verified tasks that have a cassette, each with its cassette
    (read), recorded on or after ``since``."""
    suite, chosen = _select(tasks, apps, None, None, None, tier)
    cutoff = since.replace(tzinfo=UTC).timestamp() if since else None
    out = []
    for task in chosen:
        path = task_cassette(task, cassettes)
        if task.verified and path.is_file():
            data = read_cassette(path)
            if cutoff is None or (made_when(data) or 0) >= cutoff:
                out.append((task, data))
    if not out:
        raise ToolbedError("no recorded task matches these filters (`toolbed cassettes list`)")
    return suite, out


@app.command("list")
def list_(
    app_: AppsOpt = None, tier: TierOpt = None, tasks: TasksOpt = None,
    cassettes: CassettesOpt = TASK_CASSETTES, since: SinceOpt = None, json_: JsonOpt = False,
) -> None:
    """Each task's cassette: when it was recorded, its age, and what each app was then
    (the pinned version of an app toolbed installs, a hosted service's Server header);
    `moved` names the apps whose pinned version is no longer the one recorded."""
    suite, recorded = _recorded(tasks, tier, app_, cassettes, since)
    catalog = suite.catalog
    rows = []
    for task, data in recorded:
        when, made = made_when(data), made_with(data)
        moved = sorted(a for a, v in made.items() if a in catalog.apps
                       and catalog.app(a).local and v != made_as(catalog.app(a)))
        rows.append({
            "task": task.id, "cassette": str(task_cassette(task, cassettes)),
            "recorded": datetime.fromtimestamp(when, UTC).isoformat() if when else None,
            "age_days": round((time.time() - when) / 86400, 1) if when else None,
            "made_with": made, "moved": moved, "stale": task.stale,
        })
    if json_:
        print_json(rows)
        return
    dated = [r["age_days"] for r in rows if r["age_days"] is not None]
    title = (f"{len(rows)} cassettes; {len(dated)} dated"
             + (f", {min(dated)} to {max(dated)} days old" if dated else "")
             + f"; {sum(bool(r['moved']) for r in rows)} made on another version")
    table(title, ["task", "recorded", "age (days)", "made with", "moved"],
          [[r["task"] + (" (stale)" if r["stale"] else ""),
            r["recorded"][:10] if r["recorded"] else "before dates were kept",
            "" if r["age_days"] is None else r["age_days"],
            ", ".join(f"{a}: {v}" for a, v in r["made_with"].items()),
            ", ".join(r["moved"])] for r in rows])


@app.command()
def drift(
    app_: AppsOpt = None, tier: TierOpt = None, tasks: TasksOpt = None,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Also run chains that write (rolled back, as always).")
                            ] = False,
    cassettes: CassettesOpt = TASK_CASSETTES, since: SinceOpt = None,
    update: Annotated[bool, typer.Option(
        "--update", help="Record again the cassettes of the tasks that pass live, and "
        "mark the broken ones `stale: <reason>` in their task files (runs skip them).")
                      ] = False,
    out: OutOpt = None, html: HtmlOpt = None, json_: JsonOpt = False,
) -> None:
    """Run each task's gold chain live and compare every answer with its recording:
    per API unchanged, values changed, shape changed, auth changed or gone; per task
    still valid, answer moved (expected of real-time answers) or broken. Self-hosted
    and MCP apps that are not running are started, and stopped after; exit 1 when a
    shape changed, an API is gone or a task broke."""
    from toolbed.connectors import own
    from toolbed.harness import drift_report, drift_task, stop_started
    from toolbed.launchers import get_launcher, restart_app

    suite, recorded = _recorded(tasks, tier or "selfhosted", app_, cassettes, since)
    catalog = suite.catalog
    chosen = [task for task, _ in recorded]
    local = sorted({a for t in chosen for a in t.apps if catalog.app(a).local})
    apps: dict[str, RunningApp] = {}

    def restart(running: RunningApp) -> RunningApp:
        apps[running.app] = own(restart_app(running, catalog))
        return apps[running.app]

    try:
        # fresh instances, seeded as the recordings' were: what another run left in a
        # long-lived one (history, extra objects) is no drift of the app
        for name in local:
            console.print(f"starting {name}", markup=False)
            apps[name] = own(get_launcher(name, catalog).start())
        results = []
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task(f"drift of {len(chosen)} tasks", total=len(chosen))
            for task, data in recorded:
                results.append(drift_task(catalog, task, task_cassette(task, cassettes),
                                          apps, allow_writes, restart, update, data=data))
                progress.advance(bar)
    finally:
        stop_started(apps)
    report = drift_report(results)
    if update:
        _mark_stale(suite, {r.task: r for r in results})
    show_drift(report, out, html, json_, f"Drift of {len(chosen)} recorded tasks")


def show_drift(report: dict[str, Any], out: Path | None, html: Path | None, json_: bool,
               title: str) -> None:
    """Write a drift report where asked (JSON, the page), print it, and exit 1 when an
    API changed in a way that breaks readers or a task broke: what a scheduled job
    alerts on. Shared by `cassettes drift` and `apis check --live`."""
    from toolbed.harness import ALARMS, drift_html

    report = {"made": datetime.now(UTC).isoformat(timespec="seconds"), **report}
    if out is not None:
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    if html is not None:
        html.write_text(drift_html(report, title), encoding="utf-8")
    if json_:
        print_json(report)
    else:
        changed = {k: v for k, v in report["apis"].items() if v["change"] != "unchanged"}
        table(f"APIs: {report['summary']['apis']}", ["api", "change", "requests", "first"],
              [[k, v["change"], v["requests"], v["detail"]] for k, v in changed.items()])
        odd = {k: v for k, v in report["tasks"].items() if v["verdict"] != "still valid"}
        if report["tasks"]:
            table(f"tasks: {report['summary']['tasks']}", ["task", "verdict", "detail"],
                  [[k, v["verdict"], v["detail"]] for k, v in odd.items()])
        if html is not None:
            console.print(f"the page: {html} (open it in a browser)", markup=False)
    summary = report["summary"]
    if any(summary["apis"][a] for a in ALARMS) or summary["tasks"]["broken"]:
        raise typer.Exit(1)


def _mark_stale(suite: TaskSuite, results: dict[str, TaskDrift]) -> None:
    """``--update``: a broken task is marked stale with the drift's reason, a stale one
    that passes live loses its mark; say what was recorded again and what was marked."""
    today = date.today().isoformat()
    marks: dict[str, str | None] = {}
    for task_id, result in results.items():
        task = suite.task(task_id)
        if result.verdict == "broken":
            reason = f"{today} cassettes drift: {result.detail or 'the chain fails live'}"
            marks[task_id] = json.dumps(reason[:300], ensure_ascii=False)
        elif result.verdict != "skipped" and task.stale:
            marks[task_id] = None
    if marks:
        suite.write_field("stale", marks)
    updated = sum(r.updated for r in results.values())
    console.print(f"recorded again: {updated}; marked stale: "
                  f"{sum(v is not None for v in marks.values())}; no longer stale: "
                  f"{sum(v is None for v in marks.values())}", markup=False)
