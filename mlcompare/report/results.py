"""Stored suites as one flat table: a row per case run, with the columns reports and plots need.

Everything here is read from what the store holds (params, metrics, tags and the repeat
history of each case), so a suite recorded on another machine or by an older version
reads the same way. Metrics a version did not record are simply missing (NaN).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import pandas as pd

from mlcompare.data.cache import human_count
from mlcompare.measure.stats import median_interval
from mlcompare.pairings.quality import HIGHER_IS_BETTER, TASK_METRICS
from mlcompare.records import Status

if TYPE_CHECKING:  # only the types: reading results never needs MLflow itself
    from mlcompare.records import StoredRun, StoredSuite

#: Metrics copied from each case run as they are (absent ones become NaN).
CASE_METRICS = ("fit_time_s", "fit_time_min_s", "fit_time_iqr_s", "fit_time_cv", "fit_cold_time_s",
                "predict_time_s", "predict_cold_time_s", "transfer_time_s", "end_to_end_time_s", "speedup_fit",
                "speedup_fit_ci_low", "speedup_fit_ci_high", "speedup_fit_ci_level", "quality_delta",
                "prediction_agreement", "peak_host_memory_mb", "fit_peak_host_memory_mb", "fit_time_rounds_cv",
                "fit_cost_usd", "fit_cost_ratio", "end_to_end_cost_usd", "predict_cost_usd_per_1k_rows",
                "fit_energy_gpu_board_j", "fit_energy_cpu_packages_dram_j", "speedup_fit_lower_bound", "fit_loops",
                "fit_processes",
                "speedup_end_to_end", "speedup_end_to_end_ci_low", "speedup_end_to_end_ci_high",
                "speedup_end_to_end_ci_level")
_QUALITY_ORDER = tuple(m for metrics in TASK_METRICS.values() for m in metrics)

#: Params copied as text, "" where a run has none (runs without a sweep, older stores).
#: `sweep_shared` is the part of a sweep point the baseline follows (its own comparison
#: group), `sweep_own` an implementation's own point (compared with the same baseline).
TEXT_PARAMS = ("sweep", "sweep_shared", "sweep_own", "dask_cluster")
#: Params read as nullable integers (missing: <NA>); logged by distributed implementations,
#: and by CPU implementations (`threads`; GPU ones log "host: N" or "library default", read as <NA>).
INT_PARAMS = ("dask_workers", "dask_threads_per_worker", "threads")

COLUMNS = ("suite_run_id", "suite", "suite_label", "host", "run_id", "run_name", "pairing", "implementation",
           "impl_label", "library", "device", "dataset", "n_samples", "n_features", "dataset_label", "baseline",
           "is_baseline", "status", "note", "main_metric", "higher_is_better", "quality", "parity",
           "training_rows", "timing_stability",
           "repeats_done", "fit_ci_low_s", "fit_ci_high_s", "fit_ci_level", "latency", "threads_swept",
           "found_differences", "eq_budget", "eq_value", "eq_reference", "eq_exact", "parity_tolerance",
           "eq_ladder_only") + TEXT_PARAMS \
    + INT_PARAMS + CASE_METRICS
#: Predict latency by batch size, as logged by `mlcompare.measure.latency`.
_LATENCY_METRIC = re.compile(r"^predict_latency_(p50|p99)_ms_b(\d+)$")


def case_frame(suites: list[StoredSuite]) -> pd.DataFrame:
    """One row per case run of the given suites, in the order they ran."""
    rows = []
    for number, suite in enumerate(suites, 1):
        label = suite_label(suite, number if len(suites) > 1 else None)
        host = host_label(suite.run.tags)
        for run in suite.cases:
            rows.append(_case_row(suite, label, host, run))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for column in ("n_samples", "n_features", "training_rows", "threads_swept") + INT_PARAMS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    return frame


def _case_row(suite: StoredSuite, label: str, host: str, run: StoredRun) -> dict[str, Any]:
    p, m, t = run.params, run.metrics, run.tags
    main = main_metric(p.get("pairing", ""), t, m)
    repeats = run.history.get("fit_time_repeat_s", [])
    low, high, level = _fit_interval(m, run.history.get("fit_time_process_s", []))
    status = t.get("case_status") or (Status.OK if run.status == "FINISHED" else Status.FAILED)
    n_samples, n_features = _int(p.get("n_samples")), _int(p.get("n_features"))
    # column-major data (a layout sweep) is a comparison group of its own
    layout = " F-order" if p.get("order") == "F" else ""
    dataset = f"{p.get('dataset')}{layout}" if layout else p.get("dataset")
    # the baseline implementation at a point of a thread sweep is a case like any other
    is_baseline = p.get("implementation") == t.get("baseline") and not p.get("sweep_own")
    row: dict[str, Any] = {
        "suite_run_id": suite.run.run_id, "suite": suite.run.params.get("suite_name", suite.run.name),
        "suite_label": label, "host": host, "run_id": run.run_id, "run_name": run.name,
        "pairing": p.get("pairing"), "implementation": p.get("implementation"),
        "impl_label": impl_label(p.get("implementation"), p.get("sweep_own", "")), "library": p.get("library"),
        "device": p.get("device"), "dataset": dataset, "n_samples": n_samples, "n_features": n_features,
        "dataset_label": _dataset_label(p.get("dataset"), n_samples, n_features) + layout,
        "baseline": t.get("baseline"), "is_baseline": is_baseline, "status": status,
        "note": t.get("skip_reason") or t.get("error") or "",
        "main_metric": main, "higher_is_better": HIGHER_IS_BETTER.get(main, True) if main else True,
        "quality": m.get(main, math.nan) if main else math.nan,
        "parity": t.get("parity") or ("baseline" if is_baseline and status == Status.OK else ""),
        # rows the fits saw; runs older than the param: all rows (train and test), as they were plotted
        "training_rows": _int(p.get("training_rows")) or n_samples,
        "timing_stability": t.get("timing_stability", ""),
        "repeats_done": len(repeats), "fit_ci_low_s": low, "fit_ci_high_s": high, "fit_ci_level": level,
        "latency": latency_by_batch(m),
        "threads_swept": _int(p.get("sweep.threads")),
        # what the fairness audit found against the baseline (`param_differences`' "found:" part)
        "found_differences": [part.removeprefix("found: ") for part in t.get("param_differences", "").split(" | ")
                              if part.startswith("found: ")],
        # an equal-quality run: the budget, this case's point on its ladder, the reference budget
        "eq_budget": p.get("equal_quality.budget", ""), "eq_value": _float(p.get("equal_quality.value")),
        "eq_reference": _float(p.get("equal_quality.reference")), "eq_exact": p.get("equal_quality.exact", ""),
        "parity_tolerance": _float(p.get("parity_tolerance")),
        "eq_ladder_only": _float(p.get("equal_quality.value")) != _float(p.get("equal_quality.reference"))
        and p.get("equal_quality.value") is not None,
        **{k: p.get(k, "") for k in TEXT_PARAMS}, **{k: _int(p.get(k)) for k in INT_PARAMS},
        **{k: m.get(k, math.nan) for k in CASE_METRICS},
    }
    if is_baseline and status == Status.OK and math.isnan(row["speedup_fit"]):
        row["speedup_fit"] = 1.0
    return row


def _fit_interval(metrics: dict[str, float], processes: list[float]) -> tuple[float, float, float]:
    """The interval of the median fit time over the case's processes: as logged, else made from
    its per-process history; none for a case in one process (or a run older than both, whose
    interval was taken over repeats of one process and says nothing across runs)."""
    if "fit_time_ci_level" in metrics and "fit_processes" in metrics:
        return metrics["fit_time_ci_low_s"], metrics["fit_time_ci_high_s"], metrics["fit_time_ci_level"]
    found = median_interval(processes)
    return (found.low, found.high, found.level) if found else (math.nan, math.nan, math.nan)


def latency_by_batch(metrics: dict[str, float]) -> dict[int, dict[str, float]]:
    """{batch size: {"p50": ms, "p99": ms}} from a run's `predict_latency_*` metrics (p99 where logged)."""
    out: dict[int, dict[str, float]] = {}
    for name, value in metrics.items():
        found = _LATENCY_METRIC.match(name)
        if found:
            out.setdefault(int(found.group(2)), {})[found.group(1)] = value
    return dict(sorted(out.items()))


