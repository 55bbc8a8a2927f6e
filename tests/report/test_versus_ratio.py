"""The interval of B/A from two samples of times: its exact levels, and its coverage proved by simulation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mlcompare.report.versus.ratio import EXACT_LIMIT, _null_counts, _rank, ratio_interval, shift_estimate
from mlcompare.report.versus.table import FASTER, SAME, SLOWER, TOO_FEW, verdict


@pytest.mark.parametrize("n,m", [(1, 1), (2, 3), (3, 3), (4, 2), (5, 5)])
def test_the_null_distribution_is_the_count_over_every_ordering(n, m):
    """Against brute force: every way to place n values of B among n+m, U = pairs with b > a."""
    counts = [0] * (n * m + 1)
    for b_positions in itertools.combinations(range(n + m), n):
        u = sum(sum(1 for a in range(n + m) if a not in b_positions and a < b) for b in b_positions)
        counts[u] += 1
    assert list(_null_counts(n, m)) == counts
    assert sum(counts) == math.comb(n + m, n)


@pytest.mark.parametrize("n,m,confidence,level", [
    (3, 3, 0.95, 0.9),  # the widest interval, min to max of the 9 ratios: misses with probability 2/20
    (3, 3, 0.9, 0.9),
    (4, 4, 0.95, 1 - 2 / 70),
    (5, 5, 0.95, 1 - 8 / 252),  # [r(3), r(23)]: P(U <= 2) = 4/252 on each side
    (10, 10, 0.95, None),  # the textbook critical value: U <= 23 rejects at 5 %, so k = 24
])
def test_the_level_is_the_exact_one_at_that_sample_size(n, m, confidence, level):
    k, got = _rank(n, m, confidence)
    if level is not None:
        assert got == pytest.approx(level)
    else:
        assert k == 24 and got >= confidence
    if got >= confidence:  # the narrowest such: one step narrower falls below the level
        below = sum(_null_counts(n, m)[:k + 1]) / math.comb(n + m, n)
        assert 1 - 2 * below < confidence


def _simulate(n: int, m: int, factor: float, confidence: float, sigma: float = 0.3, runs: int = 4000, seed: int = 1):
    """Times of A lognormal(0, sigma), of B the same times `factor` slower: coverage and verdicts."""
    rng = np.random.default_rng(seed)
    covered, verdicts = 0, []
    level = None
    for _ in range(runs):
        a = np.exp(rng.normal(0, sigma, m))
        b = factor * np.exp(rng.normal(0, sigma, n))
        interval = ratio_interval(list(b), list(a), confidence)
        level = interval.level
        covered += interval.low <= factor <= interval.high
        verdicts.append(verdict(interval.low, interval.high, interval.level, min(confidence, interval.level)))
    return covered / runs, level, verdicts


@pytest.mark.parametrize("n,m,confidence", [(3, 3, 0.9), (5, 5, 0.95), (4, 7, 0.95), (8, 8, 0.99)])
def test_coverage_under_lognormal_noise_is_the_stated_level(n, m, confidence):
    coverage, level, _ = _simulate(n, m, factor=1.7, confidence=confidence)
    se = math.sqrt(level * (1 - level) / 4000)
    assert abs(coverage - level) < 4 * se, (coverage, level)


def test_no_change_is_called_a_change_no_more_often_than_the_level_allows():
    _, level, verdicts = _simulate(5, 5, factor=1.0, confidence=0.95, runs=6000, seed=2)
    wrong = sum(v in (FASTER, SLOWER) for v in verdicts) / len(verdicts)
    se = math.sqrt((1 - level) * level / 6000)
    assert wrong < 1 - level + 4 * se
    assert verdicts.count(SAME) > 0.9 * len(verdicts)


def test_a_clear_slow_down_is_found_with_five_repeats():
    _, _, verdicts = _simulate(5, 5, factor=2.0, confidence=0.95, sigma=0.1, runs=500)
    assert verdicts.count(SLOWER) > 0.99 * len(verdicts)


def test_three_against_three_cannot_reach_95_percent():
    a, b = [1.0, 1.01, 0.99], [2.0, 2.02, 1.98]  # twice as slow, every ratio above 1
    interval = ratio_interval(b, a, 0.95)
    assert interval.level == pytest.approx(0.9) and interval.low > 1.9
    assert verdict(interval.low, interval.high, interval.level, 0.95) == TOO_FEW
    assert verdict(interval.low, interval.high, interval.level, 0.9) == SLOWER


def test_the_bounds_are_ratios_of_one_repeat_of_each():
    a, b = [1.0, 1.2, 0.9, 1.1, 1.05], [2.1, 1.9, 2.4, 2.0, 2.2]
    interval = ratio_interval(b, a, 0.95)
    ratios = sorted(x / y for x in b for y in a)
    assert interval.low == pytest.approx(ratios[2]) and interval.high == pytest.approx(ratios[22])
    assert shift_estimate(b, a) == pytest.approx(float(np.median(ratios)))


def test_an_exact_factor_is_estimated_exactly():
    a = [0.5, 0.7, 0.6, 0.55]
    assert shift_estimate([3 * t for t in a], a) == pytest.approx(3.0)


def test_large_samples_use_the_normal_distribution_and_keep_the_level():
    n = m = int(math.sqrt(EXACT_LIMIT)) + 10
    k, level = _rank(n, m, 0.95)
    assert 0.945 < level < 0.96 and 1 < k < n * m / 2


@pytest.mark.parametrize("a,b", [([1.0], [1.0, 2.0]), ([1.0, 2.0], []), ([1.0, 0.0], [1.0, 2.0]),
                                 ([1.0, math.nan], [1.0, 2.0])])
def test_no_interval_without_two_positive_times_a_side(a, b):
    assert ratio_interval(b, a) is None
