"""Fit time against rows as a power law, with the interval of what it predicts and a check of itself.

Per implementation, `log t = a + b log n` is fitted by least squares to the median fit time of
each size of the ladder (one value per size, each the median of its processes), on the
largest `TOP` sizes measured: below them the fixed costs of small data (thread start-up,
Python around the library) flatten the curve and bend the line.

- A predicted time has a prediction interval from the fit's residuals: on the log scale
  `ŷ ± t(df) · s · √(1 + 1/k + (x − x̄)² / Sxx)`, Student's t at `LEVEL` with k − 2 degrees of
  freedom, then exponentiated. It holds when the sizes' log times scatter normally about a
  straight line; it says nothing of a bend beyond the sizes measured, which is what the
  self-check is for. Two sizes give a line and no interval: nothing is predicted from them.
- The self-check: the largest size measured is predicted from the sizes below it alone (the
  same rule, `TOP` of them) and compared with what was measured there; the relative error
  (+0.07: predicted 7 % too slow) is what an extrapolation one step further has been off by.
- Two implementations' lines cross at `log n* = (a₂ − a₁) / (b₁ − b₂)`. The interval of that
  size is the range of rows where the two fitted lines are not told apart: where the
  difference of their means lies within t · its standard error (the fits taken as
  independent); it may be open on one side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The two-sided level of every interval of a fit.
LEVEL = 0.90
#: Sizes a fit takes, the largest ones.
TOP = 4


def _t(df: int, level: float = LEVEL) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, df))


@dataclass(frozen=True)
class PowerLaw:
    """`t = exp(a) · n^b`, fitted to `sizes` and `times`."""

    a: float
    b: float
    sizes: tuple[float, ...]
    times: tuple[float, ...]
    s: float  # residual standard deviation on the log scale (NaN below three sizes)
    x_mean: float
    sxx: float

    @property
    def df(self) -> int:
        return len(self.sizes) - 2

    @property
    def has_interval(self) -> bool:
        return self.df >= 1 and math.isfinite(self.s)

    def predict(self, rows: float) -> float:
        return math.exp(self.a + self.b * math.log(rows))

    def log_se(self, rows: float, new: bool) -> float:
        """Standard error on the log scale at `rows`: of one new measurement (`new`), or of the mean."""
        x = math.log(rows)
        return self.s * math.sqrt((1.0 if new else 0.0) + 1 / len(self.sizes) + (x - self.x_mean) ** 2 / self.sxx)

    def interval(self, rows: float, level: float = LEVEL) -> tuple[float, float] | None:
        """The prediction interval of one new measurement at `rows`; None without residuals."""
        if not self.has_interval:
            return None
        half = _t(self.df, level) * self.log_se(rows, new=True)
        centre = self.a + self.b * math.log(rows)
        return math.exp(centre - half), math.exp(centre + half)

    def exponent_interval(self, level: float = LEVEL) -> tuple[float, float] | None:
        if not self.has_interval:
            return None
        half = _t(self.df, level) * self.s / math.sqrt(self.sxx)
        return self.b - half, self.b + half

    def mean_se(self, rows: float) -> float:
        """Standard error of the fitted mean log time at `rows` (NaN without residuals)."""
        return self.log_se(rows, new=False) if self.has_interval else math.nan


def fit(sizes: list[float], times: list[float], top: int = TOP) -> PowerLaw | None:
    """The power law of the largest `top` sizes; None below two different sizes."""
    points = sorted((float(n), float(t)) for n, t in zip(sizes, times) if n > 0 and t > 0)[-top:]
    if len({n for n, _ in points}) < 2:
        return None
    x = np.log([n for n, _ in points])
    y = np.log([t for _, t in points])
    x_mean = float(x.mean())
    sxx = float(((x - x_mean) ** 2).sum())
    b = float(((x - x_mean) * (y - y.mean())).sum() / sxx)
    a = float(y.mean() - b * x_mean)
    residuals = y - (a + b * x)
    s = float(math.sqrt((residuals ** 2).sum() / (len(x) - 2))) if len(x) > 2 else math.nan
    return PowerLaw(a, b, tuple(n for n, _ in points), tuple(t for _, t in points), s, x_mean, sxx)


@dataclass(frozen=True)
class SelfCheck:
    """The largest size measured, predicted from the sizes below it."""

    rows: float
    measured_s: float
    predicted_s: float
    low_s: float | None
    high_s: float | None
    from_sizes: int

    @property
    def error(self) -> float:
        """(predicted − measured) / measured: + is a prediction too slow."""
        return self.predicted_s / self.measured_s - 1

    @property
    def covered(self) -> bool | None:
        if self.low_s is None or self.high_s is None:
            return None
        return self.low_s <= self.measured_s <= self.high_s


def self_check(sizes: list[float], times: list[float], top: int = TOP) -> SelfCheck | None:
    """None below three sizes (the sizes under the largest must make a line)."""
    points = sorted((float(n), float(t)) for n, t in zip(sizes, times) if n > 0 and t > 0)
    if len(points) < 3:
        return None
    (largest, measured), below = points[-1], points[:-1]
    law = fit([n for n, _ in below], [t for _, t in below], top)
    if law is None:
        return None
    found = law.interval(largest)
    return SelfCheck(largest, measured, law.predict(largest), found[0] if found else None,
                     found[1] if found else None, len(law.sizes))


@dataclass(frozen=True)
class Crossing:
    """Where two fitted lines cross, with the range of rows where they are not told apart."""

    rows: float
    low: float | None  # None: open on that side (within the range searched)
    high: float | None
    faster_above: str  # the one of the two that is faster above the crossing


def crossing(first: PowerLaw, second: PowerLaw, names: tuple[str, str], span: tuple[float, float],
             level: float = LEVEL) -> Crossing | None:
    """The crossing of two fits within `span` (rows), or None (parallel, or outside it)."""
    if abs(first.b - second.b) < 1e-9:
        return None
    x_star = (second.a - first.a) / (first.b - second.b)
    lo, hi = math.log(span[0]), math.log(span[1])
    if not lo <= x_star <= hi:
        return None
    faster_above = names[0] if first.b < second.b else names[1]
    low = high = None
    if first.has_interval and second.has_interval:
        t = _t(min(first.df, second.df), level)

        def apart(x: float) -> bool:
            gap = (first.a - second.a) + (first.b - second.b) * x
            se = math.hypot(first.mean_se(math.exp(x)), second.mean_se(math.exp(x)))
            return abs(gap) > t * se

        grid = np.linspace(lo, hi, 801)
        below = [x for x in grid if x <= x_star and apart(x)]
        above = [x for x in grid if x >= x_star and apart(x)]
        low = math.exp(max(below)) if below else None
        high = math.exp(min(above)) if above else None
    return Crossing(math.exp(x_star), low, high, faster_above)


def ratio_interval(numerator: PowerLaw, denominator: PowerLaw, rows: float,
                   level: float = LEVEL) -> tuple[float, float] | None:
    """Interval of one predicted time over another at `rows` (a predicted speed-up): the two
    prediction errors added on the log scale, Student's t at the fewer degrees of freedom."""
    if not (numerator.has_interval and denominator.has_interval):
        return None
    centre = math.log(numerator.predict(rows) / denominator.predict(rows))
    half = _t(min(numerator.df, denominator.df), level) * math.hypot(numerator.log_se(rows, True),
                                                                     denominator.log_se(rows, True))
    return math.exp(centre - half), math.exp(centre + half)
