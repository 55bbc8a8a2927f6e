"""A suite: every case of an experiment, run one by one, recorded as it finishes.

Order matters: the baseline of each pairing × dataset runs first, so every later case
can be logged at once with its comparison against it (speed-up and its confidence
interval, quality delta, prediction agreement, parity) and nothing waits to be written.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import psutil
import yaml

from mlcompare import datasets, device, measure, quality, report, sysinfo
from mlcompare.experiment import Case, Experiment
from mlcompare.isolation import run_isolated
from mlcompare.pairings import ALLOWED_MODULE_PREFIXES
from mlcompare.progress import SuiteProgress
from mlcompare.selection import point_label

if TYPE_CHECKING:  # the suite needs only a recorder's methods; MLflow is imported by tracking.py
    from mlcompare.tracking import Recorder


@dataclass
class SuiteOutcome:
    parent_run_id: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(r["status"] == status for r in self.records)


def default_threads() -> int:
    """Every physical core this process may use (hyper-threads don't speed up these fits)."""
    physical = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    usable = len(psutil.Process().cpu_affinity()) if hasattr(psutil.Process, "cpu_affinity") else physical
    return max(1, min(physical, usable))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_suite(experiment: Experiment, recorder: Recorder, say: Callable[[str], None] = _stderr,
              prepared: dict[str, Path] | None = None, progress: SuiteProgress | None = None) -> SuiteOutcome:
    cases = experiment.cases()
    threads = experiment.threads or default_threads()
    if prepared is None:
        prepared = prepare_datasets(experiment, say)
    fingerprint = sysinfo.fingerprint()
    parent = recorder.start_suite(
        run_name=f"suite · {experiment.name}",
        params={"suite_name": experiment.name, "suite_file": Path(experiment.source).name,
                "suite_file_sha256": experiment.sha256, "suite_repeats": experiment.repeats,
                "suite_min_time_s": experiment.min_time_s, "suite_threads": threads,
                "suite_cases": len(cases)},
        tags={"mlcompare.kind": "suite", **fingerprint},
        system_metrics=experiment.system_metrics)
    outcome = SuiteOutcome(parent)
    say(f"mlcompare: suite {experiment.name!r}, {len(cases)} cases, {threads} CPU threads, "
        f"store {recorder.tracking_uri}, parent run {parent}")
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="mlcompare-suite-") as scratch:
            baselines: dict[tuple[str, str], dict[str, Any]] = {}
            for index, case in enumerate(cases, 1):
                if progress:
                    progress.case_started(index, len(cases), case.name)
                record = _run_one(case, experiment, threads, prepared, Path(scratch) / f"pred-{index}.npy")
                if record["status"] == "ok":
                    if case.is_baseline:
                        baselines[case.group] = record
                    if case.group in baselines:
                        record["metrics"].update(compare(case, record, baselines[case.group]))
                _log(recorder, case, record, experiment, threads, fingerprint)
                outcome.records.append(record)
                say(f"[{index}/{len(cases)}] {case.name}: {_summary(record)}")
                if progress:
                    progress.case_finished(index, len(cases), case.name, record)
    except BaseException:
        recorder.abort_suite("KILLED")
        raise
    failed = outcome.count("failed")
    wall = time.perf_counter() - started
    summary = _summary_from_store(recorder, say)
    finish: dict[str, Any] = {"tables": summary.tables} if summary.tables else {}
    recorder.finish_suite(
        status="FAILED" if failed else "FINISHED",
        metrics={"suite_wall_time_s": wall, "cases_ok": outcome.count("ok"),
                 "cases_skipped": outcome.count("skipped"), "cases_failed": failed, **summary.metrics},
        tags={"mlflow.note.content": summary.description},
        files={**summary.files, "experiment.yaml": yaml.safe_dump(experiment.raw, sort_keys=False)},
        **finish)
    return outcome


