"""A suite: every case of an experiment, run one by one, recorded as it finishes.

Order matters: the baseline of each pairing × dataset runs first, so every later case
can be logged with its speed-up at once and nothing waits in memory to be written.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from mlcompare import datasets, device, report, sysinfo
from mlcompare.experiment import Case, Experiment
from mlcompare.isolation import run_isolated
from mlcompare.progress import SuiteProgress
from mlcompare.tracking import Recorder


@dataclass
class SuiteOutcome:
    parent_run_id: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(r["status"] == status for r in self.records)


def run_suite(experiment: Experiment, recorder: Recorder,
              say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
              progress: SuiteProgress | None = None) -> SuiteOutcome:
    cases = experiment.cases()
    fingerprint = sysinfo.fingerprint()
    parent = recorder.start_suite(
        run_name=f"suite · {experiment.name}",
        params={"suite_name": experiment.name, "suite_file": Path(experiment.source).name,
                "suite_file_sha256": experiment.sha256, "suite_repeats": experiment.repeats,
                "suite_cases": len(cases)},
        tags={"mlcompare.kind": "suite", **fingerprint})
    outcome = SuiteOutcome(parent)
    say(f"mlcompare: suite {experiment.name!r}, {len(cases)} cases, store {recorder.tracking_uri}, "
        f"parent run {parent}")
    started = time.perf_counter()
    try:
        prepared: dict[str, Path] = {}
        baselines: dict[tuple[str, str], float] = {}
        for index, case in enumerate(cases, 1):
            if progress:
                progress.case_started(index, len(cases), case.name)
            record = _run_one(case, experiment, prepared, say)
            fit = record.get("metrics", {}).get("fit_time_s")
            if record["status"] == "ok" and case.is_baseline:
                baselines[case.group] = fit
            if record["status"] == "ok" and case.group in baselines:
                record["metrics"]["speedup_fit"] = baselines[case.group] / fit
            _log(recorder, case, record, experiment, fingerprint)
            outcome.records.append(record)
            say(f"[{index}/{len(cases)}] {case.name}: {_summary(record)}")
            if progress:
                progress.case_finished(index, len(cases), case.name, record)
    except BaseException:
        recorder.abort_suite("KILLED")
        raise
    failed = outcome.count("failed")
    wall = time.perf_counter() - started
    say("building the comparison table and plots from the store ...")
    try:
        # From the store, by the same code as `mlcompare report` later.
        summary = report.suite_report(recorder.load_suite())
    except Exception as exc:  # the cases are recorded; a report bug must not leave the suite RUNNING
        say(f"mlcompare: the comparison report could not be built: {exc!r}")
        summary = report.SuiteReport(files={}, tables={}, metrics={},
                                     description=f"The comparison report could not be built: {exc!r}")
    recorder.finish_suite(
        status="FAILED" if failed else "FINISHED",
        metrics={"suite_wall_time_s": wall, "cases_ok": outcome.count("ok"),
                 "cases_skipped": outcome.count("skipped"), "cases_failed": failed, **summary.metrics},
        tags={"mlflow.note.content": summary.description},
        files={**summary.files, "experiment.yaml": yaml.safe_dump(experiment.raw, sort_keys=False)},
        tables=summary.tables)
    return outcome


def _run_one(case: Case, experiment: Experiment, prepared: dict[str, Path],
             say: Callable[[str], None]) -> dict[str, Any]:
    impl = case.implementation
    base = {"pairing": case.pairing.name, "implementation": impl.name, "library": impl.library,
            "device": impl.device, "dataset": case.dataset.label, "n_samples": case.dataset.n_samples,
            "n_features": case.dataset.n_features, "baseline": case.is_baseline,
            "main_metric": case.pairing.metrics[0]}
    reason = device.skip_reason(impl.library, impl.device)
    if reason:
        return base | {"status": "skipped", "skip_reason": reason}
    key = case.dataset.fingerprint()
    if key not in prepared:
        say(f"preparing dataset {case.dataset.label} ...")
        prepared[key] = datasets.materialise(case.dataset)
    spec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
            "params": case.pairing.estimator_params(impl), "task": case.pairing.task,
            "metrics": list(case.pairing.metrics), "repeats": experiment.repeats,
            "dataset_dir": str(prepared[key])}
    return base | run_isolated(spec, experiment.timeout_s)


def _log(recorder: Recorder, case: Case, record: dict[str, Any], experiment: Experiment,
         fingerprint: dict[str, str]) -> None:
    impl, pairing, spec = case.implementation, case.pairing, case.dataset
    params: dict[str, Any] = {
        "pairing": pairing.name, "implementation": impl.name, "library": impl.library,
        "device": impl.device, "dataset": spec.generator, "n_samples": spec.n_samples,
        "n_features": spec.n_features, "dtype": spec.dtype, "repeats": experiment.repeats,
        "estimator": impl.estimator,
        **{f"shared.{k}": v for k, v in pairing.params.items()},
    }
    effective = record.get("effective_params") or pairing.estimator_params(impl)
    params.update({f"estimator.{k}": v for k, v in effective.items()})
    tags = {"mlcompare.kind": "case", "case_status": record["status"], "baseline": pairing.baseline,
            "main_metric": pairing.metrics[0],
            "dataset_fingerprint": spec.fingerprint(), **fingerprint}
    differences = pairing.differences(impl)
    if differences:
        tags["param_differences"] = " | ".join(differences)
    for key in ("skip_reason", "error", "ran_on", "library_version"):
        if record.get(key):
            tags[key] = str(record[key])
    texts = {"worker_stderr.txt": record["stderr_tail"]} if record.get("stderr_tail") else None
    status = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED"}[record["status"]]
    recorder.log_case(case.name, status, params, record.get("metrics", {}), tags,
                      history={"fit_time_repeat_s": record["fit_times"]} if record.get("fit_times") else None,
                      texts=texts)


def _summary(record: dict[str, Any]) -> str:
    if record["status"] == "skipped":
        return f"skipped ({record['skip_reason']})"
    if record["status"] == "failed":
        return f"FAILED ({record['error']})"
    m = record["metrics"]
    speed = f", speed-up {m['speedup_fit']:.2f}x" if "speedup_fit" in m else ""
    main = record["main_metric"]
    return f"fit {m['fit_time_s']:.3f} s{speed}, {main} {m[main]:.4g}"
