"""Speed-up at equal quality: how much faster an implementation reaches the baseline's answer.

At equal hyper-parameters two libraries may not run the same algorithm (other bins, other
trees, other stopping rules), so a suite with `equal_quality: true` also runs every
implementation but the baseline at each budget of its pairing's ladder (trees, iterations).
Each point is an ordinary case. Read on the measured curve of one implementation on one
dataset and size:

- `speedup_equal_quality`: the baseline's fit time at its reference budget over the smallest
  fit time at which this implementation reaches the baseline's main metric within the
  pairing's parity tolerance. The curve is the monotone envelope of the measured points
  (sorted by fit time, the best quality so far), interpolated linearly in quality against
  log time between the last point short of the target and the first that reaches it, never
  beyond the measured points. Its interval carries the intervals of the three times involved
  (the baseline's and the two points'), read the same way from their bounds; its level is at
  least 1 − the sum of their misses (Bonferroni). The quality is taken as measured (its own
  noise is not in the interval).
- `quality_at_equal_time`: this implementation's main metric at the baseline's fit time, on
  the same envelope; not given when its smallest budget already takes longer, the best
  measured (and said) when the baseline's time lies beyond the ladder.
- Where the ladder never reaches the baseline's quality: the sentence "does not reach the
  baseline's quality within the ladder (best X at budget Y)", never a number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import cast

import pandas as pd

from mlcompare.pairings.quality import HIGHER_IS_BETTER, METRICS, quality_delta
from mlcompare.records import Status


@dataclass(frozen=True)
class Point:
    budget: float
    time_s: float
    low_s: float  # the fit time's interval (NaN: none, one process)
    high_s: float
    level: float
    quality: float


@dataclass
class Curve:
    """One implementation's ladder on one dataset and size, against its baseline."""

    suite: str
    pairing: str
    implementation: str
    baseline: str
    group: str  # dataset and size (and shared sweep point), as the table labels it
    metric: str
    budget: str
    reference: float
    tolerance: float
    baseline_point: Point
    points: list[Point]
    speedup: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = None
    reached_at: float | None = None  # the budget at which the curve reaches the target (interpolated)
    reached_s: float | None = None  # the fit time at which it does
    target: float | None = None  # the quality it must reach: the baseline's, less the parity tolerance
    quality_at_equal_time: float | None = None
    at_least: bool = False  # the ladder's first point already reaches: the speed-up is a lower bound
    notes: list[str] = field(default_factory=list)

    @property
    def slug(self) -> str:
        """`<pairing>.<implementation>.<dataset>_<rows>_<features>`: its metrics' names."""
        return re.sub(r"[^A-Za-z0-9_.\-]", "_", f"{self.pairing}.{self.implementation}.{self.group}")

    def text(self) -> str:
        """The answer in words, as the description and the table say it."""
        if self.speedup is None:
            return "; ".join(self.notes)
        interval = (f" [{self.low:.3g}–{self.high:.3g}, ≥ {self.level * 100:.3g} %]" if self.level is not None
                    else " (no interval: one process)")
        quality = (f"; {self.metric} {self.quality_at_equal_time:.4g} at the baseline's time"
                   if self.quality_at_equal_time is not None else "")
        bound = "≥ " if self.at_least else ""
        return (f"{bound}{self.speedup:.3g}×{interval} at equal quality (reaches {self.metric} "
                f"{self.baseline_point.quality:.4g} at {self.budget}≈{self.reached_at:.3g}){quality}"
                + (f"; {'; '.join(self.notes)}" if self.notes else ""))


def shortfall(metric: str, value: float, baseline: float) -> float:
    """How much worse than the baseline `value` is, in the parity tolerance's units (≤ tolerance: reached)."""
    delta = quality_delta(metric, value, baseline) if metric in METRICS else value - baseline
    return -delta if HIGHER_IS_BETTER.get(metric, True) else delta


def envelope(points: list[Point], metric: str) -> list[Point]:
    """The points by fit time, each with the best quality measured at that time or less."""
    better = max if HIGHER_IS_BETTER.get(metric, True) else min
    out, best = [], None
    for point in sorted(points, key=lambda p: p.time_s):
        best = point.quality if best is None else better(best, point.quality)
        out.append(Point(point.budget, point.time_s, point.low_s, point.high_s, point.level, best))
    return out


def _between(a: float, b: float, fraction: float) -> float:
    """Linear in log time: the point `fraction` of the way from a to b."""
    return math.exp(math.log(a) + fraction * (math.log(b) - math.log(a)))


