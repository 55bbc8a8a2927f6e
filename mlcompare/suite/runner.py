"""A suite: every case of an experiment, run one by one, recorded as it finishes.

Order matters: the baseline of each pairing × dataset runs first, so every later case
can be logged at once with its comparison against it (speed-up and its confidence
interval, quality delta, prediction agreement, parity) and nothing waits to be written.
A case that fails (crash, timeout, a dataset that cannot be made) is a FAILED run and the
suite goes on, unless asked to stop at the first failure; a signal stops the suite with
the current case and the parent marked KILLED.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING, Any, Callable, Generator

import numpy as np
import yaml

from mlcompare.config.experiment import Case, Experiment
from mlcompare.measure.stopping import Stopping, cap_levels
from mlcompare.measure.threads import default_threads
from mlcompare.records import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG, CaseRecord, Recorder, Status
from mlcompare.suite import host as sysinfo
from mlcompare.suite import isolation
from mlcompare.suite import resume as resume_keys
from mlcompare.suite.baseline import compare, lower_bound
from mlcompare.suite.case_cost import case_costs
from mlcompare.suite.caselog import log_case
from mlcompare.suite.cases import (
    base_record,
    case_skip_reason,
    case_spec,
    prepare_datasets,
    reused_record,
    run_here,
    skipped_everywhere,
    skipped_everywhere_lines,
)
from mlcompare.suite.dead_suites import heal, owner_tags
from mlcompare.suite.interrupts import Interrupted, SignalGuard
from mlcompare.suite.plan import Overheads, WarmupPlan, drop_unsettled, process_spec, warmup_plan
from mlcompare.suite.progress import SuiteProgress, collapsed
from mlcompare.suite.rounds import pool_rounds, stability
from mlcompare.suite.warm_worker import WarmWorker

if TYPE_CHECKING:  # the suite needs only a recorder's methods; MLflow is imported by tracking/
    from mlcompare.report import SuiteReport
    from mlcompare.suite.dask_distribution import Connection


@dataclass
class SuiteOutcome:
    parent_run_id: str
    records: list[CaseRecord] = field(default_factory=list)
    stopped_early: bool = False  # --fail-fast stopped at a failed case
    runs_page: str = ""  # how to open the runs table in the MLflow UI
    #: implementations skipped in every case: said once before the cases, not once per case
    skipped_everywhere: set[str] = field(default_factory=set)

    def count(self, status: str) -> int:
        """Cases run by this suite with that status (not those reused by --resume)."""
        return sum(r["status"] == status and "reused_from" not in r for r in self.records)

    @property
    def reused(self) -> int:
        return sum("reused_from" in r for r in self.records)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class SuiteOptions:
    """How a suite runs, besides what its experiment file says (the `mlcompare run` flags).

    `prepared`: the datasets already made (else made here); `resume` reuses the cases
    FINISHED under the same experiment fingerprint; `fail_fast` stops at the first failed
    case; `cluster` (`dask_distribution.connect`) spreads the cases over a Dask cluster's
    workers; `warm`: CPU cases are forked from a warm worker (this one, or one started here;
    False: every case in a fresh process). A signal caught by `guard` kills the running
    cases' workers, marks their runs and the parent KILLED and raises `Interrupted`.
    """

    say: Callable[[str], None] = _stderr
    prepared: dict[str, Path | str] | None = None
    progress: SuiteProgress | None = None
    guard: SignalGuard | None = None
    resume: bool = False
    fail_fast: bool = False
    cluster: Connection | None = None
    warm: WarmWorker | bool = True


def run_suite(experiment: Experiment, recorder: Recorder, **options: Any) -> SuiteOutcome:
    """Run every case of `experiment` and record it through `recorder`; `options` are
    `SuiteOptions`' fields."""
    return Suite(experiment, recorder, SuiteOptions(**options)).run()