def _summary_from_store(recorder: Recorder, say: Callable[[str], None]) -> report.SuiteReport:
    """The parent run's report, read back from the store as `mlcompare report` reads it.

    A recorder that cannot be read back (bench/gpu_check.py's JSON one) gets none; a
    report that fails is said, never fatal: the cases are already recorded.
    """
    if not hasattr(recorder, "load_suite"):
        return report.SuiteReport(files={}, tables={}, metrics={}, description="")
    say("building the comparison table and plots from the store ...")
    try:
        return report.suite_report(recorder.load_suite())
    except Exception as exc:  # noqa: BLE001
        say(f"mlcompare: the comparison report could not be built: {exc!r}")
        return report.SuiteReport(files={}, tables={}, metrics={},
                                  description=f"The comparison report could not be built: {exc!r}")


def compare(case: Case, record: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float]:
    """The case against its baseline: speed-ups (with a bootstrap CI) and quality parity."""
    m, b = record["metrics"], baseline["metrics"]
    out = {"speedup_fit": b["fit_time_s"] / m["fit_time_s"],
           "speedup_fit_host_input": b["fit_host_input_time_s"] / m["fit_host_input_time_s"],
           "speedup_end_to_end": b["end_to_end_time_s"] / m["end_to_end_time_s"]}
    metric = case.pairing.main_metric
    if record is baseline:
        out |= {"quality_delta": 0.0, "prediction_agreement": 1.0}
    else:
        out["speedup_fit_ci_low"], out["speedup_fit_ci_high"] = measure.bootstrap_ratio_ci(
            baseline["fit_times"], record["fit_times"])
        out["quality_delta"] = quality.quality_delta(metric, m[metric], b[metric])
        if record.get("predictions_path") and baseline.get("predictions_path"):
            out["prediction_agreement"] = quality.prediction_agreement(
                case.pairing.task, np.load(record["predictions_path"]), np.load(baseline["predictions_path"]))
    record["parity"] = quality.parity(metric, out["quality_delta"], case.pairing.parity_tolerance)
    return out


def prepare_datasets(experiment: Experiment, say: Callable[[str], None] = _stderr) -> dict[str, Path]:
    """Materialise, once each, the datasets of every case that can run here.

    Called before the first run is written: a bad file, a failed download or a checksum
    mismatch is an input error, never a half-written suite.
    """
    prepared: dict[str, Path] = {}
    for case in experiment.cases():
        if _skip_reason(case):
            continue
        key = case.dataset.fingerprint()
        if key not in prepared:
            started = time.perf_counter()
            say(f"preparing dataset {case.dataset.label} ...")
            prepared[key] = datasets.materialise(case.dataset)
            say(f"  ready in {time.perf_counter() - started:.1f} s: {prepared[key]}")
    return prepared


def _skip_reason(case: Case) -> str | None:
    return device.skip_reason(case.implementation.library, case.implementation.device)


def _run_one(case: Case, experiment: Experiment, threads: int, prepared: dict[str, Path],
             predictions_path: Path) -> dict[str, Any]:
    impl = case.implementation
    base = {"pairing": case.pairing.name, "implementation": impl.name, "library": impl.library,
            "device": impl.device, "dataset": case.dataset.label, "n_samples": case.dataset.n_samples,
            "n_features": case.dataset.n_features, "baseline": case.is_baseline,
            "main_metric": case.pairing.main_metric}
    reason = _skip_reason(case)
    if reason:
        return base | {"status": "skipped", "skip_reason": reason}
    key = case.dataset.fingerprint()
    meta = datasets.definition(prepared[key])
    base |= {"n_samples": meta["n_train"] + meta["n_test"], "n_features": meta["n_features_actual"],
             "dataset_sha256": meta["content_sha256"], "dataset_source": meta["source"]}
    spec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
            "params": case.pairing.estimator_params(impl), "task": case.pairing.task,
            "metrics": list(case.pairing.metrics), "repeats": experiment.repeats,
            "min_time_s": experiment.min_time_s, "threads": threads,
            "dataset_dir": str(prepared[key]), "predictions_path": str(predictions_path),
            "accelerator": impl.accelerator, "plugin": case.pairing.plugin,
            "allowed_modules": list(_allowed_for(case, experiment))}
    record = base | run_isolated(spec, experiment.timeout_s)
    if record["status"] == "ok":
        record["predictions_path"] = str(predictions_path)
    return record


