"""``toolbed eval``, ``toolbed report`` and ``toolbed compare``: run an agent on tasks,
and read what runs scored."""

from __future__ import annotations

import json
import random
import re
import shlex
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import MofNCompleteColumn, Progress

from toolbed.apis import Catalog
from toolbed.connectors import Mode, parse_mode
from toolbed.errors import TaskError
from toolbed.harness import (
    TOOL_CHOICES,
    TURN_SCORES,
    Agent,
    AgentOptions,
    EmbeddedChatModel,
    Evaluation,
    RayCluster,
    RunLog,
    SimulatedUser,
    TaskResult,
    chat_model,
    check_address,
    default_run_dir,
    dialogue_markdown,
    evaluate_dialogues,
    load_results,
    make_agent,
    markdown,
    per_task,
    plot_runs,
    run_stepwise,
    run_turnwise,
    start_missing,
    step_means,
    stop_started,
    summarize,
    turn_means,
    write_report,
)
from toolbed.harness.metrics import embedding_similarity, llm_judge
from toolbed.registry import names
from toolbed.retriever import STAGES, model_name
from toolbed.stats import Difference, paired_bootstrap
from toolbed.tasks import Dialogue, DialogueSuite, Task, load_dialogues

from ._output import JsonOpt, console, print_json, table
from ._tasks import (
    AppsOpt,
    RunLangOpt,
    SplitOpt,
    TasksOpt,
    TierOpt,
    TypesOpt,
    _not_stale,
    _select,
)


def _tool_index(retriever_model: str | None, off: list[str] | None, lang: str = "en",
                url: str | None = None, cut: float = 0.0) -> Any:
    """The retriever's index for ``--tools retriever``: the best pipeline (less the
    stages switched off) over the model `toolbed retriever train` saved if there is
    one, else the packaged one; for tasks in Chinese (``lang`` zh or all) an index per
    language, each request served by its own; brought up to date with the catalog
    (only documents that changed are embedded)."""
    from ._retriever import build_index, open_index

    index = open_index(model=retriever_model, off=off, lang="en" if lang == "en" else "all",
                       url=url, cut=cut)
    with console.status(f"updating the tool index ({model_name(index.model)})"):
        build_index(index)
    return index