class Suite:
    """One suite's run: its parent run, and what the cases finished so far left for the next.

    Each finished case is compared with its group's baseline as it is accepted, so the
    baselines found so far (`baselines`, and `timed_out` for those stopped in their first fit
    by the time limit) are kept here, with the cases `held` for a baseline a spread suite has
    not finished yet.
    """

    def __init__(self, experiment: Experiment, recorder: Recorder, options: SuiteOptions) -> None:
        self.experiment, self.recorder, self.options = experiment, recorder, options
        self.say = options.say
        self.guard = options.guard or SignalGuard()  # not installed: never raises
        self.cases = experiment.cases()
        self.threads = experiment.threads or default_threads()
        self.baselines: dict[tuple, CaseRecord] = {}
        self.timed_out: dict[tuple, CaseRecord] = {}
        self.held: dict[tuple, list[tuple[int, CaseRecord]]] = {}

    def run(self) -> SuiteOutcome:
        self._start()
        started = time.perf_counter()
        try:
            self._run_cases()
            self.guard.check()
        except Interrupted as stop:
            # a tag as well as the status: after Ctrl-C, `mlflow run` (3.17) overwrites its run's
            # KILLED with FAILED (its launcher compares a status name with status numbers)
            self.recorder.abort_suite("KILLED", tags={"interrupted_by": stop.signal_name})
            raise
        except BaseException:
            self.recorder.abort_suite("FAILED")
            raise
        self._finish(time.perf_counter() - started)
        return self.outcome

    def _start(self) -> None:
        """The datasets, the fingerprints, the parent run; the implementations skipped everywhere said once."""
        experiment, recorder, cluster, threads = self.experiment, self.recorder, self.options.cluster, self.threads
        prepared = self.options.prepared
        if prepared is None:
            prepared = prepare_datasets(experiment, self.say, self.guard, everywhere=cluster is not None)
        self.prepared = prepared
        self.fingerprint = sysinfo.fingerprint()
        self.experiment_fp = resume_keys.experiment_fingerprint(
            experiment, self.fingerprint, threads if cluster is None else experiment.threads)
        self.guard.check()  # a signal while starting up: stop before any run exists
        store = recorder.housekeeping()
        if store is not None:  # close what suites that died on this host left RUNNING
            heal(store, say=self.say)
        spread_tags = {"dask_scheduler": cluster.address} if cluster else {}
        parent = recorder.start_suite(
            run_name=f"suite · {experiment.name}",
            params={"suite_name": experiment.name, "suite_file": Path(experiment.source).name,
                    "suite_file_sha256": experiment.sha256, "suite_repeats": experiment.repeats,
                    "suite_min_time_s": experiment.min_time_s, "suite_rounds": experiment.rounds,
                    "suite_min_rounds": min(experiment.min_rounds, experiment.rounds),
                    "suite_precision": experiment.precision,
                    "suite_threads": threads if cluster is None else experiment.threads or "each worker's cores",
                    "suite_cases": len(self.cases), "suite_timeout_s": experiment.timeout_s,
                    "suite_resume": self.options.resume,
                    **({"suite_thread_sweep": ",".join(map(str, experiment.thread_sweep))}
                       if experiment.thread_sweep else {})},
            tags={"mlcompare.kind": "suite", EXPERIMENT_FINGERPRINT_TAG: self.experiment_fp, **self.fingerprint,
                  **spread_tags, **owner_tags()},
            system_metrics=experiment.system_metrics)
        self.outcome = SuiteOutcome(parent, runs_page=recorder.runs_page())
        where = f"{threads} CPU threads" if cluster is None else cluster.describe()
        self.say(f"mlcompare: suite {experiment.name!r}, {len(self.cases)} cases, {where}, "
                 f"store {recorder.tracking_uri}, parent run {parent}")
        if cluster is None:  # spread, each worker decides what it can run
            never_here = skipped_everywhere(self.cases)
            self.outcome.skipped_everywhere = set(never_here)
            for line in skipped_everywhere_lines(never_here):
                self.say(line)
        self.cpus = sysinfo.usable_cpus()

    def _run_cases(self) -> None:
        experiment, recorder, cluster = self.experiment, self.recorder, self.options.cluster
        finished = recorder.finished_cases(self.experiment_fp) if self.options.resume else {}
        if self.options.resume:
            self.say(f"resume: {len(finished)} cases of this experiment already FINISHED in the store")
        with tempfile.TemporaryDirectory(prefix="mlcompare-suite-") as scratch, \
                isolation.case_processes(self.cases, experiment.allowed_modules, case_skip_reason, recorder,
                                         Path(scratch), self.options.warm, local=cluster is None,
                                         threads=self.threads):
            if cluster is None:
                recorder.between_cases(_report_libraries)  # imported between cases, not after the last
            outcomes = _outcomes(self.cases, experiment, self.experiment_fp, finished, self.threads, self.prepared,
                                 Path(scratch), self.guard, self.options.progress, cluster, self.say)
            try:
                for index, record in _baselines_first(self.cases, outcomes, self.held):
                    if not self.accept(index, record):
                        break
            finally:
                outcomes.close()  # stopped early: a spread suite's cases still running are killed
                # cases held for a baseline that never came (stopped early): logged, uncompared
                for index, record in sorted(pair for pairs in self.held.values() for pair in pairs):
                    self.accept(index, record)
                self.held.clear()

    def accept(self, index: int, record: CaseRecord) -> bool:
        """Compare, log and report one finished case; False to stop the suite (--fail-fast)."""
        case, outcome = self.cases[index - 1], self.outcome
        if record["status"] == Status.OK and case.is_baseline:
            self.baselines[case.group] = record
        elif case.is_baseline and record.get("first_fit_unfinished_s"):
            self.timed_out[case.group] = record
        if "reused_from" not in record:
            self._compare_and_log(index, record)
        outcome.records.append(record)
        if not collapsed(record, outcome.skipped_everywhere):
            self.say(f"[{len(outcome.records)}/{len(self.cases)}] {case.name}: {_summary(record)}")
        if self.options.progress:
            self.options.progress.case_finished(len(outcome.records), len(self.cases), case.name, record)
        if self.options.fail_fast and record["status"] == Status.FAILED:
            outcome.stopped_early = True
            self.say(f"mlcompare: stopping at the first failed case (--fail-fast); "
                     f"{len(self.cases) - len(outcome.records)} cases not run")
            return False
        return True

    def _compare_and_log(self, number: int, record: CaseRecord) -> None:
        case = self.cases[number - 1]
        if record["status"] == Status.OK:  # priced before the comparison: the cost ratio needs both
            record["metrics"].update(case_costs(case.implementation.device, record, self.experiment.cost_per_hour))
        if record["status"] == Status.OK and case.group in self.baselines:
            baseline = self.baselines[case.group]
            record["metrics"].update(compare(case, record, baseline))
            if baseline.get("worker_host", record.get("worker_host")) != record.get("worker_host"):
                record["baseline_host"] = baseline["worker_host"]  # a speed-up across two machines
        elif record["status"] == Status.OK and case.group in self.timed_out:
            record["metrics"].update(lower_bound(record, self.timed_out[case.group]))
        case_fp = resume_keys.case_fingerprint(case, self.experiment_fp)
        keys = {EXPERIMENT_FINGERPRINT_TAG: self.experiment_fp, CASE_FINGERPRINT_TAG: case_fp}
        host = record.get("worker_fingerprint") or self.fingerprint  # where the case really ran
        if record["status"] == Status.OK:
            record["timing_stability"] = stability(record, self.cpus)
            if self.options.cluster is None and self.experiment.rounds > 1:  # stopped by the rule: its levels
                cap_levels(record["metrics"], stopping_rule(self.experiment))
        log_case(self.recorder, case, record, self.experiment, self.threads, host | keys, number)

    def _finish(self, wall: float) -> None:
        """The parent run's metrics, its report read back from the store, and its status."""
        outcome, recorder = self.outcome, self.recorder
        failed = outcome.count(Status.FAILED)
        summary = _summary_from_store(recorder, self.say)
        resumed_from = sorted({r["reused_parent"] for r in outcome.records if r.get("reused_parent")})
        finish: dict[str, Any] = {"tables": summary.tables} if summary.tables else {}
        recorder.finish_suite(
            status="FAILED" if failed or outcome.stopped_early else "FINISHED",
            metrics={"suite_wall_time_s": wall, "cases_ok": outcome.count(Status.OK),
                     "cases_skipped": outcome.count(Status.SKIPPED), "cases_failed": failed,
                     "cases_reused": outcome.reused, "cases_not_run": len(self.cases) - len(outcome.records),
                     **summary.metrics},
            tags={"mlflow.note.content": summary.description,
                  **({"resumed_from": ",".join(resumed_from)} if resumed_from else {})},
            files={**summary.files, "experiment.yaml": yaml.safe_dump(self.experiment.raw, sort_keys=False)},
            **finish)


