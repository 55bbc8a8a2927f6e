"""The verdicts of `mlcompare compare`, by simulation with a random effect per process: how
often they call a change where there is none (one test, and a family of a hundred), whether
they find a real one at the default process count, and what they say when processes are
too few. The intervals' own coverage is checked in tests/measure/test_intervals.py."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from mlcompare.measure.stats import change_test, rank_test
from mlcompare.records import Status, StoredRun, StoredSuite
from mlcompare.report.suite_comparison.table import (
    FASTER,
    MIN_CHANGE,
    SAME,
    SLOWER,
    TOO_FEW,
    compare_suites,
    slower_than,
    timing,
    undecided_for_slower,
)

BETWEEN, WITHIN = 0.11, 0.07  # log-time spreads between and inside processes, as measured here


def processes(rng, count: int, median: float = 1.0, between: float = BETWEEN, within: float = WITHIN) -> list[float]:
    """One summary per process: the median of three repeats around the process's own effect."""
    effect = rng.normal(0, between, (count, 1))
    return list(np.exp(np.log(median) + np.median(effect + rng.normal(0, within, (count, 3)), axis=1)))


_ids = iter(range(10**6))


def stored(impl: str, fit: list[float], predict: list[float] | None = None) -> StoredRun:
    metrics = {"fit_time_s": statistics.median(fit), "accuracy": 0.9}
    history = {"fit_time_process_s": fit}
    if predict:
        metrics["predict_time_s"] = statistics.median(predict)
        history["predict_time_process_s"] = predict
    return StoredRun(run_id=f"case{next(_ids)}", name="c", status="FINISHED", start_time=0,
                     params={"pairing": "random_forest", "implementation": impl, "dataset": "classification",
                             "n_samples": "2500", "n_features": "20"},
                     metrics=metrics, tags={"case_status": Status.OK, "main_metric": "accuracy"}, history=history)


def suite(*cases: StoredRun) -> StoredSuite:
    run = StoredRun(run_id=f"suite{next(_ids)}", name="s", status="FINISHED", start_time=0,
                    params={"suite_name": "aa"}, tags={})
    return StoredSuite(run=run, experiment_name="aa", cases=list(cases))


def test_one_test_calls_no_change_a_change_no_more_often_than_its_level():
    """A/A, one case, six processes a side: called in at most 5 % of comparisons, as often
    slower as faster."""
    rng = np.random.default_rng(1)
    found = []
    for _ in range(3000):
        comparison = compare_suites(suite(stored("x", processes(rng, 6))), suite(stored("x", processes(rng, 6))))
        found.append(comparison.rows.iloc[0]["fit_verdict"])
    calls = found.count(SLOWER) + found.count(FASTER)
    assert calls / len(found) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / len(found))
    assert abs(found.count(SLOWER) - found.count(FASTER)) < 4 * math.sqrt(calls + 1)


def test_fifty_cases_nothing_changed_rarely_fail_the_gate_or_call_anything():
    """Fifty cases × (fit, predict), six processes a side, nothing changed: the chance of any
    call, and of the gate failing at 1.1 and at 1.0, is at most 5 % (the measured problem: 80-85 %
    of such comparisons called at least one case slower)."""
    rng = np.random.default_rng(2)
    any_call = gate = gate_at_one = 0
    runs = 150
    for _ in range(runs):
        def one() -> StoredSuite:
            return suite(*[stored(f"impl{i}", processes(rng, 6), processes(rng, 6, 0.1)) for i in range(50)])

        comparison = compare_suites(one(), one())
        any_call += comparison.family()["calls"] > 0
        gate += not slower_than(comparison, 1.1).empty
        gate_at_one += not slower_than(comparison, 1.0).empty
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
    assert any_call / runs <= bound and gate / runs <= bound and gate_at_one / runs <= bound


def _twelve(rng, count: int, slower: dict[int, float]) -> StoredSuite:
    return suite(*[stored(f"impl{i}", processes(rng, count, slower.get(i, 1.0)),
                          processes(rng, count, 0.1 * slower.get(i, 1.0))) for i in range(12)])


