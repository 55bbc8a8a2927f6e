"""The intervals state the coverage they really have across runs: checked by simulation with a
random effect per process.

The model is the one measured on this machine: each process draws its own effect (memory
layout, frequency state, neighbours: a spread of 0.11 in log time) and its repeats add
their own noise (0.07) around it. An interval is given one summary per process (the median
of its repeats), as the suite does. For every process count a suite allows, many simulated
suites must cover the true value in a share within 2 points of the level each interval
states, and each mutation of the level formula (one-sided, a rank off by one, a normal
approximation without continuity correction) must miss by more.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcompare.measure import stats
from mlcompare.measure.stats import Interval, interval_metrics, median_interval, ratio_interval

SIMULATIONS = 4000  # the binomial error of a 95 % share is then 0.34 points: 2 points is about 6 of them
BETWEEN, WITHIN, REPEATS = 0.11, 0.07, 3  # log-time spreads between and inside processes
TOLERANCE = 0.02


def processes(rng: np.random.Generator, count: int, median: float, between: float = BETWEEN) -> list[float]:
    """One summary per process: the median of REPEATS repeats around the process's own effect."""
    effects = rng.normal(0, between, (count, 1))
    repeats = np.log(median) + effects + rng.normal(0, WITHIN, (count, REPEATS))
    return list(np.exp(np.median(repeats, axis=1)))


def coverage(make, count_a: int, count_b: int | None, truth: float, seed: int = 7) -> tuple[float, float]:
    """(the share of intervals covering `truth`, the level they state) over SIMULATIONS suites."""
    rng = np.random.default_rng(seed)
    hits, levels = 0, set()
    for _ in range(SIMULATIONS):
        if count_b is None:
            found = make(processes(rng, count_a, truth))
        else:
            found = make(processes(rng, count_a, truth * 2.0), processes(rng, count_b, 2.0))
        levels.add(round(found.level, 12))
        hits += found.low <= truth <= found.high
    assert len(levels) == 1  # the level depends on the counts only
    return hits / SIMULATIONS, levels.pop()


PROCESS_COUNTS = [2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 30]


@pytest.mark.parametrize("count", PROCESS_COUNTS)
def test_the_median_interval_over_processes_covers_what_it_states(count):
    empirical, stated = coverage(median_interval, count, None, truth=2.0, seed=count)
    assert abs(empirical - stated) <= TOLERANCE, (count, empirical, stated)


