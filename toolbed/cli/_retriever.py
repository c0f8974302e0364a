"""``toolbed retriever build|search|train|evaluate``: the tool index in chroma, a model
fine-tuned on the task suite, and their scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import load_catalog
from toolbed.retriever import (
    KS,
    STAGES,
    EvalSet,
    Pipeline,
    ToolIndex,
    Variant,
    ablations,
    baselines,
    compare,
    default_model_dir,
    load_eval_set,
    metadata_filter,
    model_name,
    plot_ndcg,
    tool_documents,
    training_examples,
)
from toolbed.retriever import (
    train as train_model,
)
from toolbed.tasks import TaskSuite, load_tasks

from ._output import JsonOpt, console, print_json, table
from ._tasks import RunLangOpt

app = typer.Typer(help="Index the catalog's APIs in chroma, search them, train and measure "
                  "the retriever.", no_args_is_help=True, add_completion=False)

IndexOpt = Annotated[Path | None, typer.Option(
    "--index", help="Chroma folder (default: $TOOLBED_HOME/retriever/chroma).")]
UrlOpt = Annotated[str | None, typer.Option(
    "--chroma-url", help="Use a Chroma server (http://host:port) instead of the local folder.")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="A local sentence-transformers model folder (default: the one `toolbed "
    "retriever train` saved, else all-MiniLM-L6-v2, shipped offline).")]
OffOpt = Annotated[list[str] | None, typer.Option(
    "--off", help=f"Switch a pipeline stage off ({', '.join(STAGES)}); repeat for more.")]
AppsFirstOpt = Annotated[int | None, typer.Option(
    "--apps-first", help="Rank APIs only inside the N best apps (0: all APIs, flat; default: "
    "the pipeline's).")]
TierOpt = Annotated[str | None, typer.Option("--tier", help="Only selfhosted, hosted or mcp APIs.")]


def trained_model(model: str | None) -> str | None:
    """``model``, else the model `toolbed retriever train` saved, else None (the default)."""
    trained = default_model_dir()
    return model or (str(trained) if (trained / "config.json").is_file() else None)


def chosen_pipeline(off: list[str] | None = None, apps_first: int | None = None) -> Pipeline:
    """The best pipeline, less the stages switched ``off``, with ``apps_first`` apps."""
    best = Pipeline() if apps_first is None else Pipeline(apps=apps_first)
    return best.without(*(off or []))


def open_index(
    index: Path | None = None, model: str | None = None, off: list[str] | None = None,
    apps_first: int | None = None, url: str | None = None,
) -> ToolIndex:
    """The index with the chosen pipeline over the trained model when there is one."""
    return ToolIndex(index, trained_model(model), url=url,
                     pipeline=chosen_pipeline(off, apps_first))


def build_index(index: ToolIndex, tier: str | None = None) -> str:
    """Build ``index`` over the catalog (only what changed is embedded); what it did."""
    report = index.build(tool_documents(load_catalog(), tier, index.pipeline.template))
    return (f"{report.embedded} embedded, {report.unchanged} unchanged, "
            f"{report.removed} removed" + (f"; {report.examples} example requests embedded"
                                           if index.pipeline.examples else ""))


def _split_set(suite: TaskSuite, split: str, tier: str | None = None,
               lang: str | None = None) -> EvalSet:
    """A split of the task suite as an evaluation set: queries (those asked in ``lang``),
    gold APIs, and the catalog (or one tier of it, with that tier's tasks) as corpus."""
    tasks = suite.filter(splits=[split], tier=tier, lang=lang)
    if not tasks:
        raise typer.BadParameter(f"no task is in split {split!r}" + (
            f" asked in {lang}" if lang not in (None, "all") else "")
            + "; splits are train, dev, test")
    return EvalSet(split, [t.query for t in tasks], [{s.api for s in t.chain} for t in tasks],
                   tool_documents(suite.catalog, tier),
                   tool_documents(suite.catalog, tier, Pipeline(expansion=False).template))


@app.command()
def build(index: IndexOpt = None, model: ModelOpt = None, tier: TierOpt = None,
          off: OffOpt = None, chroma_url: UrlOpt = None) -> None:
    """Embed every API's document into the index; only changed documents are re-embedded."""
    idx = open_index(index, model, off, url=chroma_url)
    with console.status(f"embedding the tool documents ({model_name(idx.model)})"):
        console.print(build_index(idx, tier))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What the user wants, in their words.")],
    k: Annotated[int, typer.Option("-k", help="How many APIs.")] = 5,
    app_: Annotated[str | None, typer.Option("--app", help="Only this app's APIs.")] = None,
    tier: TierOpt = None, index: IndexOpt = None, model: ModelOpt = None,
    off: OffOpt = None, apps_first: AppsFirstOpt = None,
    chroma_url: UrlOpt = None, json_: JsonOpt = False,
) -> None:
    """The top-k APIs for a query (run `toolbed retriever build` first)."""
    idx = open_index(index, model, off, apps_first, chroma_url)
    if not len(idx):
        raise typer.BadParameter("the index is empty: run `toolbed retriever build` first")
    hits = idx.search(query, k, metadata_filter([app_] if app_ else None, tier=tier))
    if json_:
        print_json([{"api": h.api, "score": h.score} for h in hits])
        return
    table(f"stages: {idx.pipeline.name}", ["api", "score"],
          [[h.api, f"{h.score:.3f}"] for h in hits])