def test_one_real_slowdown_among_twelve_cases_is_found_at_the_default_processes():
    """One case of twelve 60 % slower in fit and predict (what one thread instead of two costs
    these fits here), six processes a side: called slower in most comparisons and failing
    --fail-slower 1.1 in nearly all; the eleven others stay quiet."""
    from mlcompare.config.experiment_schema import DEFAULT_MIN_ROUNDS as DEFAULT_ROUNDS  # the fewest a case gets

    rng = np.random.default_rng(3)
    found = gate = quiet = 0
    for _ in range(100):
        comparison = compare_suites(_twelve(rng, DEFAULT_ROUNDS, {}), _twelve(rng, DEFAULT_ROUNDS, {0: 1.6}))
        rows = comparison.rows.set_index("implementation")
        found += rows.loc["impl0", "fit_verdict"] == SLOWER
        gate += list(slower_than(comparison, 1.1)["implementation"]) == ["impl0"]
        quiet += (rows.drop("impl0")["fit_verdict"] == SAME).all()
    # measured with this seed: 82, 96 and 100 (a single change must clear Benjamini–Hochberg's
    # smallest thresholds: all six processes of B above all six of A, in fit and in predict)
    assert found >= 70 and gate >= 90 and quiet >= 95


def test_a_slowdown_of_every_case_is_found_in_most_of_them():
    """Every case 30 % slower (a slower machine, a library's regression), processes as spread
    as the noisiest cases here: most are called; fewer with the default smallest change (5 %),
    the price of not calling the machine's drift."""
    from mlcompare.config.experiment_schema import DEFAULT_MIN_ROUNDS as DEFAULT_ROUNDS  # the fewest a case gets

    rng = np.random.default_rng(4)
    called = called_any = 0
    for _ in range(50):
        a, b = _twelve(rng, DEFAULT_ROUNDS, {}), _twelve(rng, DEFAULT_ROUNDS, {i: 1.3 for i in range(12)})
        called += (compare_suites(a, b).rows["fit_verdict"] == SLOWER).sum()
        called_any += (compare_suites(a, b, min_change=1.0).rows["fit_verdict"] == SLOWER).sum()
    assert called_any / (50 * 12) >= 0.8  # measured: 0.875
    assert called / (50 * 12) >= 0.5  # measured: 0.64


def test_cases_that_moved_together_are_said_to_have_and_identical_suites_are_not():
    """Every case 15 % slower (the machine's drift between two suites, as bench/aa.py measured
    it here, or something every case shares): the comparison says the cases moved together.
    Identical suites: said about 1 % of the time (a sign test at 1 %)."""
    from mlcompare.report.suite_comparison.render import to_text, together_line

    rng = np.random.default_rng(5)
    said = sum(together_line(compare_suites(_twelve(rng, 6, {}), _twelve(rng, 6, {}))) is not None
               for _ in range(200))
    assert said <= 6  # expected 1.3 of 200 (24 ratios: 19 or more on one side)
    drifted = compare_suites(_twelve(rng, 6, {}), _twelve(rng, 6, {i: 1.15 for i in range(12)}))
    line = together_line(drifted)
    assert line is not None and line.startswith("The cases moved together: ") and " of 24 timing ratios above 1" in line
    assert line in to_text(drifted)
    faster = together_line(compare_suites(_twelve(rng, 6, {i: 1.15 for i in range(12)}), _twelve(rng, 6, {})))
    assert faster is not None and "ratios below 1" in faster


def test_the_ratio_is_of_the_medians_and_the_bounds_are_ratios_of_two_processes():
    a, b = [1.0, 1.2, 0.9, 1.1, 1.05], [2.1, 1.9, 2.4, 2.0, 2.2]
    out = timing(1.05, 2.1, a, b, 0.95)
    ratios = sorted(x / y for x in b for y in a)
    assert out["ratio"] == pytest.approx(2.0)
    assert out["low"] == pytest.approx(ratios[2]) and out["high"] == pytest.approx(ratios[22])
    assert out["level"] == pytest.approx(1 - 8 / 252)
    assert out["p"] == pytest.approx(2 / 252)  # every B process above every A process: the smallest p
    assert (out["a_processes"], out["b_processes"]) == (5, 5)


@pytest.mark.parametrize("a,b", [([1.0], [1.0, 2.0]), ([1.0, 2.0], [1.0]), ([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])])
def test_too_few_processes_get_no_verdict(a, b):
    """One process a side has no interval; three against three cannot reach p ≤ 0.05 (their
    smallest p is 0.1), however far apart: "too few processes", never a verdict."""
    out = timing(1.0, 2.0, a, b, 0.95)
    assert out["verdict"] == TOO_FEW and math.isnan(out["p"])


def test_the_gate_names_what_it_cannot_decide():
    comparison = compare_suites(suite(stored("x", [1.0]), stored("y", [1.0, 1.1, 0.9, 1.0, 1.05])),
                                suite(stored("x", [10.0]), stored("y", [1.0, 1.1, 0.9, 1.0, 1.05])))
    assert slower_than(comparison, 1.0).empty  # ten times slower, but one process a side proves nothing
    assert undecided_for_slower(comparison) == [
        "random_forest · x · classification 2.5k×20 (fit: 1 process in B against 1 in A)"]


