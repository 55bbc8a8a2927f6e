"""Break-even sizes: the crossing of two fit-time curves on log-log axes."""

from __future__ import annotations

import math

import pytest

from mlcompare.records import StoredRun, StoredSuite
from mlcompare.report import breakeven, results


def test_crossing_of_two_power_laws_is_exact():
    # baseline t = 1e-4·n (linear), other t = 1e-2·n^0.5: equal at n = 1e4
    sizes = [1e2, 1e3, 1e5, 1e6]
    base = [1e-4 * n for n in sizes]
    other = [1e-2 * n ** 0.5 for n in sizes]
    assert breakeven.crossing(sizes, base, other) == pytest.approx(1e4)


@pytest.mark.parametrize("speedups, expected", [
    ([2.0, 3.0, 4.0], None),                 # faster at every size: no crossing measured
    ([0.5, 0.8, 0.9], None),                 # slower at every size
    ([0.5, 2.0, 0.8], None),                 # slower again at the largest size
    ([0.5, 2.0, 0.5, 2.0], math.sqrt(1e4 * 1e5)),  # the last crossing counts: it stays faster after it
    ([0.5, 1.0, 3.0], 1e3),                  # equal at a measured size: that size
])
def test_crossing_cases(speedups, expected):
    sizes = [1e2, 1e3, 1e4, 1e5][:len(speedups)]
    base = [1.0] * len(speedups)
    other = [1.0 / s for s in speedups]
    found = breakeven.crossing(sizes, base, other)
    assert found == (None if expected is None else pytest.approx(expected))


def test_a_single_size_has_no_break_even():
    assert breakeven.crossing([1000.0], [1.0], [0.5]) is None


def _run(impl: str, n: int, fit: float, dataset: str = "classification", d: int = 8, status: str = "ok",
         shared: str = "", own: str = "") -> StoredRun:
    metrics = {"fit_time_s": fit, "accuracy": 0.9} if status == "ok" else {}
    sweep = {"sweep": ", ".join(p for p in (shared, own) if p)} if shared or own else {}
    sweep |= {k: v for k, v in (("sweep_shared", shared), ("sweep_own", own)) if v}
    return StoredRun(run_id=f"{impl}-{n}-{d}-{shared}-{own}", name=f"gb · {impl}", status="FINISHED", start_time=0,
                     params={"pairing": "gradient_boosting", "implementation": impl, "dataset": dataset,
                             "n_samples": str(n), "n_features": str(d), "device": "gpu" if "gpu" in impl else "cpu",
                             **sweep},
                     metrics=metrics, tags={"case_status": status, "baseline": "sklearn"})


def _suite(cases: list[StoredRun]) -> StoredSuite:
    parent = StoredRun(run_id="p" * 32, name="suite · s", status="FINISHED", start_time=0,
                       params={"suite_name": "s"}, tags={"mlcompare.kind": "suite"})
    return StoredSuite(parent, "s", cases)


def test_break_evens_are_named_per_pairing_and_implementation():
    cases = [_run("sklearn", 1000, 0.01), _run("xgboost_gpu", 1000, 0.1),
             _run("sklearn", 100000, 1.0), _run("xgboost_gpu", 100000, 0.1),
             _run("xgboost_cpu", 1000, 0.001), _run("xgboost_cpu", 100000, 0.1)]  # faster throughout
    found = breakeven.break_evens(results.case_frame([_suite(cases)]))
    assert [(b.metric, b.implementation) for b in found] == [
        ("break_even_rows.gradient_boosting.xgboost_gpu", "xgboost_gpu")]
    assert found[0].rows == pytest.approx(10_000)
    assert breakeven.as_metrics(found) == {"break_even_rows.gradient_boosting.xgboost_gpu": 10_000.0}


def test_several_sweeps_of_one_pairing_get_the_dataset_in_the_name_and_failures_are_left_out():
    cases = [_run("sklearn", 1000, 0.01, d=8), _run("xgboost_gpu", 1000, 0.1, d=8),
             _run("sklearn", 100000, 1.0, d=8), _run("xgboost_gpu", 100000, 0.1, d=8),
             _run("sklearn", 1000, 0.01, d=64), _run("xgboost_gpu", 1000, 0.1, d=64),
             _run("sklearn", 100000, 1.0, d=64), _run("xgboost_gpu", 100000, 0.0, d=64, status="failed")]
    found = breakeven.break_evens(results.case_frame([_suite(cases)]))
    assert [b.metric for b in found] == ["break_even_rows.gradient_boosting.xgboost_gpu.classification_8f"]


def test_each_sweep_point_has_its_own_curves_and_name():
    """A shared point is a comparison of its own; an implementation's own points are curves of
    their own against the same baseline. Several points are not several datasets."""
    fits = {  # (shared, implementation, own point): fit times at 1000 and 100000 rows
        ("max_depth=4", "sklearn", ""): (0.01, 1.0),
        ("max_depth=4", "xgboost_gpu", "max_bin=64"): (0.1, 0.1),  # crosses at 10,000
        ("max_depth=4", "xgboost_gpu", "max_bin=256"): (0.001, 0.1),  # faster throughout: none
        ("max_depth=8", "sklearn", ""): (0.02, 2.0),
        ("max_depth=8", "xgboost_gpu", "max_bin=64"): (0.001, 0.2),  # faster throughout: none
        ("max_depth=8", "xgboost_gpu", "max_bin=256"): (0.2, 0.02),  # 10× slower, then 100× faster
    }
    cases = [_run(impl, n, t, shared=shared, own=own)
             for (shared, impl, own), times in fits.items() for n, t in zip((1000, 100000), times)]
    found = breakeven.break_evens(results.case_frame([_suite(cases)]))
    assert [(b.metric, b.impl_label, b.sweep_shared) for b in found] == [
        ("break_even_rows.gradient_boosting.xgboost_gpu.max_depth_4_max_bin_64", "xgboost_gpu [max_bin=64]",
         "max_depth=4"),
        ("break_even_rows.gradient_boosting.xgboost_gpu.max_depth_8_max_bin_256", "xgboost_gpu [max_bin=256]",
         "max_depth=8")]
    assert found[0].rows == pytest.approx(10_000)
    assert found[1].rows == pytest.approx(1000 * 100 ** (1 / 3))  # a third of the way on log rows
