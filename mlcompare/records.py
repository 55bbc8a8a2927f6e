"""The records that cross the process boundary between the suite and a case, typed once.

A case's process is handed a `CaseSpec` and answers with a `CaseRecord`, both as JSON
files (`mlcompare.suite.isolation`); the suite adds what it knows (names, sizes, the
comparison with the baseline) to the same record before it is logged. Both are
`TypedDict`s: plain dicts on the wire and in tests, with every key and its type written
down here instead of scattered as string literals. `Status` values are strings too, so
they survive JSON unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict

import numpy as np

#: The tags that let `--resume` find what an earlier suite already finished: on the parent
#: and every case run, and on every case run respectively (see `mlcompare.suite.resume`).
EXPERIMENT_FINGERPRINT_TAG = "mlcompare.experiment_fingerprint"
CASE_FINGERPRINT_TAG = "mlcompare.case_fingerprint"


class Status(StrEnum):
    """How a case ended (the `case_status` tag)."""

    OK = "ok"  # it ran and was measured
    SKIPPED = "skipped"  # it cannot run on this machine (library or GPU missing): the reason is kept
    FAILED = "failed"  # it crashed, timed out, raised, or its data could not be made
    KILLED = "killed"  # the suite was interrupted while it ran


#: The MLflow run status each case status is recorded with.
RUN_STATUS = {Status.OK: "FINISHED", Status.SKIPPED: "FINISHED", Status.FAILED: "FAILED", Status.KILLED: "KILLED"}


class Failure(StrEnum):
    """Why a case failed (the `failure_reason` tag)."""

    TIMEOUT = "timeout"
    SIGNAL = "signal"
    EXIT = "exit"
    EXCEPTION = "exception"
    OUT_OF_MEMORY = "out_of_memory"
    INTERRUPTED = "interrupted"
    DATASET = "dataset"
    WORKER = "worker"


class CaseSpec(TypedDict, total=False):
    """What a case's process is asked to do (written by the suite, read by `measure.case`)."""

    estimator: str  # import path, checked against the allow-list again in the worker
    library: str
    device: str  # "cpu" | "gpu"
    params: dict[str, Any]  # the estimator's keyword arguments (and a distributed one's cluster params)
    task: str
    metrics: list[str]
    repeats: int
    min_time_s: float
    threads: int | None
    dataset_dir: str
    predictions_path: str
    accelerator: str | None
    accelerator_setup: str  # how the worker installed the accelerator, in words (set in the worker)
    order: str  # the feature matrices' layout: "C" (row-major) or "F" (column-major)
    distributed: str | None
    plugin: str
    allowed_modules: list[str]
    host_input: bool  # a GPU estimator that takes numpy arrays only and copies them itself (CatBoost)
    predict_batch_sizes: list[int]  # predict latency by batch size (`measure.latency`)
    predict_latency_budget_s: float
    audit_keys: dict[str, str]  # the pairing's audited concepts -> this library's key for each
    reader: str  # GPU device inputs: "cudf" or "pyarrow", chosen once by the suite
    reader_note: str  # why pyarrow, where cuDF is installed
    progress_path: str  # where the worker marks the start and end of its first fit (set by isolation)


class CaseRecord(TypedDict, total=False):
    """One case's result: filled by its process, completed by the suite, logged as a run."""

    status: Status
    # why it did not run, or failed
    skip_reason: str
    failure: Failure
    error: str
    error_type: str
    signal: str
    stderr_tail: str
    first_fit_unfinished_s: float  # timed out in its first fit, which had run this long
    # measured in the case's process
    metrics: dict[str, float]
    fit_times: list[float]
    fit_host_times: list[float]
    predict_times: list[float]  # the warm predict (or transform) calls
    effective_params: dict[str, str]  # the estimator's parameters after fit (unset ones as the library used them)
    audited: dict[str, str]  # the pairing's audited concepts as the fitted model reports them
    memory_method: str  # how fit_peak_host_memory_mb was taken: "high-water mark" or "sampled"
    ran_on: str
    threadpools: str
    library_version: str
    model_time_s: float
    cluster: dict[str, Any]
    process: str  # "forked" (from the suite's warm worker) or "fresh" (a new Python process)
    threads: int
    load_reader: str  # what read the cached dataset: "pyarrow" (host memory) or "cudf" (device memory)
    load_reader_note: str  # why a GPU case with device inputs read with pyarrow (cuDF unused, or broken)
    rmm_pool: str  # how the case's device memory was set up (an RMM pool for RAPIDS, CuPy's own pool else)
    gpu_memory_method: str  # how fit_peak_gpu_memory_mb was measured (device.gpu_memory_meter)
    gpu_clock_reasons: str  # why the GPU's clocks were held down at the case's start and end (NVML)
    energy_source: str  # what `fit_energy_<kind>_j` summed (`measure.energy`)
    energy_unavailable: str  # why there is no `fit_energy_<kind>_j`
    latency_note: str  # batch sizes left out of predict latency, and why
    latency_calls: dict[str, list[float]]  # every timed latency call's seconds, by batch size (pooled over rounds)
    cpu_others_note: str  # why `cpu_others_cores_during_timed` is missing (a block too short, no /proc/stat)
    # added by the suite
    pairing: str
    implementation: str
    library: str
    device: str
    dataset: str
    n_samples: int | None
    n_features: int | None
    training_rows: int  # rows the fits saw (n_samples less the test split)
    test_rows: int  # rows each timed predict call scores (the test split)
    baseline: bool
    main_metric: str
    dataset_sha256: str
    dataset_source: str
    predictions_path: str
    predictions: Any  # a spread case's predictions on their way back (an array)
    parity: str
    found_differences: list[str]  # effective parameters and fitted counts that differ from the baseline's
    timing_stability: str  # "stable" or "noisy: <why>"
    rounds: int  # processes the case ran in
    # one summary per process (the median of its repeats): what every interval is taken over
    fit_process_times: list[float]
    fit_host_process_times: list[float]
    predict_process_times: list[float]
    end_to_end_process_times: list[float]  # transfer + median fit + median predict, per process
    interval_note: str  # why a case has no interval (one process)
    baseline_host: str
    worker_host: str
    dask_worker: str
    worker_fingerprint: dict[str, str]
    reused_from: str  # --resume: the run this case's result was taken from
    reused_parent: str


# -- what the report reads back: a suite from the store as plain values, no MLflow objects --------

@dataclass
class StoredRun:
    """One run as read from the store: plain values, no MLflow objects."""

    run_id: str
    name: str
    status: str
    start_time: int
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    history: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class StoredSuite:
    """A suite's parent run, its MLflow experiment and its case runs."""

    run: StoredRun
    experiment_name: str
    cases: list[StoredRun]


def json_default(value: Any) -> Any:
    """For json.dumps: numpy scalars as Python numbers, anything else as text."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
