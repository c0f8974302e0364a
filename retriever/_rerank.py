"""The rerank stage: the pipeline's top hits scored again by a model fitted on dev.

Reciprocal rank fusion adds ranks with fixed weights: it cannot see that one document
is far nearer the query than the next, and it knows nothing of how tasks use the
APIs, which is what most misses need (the search that finds an id is ranked 6th to
20th, after the edit the request names). The reranker scores each of the pipeline's
top ``depth`` hits as ``bias + sum(weight * feature)``, a logistic regression over:

    dense     the document's cosine to the query, minus the best document's
    lexical   its BM25 score, over the best document's
    examples  its nearest example request's cosine, minus the best one's
    prior     the share of its app's train tasks whose chain uses it
    follows   the most often a train chain using one of the top 3 hits uses it too
    source    a required argument of one of the top 3 hits names it as the place its
              value comes from (changedetection's ``uuid``: "from list_watches")

A ranker that did not run leaves its feature the same for every hit, which changes no
order. `retriever train` fits the weights on the dev split's rankings by the model it
has just trained and saves them beside it (``reranker.json``); an index whose model
folder holds none skips the stage. A cross-encoder was tried first: on two CPU cores
it did not learn within the training budget and took 150 ms a query (README).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbed.apis import Catalog
from toolbed.errors import RetrieverError

from ._pipeline import Pipeline

__all__ = ["FEATURES", "RERANKER_FILE", "Candidates", "Reranker", "fit_reranker",
           "load_reranker", "named_sources", "pipeline_for", "usage_counts"]

FEATURES = ("dense", "lexical", "examples", "prior", "follows", "source")

RERANKER_FILE = "reranker.json"
"""The file in a model folder that holds the reranker fitted for that model."""


@dataclass(frozen=True)
class Candidates:
    """One query's ranking before the rerank stage, with each ranker's own scores."""

    ranked: list[str]
    """The pipeline's order: fused, the best apps kept."""
    dense: dict[str, float] = field(default_factory=dict)
    lexical: dict[str, float] = field(default_factory=dict)
    examples: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Reranker:
    """Weights over ``FEATURES`` and what the features read: the train split's usage
    and the arguments that name their source."""

    weights: Mapping[str, float]
    bias: float = 0.0
    prior: Mapping[str, float] = field(default_factory=dict)
    follows: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """For an API, the share of the train chains using it that use each other API."""
    sources: Mapping[str, Sequence[str]] = field(default_factory=dict)
    depth: int = 30
    """How many of the pipeline's top hits it scores again."""

    def features(self, candidates: Candidates) -> list[list[float]]:
        """One row of ``FEATURES`` per hit of the top ``depth``."""
        top = candidates.ranked[:self.depth]
        heads = top[:3]
        dense = _gaps(candidates.dense)
        examples = _gaps(candidates.examples)
        best_words = max(candidates.lexical.values(), default=0.0)
        rows = []
        for api in top:
            words = candidates.lexical.get(api, 0.0) / best_words if best_words > 0 else 0.0
            others = [h for h in heads if h != api]
            follows = max((self.follows.get(h, {}).get(api, 0.0) for h in others), default=0.0)
            named = any(api in self.sources.get(h, ()) for h in others)
            rows.append([dense(api), words, examples(api), self.prior.get(api, 0.0), follows,
                         float(named)])
        return rows

    def rerank(self, candidates: Candidates) -> dict[str, float]:
        """The top ``depth`` hits' new scores, best first (higher is better; equal
        scores keep the pipeline's order)."""
        w = [self.weights.get(name, 0.0) for name in FEATURES]
        scores = {api: round(self.bias + sum(a * b for a, b in zip(w, row, strict=True)), 6)
                  for api, row in zip(candidates.ranked, self.features(candidates),
                                      strict=False)}
        return {api: scores[api] for api in sorted(scores, key=scores.__getitem__,
                                                   reverse=True)}

    @staticmethod
    def probability(score: float) -> float:
        """What a score from ``rerank`` says: the fitted probability that the hit is a
        gold API (the logistic function of the score)."""
        return 1 / (1 + math.exp(-score)) if score > -700 else 0.0

    def order(self, candidates: Candidates, scores: dict[str, float] | None = None
              ) -> list[str]:
        """The candidates in the reranker's order: the top ``depth`` by their new scores
        (``scores``, when the caller has ``rerank``'s already), then the rest as they were."""
        again = self.rerank(candidates) if scores is None else scores
        return [*again, *candidates.ranked[len(again):]]

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({
            "features": list(FEATURES), "weights": dict(self.weights), "bias": self.bias,
            "depth": self.depth, "prior": dict(self.prior),
            "follows": {k: dict(v) for k, v in self.follows.items()},
            "sources": {k: list(v) for k, v in self.sources.items()}}, indent=1,
            sort_keys=True) + "\n", encoding="utf-8")


