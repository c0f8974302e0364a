"""Reliability over repeated trials: tau-bench's pass^k and Codex's pass@k.

With n trials of a task and c successes, pass^k is the chance that k trials drawn
without replacement all succeed, ``C(c, k) / C(n, k)``; pass@k that at least one
does, ``1 - C(n - c, k) / C(n, k)``. Both are averaged over tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

__all__ = ["pass_at_k", "pass_hat_k"]


def _check(trials: Sequence[Sequence[bool]], k: int) -> None:
    if not trials:
        raise ValueError("no tasks")
    short = min(len(t) for t in trials)
    if not 1 <= k <= short:
        raise ValueError(f"k={k} needs 1 <= k <= the trials per task ({short})")


def pass_hat_k(trials: Sequence[Sequence[bool]], k: int) -> float:
    """pass^k: per task the chance that k of its trials all pass, averaged."""
    _check(trials, k)
    return sum(comb(sum(t), k) / comb(len(t), k) for t in trials) / len(trials)


def pass_at_k(trials: Sequence[Sequence[bool]], k: int) -> float:
    """pass@k: per task the chance that at least one of k of its trials passes, averaged."""
    _check(trials, k)
    return sum(1 - comb(len(t) - sum(t), k) / comb(len(t), k) for t in trials) / len(trials)
