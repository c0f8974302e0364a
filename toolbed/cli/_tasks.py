"""``toolbed tasks list|validate|record|stats``: the task suite and its oracle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.progress import Progress

from toolbed.apis import replace_table
from toolbed.connectors import Mode, Runtime
from toolbed.errors import ToolbedError
from toolbed.harness import TaskRun, run_oracle
from toolbed.launchers import restart_recorded
from toolbed.tasks import (
    PARAPHRASE_THRESHOLD,
    TASK_CASSETTES,
    Task,
    TaskSuite,
    api_coverage,
    assign_splits,
    dialogue_stats,
    load_dialogues,
    load_tasks,
    near_duplicates,
    task_cassette,
    task_stats,
    task_table,
    translated_dialogues,
)

from ._output import JsonOpt, console, print_json, table

T = TypeVar("T")
R = TypeVar("R")

app = typer.Typer(help="The task suite: list, validate live, record cassettes, count.",
                  no_args_is_help=True, add_completion=False)

AppsOpt = Annotated[list[str] | None, typer.Option("--app", help="Only tasks on this app.")]
TypesOpt = Annotated[list[str] | None, typer.Option(
    "--type", help="Only this answer type (fixed, open, operational, realtime).")]
SplitOpt = Annotated[list[str] | None, typer.Option("--split", help="Only train, dev or test.")]
IdsOpt = Annotated[list[str] | None, typer.Option("--id", help="Only this task id.")]
TierOpt = Annotated[str | None, typer.Option("--tier", help="selfhosted, hosted or mcp.")]
TasksOpt = Annotated[Path | None, typer.Option(
    "--tasks", help="A task file or folder (default: the shipped suite).")]
LangOpt = Annotated[str | None, typer.Option(
    "--lang", help="Only those asked in this language: en, zh (default: all).")]
RunLangOpt = Annotated[str, typer.Option(
    "--lang", help="Only tasks (and dialogues) asked in this language: en (the default, "
    "what the README's figures are), zh, or all.")]
CassettesOpt = Annotated[Path, typer.Option(
    "--cassettes", help="Folder of the tasks' cassettes (<app>/<task id>.yaml).")]


def _select(tasks: Path | None, apps: list[str] | None, types: list[str] | None,
            splits: list[str] | None, ids: list[str] | None,
            tier: str | None, lang: str | None = None) -> tuple[TaskSuite, list[Task]]:
    suite = load_tasks(tasks) if tasks else load_tasks()
    return suite, suite.filter(apps or (), types or (), splits or (), ids or (), tier, lang)


def _not_stale(chosen: list[Task]) -> list[Task]:
    """The tasks a run takes: one marked stale (`cassettes drift --update` found it no
    longer holds against its app) is skipped, with its reason printed."""
    for task in chosen:
        if task.stale:
            console.print(f"skipping {task.id}, stale: {task.stale}", markup=False)
    return [t for t in chosen if not t.stale]


@app.command("list")
def list_(app_: AppsOpt = None, type_: TypesOpt = None, split: SplitOpt = None,
          tier: TierOpt = None, tasks: TasksOpt = None, lang: LangOpt = None,
          json_: JsonOpt = False) -> None:
    """List tasks: id, apps, scenario, answer type, split and query."""
    _, chosen = _select(tasks, app_, type_, split, None, tier, lang)
    if json_:
        print_json([t.model_dump(mode="json") for t in chosen])
        return
    table(f"{len(chosen)} tasks", ["id", "apps", "scenario", "type", "split", "query"],
          [[t.id + (" (stale)" if t.stale else ""), ",".join(t.apps), t.scenario, t.type,
            t.split, t.query] for t in chosen])


def _run_all(chosen: Sequence[T], one: Callable[[T], R], what: str) -> list[R]:
    """``one`` of each item, under a progress bar saying ``what``."""
    runs = []
    with Progress(console=console, transient=True) as progress:
        bar = progress.add_task(what, total=len(chosen))
        for item in chosen:
            runs.append(one(item))
            progress.advance(bar)
    return runs


def _report(runs: list[TaskRun], as_json: bool) -> None:
    failed = [r for r in runs if not r.ok]
    if as_json:
        print_json({"total": len(runs), "passed": len(runs) - len(failed),
                    "failed": [{"id": r.task.id, "problems": r.problems} for r in failed]})
    else:
        for run in failed:
            console.print(run.summary(), markup=False)
        console.print(f"{len(runs) - len(failed)} of {len(runs)} tasks passed")
    if failed:
        raise typer.Exit(1)


@app.command()
def validate(
    live: Annotated[bool, typer.Option(
        "--live", help="Run every gold chain against the running apps (`toolbed apps up`).",
    )] = False,
    replay: Annotated[bool, typer.Option(
        "--replay", help="Run every gold chain from its recorded cassette, offline.",
    )] = False,
    app_: AppsOpt = None, type_: TypesOpt = None, split: SplitOpt = None, id_: IdsOpt = None,
    tier: TierOpt = None, tasks: TasksOpt = None, cassettes: CassettesOpt = TASK_CASSETTES,
    lang: LangOpt = None, json_: JsonOpt = False,
) -> None:
    """Check tasks: against the catalog (always), then by the oracle live or from cassettes.

    The oracle runs the gold chain, checks the reference against what the API returned,
    rolls every write back and verifies each app's state; exit 1 if any task fails.
    """
    if live and replay:
        raise typer.BadParameter("choose --live or --replay, not both")
    suite, chosen = _select(tasks, app_, type_, split, id_, tier, lang)
    if live or replay:
        chosen = _not_stale(chosen)
    if not (live or replay):
        console.print(f"{len(chosen)} tasks load and agree with the catalog "
                      "(add --live or --replay to run them)")
        return
    if live:
        with Runtime(suite.catalog, mode=Mode.LIVE) as runtime:
            runs = _run_all(chosen, lambda t: run_oracle(runtime, t, restart=restart_recorded),
                            "validating live")
    else:
        def from_cassette(task: Task) -> TaskRun:
            with Runtime(suite.catalog, mode=Mode.REPLAY,
                         cassette=task_cassette(task, cassettes)) as rt:
                return run_oracle(rt, task)
        runs = _run_all(chosen, from_cassette, "replaying")
    _report(runs, json_)


@app.command()
def record(
    live: Annotated[bool, typer.Option(
        "--live", help="Also run tasks not yet verified (hosted): they call the real internet "
        "services with your keys, and their writes reach your accounts (then are undone).",
    )] = False,
    app_: AppsOpt = None, type_: TypesOpt = None, split: SplitOpt = None, id_: IdsOpt = None,
    tier: TierOpt = None, tasks: TasksOpt = None, cassettes: CassettesOpt = TASK_CASSETTES,
    lang: LangOpt = None, json_: JsonOpt = False,
) -> None:
    """Run the oracle live on each task and record it into cassettes/tasks/<app>/<id>.yaml.

    A recording replaces a task's cassette only when the run passes, so a task that fails
    (or an app that is down) leaves the committed cassette as it was; exit 1 if any failed.
    A task not yet verified (`verified: false`, the hosted tier) that passes is marked
    verified in its file, and a stale one that passes loses its `stale:` mark.
    """
    suite, chosen = _select(tasks, app_, type_, split, id_, tier, lang)
    unverified = [t for t in chosen if not t.verified]
    if unverified and not live:
        raise ToolbedError(
            f"{len(unverified)} of these tasks are not yet verified (hosted: they call real "
            "internet services with your keys); add --live to run them, or --tier selfhosted")

    def one(task: Task) -> TaskRun:
        with Runtime(suite.catalog, mode=Mode.RECORD,
                     cassette=task_cassette(task, cassettes)) as runtime:
            run = run_oracle(runtime, task, restart=restart_recorded)
            if not run.ok and runtime.cassette is not None:
                runtime.cassette.discard()
        return run

    runs = _run_all(chosen, one, "recording")
    verified = {r.task.id for r in runs if r.ok and not r.task.verified}
    if verified:
        suite.write_field("verified", dict.fromkeys(verified, "true"))
        console.print(f"{len(verified)} tasks verified live and marked `verified: true`")
    fixed = {r.task.id for r in runs if r.ok and r.task.stale}
    if fixed:
        suite.write_field("stale", dict.fromkeys(fixed))
        console.print(f"{len(fixed)} stale tasks pass again: their `stale:` mark is removed")
    _report(runs, json_)


@app.command()
def stats(
    app_: AppsOpt = None, tier: TierOpt = None, tasks: TasksOpt = None, lang: LangOpt = None,
    update: Annotated[Path | None, typer.Option(
        "--update", help="Rewrite the tier's task table (default: selfhosted) between its "
        "markers in this file.",
    )] = None,
    json_: JsonOpt = False,
) -> None:
    """Count tasks by app, domain, scenario, granularity, answer type, category, split and
    calls per task; then the dialogues (self-hosted) by granularity, turns and apps."""
    if update is not None:
        tier = tier or "selfhosted"
    suite, chosen = _select(tasks, app_, None, None, None, tier, lang)
    counts = task_stats(chosen, suite.catalog)
    talks = load_dialogues(catalog=suite.catalog).filter(app_ or (), lang=lang) \
        if tasks is None and tier in (None, "selfhosted") else []
    if update is not None:
        assert tier is not None
        text = update.read_text(encoding="utf-8")
        update.write_text(replace_table(text, task_table(chosen, suite.catalog, talks), tier,
                                        kind="task-table"), encoding="utf-8")
        return
    if json_:
        print_json({**counts, "dialogues": dialogue_stats(talks)})
        return
    for noun, numbers in (("tasks", counts), ("dialogues", dialogue_stats(talks))):
        if noun == "dialogues" and not talks:
            break
        console.print(f"{numbers['total']} {noun}")
        for grouping, values in numbers.items():
            if grouping != "total":
                table(f"{noun} by {grouping}", [grouping, noun, "share"],
                      [[k, v, f"{100 * v / max(numbers['total'], 1):.0f}%"]
                       for k, v in values.items()])
    for t in ("selfhosted", "hosted", "mcp"):
        if tier in (None, t):
            cover = api_coverage(chosen, suite.catalog, t, app_ or ())
            total = len(cover["used"]) + len(cover["unused"])
            if total:
                console.print(f"{t} APIs used by a gold chain: {len(cover['used'])} of {total}")
            if cover["unused"] and (app_ or len(cover["unused"]) <= 30):
                console.print(f"  not used yet: {', '.join(cover['unused'])}")


@app.command()
def split(
    write: Annotated[bool, typer.Option("--write", help="Write the splits into the task files.")]
    = False,
    tasks: TasksOpt = None,
) -> None:
    """Assign train/dev/test by a hash of the id; a quarter of the APIs only one task uses
    are held out in test (so test holds APIs that train never shows)."""
    suite = load_tasks(tasks) if tasks else load_tasks()
    splits = assign_splits(list(suite))
    seen_in_train = {s.api for t in suite if splits[t.id] == "train" for s in t.chain}
    unseen = [t.id for t in suite if splits[t.id] == "test"
              and any(s.api not in seen_in_train for s in t.chain)]
    counts = {name: sum(v == name for v in splits.values()) for name in ("train", "dev", "test")}
    console.print(f"{counts}; {len(unseen)} test tasks use an API that no train task uses")
    if write:
        suite.write_field("split", splits)


@app.command()
def dedup(
    threshold: Annotated[float, typer.Option(help="Cosine similarity that counts as a paraphrase.")]
    = PARAPHRASE_THRESHOLD,
    top: Annotated[int, typer.Option(help="Show the N closest pairs instead.")] = 0,
    tasks: TasksOpt = None, json_: JsonOpt = False,
) -> None:
    """Find queries in different splits that paraphrase each other (embedding similarity),
    and dialogues translated into another split (the same requests turn by turn); exit 1
    if any pair reaches the threshold."""
    suite, _ = _select(tasks, None, None, None, None, None)
    pairs = near_duplicates(list(suite), threshold=threshold, top=top)
    talks = load_dialogues(catalog=suite.catalog) if tasks is None else None
    translated = translated_dialogues(list(talks)) if talks is not None else []
    if json_:
        print_json([vars(p) for p in pairs + translated])
    else:
        table(f"{len(pairs)} pairs" + ("" if top else f" at or above {threshold}"),
              ["similarity", "task", "task", "queries"],
              [[p.similarity, p.first, p.second,
                f"{suite.task(p.first).query} | {suite.task(p.second).query}"] for p in pairs])
        if talks is not None:
            table(f"{len(translated)} dialogues translated into another split",
                  ["dialogue", "dialogue", "first turns"],
                  [[p.first, p.second, f"{talks.dialogue(p.first).turns[0].query} | "
                    f"{talks.dialogue(p.second).turns[0].query}"] for p in translated])
    if not top and (pairs or translated):
        raise typer.Exit(1)