def eval_(
    agent: Annotated[str | None, typer.Option(
        help="embedded (SmolLM2-135M on the CPU; the default without --model), langchain "
        "(native tool calling; the default with --model), react (the Thought / Action text "
        "protocol), oracle (the gold chains), or any agent a plugin registers.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        help="provider:model for LangChain's init_chat_model, the model name at --base-url, "
        "or (embedded) a GGUF file. Repeat to run several models on the same tasks, each "
        "in a folder of its own under --run-dir (`toolbed compare` takes two).")] = None,
    base_url: Annotated[str | None, typer.Option(
        help="An OpenAI-compatible server (http://127.0.0.1:8000/v1).")] = None,
    api_key_env: Annotated[str | None, typer.Option(
        help="Env var holding the key for --base-url.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_steps: Annotated[int | None, typer.Option(
        help="Model rounds per task (default 12; embedded: 4).")] = None,
    observation_cap: Annotated[int | None, typer.Option(
        help="Characters of each tool result shown to the model (default 6000; embedded: "
        "1500).")] = None,
    strict_parse: Annotated[bool, typer.Option(
        help="react: accept only the exact format (default: lenient).")] = False,
    judge: Annotated[str | None, typer.Option(
        help="An LLM judge for open answers and ToolEyes' judged capabilities "
        "(provider:model, the model name at --judge-base-url, or embedded); default: "
        "embedding similarity to the references, and no judged capabilities.")] = None,
    judge_base_url: Annotated[str | None, typer.Option(
        help="The judge's OpenAI-compatible server.")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option(
        help="Env var holding the key for --judge-base-url.")] = None,
    step_by_step: Annotated[bool, typer.Option(
        help="T-Eval / GTA step-by-step mode: predict each next step after the gold prefix "
        "(from the task cassettes); nothing is executed. With --turns multi: each dialogue "
        "turn's move after the gold history (MTU-Bench's turn level).")] = False,
    mode: Annotated[str, typer.Option(help="live, record or replay.")] = "live",
    via: Annotated[str, typer.Option(
        help="How the agent's calls reach the apps: direct, or mcp (an MCP client session "
        "to toolbed's own MCP server, as an external agent would).")] = "direct",
    tools: Annotated[str | None, typer.Option(
        help=f"Tools offered ({', '.join(TOOL_CHOICES)}): the chain's APIs, all APIs of the "
        "task's apps, or the retriever's top k (the index is built on first use). Default: "
        "retriever; gold with --step-by-step.")] = None,
    k: Annotated[int, typer.Option(
        "-k", help="How many APIs the retriever offers (at most, with a cut).")] = 5,
    retriever_model: Annotated[str | None, typer.Option(
        help="The retriever's model folder (default: the one `toolbed retriever train` "
        "saved, else all-MiniLM-L6-v2).")] = None,
    retriever_off: Annotated[list[str] | None, typer.Option(
        help=f"Switch a retriever stage off ({', '.join(STAGES)}); repeat for more.")
    ] = None,
    retriever_cut: Annotated[float, typer.Option(
        help="Offer the retriever's hits after the first only while its rerank stage "
        "gives them at least this probability of being a gold tool (0: always k). Fewer "
        "tools to choose wrongly among, at the price of some gold ones.")] = 0.0,
    retriever_scope: Annotated[str, typer.Option(
        help="What the retriever may offer: tier (APIs of the task's tier; the run starts "
        "the self-hosted apps they belong to), all (the whole catalog), apps (the task's "
        "own apps only).")] = "tier",
    split: SplitOpt = None, app_: AppsOpt = None, type_: TypesOpt = None,
    tier: TierOpt = "selfhosted", tasks: TasksOpt = None, lang: RunLangOpt = "en",
    limit: Annotated[int | None, typer.Option(help="At most this many tasks.")] = None,
    sample: Annotated[int | None, typer.Option(
        help="A seeded random sample of this many tasks, spread over the suite.")] = None,
    trials: Annotated[int, typer.Option(help="Runs of each task (pass^k).")] = 1,
    workers: Annotated[int | None, typer.Option(
        help="Tasks run at once: live, threads, and two tasks that touch the same app "
             "never do; replay, processes. A recording runs one at a time. With --ray: "
             "the cluster's workers (default: one per CPU).")
    ] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS",
        help="Run the tasks on a Ray cluster, each worker with apps of its own, in any "
        "mode: local (a cluster on this machine), auto (the one `ray start` runs here) "
        "or HOST:PORT of its head.")] = None,
    chroma_url: Annotated[str | None, typer.Option(
        help="The retriever's index on a Chroma server (http://host:port) instead of "
        "the local folder.")] = None,
    run_dir: Annotated[Path | None, typer.Option(
        help="Where results go; an existing run resumes (default: "
        "$TOOLBED_HOME/runs/<agent>-<time>).")] = None,
    cassettes: Annotated[Path | None, typer.Option(
        help="Cassette folder for record/replay (oracle: cassettes/tasks; others: "
        "<run dir>/cassettes).")] = None,
    turns: Annotated[str, typer.Option(
        help="single: the tasks, one user turn each; multi: the dialogues (`toolbed "
        "dialogues list`), the user's turns one at a time, offered --tools gold or apps; "
        "all: both.")] = "single",
    user: Annotated[str, typer.Option(
        help="Who plays the user of a dialogue: scripted (its fixed turns, as written) or "
        "simulated (a chat model that keeps the turns as a hidden goal and says STOP when "
        "done; its traffic is recorded with the run).")] = "scripted",
    user_model: Annotated[str | None, typer.Option(
        help="The simulated user's model: provider:model, the model name at "
        "--user-base-url, or a GGUF file (default: the embedded model).")] = None,
    user_base_url: Annotated[str | None, typer.Option(
        help="The simulated user's OpenAI-compatible server.")] = None,
    user_api_key_env: Annotated[str | None, typer.Option(
        help="Env var holding the key for --user-base-url.")] = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="A line per task as it finishes: passed or not, and why.")
                       ] = False,
    list_agents: Annotated[bool, typer.Option(
        "--list-agents", help="List the agents --agent can name, and stop.")] = False,
) -> None:
    """Run an agent on tasks, roll every write back, score it and write a report.

    With no options: the embedded default model (SmolLM2-135M on the CPU), live, on the
    self-hosted test split with the retriever's top 5 tools, on apps it starts if they
    are not running (and stops after)."""
    if list_agents:
        for name in names("agent"):
            typer.echo(name)
        return
    models: list[str | None] = [*dict.fromkeys(model)] if model else [None]
    if len(models) > 1 and (turns != "single" or step_by_step):
        raise typer.BadParameter("several --model values run single-turn tasks end to end "
                                 "(not --turns multi or --step-by-step): one model at a time")
    options = [AgentOptions(
        model=one, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
        max_steps=max_steps, observation_cap=observation_cap, strict_parse=strict_parse)
        for one in models]
    agents = [make_agent(agent, o) for o in options]     # a model that cannot load: now
    chosen_agent = agents[0]
    run_mode = parse_mode(mode)
    if turns not in ("single", "multi", "all"):
        raise typer.BadParameter(f"--turns {turns!r}: choose single, multi or all")
    if user not in ("scripted", "simulated"):
        raise typer.BadParameter(f"--user {user!r}: choose scripted or simulated")
    if via != "direct" and (turns != "single" or step_by_step):
        raise typer.BadParameter(f"--via {via}: single-turn tasks run end to end only "
                                 "(not with --turns multi or --step-by-step)")
    if ray is not None and (turns != "single" or step_by_step or judge or via != "direct"):
        raise typer.BadParameter("--ray runs single-turn tasks end to end, without --judge "
                                 "or --via mcp (not yet: run those without --ray)")
    if ray is not None:
        check_address(ray)              # an unreachable cluster: one error, before anything
    if turns != "single":
        run_dir = run_dir or default_run_dir(chosen_agent)
        suite, talks = _chosen_dialogues(app_, split or ["test"], sample, limit, lang)
        if step_by_step:
            _turn_by_turn(chosen_agent, suite.catalog, talks, run_mode, run_dir,
                          cassettes if turns == "multi" else None, tools or "gold",
                          getattr(chosen_agent, "observation_cap", 6000))
        else:
            simulated = _simulated_user(user_model, user_base_url, user_api_key_env) \
                if user == "simulated" else None
            _dialogues(chosen_agent, suite.catalog, talks, run_mode, tools or "gold", run_dir,
                       cassettes if turns == "multi" else None, simulated, trials)
        if turns == "multi":
            return
        tools = None if tools == "gold" else tools
    judge_fn = llm_judge(_judge_model(judge, judge_base_url, judge_api_key_env)) \
        if judge else None
    suite, chosen = _select(tasks, app_, type_, split or ["test"], None, tier, lang)
    if sample and sample < len(chosen):
        picked = set(random.Random(0).sample(range(len(chosen)), sample))
        chosen = [t for i, t in enumerate(chosen) if i in picked]
    chosen = chosen[:limit] if limit else chosen
    chosen = _not_stale(chosen)     # after sampling: a stale task leaves the rest as they were
    if not chosen:
        raise TaskError("no task matches these filters (`toolbed tasks list` shows them)")
    tools = tools or ("gold" if step_by_step else "retriever")
    run_dir = run_dir or default_run_dir(chosen_agent)
    if step_by_step:
        _step_by_step(chosen_agent, suite.catalog, chosen, run_mode, run_dir, cassettes, tools,
                      getattr(chosen_agent, "observation_cap", 6000))
        return
    index = _tool_index(retriever_model, retriever_off, lang, chroma_url, retriever_cut) \
        if tools == "retriever" and chosen_agent.name != "oracle" else None
    several = len(models) > 1
    say = lambda line: console.print(line, markup=False)  # noqa: E731
    problems, folders = 0, []
    with ExitStack() as stack:
        cluster = None
        if ray is not None:
            with console.status(f"joining the Ray cluster ({ray})"):
                cluster = stack.enter_context(RayCluster(ray, workers, say=say))
            console.print(f"on the Ray cluster at {ray}: {cluster.workers} workers",
                          markup=False)
        for one, agent_options, one_agent in zip(models, options, agents, strict=True):
            folder = run_dir / _slug(one) if several and one else run_dir
            if cluster is not None:
                cluster.agent, cluster.options = agent, agent_options
            evaluation = Evaluation(
                suite.catalog, one_agent, chosen, folder, mode=run_mode, tools=tools, k=k,
                trials=trials, index=index, scope=retriever_scope, judge=judge_fn,
                judge_name=judge, via=via, cluster=cluster,
                cassettes=cassettes / _slug(one) if several and cassettes and one
                else cassettes)
            summary = _run(evaluation, folder, workers or 1, verbose, say)
            console.print(markdown(summary), markup=False, highlight=False)
            console.print(f"results in {folder}; the report: {folder / 'report.html'} "
                          "(open it in a browser)", markup=False)
            if run_mode is Mode.RECORD:
                console.print("replay it offline, with the same scores:\n  "
                              + replay_command(sys.argv[1:], folder,
                                               one if several else None),
                              markup=False, soft_wrap=True)
            problems += summary.get("problems", 0)
            folders.append(folder)
    if several:
        console.print("side by side: " + shlex.join(["toolbed", "compare", *map(str, folders)]),
                      markup=False, soft_wrap=True)
    if problems:
        console.print(f"{problems} run(s) had problems besides the agent's own "
                      "mistakes (an app down, a write not undone...): see summary.md")
        raise typer.Exit(1)


