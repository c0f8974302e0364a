"""What a retriever misses, query by query: each gold API its top k left out, the rank
it got instead, and whether its app was offered all the same.

A score says how much is missed; this says what, which is what tells the stages apart.
A gold API ranked 6th to 10th beside its app's other APIs is the reranker's to fix (the
right app, not the right API: most of this catalog's misses are the search that finds
an id, ranked below the edit the request names); an app never offered is the dense or
lexical ranker's, or the documents'; an API not in the ranking at all was cut off by
the app-first stage or lies beyond the depth searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ._dataset import EvalSet

__all__ = ["Miss", "misses", "summarise_misses"]


@dataclass(frozen=True)
class Miss:
    """One query whose top k lacks a gold API."""

    query: str
    relevant: list[str]
    top: list[str]
    """The ids the top k offered, best first."""
    missing: dict[str, int | None]
    """Each gold API not offered: its rank further down (from 1), None when not ranked."""
    app_offered: bool | None
    """Every missing API's app has an API in the top k (None: the corpus names no apps)."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def misses(evalset: EvalSet, rankings: Sequence[Sequence[str]], k: int = 5) -> list[Miss]:
    """The queries of ``evalset`` whose ranking (one per query, best first) offers
    fewer than all their gold APIs in the top ``k``, in the set's order."""
    if len(rankings) != len(evalset.queries):
        raise ValueError("one ranking per query of the set")
    app_of = {d.id: d.metadata.get("app") for d in evalset.documents}
    out = []
    for query, gold, ranked in zip(evalset.queries, evalset.relevant, rankings, strict=True):
        top = list(ranked[:k])
        left = sorted(gold - set(top))
        if not left:
            continue
        position = {api: i + 1 for i, api in enumerate(ranked)}
        apps = [app_of.get(api) for api in left]
        offered = {app_of.get(api) for api in top}
        out.append(Miss(query, sorted(gold), top, {api: position.get(api) for api in left},
                        None if None in apps else all(app in offered for app in apps)))
    return out


def summarise_misses(found: Sequence[Miss], queries: int, k: int = 5) -> str:
    """A paragraph a person reads: how many queries miss, where their gold APIs ranked
    instead, how many had the right app offered, how many found part of a chain."""
    if not found:
        return f"every one of the {queries} queries has all its gold APIs in the top {k}"
    ranks = [r for m in found for r in m.missing.values()]
    near = sum(1 for r in ranks if r is not None and r <= 2 * k)
    next_ = sum(1 for r in ranks if r is not None and 2 * k < r <= 4 * k)
    said = [f"{len(found)} of {queries} queries miss a gold API in the top {k}",
            f"of the {len(ranks)} gold APIs missed, {near} ranked {k + 1}-{2 * k}, {next_} "
            f"{2 * k + 1}-{4 * k} and {len(ranks) - near - next_} lower or not at all"]
    partial = sum(1 for m in found if len(m.missing) < len(m.relevant))
    said.append(f"{partial} found some of their gold APIs but not all")
    known = [m for m in found if m.app_offered is not None]
    if known:
        right_app = sum(1 for m in known if m.app_offered)
        said.append(f"in {right_app} of {len(known)} every missing API's app was offered "
                    "(the right app, not the right API)")
    return "; ".join(said)
