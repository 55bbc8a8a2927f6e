"""Run one case in this process and return a plain result record (a JSON-able dict).

The suite calls this through `mlcompare.measure.worker` in a fresh process per case, so the cold
fit really is the first fit in the process and a crash cannot take the suite down.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from mlcompare.config.imports import ALLOWED_MODULE_PREFIXES, import_estimator
from mlcompare.data import cache as datasets
from mlcompare.measure import cluster as dask_cluster
from mlcompare.measure import device, energy, latency, memory, quality, stats, timing
from mlcompare.measure.audit import effective_params, library_version, verify_device
from mlcompare.measure.threads import thread_pools, with_threads
from mlcompare.pairings.tasks import EMBEDDING_SAMPLE, TASKS
from mlcompare.records import CaseRecord, CaseSpec, Status


def run_case(spec: CaseSpec) -> CaseRecord:
    """Fit, time, predict and score one case; raises on any failure."""
    on_gpu = spec["device"] == "gpu"
    threads = spec.get("threads")
    plugin = None
    if spec.get("plugin"):
        from mlcompare.config import plugins

        plugin = plugins.hooks(spec["plugin"])  # registers its metrics in this process too
    # Imported first: threadpoolctl limits only the native pools already loaded.
    allowed = tuple(spec.get("allowed_modules") or ALLOWED_MODULE_PREFIXES)
    estimator_cls = import_estimator(spec["estimator"], allowed)
    # CPU implementations get exactly the experiment's thread count in every native pool
    # (BLAS, OpenMP); GPU implementations keep the library's own host-side defaults.
    limits = threadpool_limits(limits=threads) if threads and not on_gpu else contextlib.nullcontext()
    params, cluster_settings = dask_cluster.split_params(spec["params"])
    # a distributed implementation trains on a Dask cluster, started (or reached) here
    dask = dask_cluster.cluster(cluster_settings, on_gpu, threads) if spec.get("distributed") else None
    with limits, dask or contextlib.nullcontext() as cluster:
        return _run(spec, on_gpu, estimator_cls, plugin, params, cluster)


def _run(spec: CaseSpec, on_gpu: bool, estimator_cls: type, plugin: Any = None,
         params: dict[str, Any] | None = None, cluster: dask_cluster.Cluster | None = None) -> dict[str, Any]:
    task = TASKS[spec["task"]]
    repeats, min_time_s = spec["repeats"], spec.get("min_time_s", 0.0)
    params = spec["params"] if params is None else params
    if cluster is not None:  # each worker's thread count is the cluster's business
        params = cluster.estimator_params(estimator_cls, params)
    elif not on_gpu:
        params = with_threads(estimator_cls, params, spec.get("threads"))
    accelerated = bool(spec.get("accelerator"))
    # Device-resident inputs for GPU libraries; an accelerator takes numpy, as user code would,
    # and so does a GPU library that copies its input itself (host_input: CatBoost).
    device_input = on_gpu and not accelerated and not spec.get("host_input") and cluster is None
    # Distributed results are computed into this process, which has waited for them: there
    # is no device work of its own to wait for.
    sync = on_gpu and cluster is None
    needed = quality.needs(spec["metrics"])

    # 1. load: pyarrow into numpy on the CPU; cuDF straight into device memory on the GPU
    directory = Path(spec["dataset_dir"])
    host, load = timing.timed(lambda: datasets.load_split(directory), False)
    prepare = plugin.prepare if plugin is not None else None
    if prepare is not None:  # a plugin's data preparation, untimed, identical for every implementation
        host = _prepared(prepare(dict(host)), host)
    transfer_in = 0.0
    data = host
    if device_input:
        to_device = lambda: {k: device.to_device(v) for k, v in host.items() if k != "y_test"}  # noqa: E731
        if prepare is None:
            data, load = timing.timed(lambda: device.load_split(directory), on_gpu)
            # what moving the same numpy arrays to the device costs, measured on its own
            _, transfer_in = timing.timed(to_device, on_gpu)
        else:  # prepared arrays exist on the host only
            data, transfer_in = timing.timed(to_device, on_gpu)
    elif cluster is not None:  # each worker gets its block of rows
        data, transfer_in = timing.timed(lambda: cluster.place(_labels_for(task, host), on_gpu, task.supervised), False)

    def fitter(arrays: dict[str, Any]):
        args = (arrays["X_train"], arrays["y_train"]) if task.supervised else (arrays["X_train"],)
        return lambda: estimator_cls(**params).fit(*args)

    # 2. cold fit: the first in this process (imports done; CUDA context, JIT, caches not yet)
    _, cold = timing.timed(fitter(data), sync)
    # 3. warm fits from a fresh estimator each, data already where the library computes; the
    # energy counters (NVML for GPU cases, RAPL for CPU ones) are read before and after them
    with energy.meter(on_gpu, cluster) as fit_energy:
        model, fit_times = timing.repeat(fitter(data), sync, repeats, min_time_s)
    # one more, untimed, for memory: a sampling thread must not share the cores with timed fits
    profile = device.accel_profile() if accelerated else contextlib.nullcontext()
    tree = cluster is not None and cluster.local  # a local cluster's workers are this process's children
    with profile as accel_report, memory.PeakMemory(gpu=sync, children=tree) as peak:
        _, memory_fit = timing.timed(fitter(data), sync)
    ran_on = verify_device(model, spec, peak.gpu_mb, accel_report)
    # 3b. the same fits given host (numpy) arrays: what a user calling fit(X) pays on a GPU,
    # or, distributed, spreading the arrays over the workers first
    host_fit_times = fit_times
    if device_input:
        host_fit_times = timing.repeat(fitter(host), sync, repeats)[1]
    elif cluster is not None:
        spread_and_fit = lambda: fitter(cluster.place(_labels_for(task, host), on_gpu, task.supervised))()  # noqa: E731
        host_fit_times = timing.repeat(spread_and_fit,
                                        False, repeats)[1]

    # 4. what the task takes out of the model: predictions, labels, a projection, an embedding
    finish = dask_cluster.collect if cluster is not None else None
    raw, predict_times, extra_time = _outputs(task.output, model, data, needed, sync, repeats, finish)

    # 4b. predict latency by batch size: warm calls, host batch in, host predictions out
    by_batch = latency.LatencyResult()
    if spec.get("predict_batch_sizes") and cluster is None:
        by_batch = latency.measure(model, task.output, host["X_test"], spec["predict_batch_sizes"],
                                   device_input=device_input, on_gpu=sync,
                                   budget_s=spec.get("predict_latency_budget_s", latency.DEFAULT_BUDGET_S))
    elif spec.get("predict_batch_sizes"):
        by_batch = latency.LatencyResult(note="not measured for distributed implementations")

    # 5. results back to the host
    outputs, transfer_out = timing.timed(
        lambda: {k: None if v is None else device.to_host(v) for k, v in raw.items()}, False)
    y_true, agree = _scored_rows(task.output, host, outputs)
    if spec.get("predictions_path"):
        np.save(spec["predictions_path"], np.asarray(agree), allow_pickle=False)

    # 6. quality on the host, one shared function per metric
    scores = quality.score_all(tuple(spec["metrics"]), y_true, outputs)
    fit, host_fit = stats.summarise(fit_times), stats.summarise(host_fit_times)
    predict = stats.summarise(predict_times) if predict_times else None
    transfer = transfer_in + (transfer_out if device_input or cluster is not None else 0.0)
    metrics = {
        "fit_time_s": fit["median"], "fit_time_min_s": fit["min"], "fit_time_iqr_s": fit["iqr"],
        "fit_time_cv": fit["cv"], "fit_cold_time_s": cold, "fit_repeats": len(fit_times),
        "fit_host_input_time_s": host_fit["median"],
        "transfer_time_s": transfer, "load_time_s": load,
        "end_to_end_time_s": transfer + fit["median"] + (predict["median"] if predict else 0.0),
        "fit_peak_host_memory_mb": peak.host_mb,
        "peak_host_memory_mb": memory.peak_rss_mb(),
        **scores, **fit_energy.metrics(len(fit_times)), **by_batch.metrics,
    }
    if predict:  # tasks without a separate predict/transform call (labels_, embedding_) have none
        metrics["predict_time_s"] = predict["median"]
    if peak.gpu_mb is not None:
        metrics["fit_peak_gpu_memory_mb"] = peak.gpu_mb
    extra: dict[str, Any] = {**fit_energy.record(), **by_batch.record()}
    if cluster is not None:
        metrics["cluster_start_time_s"] = cluster.start_time_s
        if not cluster.local:  # the workers' memory is on other machines: unmeasured
            del metrics["fit_peak_host_memory_mb"]
        ran_on = f"{ran_on}; {cluster.describe()}"
        extra["cluster"] = {"workers": len(cluster.workers), "threads_per_worker": cluster.threads_per_worker,
                            "kind": cluster.kind}
    return {
        "status": Status.OK,
        "metrics": metrics,
        "fit_times": fit_times,
        "fit_host_times": host_fit_times,
        "effective_params": effective_params(model),
        "ran_on": ran_on,
        "threadpools": cluster.thread_pools() if cluster is not None else thread_pools(),
        "library_version": library_version(spec["library"]),
        # seconds spent in the model's own calls, timed or not (for the harness-overhead bench)
        "model_time_s": cold + sum(fit_times) + memory_fit + (sum(host_fit_times) if device_input else 0.0)
        + sum(predict_times) + extra_time + transfer + by_batch.seconds,
        **extra,
    }


def _labels_for(task: Any, host: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Class labels as int32 (what cuml.dask's forest requires and XGBoost accepts)."""
    if task.name != "classification":
        return host
    return {**host, "y_train": host["y_train"].astype(np.int32)}