@app.command()
def train(
    out: Annotated[Path | None, typer.Option(
        "--out", help="Where to save the model (default: "
        "$TOOLBED_HOME/retriever/models/<base>-toolbed).")] = None,
    base: Annotated[str | None, typer.Option(
        "--base", help="Model to start from (default: all-MiniLM-L6-v2).")] = None,
    split: Annotated[str, typer.Option(help="Task split to train on.")] = "train",
    epochs: Annotated[float, typer.Option(help="Passes over the examples (at most).")] = 2.0,
    batch_size: Annotated[int, typer.Option(help="Queries per batch (in-batch negatives).")
                          ] = 32,
    learning_rate: Annotated[float, typer.Option("--lr", help="AdamW learning rate.")] = 6e-5,
    max_steps: Annotated[int, typer.Option(help="Stop after this many steps (-1: no limit).")
                         ] = -1,
    max_seq_length: Annotated[int, typer.Option(help="Tokens per text, saved with the model.")
                              ] = 96,
    mine: Annotated[bool, typer.Option(
        help="Mine each query's hard negative from the untrained pipeline's top 10 (else "
        "from the same app).")] = True,
    early_stopping: Annotated[bool, typer.Option(
        help="Score the dev split after each epoch, keep the best, stop when it stalls.")
                              ] = True,
    seed: Annotated[int, typer.Option(help="Seed for negatives, shuffling and init.")] = 0,
    lang: RunLangOpt = "en",
) -> None:
    """Fine-tune the embedding model on the split's (query, gold API) pairs, with in-batch
    negatives and hard negatives mined by the untrained pipeline
    (MultipleNegativesRankingLoss), on the CPU; the dev split picks the best epoch."""
    suite = load_tasks()
    data = _split_set(suite, split, lang=lang)
    dev = _split_set(suite, "dev", lang=lang) if early_stopping and split != "dev" else None
    ranked = None
    if mine:
        with console.status("mining hard negatives with the untrained pipeline"):
            miner = ToolIndex(model=base)
            miner.build(data.documents)
            ranked = [[h.api for h in hits] for hits in miner.search_many(data.queries, 20)]
    examples = training_examples(data.queries, data.relevant, data.documents, seed, ranked)
    console.print(f"{len(examples)} (query, API) pairs from {len(data.queries)} {split} tasks")
    report = train_model(examples, out or default_model_dir(base), base, epochs, batch_size,
                         learning_rate, max_steps, max_seq_length, seed, dev=dev)
    scored = (f"; dev NDCG@5 by epoch {report.dev}, kept epoch {report.best_epoch}"
              if report.dev else "")
    console.print(f"{report.steps} steps in {report.seconds:.0f} s, mean loss {report.loss}"
                  f"{scored}; saved to {report.path}\nuse it: toolbed retriever build "
                  f"--model {report.path}", soft_wrap=True)


@app.command("evaluate")
def evaluate_(
    split: Annotated[str, typer.Option(help="Task split whose queries are scored.")] = "test",
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="A model folder to score beside BM25 and the default model; "
        "repeat for more.")] = None,
    ablation: Annotated[bool, typer.Option(
        help="Also score the last model's pipeline with each stage switched off.")] = False,
    off: OffOpt = None, apps_first: AppsFirstOpt = None, tier: TierOpt = None,
    lang: RunLangOpt = "en",
    queries: Annotated[Path | None, typer.Option(
        help="Your own queries (JSON Lines: query, relevant ids) instead of a split.")] = None,
    corpus: Annotated[Path | None, typer.Option(
        help="The corpus for --queries (JSON Lines: id, text).")] = None,
    out: Annotated[Path | None, typer.Option(help="Write the scores to this JSON file.")
                   ] = None,
    plot: Annotated[Path | None, typer.Option(help="Draw NDCG@k curves to this PNG file.")
                    ] = None,
    index: IndexOpt = None, chroma_url: UrlOpt = None, json_: JsonOpt = False,
) -> None:
    """NDCG@k, Recall@k, COMP@k and MRR of BM25 and the untrained encoder (the
    baselines), then the pipeline over the default model and each --model, on a task
    split (the whole catalog, or one --tier, as corpus) or on your own dataset."""
    if (queries is None) != (corpus is None):
        raise typer.BadParameter("--queries and --corpus go together")
    if queries and corpus:
        data, collection = load_eval_set(queries, corpus), "data-" + corpus.stem
    else:
        # a tier's corpus gets collections of its own: the catalog's stay whole
        data = _split_set(load_tasks(), split, tier, lang)
        collection = f"tools-{tier or ''}".strip("-")
    pipeline = chosen_pipeline(off, apps_first)
    variants = baselines()
    for name in [None, *(model or [])]:
        variants.append(Variant(f"{model_name(name)} {pipeline.name}", name, pipeline))
    if ablation:
        variants[-1:] = ablations(variants[-1])
    with console.status("indexing and retrieving"):
        results = compare(data, variants, path=index, url=chroma_url, collection=collection)
    title = f"{len(data.queries)} queries ({data.name}), {len(data.documents)} documents"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if plot:
        plot_ndcg(results, plot, title)
    if json_:
        print_json(results)
        return
    metrics = [f"{m}@{k}" for m in ("ndcg", "recall", "comp") for k in KS] + ["mrr"]
    table(title, ["retriever", *metrics],
          [[name, *(f"{scores[m]:.3f}" for m in metrics)] for name, scores in results.items()])
    for path in (out, plot):
        if path:
            console.print(f"wrote {path}")
