"""How a case is compared with its baseline (the numbers every child run carries)."""

from __future__ import annotations

import numpy as np
import pytest

from mlcompare.config.experiment import Case
from mlcompare.config.pairing import parse_pairing
from mlcompare.data.cache import DatasetSpec
from mlcompare.suite.baseline import compare


def _raw():
    return {"name": "p", "task": "classification", "metrics": ["accuracy"],
            "implementations": {
                "sklearn": {"estimator": "sklearn.linear_model.LogisticRegression", "device": "cpu"},
                "fast": {"estimator": "sklearn.linear_model.RidgeClassifier", "device": "cpu"}}}


PAIRING = parse_pairing(_raw(), "p.yaml")
DATA = DatasetSpec("classification", 100, 4)


def _record(tmp_path, name, fit_times, accuracy, pred):
    """A case's record; `fit_times`: one fit per process, as the suite summarises them."""
    path = tmp_path / f"{name}.npy"
    np.save(path, np.asarray(pred))
    fit = float(np.median(fit_times))
    return {"status": "ok", "fit_times": fit_times, "fit_process_times": list(fit_times),
            "end_to_end_process_times": [t + 0.1 for t in fit_times], "predictions_path": str(path),
            "metrics": {"fit_time_s": fit, "fit_host_input_time_s": fit, "end_to_end_time_s": fit + 0.1,
                        "accuracy": accuracy}}


def test_a_faster_equal_quality_case(tmp_path):
    base = _record(tmp_path, "base", [1.0, 1.1, 0.9], 0.90, [0, 1, 1, 0])
    fast = _record(tmp_path, "fast", [0.25, 0.25, 0.25], 0.895, [0, 1, 1, 1])
    out = compare(Case(PAIRING, PAIRING.implementations["fast"], DATA), fast, base)
    assert out["speedup_fit"] == pytest.approx(4.0)
    assert out["speedup_end_to_end"] == pytest.approx(1.1 / 0.35)
    assert out["speedup_fit_ci_low"] == pytest.approx(0.9 / 0.25)
    assert out["speedup_fit_ci_high"] == pytest.approx(1.1 / 0.25)
    assert out["quality_delta"] == pytest.approx(-0.005)
    assert out["prediction_agreement"] == 0.75
    assert fast["parity"] == "ok"


def test_a_case_that_loses_accuracy_is_degraded(tmp_path):
    base = _record(tmp_path, "base", [1.0], 0.90, [0, 1])
    worse = _record(tmp_path, "worse", [0.5], 0.88, [0, 0])
    compare(Case(PAIRING, PAIRING.implementations["fast"], DATA), worse, base)
    assert worse["parity"] == "degraded"
    strict = parse_pairing({**_raw(), "parity_tolerance": 0.05}, "p.yaml")
    again = _record(tmp_path, "again", [0.5], 0.88, [0, 0])
    compare(Case(strict, strict.implementations["fast"], DATA), again, base)
    assert again["parity"] == "ok"


def test_the_baseline_against_itself(tmp_path):
    base = _record(tmp_path, "base", [1.0, 2.0], 0.9, [0, 1])
    out = compare(Case(PAIRING, PAIRING.implementations["sklearn"], DATA), base, base)
    assert out["speedup_fit"] == 1.0 and out["quality_delta"] == 0.0 and out["prediction_agreement"] == 1.0
    assert "speedup_fit_ci_low" not in out and base["parity"] == "ok"



def test_the_speedup_interval_carries_its_level(tmp_path):
    base = _record(tmp_path, "base", [1.0, 1.1, 0.9], 0.90, [0, 1])
    fast = _record(tmp_path, "fast", [0.25, 0.26, 0.24], 0.90, [0, 1])
    out = compare(Case(PAIRING, PAIRING.implementations["fast"], DATA), fast, base)
    assert out["speedup_fit_ci_level"] == pytest.approx(0.9)  # 3 processes against 3 cannot state 95 %
    assert out["speedup_end_to_end_ci_level"] == pytest.approx(0.9)  # the end-to-end times' interval too
    six = _record(tmp_path, "six", [0.25, 0.26, 0.24, 0.25, 0.27, 0.23], 0.90, [0, 1])
    base6 = _record(tmp_path, "base6", [1.0, 1.1, 0.9, 1.05, 0.95, 1.02], 0.90, [0, 1])
    assert compare(Case(PAIRING, PAIRING.implementations["fast"], DATA), six, base6)["speedup_fit_ci_level"] >= 0.95


def test_differences_found_in_what_the_estimators_used(tmp_path):
    pairing = parse_pairing({**_raw(), "params": {"C": 1.0, "tol": 0.001}, "implementations": {
        "sklearn": {"estimator": "sklearn.linear_model.LogisticRegression", "device": "cpu"},
        "fast": {"estimator": "sklearn.svm.LinearSVC", "device": "cpu", "rename": {"tol": "tol"}}}}, "p.yaml")
    base = _record(tmp_path, "base", [1.0, 1.1], 0.90, [0, 1])
    fast = _record(tmp_path, "fast", [0.5, 0.6], 0.90, [0, 1])
    base["effective_params"] = {"C": "1.0", "tol": "0.001"}
    fast["effective_params"] = {"C": "1.0000000001", "tol": "0.0001"}  # C: the same up to float rounding
    base["metrics"]["fit_iterations"], fast["metrics"]["fit_iterations"] = 12.0, 40.0
    compare(Case(pairing, pairing.implementations["fast"], DATA), fast, base)
    assert fast["found_differences"] == ["tol (tol): sklearn used 0.001, fast used 0.0001",
                                         "iterations: sklearn 12, fast 40"]