Outcomes = Generator[tuple[int, CaseRecord], None, None]


def _outcomes(cases: list[Case], experiment: Experiment, experiment_fp: str, finished: dict[str, Any],
              threads: int, prepared: dict[str, Path | str], scratch: Path, guard: SignalGuard,
              progress: SuiteProgress | None, cluster: Connection | None,
              say: Callable[[str], None] = _stderr) -> Outcomes:
    """(case number, record) of every case as it ends: run here one by one, reused from the
    store (--resume), or spread over a Dask cluster. A signal stops it with `Interrupted`
    after the killed cases' records."""
    todo = []
    for index, case in enumerate(cases, 1):
        case_fp = resume_keys.case_fingerprint(case, experiment_fp)
        if case_fp in finished:
            if cluster is None:
                guard.check()
            yield index, reused_record(case, finished[case_fp])
        else:
            todo.append((index, case))
    if cluster is None:
        yield from _local_outcomes(todo, cases, experiment, threads, prepared, scratch, guard, progress, say)
    else:
        yield from _spread_outcomes(todo, cases, experiment, prepared, scratch, guard, progress, cluster)


def _local_outcomes(todo: list[tuple[int, Case]], cases: list[Case], experiment: Experiment, threads: int,
                    prepared: dict[str, Path | str], scratch: Path, guard: SignalGuard,
                    progress: SuiteProgress | None, say: Callable[[str], None] = _stderr) -> Outcomes:
    """The cases run here. With one round each case runs once, in order (the baseline of its
    group first) and is finished at once. With several, the rounds are spread over the whole
    suite: round 1 of every case, then round 2, each round in a new shuffled order (seeded by
    the experiment file; the cases of one dataset one after the other, `by_dataset`), so that
    each case's processes sample the whole time the suite runs.
    A case's processes so far decide its warm-ups for the next ones (`plan.warmup_plan`); from
    `min_rounds` on, a case stops once its interval is as narrow as asked (`plan.Stopping`). A
    case is finished, and so recorded, as soon as it has all its processes: one that did not run
    fine at once, the others when the rule stops them or after their last round. The writer then
    writes its run while the next cases go on, not all of them after the last round; the store
    lists the runs as they were written, the report by their case number (`case_number`)."""
    loads = sysinfo.LoadMeter()
    overheads = Overheads()
    plans: dict[int, WarmupPlan] = {}

    def run(index: int, case: Case, label: str, path: Path, keep_dataset: bool = False) -> CaseRecord:
        guard.check()
        if progress:
            progress.case_started(index, len(cases), label)
        load = loads.reading()
        spec = process_spec(plans.get(index), overheads.typical(_process_kind(case)), experiment.rounds > 1)
        spec["keep_dataset"] = keep_dataset
        record = run_here(case, experiment, threads, prepared, path, guard, spec)
        overheads.add(record)
        if record["status"] == Status.OK:
            record["metrics"].update(load)
        return record

    if experiment.rounds == 1:
        for position, (index, case) in enumerate(todo):
            yield index, pool_rounds([run(index, case, case.name, scratch / f"pred-{index}.npy",
                                          next_reads_same_dataset(todo, position))])
        return
    stopping = stopping_rule(experiment)
    total = experiment.rounds
    rounds: dict[int, list[CaseRecord]] = {index: [] for index, _ in todo}
    order = random.Random(experiment_seed(experiment))
    finished: set[int] = set()  # no more rounds: all ran, as narrow as asked, or one did not run fine
    stops: dict[int, str] = {}  # why each case that ran fine has the processes it has

    def pooled(index: int) -> CaseRecord:
        record = pool_rounds(rounds[index])
        if index in plans and plans[index].note:
            record["warmup_plan"] = plans[index].note
        if index in stops:
            record["rounds_stop"] = stops[index]
        return record

    for number in range(1, total + 1):
        started = time.perf_counter()
        if number > 1:  # each round's processes forked from a server of their own
            with guard.interruptible():
                isolation.renew_warm_worker()
        this_round = [(index, case) for index, case in todo if index not in finished]
        order.shuffle(this_round)
        this_round = by_dataset(this_round)
        for position, (index, case) in enumerate(this_round):
            label = f"{case.name} (round {number}/{total})"
            record = run(index, case, label, scratch / f"pred-{index}-{number}.npy",
                         next_reads_same_dataset(this_round, position))
            rounds[index].append(record)
            if record["status"] != Status.OK:
                finished.add(index)
            else:
                plans[index] = warmup_plan(rounds[index], plans.get(index))
                if plans[index].warms_through:
                    drop_unsettled(record)
                why = stopping.done([median(r["fit_times"]) for r in rounds[index]])
                if why:
                    finished.add(index)
                    stops[index] = why
            if progress:  # processes done, of those the suite still expects (an ended case: no more)
                progress.run_finished(sum(len(r) for r in rounds.values()),
                                      sum(len(rounds[i]) if i in finished else total for i, _ in todo))
            if index in finished or number == total:  # no more processes: recorded now
                yield index, pooled(index)
            guard.check()  # a killed round: stop here, with what the suite has
        going_on = len(todo) - len(finished)
        if number == total or not going_on:
            return
        say(f"round {number}/{total} done in {time.perf_counter() - started:.0f} s; "
            f"{going_on} cases go on to round {number + 1} (each is recorded once it has all its processes)")


