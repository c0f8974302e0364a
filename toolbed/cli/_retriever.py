"""``toolbed retriever build|search|train|evaluate``: the tool index in chroma, a model
fine-tuned on the task suite, and their scores."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import load_catalog
from toolbed.retriever import (
    BM25,
    DEFAULT_MODELS,
    KS,
    STAGES,
    EvalSet,
    MultilingualIndex,
    Pipeline,
    ToolDocument,
    ToolIndex,
    Variant,
    ablations,
    against,
    baselines,
    default_model,
    default_model_dir,
    dense_miner,
    fit_rerank_stage,
    load_eval_set,
    metadata_filter,
    misses,
    model_name,
    pipeline_for,
    plot_ndcg,
    query_language,
    rank_all,
    score_all,
    summarise_misses,
    tool_documents,
    training_examples,
    with_cuts,
)
from toolbed.retriever import (
    train as train_model,
)
from toolbed.tasks import TaskSuite, load_tasks

from ._output import JsonOpt, console, print_json, table
from ._tasks import RunLangOpt

app = typer.Typer(help="Index the catalog's APIs in chroma, search them, train and measure "
                  "the retriever.", no_args_is_help=True, add_completion=False)

PAIRED = ("ndcg@5", "recall@5", "comp@5")
"""The metrics ``evaluate --bootstrap`` sets against the last model's pipeline."""

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
CutOpt = Annotated[float, typer.Option(
    "--cut", help="After the first hit, only those the rerank stage gives at least this "
    "probability of being a gold API (0, the default: always k).")]
TierOpt = Annotated[str | None, typer.Option("--tier", help="Only selfhosted, hosted or mcp APIs.")]
IndexLangOpt = Annotated[str, typer.Option(
    "--lang", help="The requests' language: en, zh, or all (an index for each; a request "
    "is served by its language's).")]


def trained_model(model: str | None, lang: str = "en") -> str | None:
    """``model``, else the model `toolbed retriever train` saved for ``lang``, else None
    (the language's packaged model)."""
    if lang not in DEFAULT_MODELS:
        raise typer.BadParameter(f"--lang {lang!r}: the retriever serves "
                                 f"{', '.join(DEFAULT_MODELS)} (or all)")
    trained = default_model_dir(default_model(lang))
    return model or (str(trained) if (trained / "config.json").is_file() else None)


def chosen_pipeline(off: list[str] | None = None, apps_first: int | None = None,
                    cut: float = 0.0) -> Pipeline:
    """The best pipeline, less the stages switched ``off``, with ``apps_first`` apps and
    the ``cut``, if any."""
    best = Pipeline(cut=cut) if apps_first is None else Pipeline(apps=apps_first, cut=cut)
    return best.without(*(off or []))


def open_index(
    index: Path | None = None, model: str | None = None, off: list[str] | None = None,
    apps_first: int | None = None, url: str | None = None, lang: str = "en", cut: float = 0.0,
) -> ToolIndex | MultilingualIndex:
    """The index for requests in ``lang`` with the chosen pipeline over the trained model
    when there is one; for ``all``, one such index per language (``model``: the
    English one's)."""
    if lang == "all":
        return MultilingualIndex({
            code: ToolIndex(index, trained_model(model if code == "en" else None, code),
                            url=url, pipeline=chosen_pipeline(off, apps_first, cut), lang=code)
            for code in DEFAULT_MODELS})
    return ToolIndex(index, trained_model(model, lang), url=url,
                     pipeline=chosen_pipeline(off, apps_first, cut), lang=lang)


def build_index(index: ToolIndex | MultilingualIndex, tier: str | None = None) -> str:
    """Build ``index`` (each language's) over the catalog (only what changed is
    embedded); what it did."""
    catalog, said = load_catalog(), []
    parts = index.indexes if isinstance(index, MultilingualIndex) else {index.lang: index}
    for lang, part in parts.items():
        report = part.build(tool_documents(catalog, tier, lang=lang,
                                           expansion=part.pipeline.expansion))
        said.append((f"{lang}: " if len(parts) > 1 else "")
                    + f"{report.embedded} embedded, {report.unchanged} unchanged, "
                    f"{report.removed} removed" + (f"; {report.examples} example requests "
                                                   "embedded" if part.pipeline.examples else ""))
    return "\n".join(said)


def _split_set(suite: TaskSuite, split: str, tier: str | None = None,
               lang: str = "en") -> EvalSet:
    """A split of the task suite as an evaluation set: queries (those asked in ``lang``),
    gold APIs, and the catalog (or one tier of it, with that tier's tasks) as corpus,
    in documents for requests in ``lang``."""
    if lang not in DEFAULT_MODELS:
        raise typer.BadParameter(f"--lang {lang!r}: the retriever is trained and scored one "
                                 f"language at a time, {' or '.join(DEFAULT_MODELS)}")
    tasks = suite.filter(splits=[split], tier=tier, lang=lang)
    if not tasks:
        raise typer.BadParameter(f"no task is in split {split!r} asked in {lang}; splits "
                                 "are train, dev, test")
    return EvalSet(split, [t.query for t in tasks], [{s.api for s in t.chain} for t in tasks],
                   tool_documents(suite.catalog, tier, lang=lang),
                   tool_documents(suite.catalog, tier, lang=lang, expansion=False), lang)


