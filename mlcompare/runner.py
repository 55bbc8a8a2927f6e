"""Run one case in this process and return a plain result record (a JSON-able dict).

The suite calls this through `mlcompare.worker` in a fresh process per case, so the cold
fit really is the first fit in the process and a crash cannot take the suite down.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from mlcompare import datasets, device, measure, quality
from mlcompare.pairings import import_estimator


class FallbackError(RuntimeError):
    """A GPU implementation trained on the CPU: its numbers must not pass as GPU numbers."""


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Fit, time, predict and score one case; raises on any failure."""
    on_gpu = spec["device"] == "gpu"
    task = spec["task"]
    host = datasets.load_split(Path(spec["dataset_dir"]))
    estimator_cls = import_estimator(spec["estimator"])
    params = spec["params"]

    # 1. inputs to the implementation's device (a no-op on the CPU)
    transfer_in = 0.0
    data = host
    if on_gpu:
        data, transfer_in = measure.timed(
            lambda: {k: device.to_device(v) for k, v in host.items() if k != "y_test"}, on_gpu)
    fit_args = (data["X_train"],) if task == "clustering" else (data["X_train"], data["y_train"])

    def fit() -> Any:
        return estimator_cls(**params).fit(*fit_args)

    # 2. cold fit: the first in this process (imports done, CUDA context and JIT not yet)
    _, cold = measure.timed(fit, on_gpu)
    # 3. warm fits, each from a fresh estimator
    fit_times = []
    for _ in range(spec["repeats"]):
        model, seconds = measure.timed(fit, on_gpu)
        fit_times.append(seconds)
    ran_on = verify_device(model, spec)

    # 4. predict, timed the same way
    predict_times = []
    for _ in range(spec["repeats"]):
        pred, seconds = measure.timed(lambda: model.predict(data["X_test"]), on_gpu)
        predict_times.append(seconds)
    needs_proba = any(m in quality.NEEDS_PROBA for m in spec["metrics"])
    proba = model.predict_proba(data["X_test"]) if needs_proba else None

    # 5. results back to the host
    outputs, transfer_out = measure.timed(lambda: {
        "pred": device.to_host(pred),
        "proba": None if proba is None else device.to_host(proba),
        "centers": device.to_host(model.cluster_centers_) if task == "clustering" else None,
    }, False)
    outputs["X"] = host["X_test"]

    # 6. quality on the host, one shared function per metric
    scores = quality.score_all(tuple(spec["metrics"]), host["y_test"], outputs)
    fit_stats = measure.summarise(fit_times)
    return {
        "status": "ok",
        "metrics": {
            "fit_time_s": fit_stats["median"],
            "fit_time_min_s": fit_stats["min"],
            "fit_cold_time_s": cold,
            "predict_time_s": measure.summarise(predict_times)["median"],
            "transfer_time_s": transfer_in + (transfer_out if on_gpu else 0.0),
            "peak_host_memory_mb": measure.peak_rss_mb(),
            **scores,
        },
        "fit_times": fit_times,
        "effective_params": effective_params(model),
        "ran_on": ran_on,
        "library_version": library_version(spec["library"]),
    }


def verify_device(model: Any, spec: dict[str, Any]) -> str:
    """Where the model says it trained; a GPU implementation that fell back raises."""
    if spec["library"] == "xgboost":
        config = json.loads(model.get_booster().save_config())
        where = config["learner"]["generic_param"]["device"]
        if spec["device"] == "gpu" and not where.startswith("cuda"):
            raise FallbackError(f"silent CPU fallback: XGBoost was asked for device=cuda "
                                f"but its booster trained on {where!r}")
        return where
    return "cuda" if spec["device"] == "gpu" else "cpu"


def effective_params(model: Any) -> dict[str, str]:
    """The estimator's parameters as it holds them after fit, as strings."""
    try:
        params = model.get_params(deep=False)
    except Exception:  # an estimator without get_params: nothing to report
        return {}
    return {k: _short(v) for k, v in sorted(params.items()) if not callable(v)}


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 500 else text[:497] + "..."


def library_version(library: str) -> str:
    dist = {"sklearn": "scikit-learn"}.get(library, library)
    for name in (dist, f"{dist}-cu13", f"{dist}-cu12"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
