"""T-Eval's step-by-step scores: instruct, plan, reason, retrieve, understand, review.

Plan F1 follows the paper (T-Eval, Chen et al., arXiv:2312.14033): the similarity of a
predicted action i and a gold action j is ``β·σ(name_i, name_j) + (1-β)·σ(args_i, args_j)``
with β = 0.75; pairs above a threshold are matched one to one with maximum total
weight; the longest run of matches in increasing order on both sides has length l;
``p = l/n_pred``, ``r = l/n_gold`` and the score is ``2pr/(p+r)``.

σ is any text similarity in [0, 1]: ``embedding_similarity()`` (cosine of sentence
embeddings, clipped at 0, as the paper does with Sentence-BERT; toolbed ships
all-MiniLM-L6-v2 rather than the paper's all-mpnet-base-v2) or ``exact_similarity``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._common import canonical

__all__ = [
    "REVIEW_CLASSES", "Similarity", "embedding_similarity", "exact_similarity",
    "instruct_score", "overall", "plan_f1", "reason_score", "retrieve_score", "review_class",
    "review_score", "understand_score",
]

Similarity = Callable[[str, str], float]

REVIEW_CLASSES = ("success", "internal_error", "input_error", "irrelevant", "unable")
"""The five verdicts on a tool response: the goal was met; the tool failed on its own
side; the call was wrong (tool or arguments); the response does not fit the tool;
the response says it cannot be done, or is empty."""


def exact_similarity(a: str, b: str) -> float:
    return float(a.strip() == b.strip())


def embedding_similarity(model: Any = None) -> Similarity:
    """Cosine similarity of two texts' embeddings, clipped at 0 (default model:
    ``toolbed.retriever.load_model()``, or for a pair in which a text is Chinese,
    m3e-small on all-MiniLM-L6-v2's scale: ``toolbed.retriever.english_scale``);
    embeddings are cached per text.

    A text is exactly as similar to itself as it can be (1.0), so a model is loaded
    only when two texts differ: a run whose answers match their references word for
    word (a replayed oracle run) never pays its seconds of loading."""
    encoders: dict[str, Any] = {"en": model} if model is not None else {}
    cache: dict[tuple[str, str], Any] = {}

    def vector(text: str, lang: str) -> Any:
        if lang not in encoders:
            from toolbed.retriever import default_model, load_model

            encoders[lang] = load_model(default_model(lang))
        if (lang, text) not in cache:
            cache[lang, text] = encoders[lang].encode(text, normalize_embeddings=True,
                                                      show_progress_bar=False)
        return cache[lang, text]

    def similarity(a: str, b: str) -> float:
        if a == b:
            return 1.0
        from toolbed.retriever import english_scale, query_language

        chinese = model is None and "zh" in (query_language(a), query_language(b))
        lang = "zh" if chinese else "en"
        return float(english_scale(max(0.0, float(vector(a, lang) @ vector(b, lang))), lang))

    return similarity


def plan_f1(predicted: Sequence[tuple[str, Mapping[str, Any]]],
            gold: Sequence[tuple[str, Mapping[str, Any]]],
            similarity: Similarity = exact_similarity, beta: float = 0.75,
            threshold: float = 0.7) -> float:
    """F1 of a predicted plan (``(tool, args)`` in order) against the gold one."""
    if not predicted or not gold:
        return float(not predicted and not gold)
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    weights = np.zeros((len(predicted), len(gold)))
    for i, (name, args) in enumerate(predicted):
        for j, (gold_name, gold_args) in enumerate(gold):
            weights[i, j] = beta * similarity(name, gold_name) + \
                (1 - beta) * similarity(canonical(dict(args)), canonical(dict(gold_args)))
    edges = np.where(weights > threshold, weights, 0.0)
    rows, cols = linear_sum_assignment(edges, maximize=True)
    pairs = sorted((int(i), int(j)) for i, j in zip(rows, cols, strict=True) if edges[i, j] > 0)
    ordered = _longest_increasing([j for _, j in pairs])
    if ordered == 0:
        return 0.0
    precision, recall = ordered / len(predicted), ordered / len(gold)
    return 2 * precision * recall / (precision + recall)


def _longest_increasing(values: Sequence[int]) -> int:
    tails: list[int] = []
    for value in values:
        at = bisect.bisect_left(tails, value)
        tails[at:at + 1] = [value]
    return len(tails)


def instruct_score(format_ok: bool, args: Mapping[str, Any] | None,
                   gold_args: Mapping[str, Any]) -> float:
    """0.5 for a call in the required format, plus 0.5 times the share of gold
    arguments given with the gold value."""
    if not format_ok:
        return 0.0
    if not gold_args:
        return 1.0
    right = sum(1 for k, v in gold_args.items() if args is not None and k in args
                and canonical(args[k]) == canonical(v))
    return 0.5 + 0.5 * right / len(gold_args)


def reason_score(thought: str, gold_thought: str, similarity: Similarity) -> float:
    """Similarity of the predicted next thought to the gold one."""
    return similarity(thought, gold_thought)


def retrieve_score(tool: str | None, gold_tool: str) -> float:
    """1 when the predicted next tool is the gold one."""
    return float(tool == gold_tool)


def understand_score(args: Mapping[str, Any] | None, gold_args: Mapping[str, Any],
                     similarity: Similarity) -> float:
    """Similarity of the predicted arguments to the gold ones, both as JSON text."""
    return 0.0 if args is None else similarity(canonical(dict(args)), canonical(dict(gold_args)))


def review_class(status: int | None, body: Any) -> str:
    """The gold verdict on a real tool response, by T-Eval's definitions: no response
    or a 5xx is the tool's own failure (internal_error); a 4xx is a wrong call
    (input_error); a 200 with an empty body, or one whose lists are all empty, cannot
    accomplish anything (unable); any other 2xx is a success. (``irrelevant`` is a
    response from another tool, which only a swapped case can give.)"""
    if status is None or status >= 500:
        return "internal_error"
    if status >= 400:
        return "input_error"
    if status != 200:                 # 201, 202, 204: a write acknowledged, body or not
        return "success"
    if body in (None, "", [], {}):
        return "unable"
    if isinstance(body, dict):
        lists = [v for v in body.values() if isinstance(v, list)]
        if lists and not any(lists):
            return "unable"
    return "success"


def review_score(verdict: str | None, gold_verdict: str) -> float:
    """1 when the predicted verdict on a tool response is the gold one."""
    if gold_verdict not in REVIEW_CLASSES:
        raise ValueError(f"unknown review class {gold_verdict!r}; one of {REVIEW_CLASSES}")
    return float(verdict == gold_verdict)


def overall(scores: Mapping[str, float | Sequence[float]]) -> float:
    """T-Eval's overall: each ability's formats averaged first (e.g. string and JSON),
    then the abilities averaged with equal weight."""
    if not scores:
        return 0.0
    means = [v if isinstance(v, int | float) else sum(v) / len(v) for v in scores.values()]
    return sum(means) / len(means)