@app.command()
def build(index: IndexOpt = None, model: ModelOpt = None, tier: TierOpt = None,
          off: OffOpt = None, chroma_url: UrlOpt = None, lang: IndexLangOpt = "all") -> None:
    """Embed every API's document into the index (one per language); only changed
    documents are re-embedded."""
    idx = open_index(index, model, off, url=chroma_url, lang=lang)
    with console.status(f"embedding the tool documents ({model_name(idx.model)})"):
        console.print(build_index(idx, tier))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What the user wants, in their words.")],
    k: Annotated[int, typer.Option("-k", help="How many APIs.")] = 5,
    app_: Annotated[str | None, typer.Option("--app", help="Only this app's APIs.")] = None,
    tier: TierOpt = None, index: IndexOpt = None, model: ModelOpt = None,
    off: OffOpt = None, apps_first: AppsFirstOpt = None, cut: CutOpt = 0.0,
    chroma_url: UrlOpt = None, json_: JsonOpt = False,
) -> None:
    """The top-k APIs for a query (run `toolbed retriever build` first); a query in
    Chinese is served by the Chinese index."""
    idx = open_index(index, model, off, apps_first, chroma_url, query_language(query), cut)
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
        "--base", help="Model to start from: a folder or a packaged model's name (default: "
        "the language's, all-MiniLM-L6-v2 or m3e-small; all-mpnet-base-v2, installed by "
        "hand, scores higher in English and trains about five times as long).")] = None,
    split: Annotated[str, typer.Option(help="Task split to train on.")] = "train",
    epochs: Annotated[float | None, typer.Option(
        help="Passes over the examples, at most (default: 2 in English; 1 in Chinese, whose "
        "catalog requests make the examples ten times as many).")] = None,
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
    remine: Annotated[bool, typer.Option(
        help="Before each epoch after the first, mine the negatives again with the model "
        "as training has left it (its ranking fused with BM25's); off by default, as it "
        "scored lower on dev.")] = False,
    early_stopping: Annotated[bool, typer.Option(
        help="Score the dev split after each epoch, keep the best, stop when it stalls.")
                              ] = True,
    reranker: Annotated[bool, typer.Option(
        help="Then fit the rerank stage on the dev split's rankings by the trained model "
        "and save it in the model's folder (the index is built with the model first).")
                        ] = True,
    seed: Annotated[int, typer.Option(help="Seed for negatives, shuffling and init.")] = 0,
    lang: RunLangOpt = "en",
    catalog_requests: Annotated[bool | None, typer.Option(
        help="Also train on the catalog's example requests in the language (each with its "
        "API's document); default: on for zh, whose train split is small, off for en.")
                                ] = None,
) -> None:
    """Fine-tune the embedding model on the split's (query, gold API) pairs, with in-batch
    negatives and hard negatives mined by the untrained pipeline
    (MultipleNegativesRankingLoss), on the CPU; the dev split picks the best epoch."""
    suite = load_tasks()
    data = _split_set(suite, split, lang=lang)
    tasks = len(data.queries)
    if catalog_requests if catalog_requests is not None else lang != "en":
        asked = [(q, {d.id}) for d in data.documents for q in d.examples]
        data = replace(data, queries=data.queries + [q for q, _ in asked],
                       relevant=data.relevant + [r for _, r in asked])
    dev = _split_set(suite, "dev", lang=lang) if split != "dev" else None
    base = base or default_model(lang)
    ranked = None
    if mine:
        with console.status("mining hard negatives with the untrained pipeline"):
            untrained = ToolIndex(model=base, lang=lang)
            untrained.build(data.documents)
            ranked = [[h.api for h in hits]
                      for hits in untrained.search_many(data.queries, 20)]
    examples = training_examples(data.queries, data.relevant, data.documents, seed, ranked)
    remine_with = None
    if remine:
        by_words = BM25(data.documents, lang).search_many(data.queries, 20)
        remine_with = dense_miner(data.queries, data.relevant, data.documents, seed,
                                  [[h.api for h in hits] for hits in by_words])
    console.print(f"{len(examples)} (query, API) pairs from {tasks} {split} tasks" + (
        f" and {len(data.queries) - tasks} catalog requests" if len(data.queries) > tasks
        else ""))
    epochs = epochs or (2.0 if lang == "en" else 1.0)
    report = train_model(examples, out or default_model_dir(base), base, epochs, batch_size,
                         learning_rate, max_steps, max_seq_length, seed,
                         dev=dev if early_stopping else None, remine=remine_with)
    scored = (f"; dev NDCG@5 by epoch {report.dev}, kept epoch {report.best_epoch}"
              if report.dev else "")
    console.print(f"{report.steps} steps in {report.seconds:.0f} s, mean loss {report.loss}"
                  f"{scored}; saved to {report.path}", soft_wrap=True)
    if reranker and dev is not None:
        with console.status("fitting the reranker on the dev split's rankings"):
            console.print(fit_rerank_stage(report.path, dev, data.relevant[:tasks],
                                           suite.catalog, lang))
    console.print(f"use it: toolbed retriever build --model {report.path}", soft_wrap=True)


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
    cut: Annotated[list[float] | None, typer.Option(
        "--cut", help="Also score the last model's pipeline with this cut (repeat for "
        "more), and show what its top 5 offers: how many tools, Recall, Precision, F1.")
                   ] = None,
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", help="Also set every row against the last model's pipeline query by "
        "query: its difference in NDCG@5, Recall@5 and COMP@5, with a 95% interval from this "
        "many paired bootstrap rounds (1000 is usual; 0: off).", min=0)] = 0,
    misses_: Annotated[Path | None, typer.Option(
        "--misses", help="Write each query whose top 5 from the last model's pipeline lacks "
        "a gold API to this JSON Lines file (the rank each missing API got instead, whether "
        "its app was offered), and say what they have in common.")] = None,
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
    split (the whole catalog, or one --tier, as corpus) or on your own dataset. With
    --lang zh: the Chinese tasks, over documents with the catalog's Chinese example
    requests and m3e-small, beside the English pipeline given the same requests. Each
    --cut adds the last model's pipeline with that cut, and a table of what its top 5
    offers an agent (how many tools, Recall, Precision and F1 of that set)."""
    if (queries is None) != (corpus is None):
        raise typer.BadParameter("--queries and --corpus go together")
    catalog = None
    if queries and corpus:
        data, collection = load_eval_set(queries, corpus), "data-" + corpus.stem
    else:
        # a tier's corpus gets collections of its own: the catalog's stay whole
        suite = load_tasks()
        data, catalog = _split_set(suite, split, tier, lang), suite.catalog
        collection = f"tools-{tier or ''}".strip("-")
    pipeline = chosen_pipeline(off, apps_first)
    variants = baselines(lang=data.lang)
    if data.lang != "en":        # what the English pipeline makes of the same requests
        english = pipeline_for(None, pipeline)
        variants.append(Variant(f"{model_name(None)} {english.name}, English documents",
                                None, english, "en"))
    for name in [default_model(data.lang), *(model or [])]:
        runs = pipeline_for(name, pipeline)
        variants.append(Variant(f"{model_name(name)} {runs.name}", name, runs, data.lang))
    best = variants[-1]
    if ablation:
        variants[-1:] = ablations(best)
    cuts = with_cuts(best, cut or [])
    variants += cuts

    def documents_in(code: str, expansion: bool) -> list[ToolDocument]:
        assert catalog is not None
        return tool_documents(catalog, tier, lang=code, expansion=expansion)

    with console.status("indexing and retrieving"):
        rankings = rank_all(data, variants, path=index, url=chroma_url, collection=collection,
                            documents_in=documents_in if catalog else None)
    results = score_all(rankings, data.relevant)
    differences = against(rankings, data.relevant, best.name, PAIRED, bootstrap) if bootstrap \
        else {}
    for name, by_metric in differences.items():
        for metric, d in by_metric.items():
            results[name].update({f"diff {metric}": d.mean, f"diff {metric} low": d.low,
                                  f"diff {metric} high": d.high})
    title = f"{len(data.queries)} queries ({data.name}), {len(data.documents)} documents"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    missed = misses(data, rankings[best.name])
    if misses_:
        misses_.parent.mkdir(parents=True, exist_ok=True)
        misses_.write_text("".join(json.dumps(m.as_json(), ensure_ascii=False) + "\n"
                                   for m in missed), encoding="utf-8")
    if plot:
        plot_ndcg(results, plot, title)
    if json_:
        print_json(results)
        return
    metrics = [f"{m}@{k}" for m in ("ndcg", "recall", "comp") for k in KS] + ["mrr"]
    table(title, ["retriever", *metrics],
          [[name, *(f"{scores[m]:.3f}" for m in metrics)] for name, scores in results.items()])
    if cuts:
        offered = ["offered@5", "recall@5", "precision@5", "f1@5"]
        table("what the top 5 offers an agent", ["retriever", *offered],
              [[v.name, *(f"{results[v.name][m]:.3f}" for m in offered)]
               for v in [best, *cuts]])
    if differences:
        table(f"each row less {best.name}, query by query: the mean and its 95% interval "
              f"({bootstrap} paired bootstrap rounds; an interval holding 0 cannot tell the "
              "two apart)", ["retriever", *PAIRED],
              [[name, *(str(by_metric[m]) for m in PAIRED)]
               for name, by_metric in differences.items()])
    if misses_:
        console.print(f"{best.name}: {summarise_misses(missed, len(data.queries))}")
    for path in (out, plot, misses_):
        if path:
            console.print(f"wrote {path}")
    if catalog is not None and split == "dev" and any(v.pipeline.rerank for v in variants):
        console.print("note: `retriever train` fitted the rerank stage on the dev split, so "
                      "the rows with it are scored on queries it has seen; score the test "
                      "split for an honest figure")
