"""Statistics of repeated timings: summaries, and intervals and tests that state the coverage
they really have across runs.

The unit is the process. Repeats inside one process share its memory layout, hash seeds,
CPU frequency and neighbours; the next run gets another draw of all of those, and its
times differ by more than one process's repeats do (measured here: a spread of log fit
time of 0.06-0.08 within a process, 0.11-0.12 between processes). So every interval and
test takes one summary per process (the median of its repeats) and treats the processes
as the independent draws they are, as pyperf (worker processes) and asv (interleaved
processes) do.

Both intervals are distribution-free and exact: the median's for independent processes of
any continuous distribution, the ratio's (a speed-up, B over A) when the two sides'
process summaries differ by a factor, i.e. have the same shape on a log scale. Each comes
with `level`, the probability that an interval made this way covers the true value at the
number of processes used: when they cannot reach the level asked for, the widest interval
is returned with the lower level it has, never a wider claim. Benjamini–Hochberg's adjustment
is SciPy's (`false_discovery_control`). The binomial law of the median's interval is counted
here in whole numbers (a suite's process counts are small): the suite's own process takes these
intervals between its cases, where nothing else needs SciPy's statistics, whose import would
cost it half a second there.
The Mann-Whitney law is computed here, exactly, at every process count a suite allows (no
normal approximation, no continuity correction), because SciPy exposes its exact law only
through `mannwhitneyu`'s p-values, and the intervals need its quantiles. `tests/measure/test_intervals.py` checks the
stated levels by simulation, with a random effect per process.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: The level every interval is asked for; what the repeats allow may be less (see `level`).
CONFIDENCE = 0.95


def summarise(times: list[float]) -> dict[str, float]:
    """Median (the headline figure), minimum, interquartile range and coefficient of variation."""
    q1, q3 = np.percentile(times, [25, 75])
    mean = statistics.fmean(times)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "iqr": float(q3 - q1),
            "cv": statistics.stdev(times) / mean if len(times) > 1 and mean > 0 else 0.0}


def interval_metrics(prefix: str, process_values: list[float]) -> dict[str, float]:
    """`<prefix>_ci_low_s`, `_ci_high_s` and `_ci_level` of the median of one value per
    process (none below two processes: one process has a range, not a level)."""
    found = median_interval(process_values)
    if found is None:
        return {}
    return {f"{prefix}_ci_low_s": found.low, f"{prefix}_ci_high_s": found.high, f"{prefix}_ci_level": found.level}


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float  # the probability that such an interval covers the true value


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> Interval | None:
    """The median's interval from the order statistics: [x(k), x(n+1-k)].

    It covers the true median with probability 1 - 2·P(Binomial(n, ½) < k) for i.i.d.
    repeats of any continuous distribution; k is the largest that reaches `confidence`
    (the narrowest such interval), else 1 (the range of the repeats, 75 % for three).
    None below two repeats.
    """
    xs = sorted(values)
    n = len(xs)
    if n < 2:
        return None
    k, level = _median_rank(n, confidence)
    return Interval(xs[k - 1], xs[n - k], level)


@lru_cache(maxsize=1024)
def _median_rank(n: int, confidence: float) -> tuple[int, float]:
    """(k, the level of [x(k), x(n+1-k)]) for n values: it depends on the counts only."""
    k = _deepest(lambda k: 1 - 2 * _binomial_tail(n, k), n // 2, confidence)
    return k, 1 - 2 * _binomial_tail(n, k)


@lru_cache(maxsize=1024)
def _ratio_rank(m: int, n: int, confidence: float) -> tuple[int, float]:
    """(k, the level of [d(k), d(mn+1-k)]) for m and n values: it depends on the counts only."""
    k = _deepest(lambda k: _mann_whitney_coverage(m, n, k), m * n // 2, confidence)
    return k, _mann_whitney_coverage(m, n, k)


def ratio_interval(numerator: list[float], denominator: list[float], confidence: float = CONFIDENCE) -> Interval | None:
    """Interval of the factor between two samples of times, e.g. baseline / implementation (a speed-up).

    Hodges–Lehmann on log times: the m·n differences log(a_i) − log(b_j), sorted, and
    [d(k), d(mn+1−k)], which covers the true log-factor with probability
    1 − 2·P(U < k), U the Mann–Whitney statistic when both samples come from one
    distribution up to that factor. Exponentiated. None when a sample has under two values.
    Give it one summary per process: repeats of one process are not independent draws.
    """
    a, b = np.log(np.asarray(numerator, float)), np.log(np.asarray(denominator, float))
    m, n = len(a), len(b)
    if m < 2 or n < 2:
        return None
    diffs = np.sort(np.subtract.outer(a, b).ravel())
    k, level = _ratio_rank(m, n, confidence)
    return Interval(float(np.exp(diffs[k - 1])), float(np.exp(diffs[m * n - k])), level)


def _deepest(coverage, k_max: int, confidence: float) -> int:
    """The largest k in 1..k_max whose coverage still reaches `confidence` (coverage falls as k grows); 1 if none."""
    best = 1
    for k in range(2, k_max + 1):
        if coverage(k) < confidence:
            break
        best = k
    return best


@lru_cache(maxsize=4096)
def _binomial_tail(n: int, k: int) -> float:
    """P(Binomial(n, ½) < k): the ways of fewer than k heads in n tosses over all 2ⁿ, exactly,
    rounded once (Python's division of whole numbers)."""
    return sum(math.comb(n, i) for i in range(max(0, min(k, n + 1)))) / 2 ** n


def _mann_whitney_coverage(m: int, n: int, k: int) -> float:
    """1 − 2·P(U ≤ k − 1) for the Mann–Whitney U of samples of m and n under no difference."""
    return 1 - 2 * mann_whitney_cdf(m, n, k - 1)


def mann_whitney_cdf(m: int, n: int, u: float) -> float:
    """P(U ≤ u) for the Mann–Whitney U of samples of m and n from one continuous distribution, exact."""
    if u < 0:
        return 0.0
    return _u_cumulative(m, n)[min(int(math.floor(u)), m * n)]


@lru_cache(maxsize=256)
def _u_cumulative(m: int, n: int) -> tuple[float, ...]:
    """P(U ≤ u) for u = 0, 1, ..., m·n."""
    total, running, out = math.comb(m + n, m), 0, []
    for count in _u_counts(m, n):
        running += count
        out.append(running / total)
    return tuple(out)


def mann_whitney_u(a: list[float], b: list[float]) -> float:
    """U: the pairs (a_i, b_j) with a_i > b_j, ties counted a half."""
    x, y = np.asarray(a, float), np.asarray(b, float)
    diff = np.subtract.outer(x, y)
    return float((diff > 0).sum() + 0.5 * (diff == 0).sum())


def rank_test(a: list[float], b: list[float], alternative: str = "two-sided") -> float:
    """The exact Mann–Whitney p-value of "a and b come from one distribution" against `a` larger
    ("greater"), smaller ("less") or either ("two-sided"); 1.0 below one value a side."""
    m, n = len(a), len(b)
    if m < 1 or n < 1:
        return 1.0
    u = mann_whitney_u(a, b)
    greater = 1 - mann_whitney_cdf(m, n, math.ceil(u) - 1)  # P(U ≥ u), by the symmetry of U
    less = mann_whitney_cdf(m, n, math.floor(u))  # P(U ≤ u)
    if alternative == "greater":
        return min(1.0, greater)
    if alternative == "less":
        return min(1.0, less)
    return min(1.0, 2 * min(greater, less))


def change_test(b: list[float], a: list[float], factor: float = 1.0) -> tuple[float, bool]:
    """The exact test of "B is within `factor` of A" (B's times at most `factor` × A's and at
    least A's ÷ `factor`) against a change beyond it either way: (the two-sided p-value, whether
    B lies on the slow side). Each side is `rank_test` of B's values moved to the band's edge;
    where B's distribution is A's scaled by any factor inside the band, p ≤ α has a chance of
    at most α. At `factor` 1 it is `rank_test`'s two-sided test of no change at all."""
    slow = rank_test([t / factor for t in b], a, "greater")
    fast = rank_test([t * factor for t in b], a, "less")
    return min(1.0, 2 * min(slow, fast)), slow <= fast


def smallest_p(m: int, n: int, alternative: str = "two-sided") -> float:
    """The smallest p-value `rank_test` can give with m and n processes (all of one side above the other)."""
    one = 1 / math.comb(m + n, m) if m and n else 1.0
    return min(1.0, one if alternative != "two-sided" else 2 * one)


def benjamini_hochberg(pvalues: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values: calling every test whose adjusted p is at most q keeps
    the expected share of false calls among the calls at most q (and, when nothing changed at
    all, the chance of any call at most q)."""
    if not pvalues:
        return []
    from scipy.stats import false_discovery_control

    return [float(p) for p in false_discovery_control(pvalues, method="bh")]


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many orderings of m and n values give U = 0, 1, ..., m·n: the coefficients of the
    Gaussian binomial [m+n choose m]_q, built factor by factor."""
    poly = [1]
    for i in range(1, m + 1):
        grown = poly + [0] * (n + i)
        for power, c in enumerate(poly):  # × (1 − q^(n+i))
            grown[power + n + i] -= c
        for power in range(i, len(grown)):  # ÷ (1 − q^i)
            grown[power] += grown[power - i]
        poly = grown[: len(grown) - i]
    return tuple(poly)
