"""Run one case in this process and return a plain result record (a JSON-able dict).

The suite calls this through `mlcompare.worker` in a fresh process per case, so the cold
fit really is the first fit in the process and a crash cannot take the suite down.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from mlcompare import datasets, device, measure, quality
from mlcompare.pairings import import_estimator


class FallbackError(RuntimeError):
    """A GPU implementation trained on the CPU: its numbers must not pass as GPU numbers."""


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Fit, time, predict and score one case; raises on any failure."""
    on_gpu = spec["device"] == "gpu"
    threads = spec.get("threads")
    # Imported first: threadpoolctl limits only the native pools already loaded.
    estimator_cls = import_estimator(spec["estimator"])
    # CPU implementations get exactly the experiment's thread count in every native pool
    # (BLAS, OpenMP); GPU implementations keep the library's own host-side defaults.
    limits = threadpool_limits(limits=threads) if threads and not on_gpu else contextlib.nullcontext()
    with limits:
        return _run(spec, on_gpu, estimator_cls)


def _run(spec: dict[str, Any], on_gpu: bool, estimator_cls: type) -> dict[str, Any]:
    task = spec["task"]
    repeats, min_time_s = spec["repeats"], spec.get("min_time_s", 0.0)
    params = spec["params"] if on_gpu else with_threads(estimator_cls, spec["params"], spec.get("threads"))

    # 1. load: pyarrow into numpy on the CPU; cuDF straight into device memory on the GPU
    directory = Path(spec["dataset_dir"])
    host, load = measure.timed(lambda: datasets.load_split(directory), False)
    transfer_in = 0.0
    data = host
    if on_gpu:
        data, load = measure.timed(lambda: device.load_split(directory), on_gpu)
        # what moving the same numpy arrays to the device costs, measured on its own
        _, transfer_in = measure.timed(
            lambda: {k: device.to_device(v) for k, v in host.items() if k != "y_test"}, on_gpu)

    def fitter(arrays: dict[str, Any]):
        args = (arrays["X_train"],) if task == "clustering" else (arrays["X_train"], arrays["y_train"])
        return lambda: estimator_cls(**params).fit(*args)

    # 2. cold fit: the first in this process (imports done; CUDA context, JIT, caches not yet)
    _, cold = measure.timed(fitter(data), on_gpu)
    # 3. warm fits from a fresh estimator each, data already where the library computes
    model, fit_times = measure.repeat(fitter(data), on_gpu, repeats, min_time_s)
    # one more, untimed, for memory: a sampling thread must not share the cores with timed fits
    with measure.PeakMemory(gpu=on_gpu) as memory:
        _, memory_fit = measure.timed(fitter(data), on_gpu)
    ran_on = verify_device(model, spec, memory.gpu_mb)
    # 3b. the same fits given host (numpy) arrays: what a user calling fit(X) pays on a GPU
    host_fit_times = measure.repeat(fitter(host), on_gpu, repeats)[1] if on_gpu else fit_times

    # 4. predict, timed the same way
    pred, predict_times = measure.repeat(lambda: model.predict(data["X_test"]), on_gpu, repeats)
    needs_proba = any(m in quality.NEEDS_PROBA for m in spec["metrics"])
    proba, proba_time = measure.timed(lambda: model.predict_proba(data["X_test"]) if needs_proba else None, on_gpu)

    # 5. results back to the host
    outputs, transfer_out = measure.timed(lambda: {
        "pred": device.to_host(pred),
        "proba": None if proba is None else device.to_host(proba),
        "centers": device.to_host(model.cluster_centers_) if task == "clustering" else None,
    }, False)
    outputs["X"] = host["X_test"]
    if spec.get("predictions_path"):
        np.save(spec["predictions_path"], np.asarray(outputs["pred"]), allow_pickle=False)

    # 6. quality on the host, one shared function per metric
    scores = quality.score_all(tuple(spec["metrics"]), host["y_test"], outputs)
    fit, host_fit, predict = (measure.summarise(t) for t in (fit_times, host_fit_times, predict_times))
    transfer = transfer_in + (transfer_out if on_gpu else 0.0)
    metrics = {
        "fit_time_s": fit["median"], "fit_time_min_s": fit["min"], "fit_time_iqr_s": fit["iqr"],
        "fit_time_cv": fit["cv"], "fit_cold_time_s": cold, "fit_repeats": len(fit_times),
        "fit_host_input_time_s": host_fit["median"],
        "predict_time_s": predict["median"], "transfer_time_s": transfer, "load_time_s": load,
        "end_to_end_time_s": transfer + fit["median"] + predict["median"],
        "fit_peak_host_memory_mb": memory.host_mb,
        "peak_host_memory_mb": measure.peak_rss_mb(),
        **scores,
    }
    if memory.gpu_mb is not None:
        metrics["fit_peak_gpu_memory_mb"] = memory.gpu_mb
    return {
        "status": "ok",
        "metrics": metrics,
        "fit_times": fit_times,
        "fit_host_times": host_fit_times,
        "effective_params": effective_params(model),
        "ran_on": ran_on,
        "threadpools": thread_pools(),
        "library_version": library_version(spec["library"]),
        # seconds spent in the model's own calls, timed or not (for the harness-overhead bench)
        "model_time_s": cold + sum(fit_times) + memory_fit + (sum(host_fit_times) if on_gpu else 0.0)
        + sum(predict_times) + proba_time + transfer,
    }


