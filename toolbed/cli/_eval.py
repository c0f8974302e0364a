"""``toolbed eval``, ``toolbed report`` and ``toolbed compare``: run an agent on tasks,
and read what runs scored."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from toolbed.apis import Catalog
from toolbed.connectors import Mode, RunningApp, get_launcher, parse_mode, restart_app, running_apps
from toolbed.connectors.launchers import forget_running, own, stop_app
from toolbed.errors import AgentError, AppError, TaskError
from toolbed.harness import (
    TOOL_CHOICES,
    Agent,
    EmbeddedChatModel,
    LangChainAgent,
    OracleAgent,
    ReactAgent,
    RunLog,
    Runner,
    RunSpec,
    chat_model,
    load_results,
    markdown,
    offered_tools,
    plot_runs,
    run_stepwise,
    summarize,
    write_report,
)
from toolbed.harness.metrics import embedding_similarity, llm_judge
from toolbed.paths import home_dir
from toolbed.retriever import model_name
from toolbed.tasks import Task

from ._output import JsonOpt, console, print_json, table
from ._tasks import AppsOpt, SplitOpt, TasksOpt, TierOpt, TypesOpt, _restart, _select

AGENTS = ("embedded", "langchain", "react", "oracle")


def _agent(agent: str | None, model: str | None, base_url: str | None,
           api_key_env: str | None, temperature: float, max_steps: int | None,
           observation_cap: int | None, strict_parse: bool) -> tuple[Agent, str | None]:
    """The agent to run, and the name of its model for the run's metadata."""
    if agent not in (None, *AGENTS):
        raise AgentError(f"--agent {agent!r}: choose one of {', '.join(AGENTS)}")
    if agent == "oracle":
        return OracleAgent(), None
    if agent == "embedded" or (agent is None and not model):
        embedded = EmbeddedChatModel(model_path=model, temperature=temperature)
        embedded.load()                   # a missing file or package fails here, clearly
        # a 135M model loops rather than recovers, and reads a short result best
        return LangChainAgent(embedded, max_steps or 4, observation_cap or 1500), \
            embedded.name_
    if not model:
        raise AgentError(f"--agent {agent} needs --model PROVIDER:NAME (e.g. "
                         "openai:gpt-4o-mini, with its key in the environment) or --base-url "
                         "URL --model NAME for an OpenAI-compatible server (vLLM, Ollama, "
                         "llama.cpp)")
    chat = chat_model(model, base_url, api_key_env, temperature)
    if agent == "react":
        return ReactAgent(chat, max_steps or 12, observation_cap or 6000,
                          strict=strict_parse), model
    return LangChainAgent(chat, max_steps or 12, observation_cap or 6000), model


def _tool_index(retriever_model: str | None, off: list[str] | None) -> Any:
    """The retriever's index for ``--tools retriever``: the best pipeline (less the
    stages switched off) over the model `toolbed retriever train` saved if there is
    one, else all-MiniLM-L6-v2; brought up to date with the catalog (only documents
    that changed are embedded)."""
    from ._retriever import build_index, open_index

    index = open_index(model=retriever_model, off=off)
    with console.status(f"updating the tool index ({model_name(index.model)})"):
        build_index(index)
    return index