def _outputs(output: str, model: Any, data: dict[str, Any], needed: set[str], on_gpu: bool,
             repeats: int, finish: Any = None) -> tuple[dict[str, Any], list[float], float]:
    """(raw outputs, timed predict/transform seconds, other model seconds) for a task's output kind.

    `finish` turns a lazy result into a computed one inside the timed call (Dask's).
    """
    finish = finish or (lambda value: value)
    if output == "predict":
        pred, times = timing.repeat(lambda: finish(model.predict(data["X_test"])), on_gpu, repeats)
        proba, proba_time = timing.timed(
            lambda: finish(model.predict_proba(data["X_test"])) if "proba" in needed else None, on_gpu)
        centers = model.cluster_centers_ if "centers" in needed else None
        return {"pred": pred, "proba": proba, "centers": centers}, times, proba_time
    if output == "transform":
        transformed, times = timing.repeat(lambda: finish(model.transform(data["X_test"])), on_gpu, repeats)
        return {"transformed": transformed, "components": model.components_,
                "mean": getattr(model, "mean_", None)}, times, 0.0
    if output == "labels":
        return {"pred": model.labels_}, [], 0.0
    if output == "embedding":
        return {"embedding": model.embedding_}, [], 0.0
    raise ValueError(f"unknown task output {output!r}")


