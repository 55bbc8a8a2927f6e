"""Matching two suites' cases and judging each pair: the rules, on stored runs written out here.

These check the matching and the arithmetic of the verdicts and gates on plain stored
values; tests/scenarios/test_compare_suites.py runs the same code on real suites.
"""

from __future__ import annotations

import statistics

import pytest

from mlcompare.records import Status, StoredRun, StoredSuite
from mlcompare.report.suite_comparison.table import (
    FASTER,
    SAME,
    SLOWER,
    UNTESTED,
    WORSE,
    compare_suites,
    slower_than,
    worse_than,
)

_ids = iter(range(10**6))


def case(impl: str = "sklearn", fit: list[float] | None = None, accuracy: float = 0.9, status: str = Status.OK,
         **params: str) -> StoredRun:
    fit = fit or [1.0, 1.1, 0.9, 1.05, 0.95]
    p = {"pairing": "random_forest", "implementation": impl, "device": "cpu", "dataset": "classification",
         "n_samples": "2500", "n_features": "20", "threads": "2", "dtype": "float32",
         "estimator.n_estimators": "100", "estimator.n_jobs": "2"}
    p.update({k.replace("__", "."): v for k, v in params.items()})
    metrics = {"fit_time_s": statistics.median(fit), "accuracy": accuracy} if status == Status.OK else {}
    history = {"fit_time_process_s": fit} if status == Status.OK else {}  # one value per process
    return StoredRun(run_id=f"case{next(_ids)}", name="c", status="FINISHED", start_time=0, params=p,
                     metrics=metrics, tags={"case_status": status, "main_metric": "accuracy", "baseline": "sklearn"},
                     history=history)


def suite(*cases: StoredRun, **tags: str) -> StoredSuite:
    run = StoredRun(run_id=f"suite{next(_ids)}", name="s", status="FINISHED", start_time=0,
                    params={"suite_name": "forest", "suite_threads": "2"},
                    tags={"host.cpu_model": "cpu", "version.scikit-learn": "1.9.1", **tags})
    return StoredSuite(run=run, experiment_name="forest", cases=list(cases))


def test_thread_counts_are_a_setting_not_the_case():
    a = suite(case(threads="2", estimator__n_jobs="2"))
    b = suite(case(threads="1", estimator__n_jobs="1", fit=[2.0, 2.1, 1.9, 2.05, 1.95]))
    comparison = compare_suites(a, b)
    assert len(comparison.rows) == 1 and not comparison.only_a and not comparison.only_b
    assert "threads: 2 → 1 (every shared case)" in comparison.case_differences
    assert "estimator.n_jobs: 2 → 1 (every shared case)" in comparison.case_differences
    row = comparison.rows.iloc[0]
    assert row["fit_ratio"] == pytest.approx(2.0) and row["fit_verdict"] == SLOWER


def test_a_parameter_only_one_side_logged_does_not_keep_cases_apart():
    comparison = compare_suites(suite(case()), suite(case(estimator__monotonic_cst="None")))
    assert len(comparison.rows) == 1
    assert "estimator.monotonic_cst: (none) → None (every shared case)" in comparison.case_differences


def test_different_parameters_make_different_cases_listed_apart():
    comparison = compare_suites(suite(case()), suite(case(estimator__n_estimators="200")))
    assert comparison.rows.empty
    assert comparison.only_a == ["random_forest · sklearn · classification 2.5k×20 "
                                 "(estimator params differ: n_estimators: 100 → 200)"]
    assert comparison.only_b == ["random_forest · sklearn · classification 2.5k×20"]


def test_layout_and_sweep_point_are_part_of_the_case():
    old = case()  # before `order` was logged: C order
    assert len(compare_suites(suite(old), suite(case(order="C"))).rows) == 1
    assert compare_suites(suite(old), suite(case(order="F"))).rows.empty
    def at(depth: int) -> StoredRun:
        return case(sweep=f"max_depth={depth}", sweep_shared=f"max_depth={depth}", estimator__max_depth=str(depth))

    swept = compare_suites(suite(at(4), at(8)), suite(at(8)))
    assert list(swept.rows["case"]) == ["random_forest · sklearn · classification 2.5k×20 · max_depth=8"]
    assert swept.only_a == ["random_forest · sklearn · classification 2.5k×20 · max_depth=4"]