def eval_(
    agent: Annotated[str | None, typer.Option(
        help="embedded (SmolLM2-135M on the CPU; the default without --model), langchain "
        "(native tool calling; the default with --model), react (the Thought / Action text "
        "protocol) or oracle (the gold chains).")] = None,
    model: Annotated[str | None, typer.Option(
        help="provider:model for LangChain's init_chat_model, the model name at --base-url, "
        "or (embedded) a GGUF file.")] = None,
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
        help="An LLM judge for open answers (provider:model, or the model name at "
        "--judge-base-url); default: embedding similarity to the references.")] = None,
    judge_base_url: Annotated[str | None, typer.Option(
        help="The judge's OpenAI-compatible server.")] = None,
    judge_api_key_env: Annotated[str | None, typer.Option(
        help="Env var holding the key for --judge-base-url.")] = None,
    step_by_step: Annotated[bool, typer.Option(
        help="T-Eval / GTA step-by-step mode: predict each next step after the gold prefix "
        "(from the task cassettes); nothing is executed.")] = False,
    mode: Annotated[str, typer.Option(help="live, record or replay.")] = "live",
    tools: Annotated[str | None, typer.Option(
        help=f"Tools offered ({', '.join(TOOL_CHOICES)}): the chain's APIs, all APIs of the "
        "task's apps, or the retriever's top k (the index is built on first use). Default: "
        "retriever; gold with --step-by-step.")] = None,
    k: Annotated[int, typer.Option("-k", help="How many APIs the retriever offers.")] = 5,
    retriever_model: Annotated[str | None, typer.Option(
        help="The retriever's model folder (default: the one `toolbed retriever train` "
        "saved, else all-MiniLM-L6-v2).")] = None,
    retriever_off: Annotated[list[str] | None, typer.Option(
        help="Switch a retriever stage off (expansion, dense, lexical); repeat for more.")
    ] = None,
    retriever_scope: Annotated[str, typer.Option(
        help="What the retriever may offer: tier (APIs of the task's tier; the run starts "
        "the self-hosted apps they belong to), all (the whole catalog), apps (the task's "
        "own apps only).")] = "tier",
    split: SplitOpt = None, app_: AppsOpt = None, type_: TypesOpt = None,
    tier: TierOpt = "selfhosted", tasks: TasksOpt = None,
    limit: Annotated[int | None, typer.Option(help="At most this many tasks.")] = None,
    sample: Annotated[int | None, typer.Option(
        help="A seeded random sample of this many tasks, spread over the suite.")] = None,
    trials: Annotated[int, typer.Option(help="Runs of each task (pass^k).")] = 1,
    workers: Annotated[int, typer.Option(
        help="Tasks run at once (live mode); two tasks that touch the same app never do.")
    ] = 1,
    run_dir: Annotated[Path | None, typer.Option(
        help="Where results go; an existing run resumes (default: "
        "$TOOLBED_HOME/runs/<agent>-<time>).")] = None,
    cassettes: Annotated[Path | None, typer.Option(
        help="Cassette folder for record/replay (oracle: cassettes/tasks; others: "
        "<run dir>/cassettes).")] = None,
) -> None:
    """Run an agent on tasks, roll every write back, score it and write a report.

    With no options: the embedded default model (SmolLM2-135M on the CPU), live, on the
    self-hosted test split with the retriever's top 5 tools, on apps it starts if they
    are not running (and stops after)."""
    chosen_agent, model_label = _agent(agent, model, base_url, api_key_env, temperature, max_steps,
                          observation_cap, strict_parse)
    run_mode = parse_mode(mode)
    judge_fn = llm_judge(chat_model(judge, judge_base_url, judge_api_key_env)) if judge else None
    suite, chosen = _select(tasks, app_, type_, split or ["test"], None, tier)
    if sample and sample < len(chosen):
        picked = set(random.Random(0).sample(range(len(chosen)), sample))
        chosen = [t for i, t in enumerate(chosen) if i in picked]
    chosen = chosen[:limit] if limit else chosen
    if not chosen:
        raise TaskError("no task matches these filters (`toolbed tasks list` shows them)")
    tools = tools or ("gold" if step_by_step else "retriever")
    if chosen_agent.name == "oracle":
        tools = "gold"                  # the oracle runs each task's gold chain, nothing else
    index = _tool_index(retriever_model, retriever_off) \
        if tools == "retriever" and chosen_agent.name != "oracle" and not step_by_step else None
    run_dir = run_dir or home_dir() / "runs" / (
        f"{chosen_agent.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    if step_by_step:
        _step_by_step(chosen_agent, suite.catalog, chosen, run_mode, run_dir, cassettes, tools,
                      getattr(chosen_agent, "observation_cap", 6000))
        return
    spec = RunSpec(agent=chosen_agent.name, model=model_label, mode=run_mode.value,
                   tools=tools, k=k if index else None,
                   retriever=model_name(index.model) if index else None,
                   retriever_stages=index.pipeline.name if index else None,
                   retriever_scope=retriever_scope if index else None, judge=judge,
                   trials=trials, tasks=[t.id for t in chosen])
    RunLog(run_dir).start(spec)          # refuses a folder of another format, before any app
    started: dict[str, RunningApp] = {}        # apps this command starts, and stops
    unavailable: dict[str, str] = {}           # apps that would not start, and why

    def restart(app: RunningApp) -> RunningApp:
        if app.app not in started:
            return _restart(app)                  # an app of `toolbed apps up`
        started[app.app] = own(restart_app(app, suite.catalog))
        return started[app.app]

    try:
        apps = None
        if run_mode is not Mode.REPLAY:
            apps = running_apps(owned=False)     # not the apps another run started
            touched = {a for t in chosen for a in t.apps}
            if index is not None:         # the retriever may offer any app's tools
                touched |= {suite.catalog.app_of(suite.catalog.api(api)).app for t in chosen
                            for api in offered_tools(suite.catalog, t, tools, k, index,
                                                     retriever_scope)}
            needed = sorted({a for a in touched
                             if suite.catalog.app(a).tier == "selfhosted"} - set(apps))
            for name in needed:
                console.print(f"starting {name}")
                try:
                    apps[name] = started[name] = own(get_launcher(name, suite.catalog).start())
                except AppError as exc:            # its tasks fail with this; others run
                    unavailable[name] = str(exc)
                    console.print(f"{name} could not be started: {exc}", markup=False)
        runner = Runner(suite.catalog, chosen_agent, run_dir, run_mode, tools, k, trials,
                        cassettes, apps, index, restart, judge=judge_fn,
                        scope=retriever_scope, unavailable=unavailable, spec=spec)
        todo = runner.pending(chosen)
        if len(todo) < len(chosen) * trials:
            console.print(f"resuming {run_dir}: {len(chosen) * trials - len(todo)} runs done")
        with Progress(console=console, transient=True) as progress:
            bar = progress.add_task(f"{chosen_agent.name} ({run_mode.value})", total=len(todo))
            for _ in runner.run(chosen, workers):
                progress.advance(bar)
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    finally:
        for app in started.values():
            stop_app(app)
            forget_running(app)
    if interrupted and not RunLog(run_dir).done():
        raise typer.Exit(130)
    summary = write_report(run_dir)
    console.print(markdown(summary), markup=False, highlight=False)
    console.print(f"results in {run_dir}")
    if interrupted:
        console.print(f"interrupted: the report covers the finished runs; "
                      f"`toolbed eval --run-dir {run_dir}` with the same options resumes")
        raise typer.Exit(130)
    if summary.get("problems"):
        console.print(f"{summary['problems']} run(s) had problems besides the agent's own "
                      "mistakes (an app down, a write not undone...): see summary.md")
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
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "steps.jsonl").open("w", encoding="utf-8") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows)
    names = [n for n in rows[0] if n not in ("task", "type", "scenario")]
    means = {n: round(sum(r[n] for r in rows) / len(rows), 4) for n in names}
    (run_dir / "steps.json").write_text(json.dumps(
        {"agent": agent.name, "mode": mode.value, "tools": tools, "tasks": len(rows),
         "metrics": means}, indent=2) + "\n", encoding="utf-8")
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
    json_: JsonOpt = False,
) -> None:
    """Two runs' scores side by side, on the tasks both ran."""
    rows_a, rows_b = load_results(run_a), load_results(run_b)
    common = {r["task"] for r in rows_a} & {r["task"] for r in rows_b}
    if not common:
        raise TaskError(f"{run_a} and {run_b} share no task")
    a = summarize([r for r in rows_a if r["task"] in common])
    b = summarize([r for r in rows_b if r["task"] in common])
    names = ["success", *sorted(set(a["metrics"]) | set(b["metrics"]))]

    def value(s: dict, name: str) -> float | None:
        return s["success"] if name == "success" else s["metrics"].get(name)

    rows = [(n, value(a, n), value(b, n)) for n in names]
    if plot:
        plot_runs({str(run_a.name): {n: va for n, va, _ in rows if va is not None},
                   str(run_b.name): {n: vb for n, _, vb in rows if vb is not None}}, plot)
    if json_:
        print_json({"tasks": len(common), "metrics": {
            n: {"a": va, "b": vb} for n, va, vb in rows}})
        return
    table(f"{len(common)} tasks in both: A = {run_a}, B = {run_b}", ["metric", "A", "B", "B - A"],
          [[n, _fmt(va), _fmt(vb), _fmt(vb - va) if va is not None and vb is not None else "-"]
           for n, va, vb in rows])


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


__all__ = ["AGENTS", "compare", "eval_", "report"]