def by_dataset(shuffled: list[tuple[int, Case]]) -> list[tuple[int, Case]]:
    """A round's shuffled cases with those of one dataset one after the other: the datasets in the
    order their first case drew, each one's cases in the order they drew. Both orders stay random
    from round to round; a warm server then reads each dataset once a round for the cases it forks
    (`measure.held_dataset`) instead of once a process."""
    first: dict[str, int] = {}
    for position, (_, case) in enumerate(shuffled):
        first.setdefault(case.dataset.cache_key(), position)
    return sorted(shuffled, key=lambda item: first[item[1].dataset.cache_key()])  # stable: the draw within


def next_reads_same_dataset(round_cases: list[tuple[int, Case]], position: int) -> bool:
    """Whether the next case of the round that runs is forked from the warm server too and reads the
    same cached dataset (whatever their layouts): the server keeps the one it read for this case
    instead of letting it go."""
    case = round_cases[position][1]
    following = next((c for _, c in round_cases[position + 1:] if not case_skip_reason(c)), None)
    return (following is not None and _process_kind(case) == _process_kind(following) == "forked"
            and following.dataset.cache_key() == case.dataset.cache_key())


def stopping_rule(experiment: Experiment) -> Stopping:
    """When the experiment's cases have processes enough (`measure.stopping`)."""
    return Stopping(min(experiment.min_rounds, experiment.rounds), experiment.rounds, experiment.precision)


