"""The wire contract: every record that crosses a boundary, and every name logged to the store.

- A case's process is handed a `CaseSpec` and answers with a `CaseRecord`, both as JSON
  files (`mlcompare.suite.isolation`); the suite adds what it knows (names, sizes, the
  comparison with the baseline) to the same record before it is logged. Both are
  `TypedDict`s: plain dicts on the wire and in tests, the keys every spec or record has
  required, the rest optional. `Status` values are strings too, so they survive JSON.
- The suite hands runs to a `Recorder` (`mlcompare.tracking.writer.Recorder` writes them
  to MLflow); the report reads a suite back as a `StoredSuite`.
- Every param, metric and tag name a run may carry is declared below (`CASE_NAMES`,
  `SUITE_NAMES`): exact names, and families for names built from data (a quality metric,
  a batch size, a library's parameter). `undeclared` lists what a run would log that is
  not declared; the writer refuses it when `MLCOMPARE_CHECK_NAMES` is set (the tests set it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Callable, Final, Literal, NotRequired, Protocol, Required, TypedDict

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


class CaseSpec(TypedDict):
    """What a case's process is asked to do (written by the suite, read by `measure.case`): every
    key required but those the worker or the isolation fills in, and a GPU case's reader."""

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
    accelerator_setup: NotRequired[str]  # how the worker installed the accelerator, in words (set in the worker)
    order: str  # the feature matrices' layout: "C" (row-major) or "F" (column-major)
    distributed: str | None
    plugin: str
    allowed_modules: list[str]
    host_input: bool  # a GPU estimator that takes numpy arrays only and copies them itself (CatBoost)
    predict_batch_sizes: list[int]  # predict latency by batch size (`measure.latency`)
    predict_latency_budget_s: float
    audit_keys: dict[str, str]  # the pairing's audited concepts -> this library's key for each
    reader: NotRequired[str]  # GPU device inputs: "cudf" or "host", chosen once by the suite
    reader_note: NotRequired[str]  # why on the host, where cuDF is installed
    progress_path: NotRequired[str]  # where the worker marks the start and end of its first fit (set by isolation)
    # the suite's plan for the case's later processes (`suite.plan`): False where the first fit
    # (predict) was found not to differ from the next ones, and is the first value (default True)
    fit_warmup: NotRequired[bool]
    predict_warmup: NotRequired[bool]
    # warm-up calls until `timing.SETTLE_S` after the first fit (0: none), and whether the
    # process takes values past it for the plan to compare (a case's first process)
    fit_settle_s: NotRequired[float]
    fit_calibrate: NotRequired[bool]
    process_overhead_s: NotRequired[float]  # what a case's process spends outside its model calls, measured
    # whether this process describes the case (quality, agreement, fitted counts, parameters,
    # thread pools, library version): its first one (default True); the later ones only time
    describe: NotRequired[bool]
    # whether the next case of the round reads the same dataset: a warm server that forks this one
    # keeps the dataset it read for it (`measure.held_dataset`)
    keep_dataset: NotRequired[bool]


class CaseRecord(TypedDict, total=False):
    """One case's result: filled by its process, completed by the suite, logged as a run."""

    status: Required[Status]  # the one key every record has; the rest depends on how the case ended
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
    fit_value_offsets_s: list[float]  # when each fit value started, after the first fit ended (a calibrating process)
    fit_host_times: list[float]
    predict_times: list[float]  # the warm predict (or transform) calls
    effective_params: dict[str, str]  # the estimator's parameters after fit (unset ones as the library used them)
    audited: dict[str, str]  # the pairing's audited concepts as the fitted model reports them
    memory_method: str  # how fit_peak_host_memory_mb was taken: "high-water mark" or "sampled"
    ran_on: str
    threadpools: str
    library_version: str
    model_time_s: float
    reported_time_s: float  # seconds of the model calls whose values are reported (fit, host fit, predict)
    cluster: dict[str, Any]
    process: str  # "forked" (from the suite's warm worker) or "fresh" (a new Python process)
    process_wall_s: float  # the process's wall, launch to record (`suite.plan.Overheads`)
    warmup_plan: str  # what the case's processes decided about warm-ups, and why (`suite.plan`)
    rounds_stop: str  # why the case has the processes it has (`suite.plan.Stopping`)
    threads: int
    load_reader: str  # what read the cached dataset: "numpy" or "pyarrow" (host memory), "cudf" (device memory)
    load_reader_note: str  # why a GPU case with device inputs read on the host (cuDF unused, or broken)
    # a forked case's dataset, read by its warm server before the fork: the seconds that server
    # spent reading it for this process (0.0: held from the round's case before), and the part of
    # `load_time_s` the process itself spent (laying it out); not logged (`bench/overhead.py`)
    load_by_server_s: float
    load_in_process_s: float
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
    fit_cold_process_times: list[float]  # each process's first fit (`fit_cold_time_s` is their median)
    predict_cold_process_times: list[float]  # each process's first predict
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


