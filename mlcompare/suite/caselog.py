"""A finished case's record as an MLflow child run: its params, metrics, tags and texts.

The suite hands the result to a recorder (`mlcompare.records.Recorder`: the names it may
carry are declared there too); only `mlcompare.tracking.writer.Recorder` talks to MLflow.
"""

from __future__ import annotations

from typing import Any, cast

from mlcompare.config.experiment import Case, Experiment
from mlcompare.config.pairing import EqualQuality, Implementation
from mlcompare.config.selection import point_label
from mlcompare.measure import cluster as dask_cluster
from mlcompare.pairings.cluster_params import split_params
from mlcompare.records import CASE_HISTORIES, RECORD_TAGS, RUN_STATUS, CaseRecord, Recorder, Status
from mlcompare.suite.case_cost import cost_note


def log_case(recorder: Recorder, case: Case, record: CaseRecord, experiment: Experiment, threads: int,
             fingerprint: dict[str, str], number: int) -> None:
    """`number`: the case's place in the experiment (1, 2, ...), which the report lists cases by:
    a suite of several rounds writes each case's run as the case ends, in no fixed order."""
    impl, pairing, spec = case.implementation, case.pairing, case.dataset
    params: dict[str, Any] = {
        "case_number": number,
        "pairing": pairing.name, "implementation": impl.name, "library": impl.library,
        "device": impl.device, "dataset": spec.name, "dataset_kind": spec.kind,
        "n_samples": record["n_samples"] or "all", "n_features": record["n_features"] or "as the data has",
        "dtype": spec.dtype, "order": spec.order, "seed": spec.seed,
        "training_rows": record.get("training_rows") or "unknown",
        "repeats": experiment.repeats, "min_time_s": experiment.min_time_s, "rounds": experiment.rounds,
        "min_rounds": min(experiment.min_rounds, experiment.rounds), "precision": experiment.precision,
        "threads": record.get("threads", case.threads or threads) if impl.device == "cpu" else _gpu_threads(record),
        "input_modes": _input_modes(impl),
        "estimator": impl.estimator,
        **{f"shared.{k}": v for k, v in pairing.params.items()},
    }
    if impl.accelerator:
        params["accelerator"] = impl.accelerator
    params["parity_tolerance"] = pairing.parity_tolerance
    if case.ladder_value is not None:  # a point of an equal-quality curve (the baseline: its reference)
        budget = cast(EqualQuality, pairing.equal_quality).budget  # a ladder is only given to a pairing with one
        params["equal_quality.budget"] = budget
        params["equal_quality.value"] = case.ladder_value
        params["equal_quality.reference"] = pairing.params[budget]
    elif experiment.equal_quality and pairing.equal_quality and pairing.equal_quality.exact:
        params["equal_quality.exact"] = pairing.equal_quality.exact
    if impl.device in experiment.cost_per_hour:
        params["price_per_hour_usd"] = experiment.cost_per_hour[impl.device]
    if experiment.predict_batch_sizes:
        params["predict_batch_sizes"] = ",".join(map(str, sorted(experiment.predict_batch_sizes)))
        params["predict_latency_budget_s"] = experiment.predict_latency_budget_s
    if impl.distributed:
        params.update(_cluster_params(case, record))
    if case.shared_point or case.impl_point:
        # each swept value as its own param, so the UI's charts can use it as an axis
        params["sweep"] = point_label(case.shared_point + case.impl_point)
        params.update({f"sweep.{k}": v for k, v in case.shared_point + case.impl_point})
        # which part the baseline follows (a row of the comparison) and which is this
        # implementation's own (a column of its own)
        if case.shared_point:
            params["sweep_shared"] = point_label(case.shared_point)
        if case.impl_point:
            params["sweep_own"] = point_label(case.impl_point)
    effective = record.get("effective_params") or pairing.estimator_params(impl)
    params.update({f"estimator.{k}": v for k, v in effective.items()})
    params.update({f"audit.{k}": v for k, v in (record.get("audited") or {}).items()})
    tags = {"mlcompare.kind": "case", "case_status": record["status"], "baseline": pairing.baseline,
            "main_metric": pairing.main_metric,
            "dataset_fingerprint": spec.fingerprint(), "task": pairing.task, **fingerprint}
    if pairing.plugin:
        tags["plugin"] = pairing.plugin
    # declared in the pairing file, then found by comparing what both estimators really used
    differences = pairing.differences(impl) + [f"found: {d}" for d in record.get("found_differences", [])]
    if differences:
        tags["param_differences"] = " | ".join(differences)
    for key in RECORD_TAGS:
        if record.get(key):
            tags[key] = str(record[key])
    if record.get("process"):
        tags["case_process"] = record["process"]  # forked from the warm worker, or a fresh Python
    if record.get("failure"):
        tags["failure_reason"] = record["failure"]
    if record.get("status") == Status.OK and cost_note(impl.device, record, experiment.cost_per_hour):
        tags["cost_note"] = cost_note(impl.device, record, experiment.cost_per_hour)
    texts = {"worker_stderr.txt": record["stderr_tail"]} if record.get("stderr_tail") else None
    status = RUN_STATUS[record["status"]]
    history = {name: record[key] for name, key in CASE_HISTORIES.items() if record.get(key)}
    dataset_input = None
    if record.get("dataset_sha256"):
        dataset_input = {"name": spec.label, "digest": record["dataset_sha256"][:16],
                         "source": record["dataset_source"], "rows": record["n_samples"],
                         "features": record["n_features"], "dtype": spec.dtype}
    metrics = dict(record.get("metrics", {}))
    if "model_time_s" in record:  # the case's time inside the model's calls: all of it, and the reported part
        metrics["model_time_s"] = record["model_time_s"]
    if "reported_time_s" in record:
        metrics["reported_time_s"] = record["reported_time_s"]
    recorder.log_case(case.name, status, params, metrics, tags, history=history, texts=texts,
                      dataset=dataset_input)


