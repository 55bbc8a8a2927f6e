"""The intervals state the coverage they really have: checked by simulation, lognormal noise.

For every repeat count a suite can use (two and up; one repeat has no interval), many
simulated suites draw repeats of two implementations with a known true speed-up; the share
of intervals that contain it must be within 3 points of the level each interval states.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcompare.measure.stats import interval_metrics, median_interval, ratio_interval

SIMULATIONS = 3000  # the binomial error of a 90 % share is then 0.55 points: 3 points is > 5 of them
SPREAD = 0.15  # sigma of the log of the times: a 15 % run-to-run noise


def _coverage(draw, truth, simulate) -> tuple[float, float]:
    rng = np.random.default_rng(7)
    hits, levels = 0, set()
    for _ in range(SIMULATIONS):
        found = simulate(*draw(rng))
        levels.add(round(found.level, 12))
        hits += found.low <= truth <= found.high
    assert len(levels) == 1  # the level depends on the counts only
    return hits / SIMULATIONS, levels.pop()


@pytest.mark.parametrize("m,n", [(2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (8, 8), (10, 10), (15, 15), (30, 30),
                                 (3, 5), (2, 7), (60, 60)])
def test_the_speedup_interval_covers_what_it_states(m, n):
    true_speedup = 3.0

    def draw(rng):
        baseline = true_speedup * np.exp(rng.normal(0, SPREAD, m))
        other = np.exp(rng.normal(0, SPREAD, n))
        return list(baseline), list(other)

    empirical, stated = _coverage(draw, true_speedup, ratio_interval)
    assert abs(empirical - stated) <= 0.03, (m, n, empirical, stated)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 10, 20, 50])
def test_the_median_interval_covers_what_it_states(n):
    def draw(rng):
        return (list(2.0 * np.exp(rng.normal(0, SPREAD, n))),)

    empirical, stated = _coverage(draw, 2.0, median_interval)  # the lognormal's median is exp(mu)
    assert abs(empirical - stated) <= 0.03, (n, empirical, stated)


def test_three_repeats_are_a_90_percent_speedup_interval_not_95():
    found = ratio_interval([3.0, 3.3, 2.9], [1.0, 1.1, 0.95])
    assert found.level == pytest.approx(0.9)  # 1 - 2/20: the best three against three can do
    assert (found.low, found.high) == pytest.approx((2.9 / 1.1, 3.3 / 0.95))  # the range of the ratios
    assert ratio_interval([3.0, 3.3], [1.0, 1.1]).level == pytest.approx(2 / 3)
    assert ratio_interval([3.0], [1.0, 1.1]) is None  # one repeat: a point, no interval


def test_enough_repeats_reach_95_percent_and_no_more_than_needed():
    rng = np.random.default_rng(0)
    for n in (6, 10, 40):
        found = ratio_interval(list(np.exp(rng.normal(0, 0.1, n))), list(np.exp(rng.normal(0, 0.1, n))))
        assert 0.95 <= found.level < 0.975  # the narrowest interval that still states 95 %
    assert median_interval([3.0, 1.0, 2.0]).level == pytest.approx(0.75)
    found = median_interval([float(v) for v in range(1, 11)])
    assert (found.low, found.high, found.level) == pytest.approx(
        (2.0, 9.0, 1 - 2 * 11 / 1024))  # ten repeats: 2nd and 9th order statistics


def test_large_samples_use_the_normal_approximation_consistently():
    a, b = list(np.linspace(1.0, 2.0, 51)), list(np.linspace(1.0, 2.0, 50))  # 2550 pairs: just past exact
    exact = ratio_interval(a[:-1], b)
    approx = ratio_interval(a, b)
    assert abs(exact.level - approx.level) < 0.01


def test_interval_metrics_names_and_none_for_one_repeat():
    found = interval_metrics("fit_time", [1.0, 2.0, 3.0])
    assert found == {"fit_time_ci_low_s": 1.0, "fit_time_ci_high_s": 3.0, "fit_time_ci_level": 0.75}
    assert interval_metrics("fit_time", [1.0]) == {}
    assert not math.isnan(median_interval([1.0, 1.0]).level)