def impl_label(implementation: str | None, sweep_own: str = "") -> str:
    """'xgboost_cpu [max_bin=64]': an implementation at one point of its own sweep is a column of its own."""
    name = implementation or ""
    return f"{name} [{sweep_own}]" if sweep_own else name


def group_label(dataset_label: str, sweep_shared: str = "") -> str:
    """'classification 1k×6 · max_depth=4': a dataset at one shared sweep point, a comparison group of its own."""
    return f"{dataset_label} · {sweep_shared}" if sweep_shared else dataset_label


def main_metric(pairing: str, tags: dict[str, str], metrics: dict[str, float]) -> str | None:
    """The pairing's main quality metric: the run's own tag, else the catalog, else the first known one logged."""
    if tags.get("main_metric"):
        return tags["main_metric"]
    from mlcompare.config.pairing import load_catalog

    try:
        catalog = load_catalog()
    except Exception:  # noqa: BLE001 - a broken local catalog must not stop a report on stored runs
        catalog = {}
    if pairing in catalog:
        return catalog[pairing].metrics[0]
    return next((name for name in _QUALITY_ORDER if name in metrics), None)


def host_label(tags: dict[str, str]) -> str:
    """'AMD EPYC · 2 cores · 23.5 GB · no GPU': enough to tell two machines apart."""
    parts = [tags.get("host.cpu_model", "unknown CPU")]
    if tags.get("host.cpu_physical_cores"):
        parts.append(f"{tags['host.cpu_physical_cores']} cores")
    if tags.get("host.ram_gb"):
        parts.append(f"{tags['host.ram_gb']} GB")
    gpu = tags.get("host.gpu", "")
    parts.append("no GPU" if not gpu or gpu.startswith("none") else gpu)
    return " · ".join(parts)


def suite_label(suite: StoredSuite, number: int | None = None) -> str:
    name = suite.run.params.get("suite_name", suite.run.name)
    prefix = f"#{number} " if number is not None else ""
    return f"{prefix}{name} ({suite.run.run_id[:8]})"


def _dataset_label(generator: str | None, n: int | None, d: int | None) -> str:
    if n is None or d is None:
        return generator or ""
    return f"{generator} {human_count(n)}×{d}"


def _float(text: str | None) -> float:
    try:
        return float(text) if text is not None else math.nan
    except ValueError:
        return math.nan


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