def _slug(model: str | None) -> str:
    """A model's name as a folder name: ``openai:gpt-4o-mini`` -> ``openai-gpt-4o-mini``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model or "default").strip("-.") or "model"


def _run(evaluation: Evaluation, run_dir: Path, workers: int, verbose: bool,
         say: Callable[[str], None]) -> dict[str, Any]:
    """Run ``evaluation`` under a progress bar; its summary. Ctrl-C writes the report over
    what finished and exits 130, saying how to resume."""
    todo, total = evaluation.pending(), len(evaluation.tasks) * evaluation.trials
    if todo < total:
        console.print(f"resuming {run_dir}: {total - todo} runs done")
    title = f"{evaluation.agent.name} ({evaluation.mode.value})"
    passed = [0, 0]                                     # passed, done

    def advance(result: TaskResult) -> None:
        passed[0] += result.success
        passed[1] += 1
        app = result.task.apps[0]
        progress.update(bar, advance=1, description=f"{title} · passed {passed[0]} of "
                        f"{passed[1]} · last: {result.task.id} ({app})")
        if verbose:
            mark = "pass" if result.success else "fail"
            why = f" · {result.problems[0]}" if result.problems else ""
            progress.console.print(
                f"{mark} {result.task.id} ({app}, {result.task.type}): tool match "
                f"{result.scores.get('tool_match', 0):.2f}, completion "
                f"{result.scores.get('completion', 0):.2f}{why}", markup=False)

    with Progress(*Progress.get_default_columns(), MofNCompleteColumn(), console=console,
                  transient=True) as progress:
        bar = progress.add_task(title, total=todo)
        try:
            return evaluation.run(workers, advance=advance, say=say)
        except KeyboardInterrupt:
            pass
    if not RunLog(run_dir).done():
        raise typer.Exit(130)
    console.print(markdown(evaluation.report()), markup=False, highlight=False)
    console.print(f"interrupted: the report covers the finished runs; "
                  f"`toolbed eval --run-dir {run_dir}` with the same options resumes")
    raise typer.Exit(130)


def replay_command(argv: list[str], run_dir: Path, model: str | None = None) -> str:
    """The ``toolbed eval`` command that replays a recorded run: the same options (of
    ``model`` alone, when it was one of several), the run's cassettes, a run folder of
    its own."""
    kept, skip = [], False
    dropped = ("--mode", "--cassettes", "--run-dir") + (("--model",) if model else ())
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in dropped:
            skip = "=" not in arg
            continue
        kept.append(arg)
    replayed = run_dir.with_name(run_dir.name + "-replay")
    return shlex.join(["toolbed", *kept, *(["--model", model] if model else []), "--mode",
                       "replay", "--cassettes", str(run_dir / "cassettes"), "--run-dir",
                       str(replayed)])


def _judge_model(name: str, base_url: str | None, api_key_env: str | None) -> Any:
    """``--judge``: ``embedded`` (or a GGUF file) runs the embedded model, else a chat model."""
    if not base_url and (name == "embedded" or name.endswith(".gguf")):
        model = EmbeddedChatModel(model_path=None if name == "embedded" else name)
        model.load()
        return model
    return chat_model(name, base_url, api_key_env)


def _simulated_user(model: str | None, base_url: str | None, api_key_env: str | None
                    ) -> SimulatedUser:
    """``--user simulated``: the chat model that plays the user (embedded by default)."""
    if base_url or (model and ":" in model and not model.endswith(".gguf")):
        if not model:
            raise typer.BadParameter("--user-base-url needs --user-model NAME")
        return SimulatedUser(chat_model(model, base_url, api_key_env), model_name=model)
    embedded = EmbeddedChatModel(model_path=model)
    embedded.load()                 # a missing file or package fails here, clearly
    return SimulatedUser(embedded, model_name=embedded.name_)


def _chosen_dialogues(apps: list[str] | None, splits: list[str], sample: int | None,
                      limit: int | None, lang: str = "en"
                      ) -> tuple[DialogueSuite, list[Dialogue]]:
    """The dialogues ``--turns multi`` runs: filtered, a seeded sample, at most ``limit``."""
    suite = load_dialogues()
    chosen = suite.filter(apps or (), splits, lang=lang)
    if sample and sample < len(chosen):
        chosen = random.Random(0).sample(chosen, sample)
    chosen = chosen[:limit] if limit else chosen
    if not chosen:
        raise TaskError("no dialogue matches these filters (`toolbed dialogues list` shows "
                        "them)")
    return suite, chosen


def _turn_by_turn(agent: Agent, catalog: Catalog, chosen: list[Dialogue], mode: Mode,
                  run_dir: Path, cassettes: Path | None, tools: str,
                  observation_cap: int) -> None:
    """``--turns multi --step-by-step``: each turn after the gold history (teacher
    forcing); writes turns.jsonl and turns.json."""
    model = getattr(agent, "model", None)
    if model is None:
        raise TaskError("--step-by-step needs a model (--model ...), not the oracle")
    if tools not in ("gold", "apps"):
        raise TaskError("dialogues offer --tools gold or apps, not the retriever's")
    with Progress(console=console, transient=True) as progress:
        progress.add_task(f"turn by turn on {len(chosen)} dialogues", total=None)
        rows = run_turnwise(catalog, chosen, model, mode, cassettes or run_dir / "cassettes",
                            tools=tools, similarity=embedding_similarity(),
                            observation_cap=observation_cap)
    means = turn_means(rows)
    names = [n for n in TURN_SCORES if n in means["all"]]
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "turns.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows)
    (run_dir / "turns.json").write_text(json.dumps(
        {"agent": agent.name, "mode": mode.value, "tools": tools, "by_granularity": means},
        indent=2) + "\n", encoding="utf-8")
    table(f"turn by turn (gold history): {len(rows)} dialogues",
          ["granularity", "dialogues", *names],
          [[kind, str(m["dialogues"]), *(f"{m[n]:.3f}" for n in names)]
           for kind, m in means.items()])
    console.print(f"results in {run_dir}")


def _dialogues(agent: Agent, catalog: Catalog, chosen: list[Dialogue], mode: Mode, tools: str,
               run_dir: Path, cassettes: Path | None, user: SimulatedUser | None = None,
               trials: int = 1) -> None:
    """``--turns multi``: the agent on the dialogues, one user turn at a time."""
    started: dict[str, Any] = {}
    try:
        running = None if mode.offline else start_missing(
            catalog, {a for d in chosen for a in d.apps}, started, {},
            lambda line: console.print(line, markup=False))
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task(f"{agent.name} on {len(chosen)} dialogues ({mode.value})",
                                    total=len(chosen) * trials)
            summary = evaluate_dialogues(catalog, agent, chosen, run_dir, mode, tools,
                                         cassettes, running,
                                         advance=lambda: progress.advance(bar),
                                         user=user, trials=trials)
    finally:
        stop_started(started)
    console.print(dialogue_markdown(summary), markup=False, highlight=False)
    console.print(f"dialogues in {run_dir / 'dialogues.jsonl'}")
    if summary["problems"]:
        raise typer.Exit(1)


def _step_by_step(agent: Agent, catalog: Catalog, tasks: list[Task], mode: Mode,
                  run_dir: Path, cassettes: Path | None, tools: str,
                  observation_cap: int) -> None:
    model = getattr(agent, "model", None)
    if model is None:
        raise TaskError("--step-by-step needs a model (--model ...), not the oracle")
    if tools == "retriever":
        raise TaskError("--step-by-step offers the gold or the apps' tools, not the retriever's")
    with Progress(console=console, transient=True) as progress:
        progress.add_task(f"step by step on {len(tasks)} tasks", total=None)
        rows = run_stepwise(catalog, tasks, model, mode, cassettes or run_dir / "cassettes",
                            tools=tools, similarity=embedding_similarity(),
                            observation_cap=observation_cap)
    means = step_means(rows)
    RunLog(run_dir).write_steps(rows, {"agent": agent.name, "mode": mode.value, "tools": tools,
                                       "tasks": len(rows), "metrics": means})
    table(f"step by step: {len(rows)} tasks", ["metric", "mean"],
          [[n, f"{v:.3f}"] for n, v in means.items()])
    console.print(f"results in {run_dir}")


def report(run_dir: Annotated[Path, typer.Argument(help="A run folder of `toolbed eval`.")]
           ) -> None:
    """Rewrite a run's results.jsonl, summary.json and summary.md, and print the summary."""
    summary = write_report(run_dir)
    console.print(markdown(summary), markup=False, highlight=False)


