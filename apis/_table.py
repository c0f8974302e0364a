"""The catalog as a Markdown table: one row per domain, with its apps and the keys they need.

The README's hosted-tier table is this function's output (`toolbed apis table --update
README.md` rewrites it between its markers, and a test keeps the two equal), so the
numbers a reader sees are always the catalog's.
"""

from __future__ import annotations

from collections import defaultdict

from toolbed.errors import ToolbedError

from ._loader import Catalog
from ._schema import App

__all__ = ["catalog_table", "markers", "replace_table"]


def markers(tier: str, kind: str = "catalog-table") -> tuple[str, str]:
    """The comments that fence a tier's table (``kind``: catalog-table, task-table)."""
    return f"<!-- {kind}:{tier}:start -->", f"<!-- {kind}:{tier}:end -->"


def catalog_table(catalog: Catalog, tier: str = "hosted") -> str:
    """Domains x apps x APIs (reads / writes) and the env vars that hold their keys."""
    by_domain: dict[str, list[App]] = defaultdict(list)
    for app in catalog.apps.values():
        if app.tier == tier:
            by_domain[app.domain].append(app)
    last_column = "versions" if tier != "hosted" else "keys needed (env vars)"
    lines = [
        f"| domain | apps (APIs) | APIs | read / write | {last_column} |",
        "|---|---|---|---|---|",
    ]
    totals = [0, 0, 0, 0]
    for domain in sorted(by_domain, key=str.lower):
        apps = sorted(by_domain[domain], key=lambda a: a.app)
        reads = sum(1 for a in apps for api in a.apis if api.effect == "read")
        writes = sum(1 for a in apps for api in a.apis if api.effect == "write")
        keys = sorted({var for a in apps for var in a.auth.env_vars})
        names = ", ".join(f"{a.app} ({len(a.apis)})" for a in apps)
        last = (
            ", ".join(f"{a.app} {a.version}" for a in apps) if tier != "hosted"
            else ", ".join(f"`{k}`" for k in keys) or "none"
        )
        lines.append(f"| {domain} | {names} | {reads + writes} | {reads} / {writes} | {last} |")
        totals = [totals[0] + len(apps), totals[1] + reads + writes, totals[2] + reads,
                  totals[3] + writes]
    lines.append(
        f"| **{len(by_domain)} domains** | **{totals[0]} apps** | **{totals[1]}** | "
        f"**{totals[2]} / {totals[3]}** | |"
    )
    return "\n".join(lines) + "\n"


def replace_table(
    text: str, table: str, tier: str = "hosted", kind: str = "catalog-table"
) -> str:
    """``text`` with the part between a table's markers replaced by ``table``."""
    start, end = markers(tier, kind)
    if start not in text or end not in text:
        raise ToolbedError(f"the file has no {start} ... {end} markers; put the two lines "
                           "where the table should go, then run this again")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}{end}{tail}"
