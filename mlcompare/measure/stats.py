"""Statistics of repeated timings: the summary of one case's repeats and the intervals.

Every interval here returns the coverage it really has at the number of repeats used,
beside its bounds, so that nothing is logged as "95 %" that is not.
"""

from __future__ import annotations

import math
import statistics

import numpy as np


def summarise(times: list[float]) -> dict[str, float]:
    """Median (the headline figure), minimum, interquartile range and coefficient of variation."""
    q1, q3 = np.percentile(times, [25, 75])
    mean = statistics.fmean(times)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "iqr": float(q3 - q1),
            "cv": statistics.stdev(times) / mean if len(times) > 1 and mean > 0 else 0.0}


def bootstrap_ratio_ci(numerator: list[float], denominator: list[float], confidence: float = 0.95,
                       resamples: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(numerator) / median(denominator).

    Both samples are resampled independently (the two implementations' repeats are not
    paired). With a handful of repeats the interval is coarse, and says so by its width.
    """
    rng = np.random.default_rng(seed)
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    num_medians = np.median(rng.choice(num, size=(resamples, num.size)), axis=1)
    den_medians = np.median(rng.choice(den, size=(resamples, den.size)), axis=1)
    ratios = num_medians / den_medians
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def median_ci(values: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """A distribution-free confidence interval of the median from the order statistics.

    Returns (low, high, coverage). The interval [x(k), x(n+1-k)] covers the true median with
    probability 1 - 2·P(Binomial(n, ½) < k); k is the largest index reaching `confidence`.
    Below six repeats no interval reaches 95 %, so the range of the repeats is returned
    with the coverage it does have (75 % for three); a single repeat has no interval.
    """
    xs = sorted(values)
    n = len(xs)
    if n < 2:
        return math.nan, math.nan, math.nan
    best_k, best_cover = 1, _coverage(n, 1)
    for k in range(2, n // 2 + 1):
        cover = _coverage(n, k)
        if cover < confidence:
            break
        best_k, best_cover = k, cover
    return xs[best_k - 1], xs[n - best_k], best_cover


def _coverage(n: int, k: int) -> float:
    tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
    return 1 - 2 * tail