# -- the names a run carries in the store ---------------------------------------------------------

#: Timing metrics of a case: the headline (median over processes), its spread and interval,
#: each process's value and each repeat (histories, step = process or repeat).
TIMING_METRICS = tuple(
    f"{call}_{name}" for call in ("fit", "predict") for name in (
        "time_s", "time_min_s", "time_iqr_s", "time_cv", "time_ci_low_s", "time_ci_high_s", "time_ci_level",
        "time_process_s", "time_repeat_s", "cold_time_s", "loops", "repeats", "processes", "warmups",
        "cold_time_process_s", "cold_time_ci_low_s", "cold_time_ci_high_s", "cold_time_ci_level"))
CASE_METRICS = frozenset({
    *TIMING_METRICS, "fit_time_rounds_cv",
    "fit_host_input_time_s", "fit_host_input_time_process_s", "fit_host_input_time_repeat_s",
    "transfer_time_s", "load_time_s", "device_init_time_s", "cluster_start_time_s", "model_time_s",
    "reported_time_s",
    "end_to_end_time_s", "end_to_end_time_process_s",
    "fit_peak_host_memory_mb", "peak_host_memory_mb", "fit_peak_gpu_memory_mb",
    "fit_iterations", "fit_trees",
    "speedup_fit", "speedup_fit_ci_low", "speedup_fit_ci_high", "speedup_fit_ci_level", "speedup_fit_lower_bound",
    "speedup_fit_host_input", "speedup_predict", "speedup_end_to_end", "speedup_end_to_end_ci_low",
    "speedup_end_to_end_ci_high", "speedup_end_to_end_ci_level", "baseline_fit_at_least_s",
    "quality_delta", "prediction_agreement",
    "fit_cost_usd", "fit_cost_ratio", "end_to_end_cost_usd", "predict_cost_usd_per_1k_rows",
    "fit_energy_cpu_packages_dram_j", "fit_energy_gpu_board_j",
    "cpu_others_cores_during_timed", "cpu_steal_pct_at_start", "load_avg_1m_at_start",
    "gpu_sm_clock_start_mhz", "gpu_sm_clock_end_mhz",
})
#: The histories a case run keeps (step = process, or repeat), from the record's lists.
CASE_HISTORIES: dict[str, Literal["fit_times", "fit_host_times", "predict_times", "fit_process_times",
                                  "fit_host_process_times", "predict_process_times", "end_to_end_process_times",
                                  "fit_cold_process_times", "predict_cold_process_times"]] = {
    "fit_time_repeat_s": "fit_times", "fit_host_input_time_repeat_s": "fit_host_times",
    "predict_time_repeat_s": "predict_times",
    # one summary per process (step = round): what the intervals and `compare` take
    "fit_time_process_s": "fit_process_times",
    "fit_host_input_time_process_s": "fit_host_process_times",
    "predict_time_process_s": "predict_process_times",
    "end_to_end_time_process_s": "end_to_end_process_times",
    "fit_cold_time_process_s": "fit_cold_process_times", "predict_cold_time_process_s": "predict_cold_process_times"}
CASE_PARAMS = frozenset({
    "pairing", "implementation", "library", "device", "dataset", "dataset_kind", "n_samples", "n_features",
    "dtype", "order", "seed", "training_rows", "repeats", "min_time_s", "rounds", "min_rounds", "precision",
    "threads", "input_modes", "case_number",
    "estimator", "accelerator", "parity_tolerance", "price_per_hour_usd", "predict_batch_sizes",
    "predict_latency_budget_s", "sweep", "sweep_shared", "sweep_own", "distributed", "dask_workers",
    "dask_threads_per_worker", "dask_cluster",
    "equal_quality.budget", "equal_quality.value", "equal_quality.reference", "equal_quality.exact",
})
#: Record keys copied as they are into a case run's tags, when set.
RECORD_TAGS: Final = ("skip_reason", "error", "ran_on", "threadpools", "library_version", "parity",
                      "dataset_sha256", "signal", "worker_host", "dask_worker", "baseline_host", "timing_stability",
                      "memory_method", "load_reader", "gpu_memory_method", "gpu_clock_reasons", "energy_source",
                      "energy_unavailable", "latency_note", "interval_note", "cpu_others_note", "load_reader_note",
                      "rmm_pool", "warmup_plan", "rounds_stop")