def _gpu_threads(record: CaseRecord) -> str:
    """A GPU case's host-side threads: its estimator's thread parameter, set to the CPU baseline's
    count where it has one (XGBoost's n_jobs, CatBoost's thread_count), else the library's default."""
    from mlcompare.measure.threads import THREAD_PARAMS

    used = record.get("effective_params") or {}
    found = next((f"host: {used[name]}" for name in THREAD_PARAMS if name in used and used[name] not in ("None", "-1")),
                 None)
    return found or "library default"


def _input_modes(impl: Implementation) -> str:
    """Where the timed fits find their data (`fit_time_s`), then the host-input fits' (numpy)."""
    if impl.distributed:
        return "dask,host"  # spread over the workers already; numpy arrays spread first
    # an accelerator takes numpy arrays, as the unchanged user code would; so does a library that
    # copies its input to the GPU itself (host_input)
    return "device,host" if impl.device == "gpu" and not impl.accelerator and not impl.host_input else "host"


def _cluster_params(case: Case, record: CaseRecord) -> dict[str, Any]:
    """A distributed case's cluster as params (`dask_workers` is the scaling plot's axis)."""
    _, settings = split_params(case.pairing.estimator_params(case.implementation))
    ran = record.get("cluster") or {}
    return {"distributed": case.implementation.distributed,
            "dask_workers": ran.get("workers", settings.get("n_workers") or
                                    ("every GPU" if case.implementation.device == "gpu"
                                     else dask_cluster.DEFAULT_WORKERS)),
            "dask_threads_per_worker": ran.get("threads_per_worker", settings.get("threads_per_worker", "auto")),
            "dask_cluster": ran.get("kind", settings.get("scheduler_address") or
                                    ("LocalCUDACluster" if case.implementation.device == "gpu" else "LocalCluster"))}