@pytest.mark.parametrize("m,n", [(2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (10, 10), (15, 15),
                                 (20, 20), (30, 30), (3, 5), (2, 7), (4, 9)])
def test_the_speedup_interval_over_processes_covers_what_it_states(m, n):
    empirical, stated = coverage(ratio_interval, m, n, truth=3.0, seed=m * 100 + n)
    assert abs(empirical - stated) <= TOLERANCE, (m, n, empirical, stated)


def test_repeats_pooled_across_processes_do_not_cover_what_they_would_state():
    """The calculation this replaced: six processes' three repeats each pooled as eighteen
    independent values states 99.9 % and covers far less, because the processes differ."""
    rng = np.random.default_rng(3)
    hits, level = 0, 0.0
    for _ in range(2000):
        pooled = []
        for effect in rng.normal(0, BETWEEN, 6):
            pooled += list(np.exp(np.log(2.0) + effect + rng.normal(0, WITHIN, REPEATS)))
        found = median_interval(pooled)
        hits += found.low <= 2.0 <= found.high
        level = found.level
    assert level > 0.95 and hits / 2000 < level - 0.10


# -- mutations of the level formula: each must fail the coverage check --------------------------

def _one_sided(values: list[float], confidence: float = stats.CONFIDENCE) -> Interval:
    """The median's interval with a one-sided level: 1 − P(Binomial < k) instead of 1 − 2·P."""
    xs, n = sorted(values), len(values)
    k = stats._deepest(lambda k: 1 - stats._binomial_tail(n, k), n // 2, confidence)
    return Interval(xs[k - 1], xs[n - k], 1 - stats._binomial_tail(n, k))


def _off_by_one(values: list[float], confidence: float = stats.CONFIDENCE) -> Interval:
    """The median's interval one rank too narrow on each side, stating the level of the right one."""
    xs, n = sorted(values), len(values)
    right = median_interval(values, confidence)
    k = next(k for k in range(1, n // 2 + 1) if xs[k - 1] == right.low)
    inner = min(k + 1, n // 2)
    return Interval(xs[inner - 1], xs[n - inner], right.level)


def _normal_without_correction(numerator: list[float], denominator: list[float],
                               confidence: float = stats.CONFIDENCE) -> Interval:
    """The ratio's interval with Mann–Whitney's law taken as normal and no continuity correction. It
    misses by 21 and 5 points at two and three processes a side, by under 1.4 from four on: the
    code uses the exact law at every count instead."""
    m, n = len(numerator), len(denominator)
    mean, sd = m * n / 2, math.sqrt(m * n * (m + n + 1) / 12)

    def level(k: int) -> float:
        return 1 - 2 * 0.5 * math.erfc(-((k - 1 - mean) / sd) / math.sqrt(2))

    k = stats._deepest(level, m * n // 2, confidence)
    diffs = np.sort(np.subtract.outer(np.log(numerator), np.log(denominator)).ravel())
    return Interval(float(np.exp(diffs[k - 1])), float(np.exp(diffs[m * n - k])), level(k))


@pytest.mark.parametrize("mutant,counts", [(_one_sided, (5, None)), (_one_sided, (8, None)),
                                           (_off_by_one, (10, None)), (_off_by_one, (20, None)),
                                           (_normal_without_correction, (2, 2)),
                                           (_normal_without_correction, (3, 3))])
def test_a_mutated_level_formula_fails_the_coverage_check(mutant, counts):
    m, n = counts
    empirical, stated = coverage(mutant, m, n, truth=2.0 if n is None else 3.0, seed=11)
    assert abs(empirical - stated) > TOLERANCE, (mutant.__name__, counts, empirical, stated)


# -- the exact distribution, against brute force ------------------------------------------------

@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (3, 3), (4, 5), (5, 5)])
def test_the_mann_whitney_law_is_exact(m, n):
    """Every way of ranking m values among m + n, counted: P(U ≤ u) as the enumeration gives it."""
    from itertools import combinations

    counts = [0] * (m * n + 1)
    for places in combinations(range(m + n), m):  # the ranks of the m values among all
        counts[sum(p - i for i, p in enumerate(places))] += 1
    total = math.comb(m + n, m)
    for u in range(m * n + 1):
        assert stats.mann_whitney_cdf(m, n, u) == pytest.approx(sum(counts[: u + 1]) / total)


def test_the_binomial_tail_is_exact():
    """P(Binomial(n, ½) < k), counted here in whole numbers: every outcome of n tosses enumerated
    for small n, and SciPy's law (which the suite's process no longer imports) for the rest."""
    from itertools import product

    from scipy.stats import binom

    for n in range(1, 11):
        heads = [sum(tosses) for tosses in product((0, 1), repeat=n)]
        for k in range(n + 2):
            assert stats._binomial_tail(n, k) == sum(h < k for h in heads) / 2 ** n
    for n in (20, 57, 200, 1000):
        for k in range(0, n + 2, max(1, n // 40)):
            assert stats._binomial_tail(n, k) == pytest.approx(binom.cdf(k - 1, n, 0.5), rel=1e-12, abs=1e-300)


def test_rank_test_p_values_hold_their_level_when_nothing_changed():
    """A/A over processes with a random effect: p ≤ 0.05 in at most 5 % of comparisons (exact)."""
    rng = np.random.default_rng(5)
    found = [stats.rank_test(processes(rng, 6, 1.0), processes(rng, 6, 1.0)) for _ in range(6000)]
    rate = sum(p <= 0.05 for p in found) / len(found)
    assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / len(found))
    assert min(found) == pytest.approx(stats.smallest_p(6, 6))  # 2 / 924: nothing smaller is possible


def test_benjamini_hochberg_holds_the_family_when_nothing_changed():
    """Fifty cases, fit and predict, six processes a side, nothing changed: the chance of any
    call at all is at most 5 % (unadjusted, it is nearly certain)."""
    rng = np.random.default_rng(9)
    any_call = any_raw = 0
    for _ in range(300):
        p = [stats.rank_test(processes(rng, 6, 1.0), processes(rng, 6, 1.0)) for _ in range(100)]
        any_call += min(stats.benjamini_hochberg(p)) <= 0.05
        any_raw += min(p) <= 0.05
    assert any_call / 300 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300)
    assert any_raw / 300 > 0.9


def test_benjamini_hochberg_adjusts_as_published():
    # p-values and their adjusted values, computed by hand: p(i)·N/i, then the running minimum from the top
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    assert stats.benjamini_hochberg(p) == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.5])


def test_three_against_three_are_a_90_percent_speedup_interval_not_95():
    found = ratio_interval([3.0, 3.3, 2.9], [1.0, 1.1, 0.95])
    assert found.level == pytest.approx(0.9)  # 1 - 2/20: the best three against three can do
    assert (found.low, found.high) == pytest.approx((2.9 / 1.1, 3.3 / 0.95))  # the range of the ratios
    assert ratio_interval([3.0, 3.3], [1.0, 1.1]).level == pytest.approx(2 / 3)
    assert ratio_interval([3.0], [1.0, 1.1]) is None  # one process: a point, no interval


def test_enough_processes_reach_95_percent_and_no_more_than_needed():
    rng = np.random.default_rng(0)
    for n in (6, 10, 40):
        found = ratio_interval(list(np.exp(rng.normal(0, 0.1, n))), list(np.exp(rng.normal(0, 0.1, n))))
        assert 0.95 <= found.level < 0.975  # the narrowest interval that still states 95 %
    assert median_interval([3.0, 1.0, 2.0]).level == pytest.approx(0.75)
    found = median_interval([float(v) for v in range(1, 11)])
    assert (found.low, found.high, found.level) == pytest.approx(
        (2.0, 9.0, 1 - 2 * 11 / 1024))  # ten processes: 2nd and 9th order statistics


def test_the_largest_process_count_is_exact_and_quick():
    """100 processes a side (the most `rounds` allows): the exact law, no approximation."""
    found = ratio_interval([float(v) for v in range(1, 101)], [float(v) for v in range(1, 101)])
    assert 0.95 <= found.level < 0.96


def test_interval_metrics_names_and_none_for_one_process():
    found = interval_metrics("fit_time", [1.0, 2.0, 3.0])
    assert found == {"fit_time_ci_low_s": 1.0, "fit_time_ci_high_s": 3.0, "fit_time_ci_level": 0.75}
    assert interval_metrics("fit_time", [1.0]) == {}
    assert not math.isnan(median_interval([1.0, 1.0]).level)