def test_relative_to_a_shared_shift_no_case_is_called_and_one_that_moved_more_is():
    """Every case 15 % slower (the machine's drift, which the raw verdicts call in many cases):
    relative to the comparison's common shift the family calls anything in at most about 5 %
    of comparisons; one case 60 % slower on top of the drift is the one it names, in most."""
    from mlcompare.report.suite_comparison.render import together_line

    rng = np.random.default_rng(6)
    drift = {i: 1.15 for i in range(12)}
    raw = any_relative = 0
    for _ in range(100):
        comparison = compare_suites(_twelve(rng, 6, {}), _twelve(rng, 6, drift), min_change=1.0)
        raw += (comparison.rows["fit_verdict"] == SLOWER).sum()
        any_relative += bool(comparison.relative_calls())
    assert raw / (100 * 12) >= 0.08  # the drift alone: measured 0.135 of the any-change fit verdicts slower
    assert any_relative <= 9  # measured 0 of 100; at most 5 % expected
    named = 0
    for _ in range(50):
        comparison = compare_suites(_twelve(rng, 6, {}), _twelve(rng, 6, {**drift, 0: 1.15 * 1.6}))
        calls = comparison.relative_calls()
        named += bool(calls) and {case for case, *_ in calls} == {comparison.rows["case"][0]}
        line = together_line(comparison)
        assert line is not None and ("moved more than the rest" in line)
    assert named >= 30  # measured 36 of 50


#: Spreads of a steady case's processes (in bench/aa.py's suites 2 % at the 10th percentile, 4 %
#: the median case): tight enough that a machine's drift of a few per cent is beyond the intervals.
TIGHT = {"between": 0.015, "within": 0.01}


def _steady(rng, count: int, factor: float) -> StoredSuite:
    return suite(*[stored(f"impl{i}", processes(rng, 6, factor, **TIGHT), processes(rng, 6, 0.1 * factor, **TIGHT))
                   for i in range(count)])


def test_a_drift_of_the_whole_machine_under_the_smallest_change_is_not_called():
    """Identical code, B's whole suite 4 % slower (the machine between two suites, as bench/aa.py
    measured it here): any change at all (--min-change 1) is called in most cases, a change beyond
    the default 1.05 in at most 5 % of comparisons; 10 % slower is called in every case."""
    rng = np.random.default_rng(7)
    any_change = beyond = 0
    runs = 150
    for _ in range(runs):
        a, b = _steady(rng, 12, 1.0), _steady(rng, 12, 1.04)
        any_change += (compare_suites(a, b, min_change=1.0).rows["fit_verdict"] == SLOWER).sum()
        beyond += compare_suites(a, b).family()["calls"] > 0
    assert any_change / (runs * 12) >= 0.5  # measured: 0.93
    assert beyond / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)  # measured: 0
    slower = compare_suites(_steady(rng, 12, 1.0), _steady(rng, 12, 1.10))
    assert (slower.rows["fit_verdict"] == SLOWER).all() and slower.min_change == MIN_CHANGE == 1.05


@pytest.mark.parametrize("factor", [MIN_CHANGE, 1 / MIN_CHANGE])
def test_a_change_right_at_the_smallest_one_is_called_no_more_often_than_the_level(factor):
    """B exactly 1.05× (or 1/1.05×) A: the edge of the band, where the test's size is its level
    (half of it on that side: 2.1 % at six processes a side); no lower, or the band would be
    wider than it says."""
    rng = np.random.default_rng(8)
    runs = 1000
    calls = sum(compare_suites(suite(stored("x", processes(rng, 6, 1.0, **TIGHT))),
                               suite(stored("x", processes(rng, 6, factor, **TIGHT)))).family()["calls"]
                for _ in range(runs))
    assert 0.01 <= calls / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)  # measured: 0.018, 0.021


def test_the_change_test_at_factor_one_is_the_two_sided_rank_test():
    rng = np.random.default_rng(9)
    for _ in range(200):
        a, b = list(rng.lognormal(0, 0.1, 6)), list(rng.lognormal(0.05, 0.1, 6))
        p, slow = change_test(b, a, 1.0)
        assert p == pytest.approx(rank_test(b, a))
        assert slow == (rank_test(b, a, "greater") <= rank_test(b, a, "less"))
    b = [1.0, 1.01, 1.02, 0.99, 1.0, 1.03]
    assert change_test([t * 1.2 for t in b], b, 1.05)[1] and not change_test([t / 1.2 for t in b], b, 1.05)[1]
    assert change_test([t * 1.03 for t in b], b, 1.05)[0] == 1.0  # inside the band: no evidence either way