def _process_kind(case: Case) -> str:
    """How a case's process starts: forked from the warm worker, or a fresh Python."""
    impl = case.implementation
    return "forked" if impl.device == "cpu" and not impl.accelerator and not impl.distributed else "fresh"


def experiment_seed(experiment: Experiment) -> str:
    """What the shuffled order of the rounds is drawn from: the same experiment file, the same order."""
    return experiment.sha256


def _spread_outcomes(todo: list[tuple[int, Case]], cases: list[Case], experiment: Experiment,
                     prepared: dict[str, Path | str], scratch: Path, guard: SignalGuard,
                     progress: SuiteProgress | None, cluster: Connection) -> Outcomes:
    from mlcompare.suite import dask_distribution

    jobs: list[dask_distribution.Job] = []
    bases: dict[int, CaseRecord] = {}
    # every process is scheduled up front: no case can stop early, so each gets the fewest the
    # rule allows, and its intervals the exact levels of that count
    count = stopping_rule(experiment).min_rounds
    for number in range(1, count + 1):
        for index, case in todo:
            made = case_spec(case, experiment, experiment.threads, prepared, scratch / f"pred-{index}.npy")
            if "status" in made[0]:  # its dataset could not be prepared
                if number == 1:
                    yield index, made[0]
                continue
            base, spec = made
            spec.pop("reader", None)  # each worker chooses its own reader: cuDF may work there, not here
            spec.pop("reader_note", None)
            bases[index] = base
            jobs.append(dask_distribution.Job(index, spec, case.dataset, base["dataset_sha256"],
                                   case.implementation.device == "gpu"))
    if count > 1:
        random.Random(experiment_seed(experiment)).shuffle(jobs)

    def started(job: dask_distribution.Job) -> None:
        if progress:
            progress.case_started(job.index, len(cases), cases[job.index - 1].name)

    rounds: dict[int, list[CaseRecord]] = {}
    for index, remote in dask_distribution.run_jobs(cluster, jobs, experiment.timeout_s, guard, started):
        record = bases.get(index, base_record(cases[index - 1])) | remote
        if "predictions" in record:
            path = scratch / f"pred-{index}-{len(rounds.get(index, [])) + 1}.npy"
            np.save(path, record.pop("predictions"), allow_pickle=False)
            record["predictions_path"] = str(path)
        done = rounds.setdefault(index, [])
        done.append(record)
        expected = count if index in bases else 1
        if len(done) == expected or record["status"] == Status.KILLED:
            yield index, pool_rounds(done)


