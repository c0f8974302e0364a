"""``toolbed apis list|show|check|table``: browse and check the catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import catalog_table, load_catalog, replace_table
from toolbed.connectors import Runtime, check_live, request_mismatches
from toolbed.errors import ToolbedError

from ._output import JsonOpt, console, print_json, table

app = typer.Typer(help="Browse the catalog of app APIs.", no_args_is_help=True)


@app.command("list")
def list_apis(
    app_: Annotated[str | None, typer.Option("--app", help="Only this app.")] = None,
    domain: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
    tier: Annotated[str | None, typer.Option(help="hosted or selfhosted.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List APIs, optionally filtered by app, domain or tier."""
    catalog = load_catalog()
    if app_:
        catalog.app(app_)  # unknown app -> error listing the valid ones
    apis = catalog.filter(app=app_, domain=domain, tier=tier)
    rows = []
    for api in apis:
        owner = catalog.app_of(api)
        rows.append(
            {
                "id": api.id, "app": owner.app, "domain": owner.domain, "tier": owner.tier,
                "effect": api.effect, "emulator": owner.emulator,
                "method": api.http.method, "path": api.http.path,
                "description": api.description,
            }
        )
    if as_json:
        print_json(rows)
        return
    table(
        f"{len(rows)} APIs",
        ["id", "effect", "method", "path"],
        [[r["id"], r["effect"], r["method"], r["path"]] for r in rows],
    )


@app.command("show")
def show(api_id: str, as_json: JsonOpt = False) -> None:
    """Show one API: description, example requests, HTTP mapping, argument schema, undo."""
    catalog = load_catalog()
    api = catalog.api(api_id)
    owner = catalog.app_of(api)
    data = {
        "id": api.id, "app": owner.app, "name": owner.name, "domain": owner.domain,
        "tier": owner.tier, "effect": api.effect, "description": api.description,
        "queries": list(api.queries), "docs": api.docs or owner.docs,
        "auth": owner.auth.model_dump(by_alias=True),
        "http": api.http.model_dump(exclude_none=True),
        "parameters": api.parameters,
        "placement": {n: {"in": a.location, "field": a.field or n} for n, a in api.args.items()},
        "undo": api.undo.model_dump(exclude_none=True) if api.undo else None,
        "irreversible": api.irreversible,
    }
    if as_json:
        print_json(data)
        return
    console.print(f"[bold]{api.id}[/bold]  ({api.effect}, {owner.name}, {owner.tier})")
    console.print(api.description)
    for query in api.queries:
        console.print(f"  asked as: {query}", markup=False)
    console.print(f"[dim]{api.http.method} {api.http.path}   docs: {data['docs']}[/dim]")
    table(
        "arguments",
        ["name", "in", "type", "required", "description"],
        [
            [n, a.location, a.schema_.get("type", "enum"), n in api.required,
             a.schema_.get("description")]
            for n, a in api.args.items()
        ],
    )
    if api.undo:
        def call(name: str, bind: dict[str, str]) -> str:
            return f"{name}({', '.join(f'{k}={v}' for k, v in bind.items())})"

        console.print(f"undo: {call(api.undo.api, api.undo.bind)}", markup=False)
        for case in api.undo.instead:
            console.print(f"  instead, when {case.when}: {call(case.api, case.bind)}",
                          markup=False)
    elif api.irreversible:
        console.print(f"irreversible: {api.irreversible}")


@app.command("check")
def check(
    app_: Annotated[str | None, typer.Option("--app", help="Only this app.")] = None,
    tier: Annotated[str, typer.Option(help="hosted or selfhosted.")] = "hosted",
    live: Annotated[
        bool, typer.Option("--live", help="Call every read API once (needs network).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check entries: offline, each example builds its documented request; --live, each
    read API answers its example (ok / auth needed / gone / error)."""
    catalog = load_catalog()
    if app_:
        catalog.app(app_)
    apis = catalog.filter(app=app_, tier=tier)
    if live:
        with Runtime(catalog) as runtime:
            health = check_live(runtime, apis)
        rows = [h.model_dump() for h in health]
        bad = [h for h in health if h.verdict != "ok"]
    else:
        rows = [
            {"api": api.id, "example": i, "mismatches": request_mismatches(catalog, api, ex)}
            for api in apis for i, ex in enumerate(api.examples)
        ]
        bad = [r for r in rows if r["mismatches"]]
    if as_json:
        print_json(rows)
    elif live:
        table(f"{len(rows)} read APIs called", ["api", "verdict", "status", "detail"],
              [[r["api"], r["verdict"], r["status"], r["detail"]] for r in rows])
    else:
        table(f"{len(rows)} examples, {len(bad)} not as documented",
              ["api", "example", "mismatches"],
              [[r["api"], r["example"], "; ".join(r["mismatches"])] for r in bad])
    if bad and not live:
        raise typer.Exit(1)


@app.command("table")
def markdown_table(
    tier: Annotated[str, typer.Option(help="hosted or selfhosted.")] = "hosted",
    update: Annotated[
        Path | None,
        typer.Option("--update", help="Rewrite the table between the markers in this file."),
    ] = None,
) -> None:
    """Print the catalog as a Markdown table (domains x apps x APIs, keys needed)."""
    text = catalog_table(load_catalog(), tier)
    if update is None:
        typer.echo(text, nl=False)
        return
    try:
        update.write_text(replace_table(update.read_text(encoding="utf-8"), text, tier),
                          encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise ToolbedError(f"cannot update {update}: {exc}") from None
    console.print(f"updated the {tier} table in {update}")