def load_reranker(model: str | Path | None) -> Reranker | None:
    """The reranker saved in the ``model`` folder, or None when it holds none."""
    path = Path(model) / RERANKER_FILE if model is not None else None
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        unknown = set(data["weights"]) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}")
        return Reranker({k: float(v) for k, v in data["weights"].items()},
                        float(data["bias"]), data["prior"], data["follows"], data["sources"],
                        int(data["depth"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RetrieverError(
            f"the reranker {path} is damaged ({exc}): run `toolbed retriever train` again, "
            f"or delete the file to rank without the rerank stage") from None


def pipeline_for(model: str | Path | None, pipeline: Pipeline) -> Pipeline:
    """``pipeline`` as it runs over ``model``: without the rerank stage when the model's
    folder holds no reranker (the packaged models never do)."""
    if pipeline.rerank and load_reranker(model) is None:
        return pipeline.without("rerank")
    return pipeline


def usage_counts(chains: Sequence[set[str]]
                 ) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """From the train split's gold chains: each API's ``prior`` (the share of its app's
    tasks that use it; an API id is ``app.name``) and ``follows`` (for each API, the
    share of the chains using it that use each other API). Both are smoothed by two
    tasks, so that one task makes no rule."""
    uses, apps, pairs = Counter[str](), Counter[str](), Counter[tuple[str, str]]()
    for chain in chains:
        uses.update(chain)
        apps.update({api.partition(".")[0] for api in chain})
        pairs.update((a, b) for a in chain for b in chain if a != b)
    prior = {api: round(n / (apps[api.partition(".")[0]] + 2), 4) for api, n in uses.items()}
    follows: dict[str, dict[str, float]] = defaultdict(dict)
    for (a, b), n in pairs.items():
        follows[a][b] = round(n / (uses[a] + 2), 4)
    return prior, dict(follows)


def named_sources(catalog: Catalog) -> dict[str, list[str]]:
    """For each API of ``catalog``, the other APIs of its app that one of its required
    arguments' descriptions names (``uuid``: "... from list_watches or search_watches")."""
    names: dict[str, set[str]] = defaultdict(set)
    for api_id in catalog.apis:
        app, _, name = api_id.partition(".")
        names[app].add(name)
    out: dict[str, list[str]] = {}
    for api_id, api in catalog.apis.items():
        app, _, own = api_id.partition(".")
        words: set[str] = set()
        for arg in api.required:
            spec = api.args.get(arg)
            text = str(((spec.schema_ if spec else None) or {}).get("description", ""))
            words.update(re.findall(r"[a-z][a-z0-9_]*", text))
        found = sorted(f"{app}.{w}" for w in words & names[app] if w != own)
        if found:
            out[api_id] = found
    return out


def fit_reranker(
    candidates: Sequence[Candidates], relevant: Sequence[set[str]],
    prior: Mapping[str, float], follows: Mapping[str, Mapping[str, float]],
    sources: Mapping[str, Sequence[str]], depth: int = 30, l2: float = 10.0,
) -> Reranker:
    """Fit the weights on queries' ``candidates`` (the pipeline's rankings, the rerank
    stage off) and their gold APIs: logistic regression, gold against not gold over the
    top ``depth`` of each, the features standardised and penalised by ``l2`` (chosen on
    dev in 5-fold cross-validation), by Newton's method."""
    import numpy as np

    shell = Reranker({}, 0.0, prior, follows, sources, depth)
    rows, labels = [], []
    for cands, gold in zip(candidates, relevant, strict=True):
        rows += shell.features(cands)
        labels += [float(api in gold) for api in cands.ranked[:depth]]
    if not rows or not 0 < sum(labels) < len(labels):
        raise RetrieverError("cannot fit the reranker: the dev rankings hold no gold API "
                             "among their top hits, or nothing else")
    x, y = np.array(rows), np.array(labels)
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.diag([l2] * (z.shape[1] - 1) + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-z @ w))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = w[:-1] / scale
    bias = float(w[-1] - weights @ mean)
    return Reranker({n: round(float(v), 6) for n, v in zip(FEATURES, weights, strict=True)},
                    round(bias, 6), prior, follows, sources, depth)


def _gaps(scores: Mapping[str, float]) -> Any:
    """A feature: a hit's score minus the best, the lowest seen for a hit the ranker did
    not return (it scored no higher), 0 for every hit when the ranker did not run."""
    if not scores:
        return lambda api: 0.0
    best, worst = max(scores.values()), min(scores.values())
    return lambda api: scores.get(api, worst) - best