def test_faster_slower_and_no_change():
    a = suite(case("sklearn"), case("lightgbm"), case("xgboost_cpu"))
    b = suite(case("sklearn", fit=[0.5, 0.55, 0.45, 0.52, 0.48]), case("lightgbm", fit=[1.0, 1.1, 0.9, 1.06, 0.94]),
              case("xgboost_cpu", fit=[1.4, 1.5, 1.3, 1.45, 1.35]))
    rows = compare_suites(a, b).rows.set_index("implementation")
    assert rows.loc["sklearn", "fit_verdict"] == FASTER and rows.loc["lightgbm", "fit_verdict"] == SAME
    assert rows.loc["xgboost_cpu", "fit_verdict"] == SLOWER
    assert rows.loc["sklearn", "fit_level"] == pytest.approx(1 - 8 / 252)
    assert rows.loc["sklearn", "predict_verdict"] == ""  # neither logged predict times


def test_predict_times_without_repeats_have_a_ratio_but_no_verdict():
    a, b = case(), case()
    a.metrics["predict_time_s"], b.metrics["predict_time_s"] = 0.02, 0.04
    row = compare_suites(suite(a), suite(b)).rows.iloc[0]
    assert row["predict_ratio"] == pytest.approx(2.0) and row["predict_verdict"] == UNTESTED


def test_the_slower_gate_needs_the_ratio_and_significance():
    a = suite(case("sklearn"), case("lightgbm"))
    # sklearn: 1.4× and significant; lightgbm: 1.4× by the medians, but not significant
    b = suite(case("sklearn", fit=[1.4, 1.54, 1.26, 1.47, 1.33]), case("lightgbm", fit=[1.4, 0.8, 2.5, 1.5, 0.9]))
    comparison = compare_suites(a, b)
    # the gate asks whether B is significantly more than RATIO × A: 1.4× clears 1.1 in every process,
    # not 1.3 (B/1.3 overlaps A); the noisy one clears neither
    assert list(slower_than(comparison, 1.1)["implementation"]) == ["sklearn"]
    assert slower_than(comparison, 1.3).empty


def test_a_case_that_ran_in_a_and_failed_in_b_fails_the_slower_gate():
    a = suite(case("sklearn"), case("cuml", status=Status.SKIPPED))
    b = suite(case("sklearn", status=Status.FAILED), case("cuml"))
    comparison = compare_suites(a, b)
    rows = comparison.rows.set_index("implementation")
    assert rows.loc["sklearn", "status_verdict"] == "failed in B"
    assert rows.loc["cuml", "status_verdict"] == "skipped in A"
    assert list(slower_than(comparison, 10)["implementation"]) == ["sklearn"]


def test_quality_is_judged_against_the_tolerance():
    a = suite(case("sklearn", accuracy=0.95), case("lightgbm", accuracy=0.95))
    b = suite(case("sklearn", accuracy=0.90), case("lightgbm", accuracy=0.945))
    comparison = compare_suites(a, b)
    rows = comparison.rows.set_index("implementation")
    assert rows.loc["sklearn", "quality_verdict"] == WORSE  # 5 points below, accuracy's tolerance is 1
    assert rows.loc["lightgbm", "quality_verdict"] == "same"
    assert rows.loc["sklearn", "quality_delta"] == pytest.approx(-0.05)
    assert list(worse_than(comparison, 0.01)["implementation"]) == ["sklearn"]
    assert worse_than(comparison, 0.06).empty


def test_the_machine_and_versions_that_differ_come_first():
    a = suite(case())
    b = suite(case(), **{"version.scikit-learn": "1.10.0"})
    assert compare_suites(a, b).differences == ["version.scikit-learn: 1.9.1 → 1.10.0"]
