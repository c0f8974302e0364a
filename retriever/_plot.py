"""NDCG@k curves, one line per retriever, as a PNG (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["plot_ndcg"]


def plot_ndcg(results: Mapping[str, Mapping[str, float]], path: str | Path,
              title: str = "") -> Path:
    """Draw ``ndcg@k`` against k for every retriever in ``results`` (as ``compare``
    returns them) and save the figure to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    try:
        for name, scores in results.items():
            ks = sorted(int(m.split("@")[1]) for m in scores if m.startswith("ndcg@"))
            ax.plot(ks, [scores[f"ndcg@{k}"] for k in ks], marker="o", label=name)
        ax.set_xlabel("k")
        ax.set_ylabel("NDCG@k")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend()
        if title:
            ax.set_title(title)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path