def _scored_rows(output: str, host: dict[str, np.ndarray], outputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Fill in the rows the outputs describe (outputs['X']); return the labels to score against
    and the array two implementations' agreement is measured on."""
    if output == "predict":
        outputs["X"] = host["X_test"]
        return host["y_test"], outputs["pred"]
    if output == "labels":
        outputs["X"] = host["X_train"]
        return host["y_train"], outputs["pred"]
    if output == "transform":
        outputs["X"] = host["X_test"]
        return host["y_test"], outputs["components"]
    m = min(EMBEDDING_SAMPLE, len(host["X_train"]))  # embedding: the first rows (the split is shuffled)
    outputs["X"], outputs["embedding"] = host["X_train"][:m], np.asarray(outputs["embedding"])[:m]
    return host["y_train"][:m], outputs["embedding"]


def _prepared(split: Any, original: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A plugin's prepared data, checked: the same four arrays, rows matching."""
    if not isinstance(split, dict) or set(split) != set(original):
        raise ValueError(f"the plugin's prepare() must return a dict with keys {sorted(original)}")
    out = {k: np.ascontiguousarray(v) for k, v in split.items()}
    for part in ("train", "test"):
        if len(out[f"X_{part}"]) != len(out[f"y_{part}"]):
            raise ValueError(f"the plugin's prepare() returned X_{part} and y_{part} of different lengths")
    return out