def with_threads(cls: type, params: dict[str, Any], threads: int | None) -> dict[str, Any]:
    """Give an estimator that takes `n_jobs` the experiment's thread count.

    Only where the pairing leaves n_jobs open (absent, None or -1): an explicit number in
    a pairing is a deliberate choice and is kept.
    """
    if not threads or params.get("n_jobs", -1) not in (-1, None):
        return params
    if "n_jobs" not in accepted_params(cls):
        return params
    return {**params, "n_jobs": threads}


def accepted_params(cls: type) -> set[str]:
    """Constructor parameters, also of estimators that forward **kwargs (XGBoost's do)."""
    names = set(inspect.signature(cls.__init__).parameters)
    if hasattr(cls, "get_params"):
        try:
            names |= set(cls().get_params(deep=False))
        except Exception:  # a constructor that needs arguments: the signature is all we know
            pass
    return names


def verify_device(model: Any, spec: dict[str, Any], gpu_growth_mb: float | None = None) -> str:
    """Where the model says it trained, in words; a GPU implementation that fell back raises."""
    wanted_gpu = spec["device"] == "gpu"
    if spec["library"] == "xgboost":
        config = json.loads(model.get_booster().save_config())
        where = config["learner"]["generic_param"]["device"]
        if wanted_gpu and not where.startswith("cuda"):
            raise FallbackError(f"silent CPU fallback: XGBoost was asked for device=cuda "
                                f"but its booster trained on {where!r}")
        return f"{where} (XGBoost booster config)"
    if not wanted_gpu:
        return "cpu"
    evidence = [] if gpu_growth_mb is None else [f"device memory +{gpu_growth_mb:.1f} MB during fit"]
    if spec["library"] == "cuml":
        where = device.cuml_device_type()
        if where == "cpu":
            raise FallbackError("silent CPU fallback: cuML's global device type is 'cpu'")
        evidence.append(f"cuML device_type={where or 'gpu-only build'}")
    return "cuda (" + "; ".join(evidence) + ")"


def thread_pools() -> str:
    """The native thread pools loaded in this process and their sizes, e.g. 'openblas:2 openmp:2'."""
    pools = [f"{info['internal_api']}:{info['num_threads']}" for info in threadpool_info()]
    return " ".join(sorted(set(pools))) or "none loaded"


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
