"""One case, in this process, with real fits on small data."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from mlcompare.config.pairing import load_catalog
from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.measure import device
from mlcompare.measure.audit import FallbackError, verify_device
from mlcompare.measure.case import run_case
from mlcompare.measure.threads import with_threads

CATALOG = load_catalog()
DATA = {"clustering": DatasetSpec("blobs", 400, 10, options={"centers": 8}),
        "classification": DatasetSpec("classification", 400, 6),
        "regression": DatasetSpec("regression", 400, 5)}


def spec_for(pairing_name: str, impl_name: str, root) -> dict:
    pairing = CATALOG[pairing_name]
    impl = pairing.implementations[impl_name]
    return {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
            "params": pairing.estimator_params(impl), "task": pairing.task,
            "metrics": list(pairing.metrics), "repeats": 3,
            "dataset_dir": str(materialise(DATA[pairing.task], root))}


@pytest.mark.parametrize("pairing,impl", [
    ("kmeans", "sklearn"), ("random_forest", "sklearn"), ("gradient_boosting", "sklearn"),
    ("gradient_boosting", "xgboost_cpu"), ("linear_regression", "sklearn")])
def test_cpu_case_reports_times_and_quality(tmp_path, pairing, impl):
    record = run_case(spec_for(pairing, impl, tmp_path))
    m = record["metrics"]
    assert record["status"] == "ok" and len(record["fit_times"]) == 3
    assert m["fit_time_s"] == sorted(record["fit_times"])[1]  # the median of three
    assert m["fit_time_min_s"] == min(record["fit_times"])
    # the cold fit is the same fit as the warm ones, plus first-use work: never far below the fastest
    assert m["fit_cold_time_s"] >= 0.5 * min(record["fit_times"])
    assert m["predict_time_s"] == pytest.approx(float(np.median(record["predict_times"])))
    assert m["transfer_time_s"] == 0.0  # host data for a CPU implementation
    for metric in CATALOG[pairing].metrics:
        assert np.isfinite(m[metric])
    assert record["ran_on"].startswith("cpu")
    assert record["library_version"] != "unknown"
    assert record["effective_params"]


def test_quality_is_plausible(tmp_path):
    """Real fits on easy data give real scores, not placeholders."""
    assert run_case(spec_for("kmeans", "sklearn", tmp_path))["metrics"]["adjusted_rand"] > 0.8
    assert run_case(spec_for("gradient_boosting", "xgboost_cpu", tmp_path))["metrics"]["accuracy"] > 0.8
    assert run_case(spec_for("linear_regression", "sklearn", tmp_path))["metrics"]["r2"] > 0.9


def test_effective_params_show_the_shared_values(tmp_path):
    record = run_case(spec_for("gradient_boosting", "sklearn", tmp_path))
    assert record["effective_params"]["max_iter"] == "100"
    assert record["effective_params"]["early_stopping"] == "False"


@pytest.mark.skipif(bool(device.cuda_devices()[0]), reason="this machine has a CUDA device")
def test_xgboost_silent_cpu_fallback_is_caught():
    """XGBoost asked for device=cuda without a GPU warns and trains on the CPU: caught."""
    import xgboost

    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = xgboost.XGBClassifier(n_estimators=3, device="cuda").fit(X, y)
    with pytest.raises(FallbackError, match="silent CPU fallback"):
        verify_device(model, {"library": "xgboost", "device": "gpu"})
    assert verify_device(model, {"library": "xgboost", "device": "cpu"}) == "cpu (XGBoost booster config)"


def test_cpu_estimators_get_the_experiments_threads(tmp_path):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LinearRegression

    assert with_threads(RandomForestClassifier, {"n_jobs": -1}, 2) == {"n_jobs": 2}
    assert with_threads(RandomForestClassifier, {}, 3) == {"n_jobs": 3}
    assert with_threads(RandomForestClassifier, {"n_jobs": 1}, 4) == {"n_jobs": 1}  # pinned: kept
    assert with_threads(LinearRegression, {}, 2) == {"n_jobs": 2}
    from sklearn.cluster import KMeans
    assert with_threads(KMeans, {}, 2) == {}  # no n_jobs: its OpenMP pool is limited instead
    spec = spec_for("random_forest", "sklearn", tmp_path) | {"threads": 1, "repeats": 1}
    record = run_case(spec)
    assert record["effective_params"]["n_jobs"] == "1"
    assert "openmp:1" in record["threadpools"] or "blas:1" in record["threadpools"]


def test_record_has_the_statistics_and_end_to_end_time(tmp_path):
    spec = spec_for("linear_regression", "sklearn", tmp_path) | {"repeats": 5,
                                                                "predictions_path": str(tmp_path / "p.npy")}
    record = run_case(spec)
    m = record["metrics"]
    assert m["fit_repeats"] == 5 == len(record["fit_times"])
    q1, q3 = np.percentile(record["fit_times"], [25, 75])  # the statistics of the repeats it returned
    assert m["fit_time_iqr_s"] == pytest.approx(q3 - q1)
    assert m["fit_time_cv"] == pytest.approx(np.std(record["fit_times"], ddof=1) / np.mean(record["fit_times"]))
    assert m["fit_host_input_time_s"] == m["fit_time_s"]  # a CPU implementation's input is on the host
    # from the cached file to the predictions: the load (the transfer is 0 on the CPU), the fit, the predict
    assert m["end_to_end_time_s"] == pytest.approx(m["load_time_s"] + m["fit_time_s"] + m["predict_time_s"])
    assert "fit_peak_gpu_memory_mb" not in m
    assert np.load(tmp_path / "p.npy").shape == (100,)
    # min_time_s counts every call; a fit this short is timed in loops (LOOP_VALUE_S of fits per value)
    more = run_case(spec | {"repeats": 1, "min_time_s": 0.2})
    loops = more["metrics"]["fit_loops"]
    assert loops > 1 and sum(more["fit_times"]) * loops >= 0.2 and len(more["fit_times"]) >= 2


def test_the_first_predict_is_timed_apart_and_min_time_applies_to_predicts(tmp_path):
    spec = spec_for("linear_regression", "sklearn", tmp_path) | {"repeats": 2, "min_time_s": 0.2}
    record = run_case(spec)
    m = record["metrics"]
    assert "predict_cold_time_s" in m and m["predict_repeats"] == len(record["predict_times"])
    # tiny predicts: timed in loops, and values until the calls add up to min_time_s
    assert m["predict_loops"] > 1 and sum(record["predict_times"]) * m["predict_loops"] >= 0.2
    assert len(record["predict_times"]) > 2
    assert m["predict_time_s"] == pytest.approx(float(np.median(record["predict_times"])))
    assert sum(record["fit_host_times"]) * m["fit_loops"] >= 0.2


def test_every_timed_predict_ends_with_the_predictions_on_the_host(tmp_path, monkeypatch):
    """device.to_host (ours) runs inside the timer of every predict call, cold and warm."""
    from mlcompare.measure import timing

    inside, calls = [], {"timed": 0}
    original_timed, original_to_host = timing.timed, device.to_host

    def recording_timed(fn, on_gpu):
        def wrapped():
            calls["timed"] += 1
            calls["open"] = True
            try:
                return fn()
            finally:
                calls["open"] = False
        return original_timed(wrapped, on_gpu)

    def recording_to_host(array):
        inside.append(calls.get("open", False))
        return original_to_host(array)

    monkeypatch.setattr(timing, "timed", recording_timed)
    monkeypatch.setattr(device, "to_host", recording_to_host)
    record = run_case(spec_for("gradient_boosting", "xgboost_cpu", tmp_path) | {"repeats": 3})
    predicts = 1 + len(record["predict_times"]) + 1  # cold, warm, the untimed-for-speed proba
    assert inside[:predicts] == [True] * predicts


def test_fitted_counts_and_effective_booster_values(tmp_path):
    record = run_case(spec_for("gradient_boosting", "xgboost_cpu", tmp_path) | {"repeats": 1})
    assert record["metrics"]["fit_trees"] == 100  # n_estimators, binary: one tree a round
    params = record["effective_params"]
    assert params["gamma"] == "0" and params["max_leaves"] == "0"  # unset: as the booster trained, not None
    assert "None" not in {params[k] for k in ("learning_rate", "max_bin", "min_child_weight", "subsample")}
    kmeans = run_case(spec_for("kmeans", "sklearn", tmp_path) | {"repeats": 1})
    assert 1 <= kmeans["metrics"]["fit_iterations"] <= 300



def _spinner() -> subprocess.Popen:
    """Another program on the machine: a process of our own that keeps one CPU busy."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def test_another_program_during_the_timed_calls_is_measured_and_flags_the_case(tmp_path):
    """A real random-forest case, alone and then beside a busy process: what the others took of
    the CPUs during its timed calls is measured (about a CPU beside the spinner, next to nothing
    alone), and the suite flags it noisy with that figure."""
    from mlcompare.suite.rounds import pool_rounds, stability

    spec = spec_for("random_forest", "sklearn", tmp_path) | {"repeats": 3, "threads": 1}
    alone = run_case(spec)["metrics"]["cpu_others_cores_during_timed"]
    spinner = _spinner()
    try:
        record = run_case(spec)
    finally:
        spinner.kill()
        spinner.wait()
    beside = record["metrics"]["cpu_others_cores_during_timed"]
    assert beside > alone + 0.5 and beside > 0.6, (alone, beside)  # the spinner's CPU, on average
    flag = stability(pool_rounds([record]), cpus=2)
    assert flag.startswith("noisy: ") and f"other processes took {beside:.2f} of 2 CPUs" in flag


def test_a_block_too_short_to_judge_says_so(tmp_path):
    record = run_case(spec_for("linear_regression", "sklearn", tmp_path) | {"repeats": 1})
    if "cpu_others_cores_during_timed" not in record["metrics"]:  # under 0.2 s of timed calls
        assert record["cpu_others_note"].startswith("not judged: the timed calls took ")
