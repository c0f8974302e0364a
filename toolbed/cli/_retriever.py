"""``toolbed retriever build|search|evaluate``: the tool index in chroma, and its scores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import load_catalog
from toolbed.harness import load_tasks
from toolbed.retriever import BM25, KS, ToolIndex, evaluate, model_name, tool_documents

from ._output import JsonOpt, console, print_json, table

app = typer.Typer(help="Index the catalog's APIs in chroma, search them, measure the retriever.",
                  no_args_is_help=True)

IndexOpt = Annotated[Path | None, typer.Option(
    "--index", help="Chroma folder (default: $TOOLBED_HOME/retriever/chroma).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="A local sentence-transformers model folder (default: all-MiniLM-L6-v2, "
    "shipped offline).")]
TierOpt = Annotated[str | None, typer.Option("--tier", help="Only selfhosted or hosted APIs.")]


@app.command()
def build(index: IndexOpt = None, model: ModelOpt = None, tier: TierOpt = None) -> None:
    """Embed every API's document into the index; only changed documents are re-embedded."""
    with console.status("embedding the tool documents"):
        report = ToolIndex(index, model).build(tool_documents(load_catalog(), tier))
    console.print(f"{report.embedded} embedded, {report.unchanged} unchanged, "
                  f"{report.removed} removed")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What the user wants, in their words.")],
    k: Annotated[int, typer.Option("-k", help="How many APIs.")] = 5,
    app_: Annotated[str | None, typer.Option("--app", help="Only this app's APIs.")] = None,
    tier: TierOpt = None, index: IndexOpt = None, model: ModelOpt = None,
    json_: JsonOpt = False,
) -> None:
    """The top-k APIs for a query (run `toolbed retriever build` first)."""
    idx = ToolIndex(index, model)
    if not len(idx):
        raise typer.BadParameter("the index is empty: run `toolbed retriever build` first")
    filters = [{"app": app_}] if app_ else []
    filters += [{"tier": tier}] if tier else []
    where = filters[0] if len(filters) == 1 else ({"$and": filters} if filters else None)
    hits = idx.search(query, k, where)
    if json_:
        print_json([{"api": h.api, "score": h.score} for h in hits])
        return
    table(None, ["api", "score"], [[h.api, f"{h.score:.3f}"] for h in hits])


@app.command("evaluate")
def evaluate_(
    split: Annotated[str, typer.Option(help="Task split whose queries are scored.")] = "test",
    index: IndexOpt = None, model: ModelOpt = None, json_: JsonOpt = False,
) -> None:
    """NDCG@k, Recall@k, COMP@k and MRR of BM25 and the embedding model on a task split,
    with the whole catalog as the corpus."""
    suite = load_tasks()
    tasks = suite.filter(splits=[split])
    queries = [t.query for t in tasks]
    relevant = [{s.api for s in t.chain} for t in tasks]
    docs = tool_documents(suite.catalog)
    idx = ToolIndex(index, model)
    with console.status("indexing and retrieving"):
        idx.build(docs)
        results = {"bm25": evaluate(BM25(docs), queries, relevant),
                   model_name(model): evaluate(idx, queries, relevant)}
    if json_:
        print_json(results)
        return
    metrics = [f"{m}@{k}" for m in ("ndcg", "recall", "comp") for k in KS] + ["mrr"]
    table(f"{len(tasks)} {split} tasks, {len(docs)} APIs", ["retriever", *metrics],
          [[name, *(f"{scores[m]:.3f}" for m in metrics)] for name, scores in results.items()])
