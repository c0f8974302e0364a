"""One row of the benchmark table, and the table."""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Row:
    """What toolbed measured against its baseline, in the same unit and the same run."""

    name: str
    unit: str
    toolbed: float
    baseline_name: str
    baseline: float
    target: str = ""
    met: bool | None = None

    @property
    def ratio(self) -> float:
        return self.toolbed / self.baseline if self.baseline else float("nan")

    def as_dict(self) -> dict:
        return {**asdict(self), "ratio": round(self.ratio, 3)}


def median(values: list[float]) -> float:
    return statistics.median(values)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def markdown(rows: list[Row]) -> str:
    lines = ["| benchmark | toolbed | baseline (same run) | ratio | target |",
             "|---|---|---|---|---|"]
    for r in rows:
        target = f"{r.target}: {'met' if r.met else 'missed'}" if r.target else ""
        lines.append(f"| {r.name} | {_fmt(r.toolbed)} {r.unit} | {r.baseline_name}: "
                     f"{_fmt(r.baseline)} {r.unit} | {r.ratio:.2f}x | {target} |")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}" if value < 10 else f"{value:.1f}"