def _baselines_first(cases: list[Case], outcomes: Outcomes, held: dict[tuple, list]) -> Outcomes:
    """The outcomes, each case that ran fine after its group's baseline, which it is compared
    with (a spread suite, or a suite of several rounds, may finish the baseline later).

    Such a case waits in `held` until the baseline comes; one that did not run (skipped, failed)
    has nothing to compare and goes on at once.
    """
    pending = {case.group for case in cases if case.is_baseline}
    for index, record in outcomes:
        case = cases[index - 1]
        if case.is_baseline:
            pending.discard(case.group)
            yield index, record
            yield from held.pop(case.group, [])
        elif case.group in pending and record["status"] == Status.OK:
            held.setdefault(case.group, []).append((index, record))
        else:
            yield index, record


def _report_libraries() -> None:
    """What the report needs (pandas, matplotlib and its font list; about a second here),
    loaded ahead while the cases run, in the writer's turn: never beside a timed call."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.font_manager  # noqa: F401

    import mlcompare.report  # noqa: F401


def _summary_from_store(recorder: Recorder, say: Callable[[str], None]) -> SuiteReport:
    """The parent run's report, read back from the store as `mlcompare report` reads it.

    A recorder that cannot be read back (bench/gpu_check.py's JSON one: `load_suite` gives
    None) gets none; a report that fails is said, never fatal: the cases are already recorded.
    """
    from mlcompare import report  # pandas and matplotlib: only once the cases are done

    try:
        stored = recorder.load_suite()  # every run written first
        if stored is None:  # a recorder that cannot be read back
            return report.SuiteReport(files={}, tables={}, metrics={}, description="")
        say("building the comparison table and plots from the store ...")
        return report.suite_report(stored)
    except Exception as exc:  # noqa: BLE001
        say(f"mlcompare: the comparison report could not be built: {exc!r}")
        return report.SuiteReport(files={}, tables={}, metrics={},
                                  description=f"The comparison report could not be built: {exc!r}")


def _summary(record: CaseRecord) -> str:
    if "reused_from" in record:
        return f"already FINISHED in run {record['reused_from']}, not run again (--resume)"
    if record["status"] == Status.KILLED:
        return f"KILLED ({record['error']})"
    if record["status"] == Status.SKIPPED:
        return f"skipped ({record['skip_reason']})"
    if record["status"] == Status.FAILED:
        return f"FAILED ({record['error']})"
    m = record["metrics"]
    speed = f", speed-up {m['speedup_fit']:.2f}x" if "speedup_fit" in m else ""
    if "speedup_fit_lower_bound" in m:
        speed = f", speed-up at least {m['speedup_fit_lower_bound']:.3g}x (the baseline timed out)"
    if "speedup_fit_ci_low" in m:
        speed += f" [{m['speedup_fit_ci_low']:.2f}, {m['speedup_fit_ci_high']:.2f}] {m['speedup_fit_ci_level']:.0%}"
    main = record["main_metric"]
    parity = f" ({record['parity']})" if record.get("parity") else ""
    noisy = ", noisy timing" if str(record.get("timing_stability", "")).startswith("noisy") else ""
    fit = f"fit {m['fit_time_s']:.3f} s" if m["fit_time_s"] >= 0.01 else f"fit {m['fit_time_s'] * 1000:.3g} ms"
    if m.get("fit_loops", 1) > 1:
        fit += f" (mean of loops of {m['fit_loops']:.0f} fits)"
    return f"{fit}{speed}, {main} {m[main]:.4g}{parity}{noisy}"