CASE_TAGS = frozenset({
    *RECORD_TAGS, "mlcompare.kind", "case_status", "baseline", "main_metric", "dataset_fingerprint", "task",
    "plugin", "param_differences", "case_process", "failure_reason", "cost_note", "killed_reason",
    EXPERIMENT_FINGERPRINT_TAG, CASE_FINGERPRINT_TAG,
})
SUITE_PARAMS = frozenset({
    "suite_name", "suite_file", "suite_file_sha256", "suite_repeats", "suite_min_time_s", "suite_rounds",
    "suite_min_rounds", "suite_precision",
    "suite_threads", "suite_cases", "suite_timeout_s", "suite_resume", "suite_thread_sweep",
})
SUITE_METRICS = frozenset({"suite_wall_time_s", "cases_ok", "cases_skipped", "cases_failed", "cases_reused",
                           "cases_not_run"})
SUITE_TAGS = frozenset({
    "mlcompare.kind", "mlcompare.host", "mlcompare.pid", "mlcompare.pid_started", EXPERIMENT_FINGERPRINT_TAG,
    "dask_scheduler", "interrupted_by", "resumed_from", "compared_to", "killed_reason",
})
#: Tags of the machine and its software, on the parent and on every case run (`suite.host`).
FINGERPRINT_TAG_FAMILY = r"(host|version)\.[\w.\-]+|mlcompare\.git_(commit|dirty)"
#: MLflow's own tags (run name, parent, note, source) and its system metrics.
MLFLOW_TAG_FAMILY = r"mlflow\.[\w.\-]+"


class Names:
    """The names of one kind (param, metric or tag) on one kind of run: exact ones, and families
    (regular expressions a whole name must match) for names built from data."""

    def __init__(self, exact: frozenset[str], *families: str) -> None:
        self.exact = exact
        self.families = re.compile("|".join(f"(?:{f})" for f in families)) if families else None

    def declares(self, name: str) -> bool:
        return name in self.exact or bool(self.families and self.families.fullmatch(name))


_B = r"_b\d+"  # a predict batch size
CASE_NAMES = {
    "param": Names(CASE_PARAMS, r"(shared|estimator|audit|sweep)\.[\w.\-]+"),
    "metric": Names(CASE_METRICS, rf"predict_latency_(calls|p50_ms|p99_ms|p99_upper_ms|p99_upper_level){_B}"),
    "tag": Names(CASE_TAGS, FINGERPRINT_TAG_FAMILY, MLFLOW_TAG_FAMILY),
}
SUITE_NAMES = {
    "param": Names(SUITE_PARAMS),
    "metric": Names(SUITE_METRICS, r"system/[\w.\-]+",
                    r"(break_even_rows|latency_crossing_batch|threads_equivalent|speedup_equal_quality"
                    r"|quality_at_equal_time)\.[\w.\-]+"),
    "tag": Names(SUITE_TAGS, FINGERPRINT_TAG_FAMILY, MLFLOW_TAG_FAMILY),
}
#: `mlcompare advise`: the advice's own run, the parent of its ladder's suites (`mlcompare.kind` advice).
ADVICE_PARAMS = frozenset({
    "advise_table", "advise_target", "advise_task", "advise_task_inferred", "advise_categorical", "advise_drop",
    "advise_nan", "advise_models", "advise_implementations", "advise_budget_s", "advise_rounds",
    "advise_extrapolate", "advise_min_rows", "advise_max_rows", "advise_reference", "advise_ladder",
    "advise_table_rows", "advise_table_features", "advise_prices",
})
ADVICE_METRICS = frozenset({"advise_wall_time_s", "advise_steps", "advise_processes",
                            "advise_overhead_per_process_s", "advise_extrapolated_rows"})
ADVICE_TAGS = frozenset({"mlcompare.kind", "mlcompare.host", "mlcompare.pid", "mlcompare.pid_started",
                         "advise_reference_runs", "advise_ladder_notes", "interrupted_by", "killed_reason"})
ADVICE_NAMES = {
    "param": Names(ADVICE_PARAMS),
    # every figure of the advice: `advice.<pairing>.<implementation>.<figure>` and
    # `advice.<pairing>.break_even_rows.<a>.<b>` (`mlcompare.report.advice`)
    "metric": Names(ADVICE_METRICS, r"advice\.[\w.\-]+"),
    "tag": Names(ADVICE_TAGS, FINGERPRINT_TAG_FAMILY, MLFLOW_TAG_FAMILY),
}
#: Set (to anything) to make the writer refuse a name the contract does not declare.
CHECK_NAMES_ENV = "MLCOMPARE_CHECK_NAMES"


