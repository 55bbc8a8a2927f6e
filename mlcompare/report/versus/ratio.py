"""The factor between two samples of times: an exact interval from the Mann–Whitney distribution.

Model: log times of B are log times of A shifted by log(factor) (a shift model on logs,
i.e. multiplicative noise of any shape, the same in both). The interval is the
Hodges–Lehmann one: among the n·m ratios b_i / a_j, sorted, [r(k), r(nm+1-k)] covers the
factor with probability 1 - 2·P(U < k), U the Mann–Whitney count under no shift. That
probability is exact at any sample size (no normal approximation below `EXACT_LIMIT`
pairs), so the level returned is the one the interval really has; with few repeats the
asked-for level may be out of reach (3 against 3 reach 90 % at most: the widest interval,
min to max of the ratios, misses with probability 2/C(6,3) = 0.1), and the best reachable
is returned with its level.

`ratio_interval` has the signature of `mlcompare.measure.stats.ratio_interval` (issue 14),
which replaces it once it lands.
"""

from __future__ import annotations

import functools
import math
import statistics
from typing import NamedTuple

import numpy as np

#: Above this many pairs (n·m) the null distribution is taken as normal (ties ignored).
EXACT_LIMIT = 10_000


class Interval(NamedTuple):
    """[low, high] with the coverage it really has (`level`, 0.968 = 96.8 %)."""

    low: float
    high: float
    level: float


def ratio_interval(numerator: list[float], denominator: list[float], confidence: float = 0.95) -> Interval | None:
    """An interval of the factor numerator / denominator (e.g. B's fit times over A's).

    The narrowest interval of level >= `confidence`; when none reaches it (too few
    repeats), the widest there is, with the lower level it has. None with fewer than two
    values on either side, or a non-positive time.
    """
    num, den = _logs(numerator), _logs(denominator)
    if num is None or den is None:
        return None
    n, m = len(num), len(den)
    diffs = np.sort(np.subtract.outer(num, den).ravel())
    k, level = _rank(n, m, confidence)
    return Interval(float(np.exp(diffs[k - 1])), float(np.exp(diffs[n * m - k])), level)


def shift_estimate(numerator: list[float], denominator: list[float]) -> float:
    """The Hodges–Lehmann estimate of the factor: the median of every ratio b_i / a_j."""
    num, den = _logs(numerator), _logs(denominator)
    if num is None or den is None:
        return math.nan
    return float(np.exp(np.median(np.subtract.outer(num, den))))


def _logs(values: list[float]) -> np.ndarray | None:
    array = np.asarray(values, dtype=float)
    if array.size < 2 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        return None
    return np.log(array)


def _rank(n: int, m: int, confidence: float) -> tuple[int, float]:
    """(k, coverage of [d(k), d(nm+1-k)]): the largest k whose coverage reaches `confidence`, else k = 1."""
    total = n * m
    if total > EXACT_LIMIT:
        return _normal_rank(n, m, confidence)
    counts = _null_counts(n, m)
    orderings = math.comb(n + m, n)
    best_k, best_level = 1, 1 - 2 * counts[0] / orderings
    below = counts[0]  # orderings with U < k
    for k in range(2, total // 2 + 1):
        below += counts[k - 1]
        level = 1 - 2 * below / orderings
        if level < confidence:
            break
        best_k, best_level = k, level
    return best_k, best_level


def _normal_rank(n: int, m: int, confidence: float) -> tuple[int, float]:
    mean, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
    z = statistics.NormalDist().inv_cdf((1 + confidence) / 2)
    k = max(1, math.floor(mean - z * sd + 0.5))
    level = 1 - 2 * statistics.NormalDist(mean, sd).cdf(k - 0.5)
    return k, level


@functools.lru_cache(maxsize=128)
def _null_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) orderings of two untied samples give U = 0, 1, ..., n·m.

    These are the coefficients of the Gaussian binomial [n+m choose n](q), built as the
    product over i = 1..n of (1 - q^(m+i)) / (1 - q^i); each partial product is itself a
    polynomial ([m+i choose i](q)), so the divisions are exact.
    """
    coeffs = [1]
    for i in range(1, n + 1):
        grown = coeffs + [0] * (m + i)
        for u, c in enumerate(coeffs):  # times (1 - q^(m+i))
            grown[u + m + i] -= c
        for u in range(i, len(grown)):  # divided by (1 - q^i)
            grown[u] += grown[u - i]
        coeffs = grown[: i * m + 1]
    return tuple(coeffs)
