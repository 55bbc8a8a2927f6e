"""The audit's refusals: evidence that is missing or points at the CPU fails the case."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

from mlcompare.measure.audit import FallbackError, output_evidence, verify_device

ACCEL = {"library": "cuml.accel", "device": "gpu", "accelerator": "cuml.accel",
         "estimator": "sklearn.cluster.KMeans", "accelerator_setup": "cuml.accel installed with disable_uvm=True"}


def test_cuml_accel_without_a_profile_is_refused_not_trusted():
    with pytest.raises(FallbackError, match="no profile of KMeans.fit"):
        verify_device(None, ACCEL, accel_report=None)


def test_cuml_accel_with_a_cpu_call_in_its_profile_is_a_fallback():
    stats = SimpleNamespace(gpu_calls=1, cpu_calls=1, fallback_reasons={"sparse input"})
    report = SimpleNamespace(method_calls={"KMeans.fit": stats, "KMeans.predict": stats})
    with pytest.raises(FallbackError, match=r"ran KMeans.fit on the CPU in 1 of 2 profiled calls \(sparse input\)"):
        verify_device(None, ACCEL, accel_report=report)
    nothing = SimpleNamespace(method_calls={})
    with pytest.raises(FallbackError, match="no GPU call was recorded"):
        verify_device(None, ACCEL, accel_report=nothing)


def test_cuml_outputs_in_host_memory_for_device_inputs_fail_the_case():
    spec = {"library": "cuml", "device": "gpu"}
    with pytest.raises(FallbackError, match=r"returned its pred as numpy.ndarray, in host memory"):
        output_evidence("cuda (x)", spec, {"pred": np.zeros(3), "proba": None}, device_input=True)
    # not asked of other libraries, nor of fits given host arrays (cuml.accel takes numpy)
    assert output_evidence("cuda (x)", {"library": "xgboost", "device": "gpu"}, {"pred": np.zeros(3)}, True) \
        == "cuda (x)"
    assert output_evidence("cuda (x)", spec, {"pred": np.zeros(3)}, device_input=False) == "cuda (x)"


@pytest.mark.skipif(importlib.util.find_spec("cuml") is not None, reason="cuml is installed")
def test_cuml_evidence_says_what_was_checked():
    ran_on = verify_device(None, {"library": "cuml", "device": "gpu"}, gpu_growth_mb=12.5)
    assert ran_on == "cuda (device memory +12.5 MB during fit; this cuML has no CPU mode (removed in 25.08))"


def _fitted_case(pairing_name: str, impl_name: str, root) -> dict:
    """One real case of the catalog's pairing on small data, its record as the suite gets it."""
    from mlcompare.config.pairing import load_catalog
    from mlcompare.data.cache import DatasetSpec, materialise
    from mlcompare.measure.case import run_case
    from mlcompare.suite.rounds import pool_rounds

    pairing = load_catalog()[pairing_name]
    impl = pairing.implementations[impl_name]
    params = pairing.estimator_params(impl)
    for rounds in ("n_estimators", "max_iter", "iterations"):  # ten trees: quick, and countable
        if rounds in params:
            params[rounds] = 10
    spec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device, "threads": 1,
            "params": params, "task": pairing.task, "metrics": list(pairing.metrics), "repeats": 1,
            "audit_keys": pairing.audit_keys(impl),
            "dataset_dir": str(materialise(DatasetSpec("classification", 600, 6), root))}
    return pool_rounds([run_case(spec)])


def test_the_audit_finds_defaults_nobody_passed_as_the_fitted_models_report_them(tmp_path):
    """Gradient boosting on real fits: scikit-learn's histogram boosting has no L2 penalty and a
    leaf minimum of 20 where XGBoost has lambda 1 and min_child_weight 1, LightGBM lambda_l2 0 and
    min_data_in_leaf 20, CatBoost l2_leaf_reg 3: none of these is passed by the pairing, all
    are found; CatBoost's trees are counted from the model."""
    from mlcompare.config.experiment import Case
    from mlcompare.config.pairing import load_catalog
    from mlcompare.data.cache import DatasetSpec
    from mlcompare.suite.baseline import compare

    pairing = load_catalog()["gradient_boosting"]
    base = _fitted_case("gradient_boosting", "sklearn", tmp_path)
    assert base["audited"]["l2_regularization"] == "0.0" and base["audited"]["min_leaf"] == "20"
    found = {}
    for name in ("xgboost_cpu", "lightgbm", "catboost_cpu"):
        record = _fitted_case("gradient_boosting", name, tmp_path)
        compare(Case(pairing, pairing.implementations[name], DatasetSpec("classification", 600, 6)), record, base)
        found[name] = " | ".join(record["found_differences"])
    assert "l2_regularization (l2_regularization / lambda, as the fitted models report them): sklearn 0.0, " \
           "xgboost_cpu 1" in found["xgboost_cpu"]
    assert "min_leaf (min_samples_leaf / min_child_weight" in found["xgboost_cpu"]
    assert "l2_regularization" not in found["lightgbm"] and "min_leaf" not in found["lightgbm"]  # 0 and 20 both
    assert "l2_leaf_reg, as the fitted models report them): sklearn 0.0, catboost_cpu 3" in found["catboost_cpu"]
    catboost = _fitted_case("gradient_boosting", "catboost_cpu", tmp_path)
    assert catboost["metrics"]["fit_trees"] == 10


def test_a_forest_s_audit_reads_the_defaults_of_both_sides(tmp_path):
    rf = _fitted_case("random_forest", "sklearn", tmp_path)
    assert rf["audited"] == {"max_features": "sqrt", "min_samples_leaf": "1", "max_samples": "None",
                             "criterion": "gini"}
