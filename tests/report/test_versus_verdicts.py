"""The verdict of `mlcompare compare`: the test made from the interval of B/A (`measure.stats.ratio_interval`,
whose coverage tests/measure/test_intervals.py checks). Here: how often it calls a change
where there is none, whether it finds a real one, and what it says when repeats are too few,
by simulation under lognormal noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcompare.measure.stats import ratio_interval
from mlcompare.report.versus.table import FASTER, SAME, SLOWER, TOO_FEW, timing, verdict


def _verdicts(n: int, m: int, factor: float, confidence: float, sigma: float = 0.3, runs: int = 4000,
              seed: int = 1) -> tuple[list[str], float]:
    """Verdicts on `runs` simulated pairs: A's times lognormal(0, sigma), B's the same times `factor` slower."""
    rng = np.random.default_rng(seed)
    found, level = [], math.nan
    for _ in range(runs):
        a = np.exp(rng.normal(0, sigma, m))
        b = factor * np.exp(rng.normal(0, sigma, n))
        out = timing(float(np.median(a)), float(np.median(b)), list(a), list(b), confidence)
        found.append(out["verdict"])
        level = out["level"]
    return found, level


@pytest.mark.parametrize("n,m", [(5, 5), (4, 7), (10, 10)])
def test_no_change_is_called_a_change_no_more_often_than_the_level_allows(n, m):
    found, level = _verdicts(n, m, factor=1.0, confidence=0.95, runs=6000, seed=n)
    wrong = sum(v in (FASTER, SLOWER) for v in found) / len(found)
    assert level >= 0.95
    assert wrong < 1 - level + 4 * math.sqrt(level * (1 - level) / len(found))
    # and a slow-down is said as often as a speed-up: the test is two-sided
    assert abs(found.count(SLOWER) - found.count(FASTER)) < 4 * math.sqrt(found.count(SLOWER) + found.count(FASTER) + 1)


def test_a_clear_slow_down_is_found_with_five_repeats():
    found, _ = _verdicts(5, 5, factor=2.0, confidence=0.95, sigma=0.1, runs=500)
    assert found.count(SLOWER) > 0.99 * len(found)
    faster, _ = _verdicts(5, 5, factor=0.5, confidence=0.95, sigma=0.1, runs=500)
    assert faster.count(FASTER) > 0.99 * len(faster)


def test_three_against_three_cannot_reach_95_percent():
    a, b = [1.0, 1.01, 0.99], [2.0, 2.02, 1.98]  # twice as slow, every ratio above 1
    out = timing(1.0, 2.0, a, b, 0.95)
    assert out["level"] == pytest.approx(0.9) and out["low"] > 1.9 and out["verdict"] == TOO_FEW
    assert timing(1.0, 2.0, a, b, 0.9)["verdict"] == SLOWER  # at the 90 % it can reach, it is slower


def test_the_ratio_is_of_the_medians_and_the_bounds_are_ratios_of_two_repeats():
    a, b = [1.0, 1.2, 0.9, 1.1, 1.05], [2.1, 1.9, 2.4, 2.0, 2.2]
    out = timing(1.05, 2.1, a, b, 0.95)
    ratios = sorted(x / y for x in b for y in a)
    assert out["ratio"] == pytest.approx(2.0)
    assert out["low"] == pytest.approx(ratios[2]) and out["high"] == pytest.approx(ratios[22])
    assert out["level"] == pytest.approx(1 - 8 / 252) and out["verdict"] == SLOWER
    assert ratio_interval(b, a).low == pytest.approx(out["low"])  # the speed-up's own interval, the other way up


def test_an_interval_that_holds_1_is_no_change():
    assert verdict(0.8, 1.2, 0.97, 0.95) == SAME
    assert verdict(1.01, 1.2, 0.97, 0.95) == SLOWER and verdict(0.8, 0.99, 0.97, 0.95) == FASTER


@pytest.mark.parametrize("a,b", [([1.0], [1.0, 2.0]), ([1.0, 2.0], [1.0])])
def test_one_repeat_has_no_interval(a, b):
    assert timing(1.0, 1.5, a, b, 0.95)["verdict"] == TOO_FEW
