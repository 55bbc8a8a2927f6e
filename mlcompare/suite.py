"""A suite: every case of an experiment, run one by one, recorded as it finishes.

Order matters: the baseline of each pairing × dataset runs first, so every later case
can be logged at once with its comparison against it (speed-up and its confidence
interval, quality delta, prediction agreement, parity) and nothing waits to be written.
A case that fails (crash, timeout, a dataset that cannot be made) is a FAILED run and the
suite goes on, unless asked to stop at the first failure; a signal stops the suite with
the current case and the parent marked KILLED.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np
import psutil
import yaml

from mlcompare import datasets, device, distributed, measure, quality, report, sysinfo
from mlcompare import resume as resume_keys
from mlcompare.errors import InputError
from mlcompare.experiment import Case, Experiment
from mlcompare.interrupts import Interrupted, SignalGuard
from mlcompare.isolation import run_isolated
from mlcompare.pairings import ALLOWED_MODULE_PREFIXES, Implementation
from mlcompare.progress import SuiteProgress
from mlcompare.resume import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG
from mlcompare.selection import point_label

if TYPE_CHECKING:  # the suite needs only a recorder's methods; MLflow is imported by tracking.py
    from mlcompare.spread import Connection
    from mlcompare.tracking import Recorder


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


def default_threads() -> int:
    """Every physical core this process may use (hyper-threads don't speed up these fits)."""
    physical = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    usable = len(psutil.Process().cpu_affinity()) if hasattr(psutil.Process, "cpu_affinity") else physical
    return max(1, min(physical, usable))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_suite(experiment: Experiment, recorder: Recorder, say: Callable[[str], None] = _stderr,
              prepared: dict[str, Path | str] | None = None, progress: SuiteProgress | None = None,
              guard: SignalGuard | None = None, resume: bool = False, fail_fast: bool = False,
              cluster: Connection | None = None) -> SuiteOutcome:
    """Run every case; `resume` reuses the cases FINISHED under the same experiment
    fingerprint; `fail_fast` stops at the first failed case; `cluster` (`spread.connect`)
    spreads the cases over a Dask cluster's workers. A signal caught by `guard` kills the
    running cases' workers, marks their runs and the parent KILLED and raises `Interrupted`."""
    guard = guard or SignalGuard()  # not installed: never raises
    cases = experiment.cases()
    threads = experiment.threads or default_threads()
    if prepared is None:
        prepared = prepare_datasets(experiment, say, guard, everywhere=cluster is not None)
    fingerprint = sysinfo.fingerprint()
    experiment_fp = resume_keys.experiment_fingerprint(experiment, fingerprint)
    guard.check()  # a signal while starting up: stop before any run exists
    spread_tags = {"dask_scheduler": cluster.address} if cluster else {}
    parent = recorder.start_suite(
        run_name=f"suite · {experiment.name}",
        params={"suite_name": experiment.name, "suite_file": Path(experiment.source).name,
                "suite_file_sha256": experiment.sha256, "suite_repeats": experiment.repeats,
                "suite_min_time_s": experiment.min_time_s,
                "suite_threads": threads if cluster is None else experiment.threads or "each worker's cores",
                "suite_cases": len(cases), "suite_timeout_s": experiment.timeout_s, "suite_resume": resume},
        tags={"mlcompare.kind": "suite", EXPERIMENT_FINGERPRINT_TAG: experiment_fp, **fingerprint, **spread_tags},
        system_metrics=experiment.system_metrics)
    outcome = SuiteOutcome(parent)
    where = f"{threads} CPU threads" if cluster is None else cluster.describe()
    say(f"mlcompare: suite {experiment.name!r}, {len(cases)} cases, {where}, "
        f"store {recorder.tracking_uri}, parent run {parent}")
    started = time.perf_counter()
    baselines: dict[tuple, dict[str, Any]] = {}
    held: dict[tuple, list[tuple[int, dict[str, Any]]]] = {}

    def accept(index: int, record: dict[str, Any]) -> bool:
        """Compare, log and report one finished case; False to stop the suite (--fail-fast)."""
        case = cases[index - 1]
        case_fp = resume_keys.case_fingerprint(case, experiment_fp)
        if record["status"] == "ok" and case.is_baseline:
            baselines[case.group] = record
        if "reused_from" not in record:
            if record["status"] == "ok" and case.group in baselines:
                baseline = baselines[case.group]
                record["metrics"].update(compare(case, record, baseline))
                if baseline.get("worker_host", record.get("worker_host")) != record.get("worker_host"):
                    record["baseline_host"] = baseline["worker_host"]  # a speed-up across two machines
            keys = {EXPERIMENT_FINGERPRINT_TAG: experiment_fp, CASE_FINGERPRINT_TAG: case_fp}
            host = record.get("worker_fingerprint") or fingerprint  # where the case really ran
            _log(recorder, case, record, experiment, threads, host | keys)
        outcome.records.append(record)
        say(f"[{len(outcome.records)}/{len(cases)}] {case.name}: {_summary(record)}")
        if progress:
            progress.case_finished(len(outcome.records), len(cases), case.name, record)
        if fail_fast and record["status"] == "failed":
            outcome.stopped_early = True
            say(f"mlcompare: stopping at the first failed case (--fail-fast); "
                f"{len(cases) - len(outcome.records)} cases not run")
            return False
        return True

    try:
        finished = recorder.finished_cases(experiment_fp) if resume else {}
        if resume:
            say(f"resume: {len(finished)} cases of this experiment already FINISHED in the store")
        with tempfile.TemporaryDirectory(prefix="mlcompare-suite-") as scratch:
            outcomes = _outcomes(cases, experiment, experiment_fp, finished, threads, prepared, Path(scratch),
                                 guard, progress, cluster)
            try:
                for index, record in _baselines_first(cases, outcomes, held):
                    if not accept(index, record):
                        break
            finally:
                outcomes.close()  # stopped early: a spread suite's cases still running are killed
                # cases held for a baseline that never came (stopped early): logged, uncompared
                for index, record in sorted(pair for pairs in held.values() for pair in pairs):
                    accept(index, record)
                held.clear()
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
    wall = time.perf_counter() - started
    summary = _summary_from_store(recorder, say)
    resumed_from = sorted({r["reused_parent"] for r in outcome.records if r.get("reused_parent")})
    finish: dict[str, Any] = {"tables": summary.tables} if summary.tables else {}
    recorder.finish_suite(
        status="FAILED" if failed or outcome.stopped_early else "FINISHED",
        metrics={"suite_wall_time_s": wall, "cases_ok": outcome.count("ok"),
                 "cases_skipped": outcome.count("skipped"), "cases_failed": failed,
                 "cases_reused": outcome.reused, "cases_not_run": len(cases) - len(outcome.records),
                 **summary.metrics},
        tags={"mlflow.note.content": summary.description,
              **({"resumed_from": ",".join(resumed_from)} if resumed_from else {})},
        files={**summary.files, "experiment.yaml": yaml.safe_dump(experiment.raw, sort_keys=False)},
        **finish)
    return outcome


Outcomes = Iterator[tuple[int, dict[str, Any]]]


def _outcomes(cases: list[Case], experiment: Experiment, experiment_fp: str, finished: dict[str, Any],
              threads: int, prepared: dict[str, Path | str], scratch: Path, guard: SignalGuard,
              progress: SuiteProgress | None, cluster: Connection | None) -> Outcomes:
    """(case number, record) of every case as it ends: run here one by one, reused from the
    store (--resume), or spread over a Dask cluster. A signal stops it with `Interrupted`
    after the killed cases' records."""
    todo = []
    for index, case in enumerate(cases, 1):
        case_fp = resume_keys.case_fingerprint(case, experiment_fp)
        if case_fp in finished:
            if cluster is None:
                guard.check()
            yield index, _reused(case, finished[case_fp])
        elif cluster is None:
            guard.check()
            if progress:
                progress.case_started(index, len(cases), case.name)
            yield index, _run_one(case, experiment, threads, prepared, scratch / f"pred-{index}.npy", guard)
        else:
            todo.append((index, case))
    if cluster is not None:
        yield from _spread_outcomes(todo, cases, experiment, prepared, scratch, guard, progress, cluster)


def _spread_outcomes(todo: list[tuple[int, Case]], cases: list[Case], experiment: Experiment,
                     prepared: dict[str, Path | str], scratch: Path, guard: SignalGuard,
                     progress: SuiteProgress | None, cluster: Connection | None) -> Outcomes:
    from mlcompare import spread

    jobs, bases = [], {}
    for index, case in todo:
        made = _case_spec(case, experiment, experiment.threads, prepared, scratch / f"pred-{index}.npy")
        if "status" in made[0]:  # its dataset could not be prepared
            yield index, made[0]
            continue
        base, spec = made
        bases[index] = base
        jobs.append(spread.Job(index, spec, case.dataset, base["dataset_sha256"], case.implementation.device == "gpu"))

    def started(job: spread.Job) -> None:
        if progress:
            progress.case_started(job.index, len(cases), cases[job.index - 1].name)

    for index, remote in spread.run_jobs(cluster, jobs, experiment.timeout_s, guard, started):
        record = bases.get(index, _base(cases[index - 1])) | remote
        if "predictions" in record:
            path = scratch / f"pred-{index}.npy"
            np.save(path, record.pop("predictions"), allow_pickle=False)
            record["predictions_path"] = str(path)
        yield index, record


def _baselines_first(cases: list[Case], outcomes: Outcomes, held: dict[tuple, list]) -> Outcomes:
    """The outcomes, each case after its group's baseline (which a spread suite may finish later).

    A case whose baseline is still running waits in `held`; a run here is already in order.
    """
    pending = {case.group for case in cases if case.is_baseline}
    for index, record in outcomes:
        case = cases[index - 1]
        if case.is_baseline:
            pending.discard(case.group)
            yield index, record
            yield from held.pop(case.group, [])
        elif case.group in pending:
            held.setdefault(case.group, []).append((index, record))
        else:
            yield index, record


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
    """The case against its baseline: speed-ups (with a bootstrap CI) and quality parity.

    A baseline reused by --resume brings its metrics but no repeats or predictions: the
    interval and the agreement then need a rerun of the baseline and are left out.
    """
    m, b = record["metrics"], baseline["metrics"]
    out = {"speedup_fit": b["fit_time_s"] / m["fit_time_s"],
           "speedup_fit_host_input": b["fit_host_input_time_s"] / m["fit_host_input_time_s"],
           "speedup_end_to_end": b["end_to_end_time_s"] / m["end_to_end_time_s"]}
    metric = case.pairing.main_metric
    if record is baseline:
        out |= {"quality_delta": 0.0, "prediction_agreement": 1.0}
    else:
        if baseline.get("fit_times") and record.get("fit_times"):
            out["speedup_fit_ci_low"], out["speedup_fit_ci_high"] = measure.bootstrap_ratio_ci(
                baseline["fit_times"], record["fit_times"])
        out["quality_delta"] = quality.quality_delta(metric, m[metric], b[metric])
        if record.get("predictions_path") and baseline.get("predictions_path"):
            out["prediction_agreement"] = quality.prediction_agreement(
                case.pairing.task, np.load(record["predictions_path"]), np.load(baseline["predictions_path"]))
    record["parity"] = quality.parity(metric, out["quality_delta"], case.pairing.parity_tolerance)
    return out


def prepare_datasets(experiment: Experiment, say: Callable[[str], None] = _stderr,
                     guard: SignalGuard | None = None, everywhere: bool = False) -> dict[str, Path | str]:
    """Materialise, once each, the datasets of every case that can run here (`everywhere`:
    of every case, for a suite spread over other machines).

    Called before the first run is written: a bad file, a failed download or a checksum
    mismatch is an input error (exit 2, no run). A dataset that cannot be made for another
    reason (MemoryError, say) is kept as its error message: its cases fail, the suite goes on.
    """
    guard = guard or SignalGuard()
    prepared: dict[str, Path | str] = {}
    for case in experiment.cases():
        key = case.dataset.fingerprint()
        if key in prepared or (not everywhere and _skip_reason(case)):
            continue
        started = time.perf_counter()
        say(f"preparing dataset {case.dataset.label} ...")
        try:
            with guard.interruptible():
                prepared[key] = datasets.materialise(case.dataset)
        except (InputError, Interrupted):
            raise
        except Exception as exc:  # noqa: BLE001
            prepared[key] = f"dataset {case.dataset.label} could not be prepared: {type(exc).__name__}: {exc}"
            say(f"  {prepared[key]}")
            continue
        say(f"  ready in {time.perf_counter() - started:.1f} s: {prepared[key]}")
    return prepared


def _skip_reason(case: Case) -> str | None:
    impl = case.implementation
    return skip_reason(impl.library, impl.device, case.pairing.estimator_params(impl), impl.distributed)


def skip_reason(library: str, device_kind: str, params: dict[str, Any], engine: str | None = None) -> str | None:
    """Why an implementation (its library, device, params and distributed engine) cannot
    run on this machine, or None. Asked here before a case runs, and on a Dask worker."""
    reason = device.skip_reason(library, device_kind)
    if reason or not engine:
        return reason
    return distributed.skip_reason(device_kind == "gpu", params)


def _base(case: Case) -> dict[str, Any]:
    impl = case.implementation
    return {"pairing": case.pairing.name, "implementation": impl.name, "library": impl.library,
            "device": impl.device, "dataset": case.dataset.label, "n_samples": case.dataset.n_samples,
            "n_features": case.dataset.n_features, "baseline": case.is_baseline,
            "main_metric": case.pairing.main_metric}


def _reused(case: Case, stored: dict[str, Any]) -> dict[str, Any]:
    """The record of a case an earlier suite FINISHED, rebuilt from its run (--resume)."""
    tags = stored["tags"]
    record = _base(case) | {"status": tags.get("case_status", "ok"), "metrics": stored["metrics"],
                            "reused_from": stored["run_id"], "reused_parent": tags.get("mlflow.parentRunId")}
    for key in ("skip_reason", "error", "parity"):
        if tags.get(key):
            record[key] = tags[key]
    return record


def _run_one(case: Case, experiment: Experiment, threads: int, prepared: dict[str, Path | str],
             predictions_path: Path, guard: SignalGuard) -> dict[str, Any]:
    reason = _skip_reason(case)
    if reason:
        return _base(case) | {"status": "skipped", "skip_reason": reason}
    base, spec = _case_spec(case, experiment, threads, prepared, predictions_path)
    if "status" in base:
        return base
    record = base | run_isolated(spec, experiment.timeout_s, guard)
    if record["status"] == "ok":
        record["predictions_path"] = str(predictions_path)
    return record


def _case_spec(case: Case, experiment: Experiment, threads: int | None, prepared: dict[str, Path | str],
               predictions_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the record's fixed part, the worker's spec); a failed record and {} when its data is missing."""
    impl = case.implementation
    base = _base(case)
    where = prepared[case.dataset.fingerprint()]
    if isinstance(where, str):
        return base | {"status": "failed", "failure": "dataset", "error": where}, {}
    meta = datasets.definition(where)
    base |= {"n_samples": meta["n_train"] + meta["n_test"], "n_features": meta["n_features_actual"],
             "dataset_sha256": meta["content_sha256"], "dataset_source": meta["source"]}
    spec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
            "params": case.pairing.estimator_params(impl), "task": case.pairing.task,
            "metrics": list(case.pairing.metrics), "repeats": experiment.repeats,
            "min_time_s": experiment.min_time_s, "threads": threads,
            "dataset_dir": str(where), "predictions_path": str(predictions_path),
            "accelerator": impl.accelerator, "distributed": impl.distributed, "plugin": case.pairing.plugin,
            "allowed_modules": list(_allowed_for(case, experiment))}
    return base, spec


def _log(recorder: Recorder, case: Case, record: dict[str, Any], experiment: Experiment, threads: int,
         fingerprint: dict[str, str]) -> None:
    impl, pairing, spec = case.implementation, case.pairing, case.dataset
    params: dict[str, Any] = {
        "pairing": pairing.name, "implementation": impl.name, "library": impl.library,
        "device": impl.device, "dataset": spec.name, "dataset_kind": spec.kind,
        "n_samples": record["n_samples"] or "all", "n_features": record["n_features"] or "as the data has",
        "dtype": spec.dtype, "seed": spec.seed,
        "repeats": experiment.repeats, "min_time_s": experiment.min_time_s,
        "threads": record.get("threads", threads) if impl.device == "cpu" else "library default",
        "input_modes": _input_modes(impl),
        "estimator": impl.estimator,
        **{f"shared.{k}": v for k, v in pairing.params.items()},
    }
    if impl.accelerator:
        params["accelerator"] = impl.accelerator
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
    tags = {"mlcompare.kind": "case", "case_status": record["status"], "baseline": pairing.baseline,
            "main_metric": pairing.main_metric,
            "dataset_fingerprint": spec.fingerprint(), "task": pairing.task, **fingerprint}
    if pairing.plugin:
        tags["plugin"] = pairing.plugin
    differences = pairing.differences(impl)
    if differences:
        tags["param_differences"] = " | ".join(differences)
    for key in ("skip_reason", "error", "ran_on", "threadpools", "library_version", "parity", "dataset_sha256",
                "signal", "worker_host", "dask_worker", "baseline_host"):
        if record.get(key):
            tags[key] = str(record[key])
    if record.get("failure"):
        tags["failure_reason"] = record["failure"]
    texts = {"worker_stderr.txt": record["stderr_tail"]} if record.get("stderr_tail") else None
    status = {"ok": "FINISHED", "skipped": "FINISHED", "failed": "FAILED", "killed": "KILLED"}[record["status"]]
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


def _input_modes(impl: Implementation) -> str:
    """Where the timed fits find their data (`fit_time_s`), then the host-input fits' (numpy)."""
    if impl.distributed:
        return "dask,host"  # spread over the workers already; numpy arrays spread first
    # an accelerator takes numpy arrays, as the unchanged user code would
    return "device,host" if impl.device == "gpu" and not impl.accelerator else "host"


def _cluster_params(case: Case, record: dict[str, Any]) -> dict[str, Any]:
    """A distributed case's cluster as params (`dask_workers` is the scaling plot's axis)."""
    _, settings = distributed.split_params(case.pairing.estimator_params(case.implementation))
    ran = record.get("cluster") or {}
    return {"distributed": case.implementation.distributed,
            "dask_workers": ran.get("workers", settings.get("n_workers") or
                                    ("every GPU" if case.implementation.device == "gpu" else distributed.DEFAULT_WORKERS)),
            "dask_threads_per_worker": ran.get("threads_per_worker", settings.get("threads_per_worker", "auto")),
            "dask_cluster": ran.get("kind", settings.get("scheduler_address") or
                                    ("LocalCUDACluster" if case.implementation.device == "gpu" else "LocalCluster"))}


def _allowed_for(case: Case, experiment: Experiment) -> tuple[str, ...]:
    """The worker re-checks the allow-list on import: give it the experiment's, plus a plugin's own package."""
    allowed = experiment.allowed_modules or ALLOWED_MODULE_PREFIXES
    if case.pairing.plugin:
        from mlcompare.plugins import allowed_for

        allowed = tuple(dict.fromkeys([*allowed, *(f"{m}." for m in allowed_for(case.pairing.plugin))]))
    return allowed


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
    if "speedup_fit_ci_low" in m:
        speed += f" [{m['speedup_fit_ci_low']:.2f}, {m['speedup_fit_ci_high']:.2f}]"
    main = record["main_metric"]
    parity = f" ({record['parity']})" if record.get("parity") else ""
    return f"fit {m['fit_time_s']:.3f} s{speed}, {main} {m[main]:.4g}{parity}"
