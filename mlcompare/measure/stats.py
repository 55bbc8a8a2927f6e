"""Statistics of repeated timings: the summary of one case's repeats, and intervals that
state the coverage they really have.

Both intervals are distribution-free. The median's is exact for i.i.d. repeats of any
continuous distribution; the ratio's (a speed-up) is exact when the two implementations'
times differ by a factor, i.e. have the same shape on a log scale (both lognormal with the
same spread, say). Each comes with `level`, the probability that an interval made this way
covers the true value at the number of repeats used: when the repeats cannot reach the
level asked for, the widest interval is returned with the lower level it has, never a
wider claim. `tests/measure/test_intervals.py` checks the stated levels by simulation.
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


def interval_metrics(prefix: str, times: list[float]) -> dict[str, float]:
    """`<prefix>_ci_low_s`, `_ci_high_s` and `_ci_level` of the median of `times` (none below two)."""
    found = median_interval(times)
    if found is None:
        return {}
    return {f"{prefix}_ci_low_s": found.low, f"{prefix}_ci_high_s": found.high, f"{prefix}_ci_level": found.level}


#: Above this many pairs the Mann–Whitney distribution is taken as normal (exact below).
_EXACT_PAIRS = 2500


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
    k = _deepest(lambda k: 1 - 2 * _binomial_tail(n, k), n // 2, confidence)
    return Interval(xs[k - 1], xs[n - k], 1 - 2 * _binomial_tail(n, k))


def ratio_interval(numerator: list[float], denominator: list[float], confidence: float = CONFIDENCE) -> Interval | None:
    """Interval of the factor between two samples of times, e.g. baseline / implementation (a speed-up).

    Hodges–Lehmann on log times: the m·n differences log(a_i) − log(b_j), sorted, and
    [d(k), d(mn+1−k)], which covers the true log-factor with probability
    1 − 2·P(U < k), U the Mann–Whitney statistic when both samples come from one
    distribution up to that factor. Exponentiated. None when a sample has under two values.
    """
    a, b = np.log(np.asarray(numerator, float)), np.log(np.asarray(denominator, float))
    m, n = len(a), len(b)
    if m < 2 or n < 2:
        return None
    diffs = np.sort(np.subtract.outer(a, b).ravel())
    k = _deepest(lambda k: _mann_whitney_coverage(m, n, k), m * n // 2, confidence)
    return Interval(float(np.exp(diffs[k - 1])), float(np.exp(diffs[m * n - k])),
                    _mann_whitney_coverage(m, n, k))


def _deepest(coverage, k_max: int, confidence: float) -> int:
    """The largest k in 1..k_max whose coverage still reaches `confidence` (coverage falls as k grows); 1 if none."""
    best = 1
    for k in range(2, k_max + 1):
        if coverage(k) < confidence:
            break
        best = k
    return best


def _binomial_tail(n: int, k: int) -> float:
    """P(Binomial(n, ½) < k)."""
    return sum(math.comb(n, i) for i in range(k)) / 2 ** n


def _mann_whitney_coverage(m: int, n: int, k: int) -> float:
    """1 − 2·P(U ≤ k − 1) for the Mann–Whitney U of samples of m and n under no difference."""
    if m * n <= _EXACT_PAIRS:
        counts = _u_counts(m, n)
        return 1 - 2 * sum(counts[:k]) / math.comb(m + n, m)
    mean, sd = m * n / 2, math.sqrt(m * n * (m + n + 1) / 12)
    z = (k - 0.5 - mean) / sd  # P(U <= k-1), continuity-corrected
    return 1 - 2 * 0.5 * math.erfc(-z / math.sqrt(2))


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