def _log(recorder: Recorder, case: Case, record: dict[str, Any], experiment: Experiment, threads: int,
         fingerprint: dict[str, str]) -> None:
    impl, pairing, spec = case.implementation, case.pairing, case.dataset
    params: dict[str, Any] = {
        "pairing": pairing.name, "implementation": impl.name, "library": impl.library,
        "device": impl.device, "dataset": spec.name, "dataset_kind": spec.kind,
        "n_samples": record["n_samples"] or "all", "n_features": record["n_features"] or "as the data has",
        "dtype": spec.dtype, "seed": spec.seed,
        "repeats": experiment.repeats, "min_time_s": experiment.min_time_s,
        "threads": threads if impl.device == "cpu" else "library default",
        # an accelerator takes numpy arrays, as the unchanged user code would
        "input_modes": "device,host" if impl.device == "gpu" and not impl.accelerator else "host",
        "estimator": impl.estimator,
        **{f"shared.{k}": v for k, v in pairing.params.items()},
    }
    if impl.accelerator:
        params["accelerator"] = impl.accelerator
    if case.shared_point or case.impl_point:
        # each swept value as its own param, so the UI's charts can use it as an axis
        params["sweep"] = point_label(case.shared_point + case.impl_point)
        params.update({f"sweep.{k}": v for k, v in case.shared_point + case.impl_point})
    effective = record.get("effective_params") or pairing.estimator_params(impl)
    params.update({f"estimator.{k}": v for k, v in effective.items()})
    tags = {"mlcompare.kind": "case", "case_status": record["status"], "baseline": pairing.baseline,
            "main_metric": pairing.main_metric,
            "dataset_fingerprint": spec.fingerprint(), "task": pairing.task, **fingerprint}
    if pairing.plugin:
        tags["plugin"] = pairing.plugin
    differences = pairing.differences(impl)
    if differences:
        tags["param_differences"] = " | ".join(differences)
    for key in ("skip_reason", "error", "ran_on", "threadpools", "library_version", "parity", "dataset_sha256"):
        if record.get(key):
            tags[key] = str(record[key])
    texts = {"worker_stderr.txt": record["stderr_tail"]} if record.get("stderr_tail") else None
    status = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED"}[record["status"]]
    history = {name: record[key] for name, key in (("fit_time_repeat_s", "fit_times"),
                                                   ("fit_host_input_time_repeat_s", "fit_host_times"))
               if record.get(key)}
    dataset_input = None
    if record.get("dataset_sha256"):
        dataset_input = {"name": spec.label, "digest": record["dataset_sha256"][:16],
                         "source": record["dataset_source"], "rows": record["n_samples"],
                         "features": record["n_features"], "dtype": spec.dtype}
    recorder.log_case(case.name, status, params, record.get("metrics", {}), tags, history=history, texts=texts,
                      dataset=dataset_input)


def _allowed_for(case: Case, experiment: Experiment) -> tuple[str, ...]:
    """The worker re-checks the allow-list on import: give it the experiment's, plus a plugin's own package."""
    allowed = experiment.allowed_modules or ALLOWED_MODULE_PREFIXES
    if case.pairing.plugin:
        from mlcompare.plugins import allowed_for

        allowed = tuple(dict.fromkeys([*allowed, *(f"{m}." for m in allowed_for(case.pairing.plugin))]))
    return allowed


def _summary(record: dict[str, Any]) -> str:
    if record["status"] == "skipped":
        return f"skipped ({record['skip_reason']})"
    if record["status"] == "failed":
        return f"FAILED ({record['error']})"
    m = record["metrics"]
    speed = f", speed-up {m['speedup_fit']:.2f}x" if "speedup_fit" in m else ""
    if "speedup_fit_ci_low" in m:
        speed += f" [{m['speedup_fit_ci_low']:.2f}, {m['speedup_fit_ci_high']:.2f}]"
    main = record["main_metric"]
    parity = f" ({record['parity']})" if record.get("parity") else ""
    return f"fit {m['fit_time_s']:.3f} s{speed}, {main} {m[main]:.4g}{parity}"
