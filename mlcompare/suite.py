"""A suite: every case of an experiment, run one by one, recorded as it finishes.

Order matters: the baseline of each pairing × dataset runs first, so every later case
can be logged with its speed-up at once and nothing waits in memory to be written.
A case that fails (crash, timeout, a dataset that cannot be made) is a FAILED run and the
suite goes on, unless asked to stop at the first failure; a signal stops the suite with
the current case and the parent marked KILLED.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from mlcompare import datasets, device, report, sysinfo
from mlcompare import resume as resume_keys
from mlcompare.experiment import Case, Experiment
from mlcompare.interrupts import Interrupted, SignalGuard
from mlcompare.isolation import run_isolated
from mlcompare.tracking import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG, Recorder


@dataclass
class SuiteOutcome:
    parent_run_id: str
    records: list[dict[str, Any]] = field(default_factory=list)
    stopped_early: bool = False  # --fail-fast stopped at a failed case

    def count(self, status: str) -> int:
        """Cases run by this suite with that status (not those reused by --resume)."""
        return sum(r["status"] == status and "reused_from" not in r for r in self.records)

    @property
    def reused(self) -> int:
        return sum("reused_from" in r for r in self.records)


def run_suite(experiment: Experiment, recorder: Recorder,
              say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
              guard: SignalGuard | None = None, resume: bool = False,
              fail_fast: bool = False) -> SuiteOutcome:
    """Run every case; `resume` reuses the cases FINISHED under the same experiment
    fingerprint; `fail_fast` stops at the first failed case. A signal caught by `guard`
    kills the current case's worker, marks its run and the parent KILLED and raises
    `Interrupted`."""
    guard = guard or SignalGuard()  # not installed: never raises
    cases = experiment.cases()
    fingerprint = sysinfo.fingerprint()
    experiment_fp = resume_keys.experiment_fingerprint(experiment, fingerprint)
    guard.check()  # a signal while starting up: stop before any run exists
    parent = recorder.start_suite(
        run_name=f"suite · {experiment.name}",
        params={"suite_name": experiment.name, "suite_file": Path(experiment.source).name,
                "suite_file_sha256": experiment.sha256, "suite_repeats": experiment.repeats,
                "suite_cases": len(cases), "suite_timeout_s": experiment.timeout_s, "suite_resume": resume},
        tags={"mlcompare.kind": "suite", EXPERIMENT_FINGERPRINT_TAG: experiment_fp, **fingerprint})
    outcome = SuiteOutcome(parent)
    say(f"mlcompare: suite {experiment.name!r}, {len(cases)} cases, store {recorder.tracking_uri}, "
        f"parent run {parent}")
    started = time.perf_counter()
    try:
        finished = recorder.finished_cases(experiment_fp) if resume else {}
        if resume:
            say(f"resume: {len(finished)} cases of this experiment already FINISHED in the store")
        prepared: dict[str, Path | str] = {}
        baselines: dict[tuple[str, str], float] = {}
        for index, case in enumerate(cases, 1):
            guard.check()
            case_fp = resume_keys.case_fingerprint(case, experiment_fp)
            reused = case_fp in finished
            record = _reused(case, finished[case_fp]) if reused else _run_one(case, experiment, prepared, say, guard)
            if record["status"] == "ok" and case.is_baseline:
                baselines[case.group] = record["metrics"]["fit_time_s"]
            if not reused:
                if record["status"] == "ok" and case.group in baselines:
                    record["metrics"]["speedup_fit"] = baselines[case.group] / record["metrics"]["fit_time_s"]
                keys = {EXPERIMENT_FINGERPRINT_TAG: experiment_fp, CASE_FINGERPRINT_TAG: case_fp}
                _log(recorder, case, record, experiment, fingerprint | keys)
            outcome.records.append(record)
            say(f"[{index}/{len(cases)}] {case.name}: {_summary(record)}")
            if record["status"] == "killed":
                guard.check()  # raises: the signal that killed the case stops the suite
            if fail_fast and record["status"] == "failed":
                outcome.stopped_early = True
                say(f"mlcompare: stopping at the first failed case (--fail-fast); "
                    f"{len(cases) - index} cases not run")
                break
        guard.check()
    except Interrupted as stop:
        # a tag as well as the status: after Ctrl-C, `mlflow run` (3.17) overwrites its run's
        # KILLED with FAILED (its launcher compares a status name with status numbers)
        recorder.abort_suite("KILLED", tags={"interrupted_by": stop.signal_name})
        raise
    except BaseException:
        recorder.abort_suite("FAILED")
        raise
    failed = outcome.count("failed")
    table = report.comparison_frame(outcome.records)
    resumed_from = sorted({r["reused_parent"] for r in outcome.records if r.get("reused_parent")})
    recorder.finish_suite(
        status="FAILED" if failed or outcome.stopped_early else "FINISHED",
        metrics={"suite_wall_time_s": time.perf_counter() - started, "cases_ok": outcome.count("ok"),
                 "cases_skipped": outcome.count("skipped"), "cases_failed": failed,
                 "cases_reused": outcome.reused, "cases_not_run": len(cases) - len(outcome.records)},
        tags={"mlflow.note.content": report.headline(table, experiment.name),
              **({"resumed_from": ",".join(resumed_from)} if resumed_from else {})},
        files={"comparison.csv": table.to_csv(index=False),
               "comparison.html": report.to_html(table, experiment.name),
               "experiment.yaml": yaml.safe_dump(experiment.raw, sort_keys=False)})
    return outcome


def _base(case: Case) -> dict[str, Any]:
    impl = case.implementation
    return {"pairing": case.pairing.name, "implementation": impl.name, "library": impl.library,
            "device": impl.device, "dataset": case.dataset.label, "n_samples": case.dataset.n_samples,
            "n_features": case.dataset.n_features, "baseline": case.is_baseline,
            "main_metric": case.pairing.metrics[0]}


def _reused(case: Case, stored: dict[str, Any]) -> dict[str, Any]:
    """The record of a case an earlier suite FINISHED, rebuilt from its run (--resume)."""
    tags = stored["tags"]
    record = _base(case) | {"status": tags.get("case_status", "ok"), "metrics": stored["metrics"],
                            "reused_from": stored["run_id"], "reused_parent": tags.get("mlflow.parentRunId")}
    for key in ("skip_reason", "error"):
        if tags.get(key):
            record[key] = tags[key]
    return record


def _run_one(case: Case, experiment: Experiment, prepared: dict[str, Path | str],
             say: Callable[[str], None], guard: SignalGuard) -> dict[str, Any]:
    impl = case.implementation
    base = _base(case)
    reason = device.skip_reason(impl.library, impl.device)
    if reason:
        return base | {"status": "skipped", "skip_reason": reason}
    key = case.dataset.fingerprint()
    if key not in prepared:
        say(f"preparing dataset {case.dataset.label} ...")
        try:
            with guard.interruptible():
                prepared[key] = datasets.materialise(case.dataset)
        except Interrupted as stop:
            return base | {"status": "killed", "failure": "interrupted", "signal": stop.signal_name,
                           "error": f"interrupted by {stop.signal_name} while preparing its dataset"}
        except Exception as exc:  # noqa: BLE001 - e.g. MemoryError: its cases fail, the suite goes on
            prepared[key] = f"dataset {case.dataset.label} could not be prepared: {type(exc).__name__}: {exc}"
    if isinstance(prepared[key], str):
        return base | {"status": "failed", "failure": "dataset", "error": prepared[key]}
    spec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
            "params": case.pairing.estimator_params(impl), "task": case.pairing.task,
            "metrics": list(case.pairing.metrics), "repeats": experiment.repeats,
            "dataset_dir": str(prepared[key])}
    return base | run_isolated(spec, experiment.timeout_s, guard)


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
            "dataset_fingerprint": spec.fingerprint(), **fingerprint}
    differences = pairing.differences(impl)
    if differences:
        tags["param_differences"] = " | ".join(differences)
    for key in ("skip_reason", "error", "ran_on", "library_version", "signal"):
        if record.get(key):
            tags[key] = str(record[key])
    if record.get("failure"):
        tags["failure_reason"] = record["failure"]
    texts = {"worker_stderr.txt": record["stderr_tail"]} if record.get("stderr_tail") else None
    status = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED", "killed": "KILLED"}[record["status"]]
    recorder.log_case(case.name, status, params, record.get("metrics", {}), tags,
                      history={"fit_time_repeat_s": record["fit_times"]} if record.get("fit_times") else None,
                      texts=texts)


def _summary(record: dict[str, Any]) -> str:
    if "reused_from" in record:
        return f"already FINISHED in run {record['reused_from']}, not run again (--resume)"
    if record["status"] == "killed":
        return f"KILLED ({record['error']})"
    if record["status"] == "skipped":
        return f"skipped ({record['skip_reason']})"
    if record["status"] == "failed":
        return f"FAILED ({record['error']})"
    m = record["metrics"]
    speed = f", speed-up {m['speedup_fit']:.2f}x" if "speedup_fit" in m else ""
    main = record["main_metric"]
    return f"fit {m['fit_time_s']:.3f} s{speed}, {main} {m[main]:.4g}"
