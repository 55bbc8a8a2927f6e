"""The stopping rule: when a case has processes enough, and the level its intervals really have.

The coverage is simulated afresh here (another seed, another model of the noise than
`rule_levels` draws from: a random effect per process and noise inside it, several values
per process), so a rule level that claims more than the rule delivers fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlcompare.measure import stopping
from mlcompare.measure.stats import median_interval, ratio_interval
from mlcompare.measure.stopping import Stopping, cap_levels, rule_levels

RUNS = 2500


def test_a_case_stops_at_its_minimum_once_narrow_and_never_after_its_maximum():
    rule = Stopping(min_rounds=5, rounds=9, precision=0.05)
    steady = [1.00, 1.01, 0.99, 1.02, 1.00]
    assert rule.done(steady[:4]) is None  # under the minimum, however narrow
    assert rule.done(steady).startswith("stopped at 5 processes: fit interval ±1.5% ≤ ±5.0% asked")
    wide = [1.0, 1.3, 0.8, 1.2, 0.9]
    assert rule.done(wide) is None and rule.done(wide + [1.1, 0.95, 1.05]) is None  # nine can narrow it
    # at nine the interval is [x(2), x(8)]: 0.9 to 1.2 around 1.05
    assert rule.done(wide + [1.1, 0.95, 1.05, 1.15]).startswith("9 processes, the most: fit interval ±14.3%, "
                                                                 "asked ±5.0%")
    assert Stopping(5, 8, 0.0).done(steady) is None  # precision 0: never early
    assert Stopping(3, 3, 0.05).done([1.0, 2.0, 3.0]).startswith("3 processes: fit interval")


def test_a_wide_case_stops_where_no_more_processes_could_narrow_its_interval():
    """Up to eight processes the median's interval is their range, which more of them can only
    widen: a wide case stops at once unless its maximum reaches nine (or twelve, after nine)."""
    wide = [1.0, 1.3, 0.8, 1.2, 0.9, 1.1]
    assert Stopping(6, 8, 0.1).done(wide) == ("stopped at 6 processes: fit interval ±23.8%, wider than ±10.0% "
                                              "asked, and no count up to 8 narrows it")
    assert Stopping(6, 10, 0.1).done(wide) is None and Stopping(6, 10, 0.1).done(wide + [1.0, 0.95]) is None
    assert Stopping(6, 10, 0.1).done(wide + [1.0, 0.95, 1.25]).startswith("stopped at 9 processes")  # 10: k still 2
    assert Stopping(6, 12, 0.1).done(wide + [1.0, 0.95, 1.25]) is None  # twelve: k is 3
    assert [n for n in range(1, 13) if stopping.can_narrow(n, 12)] == list(range(1, 12))
    assert [n for n in range(1, 9) if stopping.can_narrow(n, 8)] == []
    # such a rule is a fixed count: its levels are that count's exact ones, with nothing simulated
    assert rule_levels(6, 8, 0.1) == (1.0, 1.0) and rule_levels(4, 5, 0.05) == (1.0, 1.0)
    # and what the processes after the sixth would have bought: an interval never narrower
    rng = np.random.default_rng(3)
    values = np.exp(0.1 * rng.standard_t(3, (2000, 8)))
    six = [median_interval(list(row[:6])) for row in values]
    eight = [median_interval(list(row)) for row in values]
    assert all(b.high - b.low >= a.high - a.low for a, b in zip(six, eight))


def test_the_fast_simulation_stops_where_the_rule_does():
    """`rule_levels` runs the rule on arrays; the suite runs `Stopping.done`: the same counts."""
    rng = np.random.default_rng(7)
    for rounds in (9, 12):
        values = np.exp(0.04 * rng.standard_normal((300, rounds)))
        counts = stopping._stop_counts(values, 5, rounds, 0.05)
        rule = Stopping(5, rounds, 0.05)
        expected = [next(n for n in range(5, rounds + 1) if rule.done(list(row[:n]))) for row in values]
        assert list(counts) == expected
        assert 5 in counts and rounds in counts  # both ends reached: the comparison says something


def _simulated(rule: Stopping, between: float, inside: float, values: int, seed: int) -> tuple[float, float, float]:
    """(median interval coverage, speed-up interval coverage, the mean level a fixed number of
    processes would state) of cases run under `rule`: each process a random effect and `values`
    draws inside it, its summary their median."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0, between, (RUNS, rule.rounds))
    inner = np.median(rng.normal(0, inside, (RUNS, rule.rounds, values)), axis=2)
    summaries = np.exp(effects + inner)
    true = np.median(np.exp(rng.normal(0, between, 400_000) +
                            np.median(rng.normal(0, inside, (400_000, values)), axis=1)))
    counts = [next(n for n in range(rule.min_rounds, rule.rounds + 1) if rule.done(list(row[:n])))
              for row in summaries]
    medians = [median_interval(list(row[:n])) for row, n in zip(summaries, counts)]
    half = RUNS // 2
    ratios = [ratio_interval(list(summaries[i, :counts[i]]), list(summaries[half + i, :counts[half + i]]))
              for i in range(half)]
    covered = np.mean([m.low <= true <= m.high for m in medians])
    ratio_covered = np.mean([r.low <= 1.0 <= r.high for r in ratios])
    return float(covered), float(ratio_covered), float(np.mean([m.level for m in medians]))


@pytest.mark.parametrize("rule", [Stopping(5, 9, 0.05), Stopping(6, 12, 0.1), Stopping(6, 10, 0.03)],
                         ids=lambda r: f"{r.min_rounds}-{r.rounds}-processes-at-{r.precision}")
def test_under_the_rule_an_interval_covers_as_often_as_it_states(rule):
    """At spreads below, at and above the precision asked, one value a process and five: the
    share of covering intervals is at least the level the rule states (two points of simulation
    error)."""
    median_level, ratio_level = rule_levels(rule.min_rounds, rule.rounds, rule.precision)
    for k, (spread, values) in enumerate([(0.2, 1), (0.8, 1), (1.0, 5), (3.0, 1)]):
        between = spread * rule.precision
        covered, ratio_covered, _ = _simulated(rule, between, 0.6 * between, values, seed=100 + k)
        assert covered >= median_level - 0.02, (spread, covered, median_level)
        assert ratio_covered >= ratio_level - 0.02, (spread, ratio_covered, ratio_level)


def test_the_levels_of_a_fixed_count_would_claim_too_much_under_the_rule():
    """Why the rule's own level is stated: where the processes spread about as much as the
    precision asked, cases stopped early cover less often than their count's level says."""
    rule = Stopping(5, 9, 0.05)
    covered, _, fixed_level = _simulated(rule, 0.05, 0.03, 1, seed=7)
    assert fixed_level - covered > 0.02
    assert covered >= rule_levels(5, 9, 0.05)[0] - 0.02


def test_a_fixed_number_of_processes_keeps_its_exact_levels_and_capped_ones_never_rise():
    assert rule_levels(6, 6, 0.05) == (1.0, 1.0) and rule_levels(5, 9, 0.0) == (1.0, 1.0)
    rule = Stopping(5, 9, 0.05)
    median_level, ratio_level = rule_levels(5, 9, 0.05)
    metrics = {"fit_time_ci_level": 0.992, "predict_time_ci_level": 0.5, "speedup_fit_ci_level": 0.99,
               "fit_time_s": 2.0}
    cap_levels(metrics, rule)
    assert metrics == {"fit_time_ci_level": median_level, "predict_time_ci_level": 0.5,
                       "speedup_fit_ci_level": ratio_level, "fit_time_s": 2.0}
