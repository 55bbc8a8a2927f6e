"""Run one case in this process and return a plain result record (a JSON-able dict).

The suite calls this through `mlcompare.measure.worker` in a process of its own per case (a fresh
one, or one forked from the warm worker, which never fits), so the cold fit really is the first
fit in the process and a crash cannot take the suite down.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from mlcompare.measure import cluster as dask_cluster
from mlcompare.measure import device, disturbance, energy, latency, memory, stats, timed_lock, timing
from mlcompare.measure import inputs as case_inputs
from mlcompare.measure.audit import (
    audited,
    effective_params,
    fitted_counts,
    library_version,
    output_evidence,
    verify_device,
)
from mlcompare.measure.threads import limit_pools, thread_pools, with_threads
from mlcompare.pairings import quality
from mlcompare.pairings.cluster_params import split_params
from mlcompare.pairings.imports import ALLOWED_MODULE_PREFIXES, import_estimator
from mlcompare.pairings.tasks import EMBEDDING_SAMPLE, TASKS
from mlcompare.records import CaseRecord, CaseSpec, Status


def run_case(spec: CaseSpec) -> CaseRecord:
    """Fit, time, predict and score one case; raises on any failure."""
    on_gpu = spec["device"] == "gpu"
    threads = spec.get("threads")
    plugin = None
    if spec.get("plugin"):
        from mlcompare.pairings import plugins

        plugin = plugins.hooks(spec["plugin"])  # registers its metrics in this process too
    # Imported first: threadpoolctl limits only the native pools already loaded.
    allowed = tuple(spec.get("allowed_modules") or ALLOWED_MODULE_PREFIXES)
    estimator_cls = import_estimator(spec["estimator"], allowed)
    # CPU implementations get exactly the experiment's thread count in every native pool
    # (BLAS, OpenMP); GPU implementations get it as their estimator's host-thread parameter
    # (below), their native pools left to the library.
    limits = limit_pools(threads) if threads and not on_gpu else contextlib.nullcontext()
    params, cluster_settings = split_params(spec["params"])
    # a distributed implementation trains on a Dask cluster, started (or reached) here
    dask = dask_cluster.cluster(cluster_settings, on_gpu, threads) if spec.get("distributed") else None
    with limits, dask or contextlib.nullcontext() as cluster:
        return _run(spec, on_gpu, estimator_cls, plugin, params, cluster)


def _run(spec: CaseSpec, on_gpu: bool, estimator_cls: type, plugin: Any = None,
         params: dict[str, Any] | None = None, cluster: dask_cluster.Cluster | None = None) -> CaseRecord:
    task = TASKS[spec["task"]]
    repeats, min_time_s = spec["repeats"], spec.get("min_time_s", 0.0)
    params = spec["params"] if params is None else params
    if cluster is not None:  # each worker's thread count is the cluster's business
        params = cluster.estimator_params(estimator_cls, params)
    else:  # a GPU library's host-side threads too (XGBoost's n_jobs, CatBoost's thread_count): the baseline's
        params = with_threads(estimator_cls, params, spec.get("threads"))
    accelerated = bool(spec.get("accelerator"))
    # Device-resident inputs for GPU libraries; an accelerator takes numpy, as user code would,
    # and so does a GPU library that copies its input itself (host_input: CatBoost).
    device_input = on_gpu and not accelerated and not spec.get("host_input") and cluster is None
    # Distributed results are computed into this process, which has waited for them: there
    # is no device work of its own to wait for.
    sync = on_gpu and cluster is None
    # A case's first process describes it (quality, agreement, fitted counts, parameters, thread
    # pools): the suite keeps that one (`suite.rounds.pool_rounds`); its later processes time only.
    describe = spec.get("describe", True)
    needed = quality.needs(spec["metrics"]) if describe else set()

    # 1. inputs: device initialised (GPU), dataset read, laid out, moved to the device (measure/inputs.py)
    prepare = plugin.prepare if plugin is not None else None
    inputs = case_inputs.load(spec["dataset_dir"], spec.get("order", "C"), on_gpu, device_input,
                              (lambda split: _prepared(prepare(split), split)) if prepare is not None else None,
                              reader=spec.get("reader"), library=spec["library"],
                              reader_note=spec.get("reader_note", ""))
    host, data, load, transfer_in = inputs.host, inputs.data, inputs.load_s, inputs.transfer_in_s
    gpu_start = device.gpu_state() if on_gpu else None
    if cluster is not None:  # each worker gets its block of rows
        data, transfer_in = timing.timed(lambda: cluster.place(_labels_for(task, host), on_gpu, task.supervised), False)

    def fitter(arrays: dict[str, Any]):
        args = (arrays["X_train"], arrays["y_train"]) if task.supervised else (arrays["X_train"],)
        return lambda: estimator_cls(**params).fit(*args)

    # 2. cold fit: the first in this process (imports done; JIT, caches and lazy set-up not yet).
    # Its memory is the case's memory figure: a later fit would reuse what earlier ones freed.
    # cuml.accel's profiler spans every timed call, from the cold fit to the last predict: a
    # CPU fallback in a warm fit or a predict must not be timed as GPU work (see the audit)
    profiling = contextlib.ExitStack()
    accel_report = profiling.enter_context(device.accel_profile()) if accelerated else None
    tree = cluster is not None and cluster.local  # a local cluster's workers are this process's children
    # this process's own device memory (never the device-wide figure): see device.gpu_memory_meter
    gpu_meter = device.gpu_memory_meter(spec["library"]) if sync else contextlib.nullcontext()
    # what other processes take of the CPUs from here to the last timed call (`disturbance`)
    others = disturbance.OtherProcesses(children=tree).start()
    # The suite's plan (`suite.plan`): where the first fit of a case's processes was found not to
    # differ from the next ones, it is the first value instead of a warm-up spent apart. Its
    # energy is then read with the others'. Never where a thread samples memory beside it.
    warm_up_fit = spec.get("fit_warmup", True) or not memory.nothing_beside(children=tree)
    fit_energy = energy.meter(on_gpu, cluster)
    metering = contextlib.ExitStack()
    if not warm_up_fit:
        metering.enter_context(fit_energy)
    # marked for the suite, which reads how long the first fit ran if it has to stop this process
    timing.mark(spec.get("progress_path"), timing.FIRST_FIT)
    with memory.FitMemory(children=tree) as host_peak, gpu_meter as gpu_memory:
        first_model, cold = timing.timed(fitter(data), sync)
    first_ended = time.perf_counter()
    timing.mark(spec.get("progress_path"), timing.AFTER_FIRST_FIT)
    gpu_mb = gpu_memory.peak_mb if gpu_memory is not None else None
    # 2b. where the case's first processes found the values just after the first fit slower
    # than the later ones (what it started still running: `timing.SETTLE_S`), more warm-ups
    settled = timing.settle(fitter(data), sync, first_ended, spec.get("fit_settle_s", 0.0)) \
        if warm_up_fit else timing.Settled()
    # 3. warm fits from a fresh estimator each, data already where the library computes; the
    # energy counters (NVML for GPU cases, RAPL for CPU ones) are read before and after them
    if warm_up_fit:
        metering.enter_context(fit_energy)
    # a suite's plan gives what the process spends around its values: values enough to outweigh it
    planned = "process_overhead_s" in spec
    fit_min_s = min_time_s
    if planned:
        fit_min_s = timing.values_time_s(min_time_s, spec["process_overhead_s"])
    # a case's first process takes values past SETTLE_S, for the plan to compare (`suite.plan`)
    calibrate_until = first_ended + timing.SETTLE_S if spec.get("fit_calibrate") else None
    with metering:
        fits = timing.repeat(fitter(data), sync, repeats, fit_min_s, first=None if warm_up_fit else (first_model, cold),
                             calibrate_until=calibrate_until, first_call_s=cold)
    model, fit_times = fits.result, fits.times
    ran_on = verify_device(model, spec, gpu_mb) if not accelerated else ""
    # 3b. the same fits given host (numpy) arrays: what a user calling fit(X) pays on a GPU,
    # or, distributed, spreading the arrays over the workers first
    host_fits = fits
    if device_input:
        host_fits = timing.repeat(fitter(host), sync, repeats, fit_min_s)
    elif cluster is not None:
        spread_and_fit = lambda: fitter(cluster.place(_labels_for(task, host), on_gpu, task.supervised))()  # noqa: E731
        host_fits = timing.repeat(spread_and_fit, False, repeats, fit_min_s)
    host_fit_times = host_fits.times

    # 4. what the task takes out of the model: predictions (or a projection) brought back to
    # the host inside every timed call, the first call apart; or labels / an embedding
    finish = dask_cluster.collect if cluster is not None else None
    outputs, predicting = _outputs(task.output, model, data, needed, sync, repeats, min_time_s, finish,
                                   warm_up=spec.get("predict_warmup", True))
    ran_on = output_evidence(ran_on, spec, predicting.raw, device_input)

    # 4b. predict latency by batch size: warm calls, host batch in, host predictions out
    by_batch = latency.LatencyResult()
    if spec.get("predict_batch_sizes") and cluster is None:
        by_batch = latency.measure(model, task.output, host["X_test"], spec["predict_batch_sizes"],
                                   device_input=device_input, on_gpu=sync,
                                   budget_s=spec.get("predict_latency_budget_s", latency.DEFAULT_BUDGET_S))
    elif spec.get("predict_batch_sizes"):
        by_batch = latency.LatencyResult(note="not measured for distributed implementations")

    others.stop()
    profiling.close()  # cuml.accel: every timed call profiled, the report complete
    if accelerated:
        calls = ("fit", *([latency.CALLS[task.output]] if task.output in latency.CALLS else []))
        ran_on = verify_device(model, spec, gpu_mb, accel_report, calls)
    timed_lock.release()  # the last timed call is over: the suite's writer may use the cores now

    # 5. quality on the host, one shared function per metric, on the rows the outputs describe
    described = _description(spec, task.output, host, outputs, model, cluster) if describe else None
    metrics = {
        **timing_metrics(fit_times, host_fit_times, predicting.times, transfer_in, load),
        "fit_cold_time_s": cold, "transfer_time_s": transfer_in, "load_time_s": load,
        "fit_peak_host_memory_mb": host_peak.host_mb,
        "peak_host_memory_mb": memory.peak_rss_mb(),
        **(described.metrics if described else {}), **fit_energy.metrics(fits.calls), **by_batch.metrics,
        "fit_loops": fits.loops, "fit_warmups": 0 if fits.first_given else 1 + settled.calls,
    }
    if predicting.loops:
        metrics["predict_loops"] = predicting.loops
        metrics["predict_warmups"] = predicting.warmups
    if predicting.cold is not None:
        metrics["predict_cold_time_s"] = predicting.cold
    if gpu_mb is not None:
        metrics["fit_peak_gpu_memory_mb"] = gpu_mb
    if others.cores is not None:
        metrics["cpu_others_cores_during_timed"] = others.cores
    extra: dict[str, Any] = {"load_reader": inputs.reader, **fit_energy.record(), **by_batch.record()}
    if by_batch.calls:  # pooled over the rounds by the suite (`suite.rounds`)
        extra["latency_calls"] = {str(n): times for n, times in by_batch.calls.items()}
    if others.note:
        extra["cpu_others_note"] = others.note
    if inputs.reader_note:
        extra["load_reader_note"] = inputs.reader_note
    if inputs.read_by_server_s is not None:
        extra["load_by_server_s"] = inputs.read_by_server_s
        extra["load_in_process_s"] = inputs.load_in_process_s
    if gpu_memory is not None:
        extra["gpu_memory_method"] = gpu_memory.describe()
    if on_gpu:
        metrics["device_init_time_s"] = cast(float, inputs.device_init_s)  # timed by `load` for a GPU case
        extra.update(device.memory_setup())
        extra.update(_gpu_clocks(gpu_start, device.gpu_state(), metrics))
    if cluster is not None:
        metrics["cluster_start_time_s"] = cluster.start_time_s
        if not cluster.local:  # the workers' memory is on other machines: unmeasured
            del metrics["fit_peak_host_memory_mb"]
        ran_on = f"{ran_on}; {cluster.describe()}"
        extra["cluster"] = {"workers": len(cluster.workers), "threads_per_worker": cluster.threads_per_worker,
                            "kind": cluster.kind}
    record: CaseRecord = {
        "status": Status.OK,
        "metrics": metrics,
        "fit_times": fit_times,
        "fit_host_times": host_fit_times,
        "predict_times": predicting.times,
        "ran_on": ran_on,
        "memory_method": host_peak.method,
        # seconds spent in the model's own calls, timed or not, and in those whose values are
        # reported (for the harness-overhead bench)
        "model_time_s": cold + settled.seconds + fits.spent_s + (host_fits.spent_s if host_fits is not fits else 0.0)
        + predicting.total + transfer_in + by_batch.seconds,
        # the first fit (predict): a value where it is the first one, else `fit_cold_time_s`'s own
        "reported_time_s": _in_values(fits) + (_in_values(host_fits) if host_fits is not fits else 0.0)
        + predicting.in_values + (0.0 if fits.first_given else cold)
        + ((predicting.cold or 0.0) if predicting.warmups else 0.0),
    }
    if described:
        described.into(record)
    if calibrate_until is not None:  # when each value started, after the first fit ended
        record["fit_value_offsets_s"] = [start - first_ended for start in fits.starts]
    return cast(CaseRecord, {**record, **extra})  # `extra` holds record keys only


@dataclass
class Description:
    """What a case's first process says of it beside its times (its later ones take none): metrics
    (quality, fitted counts), parameters, audit, thread pools, library version, and where it saved
    the predictions the agreement is measured on."""

    metrics: dict[str, float]
    effective_params: dict[str, str]
    audited: dict[str, str]
    threadpools: str
    library_version: str
    predictions_path: str | None

    def into(self, record: CaseRecord) -> None:
        """Its record keys set on `record`."""
        record |= {"effective_params": self.effective_params, "audited": self.audited,
                   "threadpools": self.threadpools, "library_version": self.library_version}
        if self.predictions_path:
            record["predictions_path"] = self.predictions_path


def _description(spec: CaseSpec, output: str, host: dict[str, np.ndarray], outputs: dict[str, Any], model: Any,
                 cluster: dask_cluster.Cluster | None) -> Description:
    """The case described from its fitted model and outputs; its predictions saved for agreement."""
    y_true, agree = _scored_rows(output, host, outputs)
    saved = spec.get("predictions_path")
    if saved:
        np.save(saved, np.asarray(agree), allow_pickle=False)
    scores = quality.score_all(tuple(spec["metrics"]), y_true, outputs)
    return Description({**fitted_counts(model), **scores}, effective_params(model),
                       audited(model, spec.get("audit_keys") or {}),
                       cluster.thread_pools() if cluster is not None else thread_pools(),
                       library_version(spec["library"]), saved)


def timing_metrics(fit_times: list[float], host_fit_times: list[float], predict_times: list[float],
                   transfer_s: float, load_s: float = 0.0) -> dict[str, float]:
    """The timing metrics of this one process's repeats: summaries and the end-to-end time
    (load, transfer, median fit, median predict: with cuDF the copy to the device is in the
    load, read on the host: in the transfer). No interval: repeats inside one process are not
    independent draws of the next run; the suite takes intervals over processes
    (`mlcompare.suite.rounds`)."""
    fit = stats.summarise(fit_times)
    out = {"fit_time_s": fit["median"], "fit_time_min_s": fit["min"], "fit_time_iqr_s": fit["iqr"],
           "fit_time_cv": fit["cv"], "fit_repeats": len(fit_times),
           "fit_host_input_time_s": stats.summarise(host_fit_times)["median"]}
    if predict_times:  # tasks without a separate predict/transform call (labels_, embedding_) have none
        predict = stats.summarise(predict_times)
        out |= {"predict_time_s": predict["median"], "predict_time_cv": predict["cv"],
                "predict_repeats": len(predict_times)}
    out["end_to_end_time_s"] = load_s + transfer_s + out["fit_time_s"] + out.get("predict_time_s", 0.0)
    return out


def _gpu_clocks(start: dict[str, Any] | None, end: dict[str, Any] | None,
                metrics: dict[str, float]) -> dict[str, str]:
    """The GPU's SM clock at the case's start and end as metrics; why clocks were held down, as a tag."""
    reasons = []
    for when, state in (("start", start), ("end", end)):
        if state and "sm_clock_mhz" in state:
            metrics[f"gpu_sm_clock_{when}_mhz"] = state["sm_clock_mhz"]
        if state and "clock_reasons" in state:
            reasons.append(f"{when}: {state['clock_reasons']}")
    return {"gpu_clock_reasons": "; ".join(reasons)} if reasons else {}


def _labels_for(task: Any, host: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Class labels as int32 (what cuml.dask's forest requires and XGBoost accepts)."""
    if task.name != "classification":
        return host
    return {**host, "y_train": host["y_train"].astype(np.int32)}