#: The quality metrics a case run may log: the built-in ones of `pairings.quality`'s registry
#: (a test holds the two lists equal), and a plugin's own, added as the registry registers them.
QUALITY_METRICS: set[str] = {"accuracy", "roc_auc", "log_loss", "r2", "rmse", "adjusted_rand", "inertia",
                             "explained_variance_ratio", "reconstruction_error", "trustworthiness"}


def undeclared(run: str, params: Any = (), metrics: Any = (), tags: Any = ()) -> list[str]:
    """`kind name` of every name not declared for a `run` ("case", "suite" or "advice"), sorted."""
    names = CASE_NAMES if run == "case" else ADVICE_NAMES if run == "advice" else SUITE_NAMES
    quality = QUALITY_METRICS if run == "case" else set()
    return sorted(f"{kind} {name}" for kind, given in (("param", params), ("metric", metrics), ("tag", tags))
                  for name in given if not names[kind].declares(name) and not (kind == "metric" and name in quality))


def check_names(run: str, params: Any = (), metrics: Any = (), tags: Any = ()) -> None:
    """Raise when `CHECK_NAMES_ENV` is set and a name is not declared (see `undeclared`)."""
    if os.environ.get(CHECK_NAMES_ENV):
        missing = undeclared(run, params, metrics, tags)
        if missing:
            raise ValueError(f"not in mlcompare.records' contract for a {run} run: {', '.join(missing)}")


# -- who records a suite --------------------------------------------------------------------------

class Recorder(Protocol):
    """What a suite needs of whatever records it: `mlcompare.tracking.writer.Recorder` (MLflow),
    or a plain one (bench/gpu_check.py writes JSON lines), which may start from `PlainRecorder`."""

    tracking_uri: str  # the store, as it may be shown: no password or token (`mlcompare.redaction`)

    def start_suite(self, run_name: str, params: dict[str, Any], tags: dict[str, str],
                    system_metrics: bool = False) -> str: ...

    def log_case(self, run_name: str, status: str, params: dict[str, Any], metrics: dict[str, float],
                 tags: dict[str, str], history: dict[str, list[float]] | None = None,
                 texts: dict[str, str] | None = None, dataset: dict[str, Any] | None = None) -> str | None: ...

    def finish_suite(self, status: str, metrics: dict[str, float], tags: dict[str, str],
                     files: dict[str, str | bytes], tables: dict[str, Any] | None = None) -> None: ...

    def abort_suite(self, status: str = "KILLED", tags: dict[str, str] | None = None) -> None: ...

    def runs_page(self) -> str:
        """How to open the suite's runs in a UI, in words ("" where there is none)."""
        ...

    def housekeeping(self) -> Any | None:
        """The store's running suites, to close those of dead ones (`suite.dead_suites`); None: no store."""
        ...

    def finished_cases(self, experiment_fingerprint: str) -> dict[str, dict[str, Any]]:
        """Cases FINISHED under this experiment fingerprint, by case fingerprint (`--resume`)."""
        ...

    def load_suite(self) -> StoredSuite | None:
        """The suite as recorded, for its report; None: it cannot be read back (no report)."""
        ...

    def write_behind(self, turn: Callable[[], Any] | None = None, hold: bool = False) -> None:
        """From now on write runs from a thread of its own, each write inside `turn()`."""
        ...

    def release_queued(self, count: int | None = None) -> None:
        """Let the thread write the `count` oldest runs queued (None: all)."""
        ...

    def between_cases(self, work: Callable[[], object]) -> None:
        """Untimed work of the suite's own, done where writes are done (or not at all)."""
        ...


class PlainRecorder:
    """`Recorder`'s optional part for a recorder with no store to read back, heal or write behind."""

    tracking_uri = ""

    def runs_page(self) -> str:
        return ""

    def housekeeping(self) -> Any | None:
        return None

    def finished_cases(self, experiment_fingerprint: str) -> dict[str, dict[str, Any]]:
        return {}

    def load_suite(self) -> StoredSuite | None:
        return None

    def write_behind(self, turn: Callable[[], Any] | None = None, hold: bool = False) -> None:
        return None

    def release_queued(self, count: int | None = None) -> None:
        return None

    def between_cases(self, work: Callable[[], object]) -> None:
        return None


def json_default(value: Any) -> Any:
    """For json.dumps: numpy scalars as Python numbers, anything else as text."""
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
