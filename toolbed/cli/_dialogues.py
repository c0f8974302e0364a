"""``toolbed dialogues list|validate|record``: the multi-turn dialogues and their oracle."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from toolbed.connectors import Mode, Runtime
from toolbed.harness import DialogueRun, run_dialogue
from toolbed.tasks import (
    DIALOGUE_CASSETTES,
    GRANULARITIES,
    Dialogue,
    DialogueSuite,
    dialogue_cassette,
    load_dialogues,
)

from ._output import JsonOpt, console, print_json, table
from ._tasks import LangOpt, _run_all

app = typer.Typer(help="Multi-turn dialogues: list, validate live, record cassettes.",
                  no_args_is_help=True, add_completion=False)

AppsOpt = Annotated[list[str] | None, typer.Option("--app", help="Only dialogues on this app.")]
SplitOpt = Annotated[list[str] | None, typer.Option("--split", help="Only train, dev or test.")]
IdsOpt = Annotated[list[str] | None, typer.Option("--id", help="Only this dialogue id.")]
KindOpt = Annotated[list[str] | None, typer.Option(
    "--granularity", help=f"Only this granularity ({', '.join(GRANULARITIES)}).")]
FilesOpt = Annotated[Path | None, typer.Option(
    "--dialogues", help="A dialogue file or folder (default: the shipped dialogues).")]
CassettesOpt = Annotated[Path, typer.Option(
    "--cassettes", help="Folder of the dialogues' cassettes (<app>/<id>.yaml).")]


def _select(files: Path | None, apps: list[str] | None, splits: list[str] | None,
            ids: list[str] | None, kinds: list[str] | None, lang: str | None = None,
            ) -> tuple[DialogueSuite, list[Dialogue]]:
    suite = load_dialogues(files) if files else load_dialogues()
    return suite, suite.filter(apps or (), splits or (), ids or (), kinds or (), lang)


@app.command("list")
def list_(app_: AppsOpt = None, split: SplitOpt = None, granularity: KindOpt = None,
          lang: LangOpt = None, dialogues: FilesOpt = None, json_: JsonOpt = False) -> None:
    """List dialogues: id, apps, granularity, turns, calls, split and the first turn."""
    _, chosen = _select(dialogues, app_, split, None, granularity, lang)
    if json_:
        print_json([{**d.model_dump(mode="json"), "granularity": d.granularity}
                    for d in chosen])
        return
    table(f"{len(chosen)} dialogues", ["id", "apps", "granularity", "turns", "calls", "split",
                                       "first turn"],
          [[d.id, ",".join(d.apps), d.granularity, str(len(d.turns)), str(len(d.chain)),
            d.split, d.turns[0].query] for d in chosen])
    counts = Counter(d.granularity for d in chosen)
    console.print(", ".join(f"{k}: {counts[k]}" for k in GRANULARITIES))


def _report(runs: list[DialogueRun], as_json: bool) -> None:
    failed = [r for r in runs if not r.ok]
    if as_json:
        print_json({"total": len(runs), "passed": len(runs) - len(failed),
                    "failed": [{"id": r.dialogue.id, "summary": r.summary()} for r in failed]})
    else:
        for run in failed:
            console.print(run.summary(), markup=False)
        console.print(f"{len(runs) - len(failed)} of {len(runs)} dialogues passed")
    if failed:
        raise typer.Exit(1)


@app.command()
def validate(
    live: Annotated[bool, typer.Option(
        "--live", help="Run every gold turn against the running apps (`toolbed apps up`).",
    )] = False,
    replay: Annotated[bool, typer.Option(
        "--replay", help="Run every gold turn from the dialogue's cassette, offline.",
    )] = False,
    app_: AppsOpt = None, split: SplitOpt = None, id_: IdsOpt = None,
    granularity: KindOpt = None, lang: LangOpt = None, dialogues: FilesOpt = None,
    cassettes: CassettesOpt = DIALOGUE_CASSETTES, json_: JsonOpt = False,
) -> None:
    """Check dialogues: against the catalog (always), then by the oracle live or replayed.

    The oracle runs each turn's gold calls in one rollback scope, checks each turn's
    answer and state against what the apps returned, rolls every write back and
    verifies each app's state; exit 1 if any dialogue fails.
    """
    if live and replay:
        raise typer.BadParameter("choose --live or --replay, not both")
    suite, chosen = _select(dialogues, app_, split, id_, granularity, lang)
    if not (live or replay):
        console.print(f"{len(chosen)} dialogues load and agree with the catalog "
                      "(add --live or --replay to run them)")
        return
    if live:
        with Runtime(suite.catalog, mode=Mode.LIVE) as runtime:
            runs = _run_all(chosen, lambda d: run_dialogue(runtime, d), "validating live")
    else:
        def from_cassette(dialogue: Dialogue) -> DialogueRun:
            with Runtime(suite.catalog, mode=Mode.REPLAY,
                         cassette=dialogue_cassette(dialogue, cassettes)) as rt:
                return run_dialogue(rt, dialogue)
        runs = _run_all(chosen, from_cassette, "replaying")
    _report(runs, json_)


@app.command()
def record(
    app_: AppsOpt = None, split: SplitOpt = None, id_: IdsOpt = None,
    granularity: KindOpt = None, lang: LangOpt = None, dialogues: FilesOpt = None,
    cassettes: CassettesOpt = DIALOGUE_CASSETTES, json_: JsonOpt = False,
) -> None:
    """Run the oracle live on each dialogue and record it into
    cassettes/dialogues/<app>/<id>.yaml; a dialogue that fails keeps its old cassette."""
    suite, chosen = _select(dialogues, app_, split, id_, granularity, lang)

    def one(dialogue: Dialogue) -> DialogueRun:
        with Runtime(suite.catalog, mode=Mode.RECORD,
                     cassette=dialogue_cassette(dialogue, cassettes)) as runtime:
            run = run_dialogue(runtime, dialogue)
            if not run.ok and runtime.cassette is not None:
                runtime.cassette.discard()
        return run

    _report(_run_all(chosen, one, "recording"), json_)
