"""CatBoost in the gradient-boosting pairings: a real CPU fit, its threads, and the task_type audit."""

from __future__ import annotations

import numpy as np
import pytest

from mlcompare.config.pairing import load_catalog
from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.measure import device
from mlcompare.measure.audit import FallbackError, verify_device
from mlcompare.measure.capability import skip_reason
from mlcompare.measure.case import run_case

catboost = pytest.importorskip("catboost", reason="catboost is not installed (pip install -e '.[catboost]')")
CATALOG = load_catalog()


def _spec(pairing: str, impl: str, root) -> dict:
    p = CATALOG[pairing]
    implementation = p.implementations[impl]
    task = {"gradient_boosting": "classification", "gradient_boosting_regressor": "regression"}[pairing]
    params = {**p.estimator_params(implementation), "iterations": 20}
    return {"estimator": implementation.estimator, "library": implementation.library, "device": implementation.device,
            "host_input": implementation.host_input, "params": params, "task": p.task, "metrics": list(p.metrics),
            "repeats": 2, "threads": 1, "dataset_dir": str(materialise(DatasetSpec(task, 500, 6), root))}


@pytest.mark.parametrize("pairing", ["gradient_boosting", "gradient_boosting_regressor"])
def test_the_cpu_implementation_fits_on_the_experiments_threads_and_writes_no_files(tmp_path, monkeypatch, pairing):
    monkeypatch.chdir(tmp_path)
    record = run_case(_spec(pairing, "catboost_cpu", tmp_path / "data"))
    assert record["status"] == "ok"
    assert record["ran_on"] == "cpu (CatBoost task_type=CPU)"
    assert record["effective_params"]["thread_count"] == "1"  # -1 in the pairing: the experiment's threads
    assert record["effective_params"]["depth"] == "6" and record["effective_params"]["border_count"] == "255"
    main = CATALOG[pairing].main_metric
    assert record["metrics"][main] > 0.5
    assert not (tmp_path / "catboost_info").exists()  # allow_writing_files: false


def test_a_catboost_model_that_trained_on_the_cpu_fails_a_gpu_case():
    X = np.random.default_rng(0).normal(size=(200, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int32)
    model = catboost.CatBoostClassifier(iterations=3, task_type="CPU", verbose=False,
                                        allow_writing_files=False).fit(X, y)
    with pytest.raises(FallbackError, match="silent CPU fallback: CatBoost was asked for task_type=GPU"):
        verify_device(model, {"library": "catboost", "device": "gpu"})
    assert verify_device(model, {"library": "catboost", "device": "cpu"}) == "cpu (CatBoost task_type=CPU)"


def test_the_gpu_implementation_takes_host_input_and_pins_one_gpu():
    for pairing in ("gradient_boosting", "gradient_boosting_regressor"):
        gpu = CATALOG[pairing].implementations["catboost_gpu"]
        assert gpu.device == "gpu" and gpu.host_input
        params = CATALOG[pairing].estimator_params(gpu)
        assert params["task_type"] == "GPU" and params["devices"] == "0"
        assert any("symmetric (oblivious) trees" in d for d in CATALOG[pairing].differences(gpu))


@pytest.mark.skipif(bool(device.cuda_devices()[0]), reason="this machine has a CUDA device")
def test_without_a_gpu_the_gpu_implementation_is_skipped_with_the_reason():
    gpu = CATALOG["gradient_boosting"].implementations["catboost_gpu"]
    reason = skip_reason(gpu.library, gpu.device, {})
    assert reason and "CUDA" in reason
    assert skip_reason("catboost", "cpu", {}) is None
