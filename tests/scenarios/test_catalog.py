"""The catalog: every pairing, every installed CPU implementation, a real fit on small data."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import run_cli

from mlcompare.config.pairing import load_catalog
from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.data.synthetic import GENERATOR_TASKS
from mlcompare.measure import device
from mlcompare.measure.case import run_case
from mlcompare.pairings.quality import HIGHER_IS_BETTER, TASK_METRICS

CATALOG = load_catalog()
DATA = {"blobs": DatasetSpec("blobs", 400, 8, options={"centers": 4}),
        "classification": DatasetSpec("classification", 400, 8),
        "regression": DatasetSpec("regression", 400, 8)}
#: A floor for each main metric on this easy data: a real fit, not a placeholder.
FLOOR = {"accuracy": 0.6, "r2": 0.5, "adjusted_rand": 0.6, "explained_variance_ratio": 0.5,
         "trustworthiness": 0.8}
CPU_CASES = [(p.name, impl.name) for p in CATALOG.values() for impl in p.implementations.values()
             if impl.device == "cpu"]


def test_catalog_is_broad():
    assert len(CATALOG) >= 20
    for pairing in CATALOG.values():
        assert any(impl.device == "gpu" for impl in pairing.implementations.values()), pairing.name
        assert pairing.implementations[pairing.baseline].device == "cpu"
    with_cuml = [p for p in CATALOG.values() if any(i.library == "cuml" for i in p.implementations.values())]
    assert len(with_cuml) >= 19
    libraries = {impl.library for p in CATALOG.values() for impl in p.implementations.values()}
    assert {"sklearn", "cuml", "xgboost", "lightgbm", "catboost", "sklearnex", "umap", "cuml.accel"} <= libraries
    assert set(TASK_METRICS) == {p.task for p in CATALOG.values()}


@pytest.mark.parametrize("pairing,impl", CPU_CASES)
def test_every_cpu_implementation_fits_and_scores(tmp_path, pairing, impl):
    p = CATALOG[pairing]
    if "n_estimators" in p.params:  # fewer trees: the same code path in a fraction of the time
        p = replace(p, params={**p.params, "n_estimators": 20})
    implementation = p.implementations[impl]
    reason = device.skip_reason(implementation.library, implementation.device)
    assert reason is None, f"{implementation.library} must be installed for the tests: {reason}"
    params = p.estimator_params(implementation)
    if pairing == "tsne":
        params["max_iter"] = 250  # scikit-learn's minimum; t-SNE is slow on two cores
    generator = next(g for g, tasks in GENERATOR_TASKS.items() if p.task in tasks)
    spec = {"estimator": implementation.estimator, "library": implementation.library, "device": "cpu",
            "distributed": implementation.distributed,
            "params": params, "task": p.task, "metrics": list(p.metrics), "repeats": 1, "threads": 2,
            "dataset_dir": str(materialise(DATA[generator], tmp_path)),
            "predictions_path": str(tmp_path / "out.npy")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        record = run_case(spec)
    m = record["metrics"]
    assert record["status"] == "ok" and m["fit_time_s"] > 0
    for metric in p.metrics:
        assert np.isfinite(m[metric]), metric
    main = p.main_metric
    if main in FLOOR:
        assert m[main] >= FLOOR[main], (main, m[main])
    assert ("predict_time_s" in m) == (p.task not in ("clustering_fit_predict", "embedding"))
    assert np.load(tmp_path / "out.npy").size > 0
    assert record["library_version"] != "unknown"


def test_list_shows_every_pairing_with_availability(workdir):
    result = run_cli("list", cwd=workdir)
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert int(last.split()[0]) >= 20 and "pairings" in last
    assert "tsne (embedding; metrics: trustworthiness)" in result.stdout
    assert "lightgbm.LGBMClassifier  (can run here)" in result.stdout
    assert "catboost_cpu     cpu  catboost.CatBoostClassifier  (can run here)" in result.stdout
    assert "catboost_cpu     cpu  catboost.CatBoostRegressor  (can run here)" in result.stdout
    assert "catboost_gpu     gpu  catboost.CatBoostClassifier  (" in result.stdout
    assert "sklearnex.cluster.KMeans  (can run here)" in result.stdout
    if not device.cuda_devices()[0]:
        assert "sklearn.cluster.KMeans under cuml.accel  (cannot run here: cuml not installed" in result.stdout \
            or "sklearn.cluster.KMeans under cuml.accel  (cannot run here" in result.stdout


def test_metric_directions_are_known():
    for metrics in TASK_METRICS.values():
        for metric in metrics:
            assert metric in HIGHER_IS_BETTER