@dataclass
class Predicting:
    """The timed predict (or transform) calls of a case: the first apart, the warm ones."""

    cold: float | None = None
    times: list[float] = field(default_factory=list)
    loops: int = 0  # calls per value (timing.repeat); 0: no timed calls
    total: float = 0.0  # every second spent in the model's output calls, timed or not
    raw: dict[str, Any] = field(default_factory=dict)  # each output as the library returned it (first call)
    warmups: int = 1  # 0: the first call was the first value (`predict_warmup` off, and timed alone)
    in_values: float = 0.0  # seconds of the calls whose values are the reported ones


def _outputs(output: str, model: Any, data: dict[str, Any], needed: set[str], on_gpu: bool,
             repeats: int, min_time_s: float, finish: Any = None,
             warm_up: bool = True) -> tuple[dict[str, Any], Predicting]:
    """(outputs on the host, the timed calls) for a task's output kind.

    Every timed predict or transform ends at the same point for every implementation:
    its result is a numpy array in host memory (a GPU library's device array is copied
    back inside the timer, as XGBoost's own predict does). `finish` turns a lazy result
    into a computed one (Dask's). The first call is timed apart: model upload, predictor
    set-up and JIT happen there; unless `warm_up` is off (the suite found it does not differ
    from the next ones), when it is also the first value.
    """
    finish = finish or (lambda value: value)
    raw: dict[str, Any] = {}  # the first result of each call, as the library returned it

    def call(method: str, name: str):
        def run() -> Any:
            result = finish(getattr(model, method)(data["X_test"]))
            raw.setdefault(name, result)
            return device.to_host(result)
        return run

    if output in ("predict", "transform"):
        method, name = ("predict", "pred") if output == "predict" else ("transform", "transformed")
        first = timing.timed(call(method, name), on_gpu)
        cold = first[1]
        predicts = timing.repeat(call(method, name), on_gpu, repeats, min_time_s, first=None if warm_up else first)
        result = predicts.result
        predicting = Predicting(cold, predicts.times, predicts.loops, cold + predicts.spent_s, raw,
                                warmups=0 if predicts.first_given else 1, in_values=_in_values(predicts))
        if output == "transform":
            return {"transformed": result, "components": device.to_host(model.components_),
                    "mean": _host_or_none(getattr(model, "mean_", None))}, predicting
        proba = None
        if "proba" in needed:
            proba, proba_time = timing.timed(call("predict_proba", "proba"), on_gpu)
            predicting.total += proba_time
        centers = device.to_host(model.cluster_centers_) if "centers" in needed else None
        return {"pred": result, "proba": proba, "centers": centers}, predicting
    if output == "labels":
        return {"pred": device.to_host(model.labels_)}, Predicting(raw={"pred": model.labels_})
    if output == "embedding":
        return {"embedding": device.to_host(model.embedding_)}, Predicting(raw={"embedding": model.embedding_})
    raise ValueError(f"unknown task output {output!r}")


def _in_values(repeated: timing.Repeated) -> float:
    """The seconds of the calls whose values are reported."""
    return sum(repeated.times) * repeated.loops


def _host_or_none(value: Any) -> Any:
    return None if value is None else device.to_host(value)


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