def read_curve(curve: Curve) -> Curve:
    """Fill in the speed-up at equal quality, its interval and the quality at equal time."""
    base, metric = curve.baseline_point, curve.metric
    line = envelope(curve.points, metric)
    gaps = [shortfall(metric, p.quality, base.quality) for p in line]
    first = next((i for i, gap in enumerate(gaps) if gap <= curve.tolerance + 1e-12), None)
    if first is None:
        best = min(curve.points, key=lambda p: shortfall(metric, p.quality, base.quality))
        curve.notes.append(f"does not reach the baseline's quality within the ladder (best {metric} "
                           f"{best.quality:.4g} at {curve.budget}={best.budget:g})")
    else:
        fraction = 1.0
        if first == 0:  # where below its smallest budget it would reach the target is not measured
            curve.at_least = True
            curve.notes.append(f"its smallest budget ({curve.budget}={line[0].budget:g}) already reaches the "
                               "baseline's quality: the speed-up is at least this")
        else:  # between the last point short of the target and the first that reaches it
            before, after = gaps[first - 1], gaps[first]
            fraction = (before - curve.tolerance) / (before - after) if before != after else 1.0
        lo_point, hi_point = (line[first - 1] if first > 0 else line[first]), line[first]
        reached = _between(lo_point.time_s, hi_point.time_s, fraction)
        curve.reached_s = reached
        curve.target = lo_point.quality + fraction * (hi_point.quality - lo_point.quality)
        curve.reached_at = lo_point.budget + fraction * (hi_point.budget - lo_point.budget)
        curve.speedup = base.time_s / reached
        used = [base, lo_point, hi_point] if 0 < fraction < 1 else [base, hi_point]  # the times it was read from
        if all(not math.isnan(p.level) for p in used):
            fastest = _between(lo_point.low_s, hi_point.low_s, fraction)
            slowest = _between(lo_point.high_s, hi_point.high_s, fraction)
            curve.low, curve.high = base.low_s / slowest, base.high_s / fastest
            curve.level = max(0.0, 1 - sum(1 - p.level for p in used))
    curve.quality_at_equal_time = _quality_at(line, base.time_s, curve)
    return curve


def _quality_at(line: list[Point], time_s: float, curve: Curve) -> float | None:
    if time_s < line[0].time_s:
        curve.notes.append(f"its smallest budget ({curve.budget}={line[0].budget:g}) takes longer than the "
                           "baseline's fit: no quality at equal time")
        return None
    if time_s >= line[-1].time_s:
        if time_s > line[-1].time_s:
            curve.notes.append(f"the baseline's fit time lies beyond the ladder: the quality at equal time is the "
                               f"best measured, at {curve.budget}={line[-1].budget:g}")
        return line[-1].quality
    after = next(i for i, p in enumerate(line) if p.time_s >= time_s)
    a, b = line[after - 1], line[after]
    fraction = (math.log(time_s) - math.log(a.time_s)) / (math.log(b.time_s) - math.log(a.time_s))
    return a.quality + fraction * (b.quality - a.quality)


def _point(row: dict, budget: float) -> Point:
    return Point(budget, row["fit_time_s"], row["fit_ci_low_s"], row["fit_ci_high_s"], row["fit_ci_level"],
                 row["quality"])


def curves(cases: pd.DataFrame) -> list[Curve]:
    """Every equal-quality curve of the suites' cases (implementations that climbed a ladder)."""
    if cases.empty or "eq_value" not in cases:
        return []
    ran = cases[(cases["status"] == Status.OK) & cases["eq_value"].notna()]
    out = []
    keys = ["suite_run_id", "pairing", "dataset_label", "sweep_shared"]
    for _, group in ran.groupby(keys, sort=False):
        base_rows = group[group["is_baseline"]]
        if base_rows.empty:
            continue
        base = base_rows.iloc[0].to_dict()
        for impl, part in group[~group["is_baseline"]].groupby("implementation", sort=False):
            rows = part.to_dict("records")
            if len(rows) < 2:
                continue
            first = rows[0]
            curve = Curve(suite=first["suite_label"], pairing=first["pairing"], implementation=cast(str, impl),
                          baseline=base["implementation"], group=first["dataset_label"] +
                          (f" · {first['sweep_shared']}" if first["sweep_shared"] else ""),
                          metric=first["main_metric"], budget=first["eq_budget"], reference=first["eq_reference"],
                          tolerance=first["parity_tolerance"] if not pd.isna(first["parity_tolerance"]) else 0.0,
                          baseline_point=_point(base, base["eq_value"]),
                          points=sorted((_point(r, r["eq_value"]) for r in rows), key=lambda p: p.budget))
            out.append(read_curve(curve))
    return out


def as_metrics(found: list[Curve]) -> dict[str, float]:
    """The parent run's metrics: `speedup_equal_quality.<slug>` (+ `_ci_low`, `_ci_high`, `_ci_level`,
    and `_at_least` 1 where the ladder's first point already reaches: a lower bound) and
    `quality_at_equal_time.<slug>`."""
    out: dict[str, float] = {}
    for c in found:
        if c.speedup is not None:
            out[f"speedup_equal_quality.{c.slug}"] = c.speedup
            if c.at_least:
                out[f"speedup_equal_quality.{c.slug}_at_least"] = 1.0
            if c.level is not None:  # set with the interval's bounds (`read_curve`)
                out |= {f"speedup_equal_quality.{c.slug}_ci_low": cast(float, c.low),
                        f"speedup_equal_quality.{c.slug}_ci_high": cast(float, c.high),
                        f"speedup_equal_quality.{c.slug}_ci_level": c.level}
        if c.quality_at_equal_time is not None:
            out[f"quality_at_equal_time.{c.slug}"] = c.quality_at_equal_time
    return out


def lines(found: list[Curve]) -> list[str]:
    """One line per curve, for the description."""
    return [f"{c.pairing} · {c.implementation} vs {c.baseline} on {c.group}: {c.text()}" for c in found]


def exact_lines(cases: pd.DataFrame) -> list[str]:
    """Pairings whose equal quality is equal parameters (an exact solver), said once each."""
    if "eq_exact" not in cases:
        return []
    exact = cases.loc[cases["eq_exact"].astype(bool), ["pairing", "eq_exact"]].drop_duplicates()
    return [f"{r.pairing}: {r.eq_exact}" for r in exact.itertuples()]