def compare(
    run_a: Annotated[Path, typer.Argument(help="The first run folder.")],
    run_b: Annotated[Path, typer.Argument(help="The second run folder.")],
    plot: Annotated[Path | None, typer.Option(
        help="Draw the two runs' scores as bars to this PNG (e.g. retriever top-k against "
        "gold tools).")] = None,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", help="Also give each difference B - A a 95% interval from this many "
        "paired bootstrap rounds over the tasks both ran (1000 is usual; 0: off).", min=0)
                         ] = 0,
    json_: JsonOpt = False,
) -> None:
    """Two runs' scores side by side, on the tasks both ran.

    With --bootstrap, each difference gets an interval that says whether the tasks can
    tell the two runs apart."""
    rows_a, rows_b = load_results(run_a), load_results(run_b)
    common = {r["task"] for r in rows_a} & {r["task"] for r in rows_b}
    if not common:
        raise TaskError(f"{run_a} and {run_b} share no task")
    rows_a = [r for r in rows_a if r["task"] in common]
    rows_b = [r for r in rows_b if r["task"] in common]
    a, b = summarize(rows_a), summarize(rows_b)
    names = ["success", *sorted(set(a["metrics"]) | set(b["metrics"]))]

    def value(s: dict, name: str) -> float | None:
        return s["success"] if name == "success" else s["metrics"].get(name)

    rows = [(n, value(a, n), value(b, n)) for n in names]
    sure: dict[str, Difference] = {}
    for n in names if bootstrap else []:
        by_a, by_b = per_task(rows_a, n), per_task(rows_b, n)
        both = sorted(set(by_a) & set(by_b))
        if both:
            sure[n] = paired_bootstrap([by_b[t] for t in both], [by_a[t] for t in both],
                                       bootstrap)
    if plot:
        plot_runs({str(run_a.name): {n: va for n, va, _ in rows if va is not None},
                   str(run_b.name): {n: vb for n, _, vb in rows if vb is not None}}, plot)
    if json_:
        print_json({"tasks": len(common), "metrics": {
            n: {"a": va, "b": vb, **({"b - a": asdict(sure[n])} if n in sure else {})}
            for n, va, vb in rows}})
        return
    interval = [f"B - A, 95% ({bootstrap} rounds)"] if bootstrap else []
    table(f"{len(common)} tasks in both: A = {run_a}, B = {run_b}",
          ["metric", "A", "B", "B - A", *interval],
          [[n, _fmt(va), _fmt(vb), _fmt(vb - va) if va is not None and vb is not None else "-",
            *([f"[{sure[n].low:+.3f}, {sure[n].high:+.3f}]" if n in sure else "-"]
              if bootstrap else [])]
           for n, va, vb in rows])


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


__all__ = ["compare", "eval_", "report"]
