"""One case of a suite, run here: skipped with a reason, or its spec handed to a fresh process.

Also the record of a case reused from an earlier suite (`--resume`), and the datasets a
suite prepares before its first run is written.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any, Callable, cast

from mlcompare import forked_call
from mlcompare.config.experiment import Case, Experiment
from mlcompare.data import cache as datasets
from mlcompare.errors import InputError
from mlcompare.measure.capability import skip_reason
from mlcompare.measure.device import choose_reader as device_reader
from mlcompare.pairings.imports import ALLOWED_MODULE_PREFIXES
from mlcompare.records import CaseRecord, CaseSpec, Failure, Status
from mlcompare.suite.interrupts import Interrupted, SignalGuard
from mlcompare.suite.isolation import run_isolated


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


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
        if key in prepared or (not everywhere and case_skip_reason(case)):
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


class PreparingBeside:
    """`prepare_datasets` started in a forked child (`mlcompare.forked_call`), which generates and
    writes the data on another core while this process opens the store. Where this process
    cannot fork, the datasets are prepared here when `result` is asked for."""

    def __init__(self, experiment: Experiment, say: Callable[[str], None] = _stderr,
                 guard: SignalGuard | None = None, everywhere: bool = False) -> None:
        self._guard, self._say = guard or SignalGuard(), say
        # one call, given where its progress lines go: `say` here, the pipe in the child
        self._prepare = functools.partial(prepare_datasets, experiment, guard=self._guard, everywhere=everywhere)
        self._child = forked_call.ForkedCall(self._prepare) if forked_call.can_fork() else None

    def result(self) -> dict[str, Path | str]:
        """What `prepare_datasets` returns; the child's progress lines are said as they come
        and its input errors raised here. A child that died without a result (killed) leaves
        the datasets to this process (what it cached already is not made again)."""
        if self._child is None:
            return self._prepare(self._say)
        try:
            with self._guard.interruptible():
                return self._child.result(on_message=self._say)
        except forked_call.ChildLost as lost:
            self._say(f"mlcompare: {lost}; preparing the datasets here")
            return self._prepare(self._say)

    def stop(self) -> None:
        """The child killed if it still works (the suite stopped before it needed the data)."""
        if self._child is not None:
            self._child.end()


def case_skip_reason(case: Case) -> str | None:
    impl = case.implementation
    return skip_reason(impl.library, impl.device, case.pairing.estimator_params(impl), impl.distributed)


def skipped_everywhere(cases: list[Case]) -> dict[str, dict[str, int]]:
    """The implementations that cannot run here in any of their cases: for each, how many
    of its cases each reason skips (one line on the terminal instead of one per case)."""
    reasons: dict[str, dict[str, int]] = {}
    runs: set[str] = set()
    for case in cases:
        name = case.implementation.name
        if name in runs:
            continue
        reason = case_skip_reason(case)
        if reason is None:
            runs.add(name)
            reasons.pop(name, None)
        else:
            counts = reasons.setdefault(name, {})
            counts[reason] = counts.get(reason, 0) + 1
    return reasons


def skipped_everywhere_lines(found: dict[str, dict[str, int]]) -> list[str]:
    """`skipped_everywhere` in words: one line per implementation, its reasons and counts."""
    lines = []
    for name, counts in found.items():
        total = sum(counts.values())
        why = "; ".join(reason if len(counts) == 1 else f"{n} cases: {reason}" for reason, n in counts.items())
        cases = "its one case" if total == 1 else f"all {total} of its cases"
        lines.append(f"{name}: skipped in {cases} ({why})")
    return lines



def base_record(case: Case) -> CaseRecord:
    """The record's fixed part: still without its status, which every caller adds (with `|`) before
    the record goes anywhere."""
    impl = case.implementation
    return cast(CaseRecord, {
        "pairing": case.pairing.name, "implementation": impl.name, "library": impl.library,
        "device": impl.device, "dataset": case.dataset.label, "n_samples": case.dataset.n_samples,
        "n_features": case.dataset.n_features, "baseline": case.is_baseline,
        "main_metric": case.pairing.main_metric})


def reused_record(case: Case, stored: dict[str, Any]) -> CaseRecord:
    """The record of a case an earlier suite FINISHED, rebuilt from its run (--resume)."""
    tags = stored["tags"]
    record = base_record(case) | {"status": Status(tags.get("case_status", Status.OK)), "metrics": stored["metrics"],
                            "reused_from": stored["run_id"], "reused_parent": tags.get("mlflow.parentRunId")}
    for key in ("skip_reason", "error", "parity"):
        if tags.get(key):
            record[key] = tags[key]
    return record


def run_here(case: Case, experiment: Experiment, threads: int, prepared: dict[str, Path | str],
             predictions_path: Path, guard: SignalGuard, plan: dict[str, Any] | None = None) -> CaseRecord:
    """The case in a process of its own; `plan`: spec keys the suite decided for this process
    (`suite.plan.process_spec`)."""
    reason = case_skip_reason(case)
    if reason:
        return base_record(case) | {"status": Status.SKIPPED, "skip_reason": reason}
    base, spec = case_spec(case, experiment, threads, prepared, predictions_path)
    if "status" in base:
        return base
    # the process says where it saved its predictions (`predictions_path`): a case's first only
    return base | run_isolated(cast(CaseSpec, {**spec, **(plan or {})}), experiment.timeout_s, guard)


def case_spec(case: Case, experiment: Experiment, threads: int | None, prepared: dict[str, Path | str],
               predictions_path: Path) -> tuple[CaseRecord, CaseSpec]:
    """(the record's fixed part, the worker's spec); a failed record and {} when its data is missing."""
    impl = case.implementation
    base = base_record(case)
    where = prepared[case.dataset.fingerprint()]
    if isinstance(where, str):
        # no spec: the case does not run
        return base | {"status": Status.FAILED, "failure": Failure.DATASET, "error": where}, cast(CaseSpec, {})
    meta = datasets.definition(where)
    base |= {"n_samples": meta["n_train"] + meta["n_test"], "training_rows": meta["n_train"],
             "n_features": meta["n_features_actual"], "test_rows": meta["n_test"],
             "dataset_sha256": meta["content_sha256"], "dataset_source": meta["source"]}
    spec: CaseSpec = {"estimator": impl.estimator, "library": impl.library, "device": impl.device,
                      "params": case.pairing.estimator_params(impl), "task": case.pairing.task,
                      "metrics": list(case.pairing.metrics), "repeats": experiment.repeats,
                      "min_time_s": experiment.min_time_s, "threads": case.threads or threads,
                      "dataset_dir": str(where), "order": case.dataset.order, "predictions_path": str(predictions_path),
                      "accelerator": impl.accelerator, "distributed": impl.distributed, "plugin": case.pairing.plugin,
                      "allowed_modules": list(_allowed_for(case, experiment)), "host_input": impl.host_input,
                      "predict_batch_sizes": list(experiment.predict_batch_sizes),
                      "predict_latency_budget_s": experiment.predict_latency_budget_s,
                      "audit_keys": case.pairing.audit_keys(impl)}
    if impl.device == "gpu" and not impl.accelerator and not impl.host_input and not impl.distributed:
        # chosen once for the suite (an import of cuDF tried in a fresh process), not in every case
        spec["reader"], spec["reader_note"] = device_reader(impl.library)
    return base, spec


def _allowed_for(case: Case, experiment: Experiment) -> tuple[str, ...]:
    """The worker re-checks the allow-list on import: give it the experiment's, plus a plugin's own package."""
    allowed = experiment.allowed_modules or ALLOWED_MODULE_PREFIXES
    if case.pairing.plugin:
        from mlcompare.pairings.plugins import allowed_for

        allowed = tuple(dict.fromkeys([*allowed, *(f"{m}." for m in allowed_for(case.pairing.plugin))]))
    return allowed
