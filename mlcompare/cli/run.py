"""`mlcompare run EXPERIMENT`: run every case of an experiment and record it in MLflow."""

from __future__ import annotations

import argparse
import sys

from mlcompare.cli.command import Command, register
from mlcompare.cli.compare import MIN_CHANGE, attach_comparison, change_factor, find_reference
from mlcompare.cli.flags import (
    add_pairing_flags,
    add_selection,
    address_or_empty,
    experiment_from_args,
    name_or_empty,
)
from mlcompare.errors import InputError
from mlcompare.records import Status


@register
class Run(Command):
    name = "run"
    help = "run an experiment and record it in MLflow"
    order = 10
    runs_cases = True

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add_selection(parser)
        parser.add_argument("--system-metrics", action="store_true",
                            help="sample CPU/memory (and GPU, with nvidia-ml-py) on the suite run")
        parser.add_argument("--resume", action="store_true",
                            help="skip the cases already FINISHED in the store for this experiment "
                                 "fingerprint; rerun failed, killed and missing ones (also --resume=true|false)")
        stop = parser.add_mutually_exclusive_group()
        stop.add_argument("--keep-going", dest="fail_fast", action="store_false", default=False,
                          help="run every case even after one failed (the default)")
        stop.add_argument("--fail-fast", dest="fail_fast", action="store_true",
                          help="stop at the first failed case; the cases not reached get no run")
        parser.add_argument("--scheduler", type=address_or_empty, default=None, metavar="tcp://HOST:PORT",
                            help="spread the cases over the workers of this Dask scheduler (one case per "
                                 "worker at a time; GPU cases on workers started with --resources GPU=1); "
                                 "results are logged here, to the tracking URI")
        parser.add_argument("--no-warm-worker", dest="warm_worker", action="store_false",
                            help="start every case in a fresh Python process instead of forking CPU cases "
                                 "from a warm worker that has imported the CPU libraries once (slower: each "
                                 "case imports them again)")
        parser.add_argument("--compare-to", type=name_or_empty, default=None, metavar="SUITE",
                            help="when the suite is done, compare it with this earlier suite (a parent run id, or "
                                 "an experiment or suite name: its latest) and log the comparison table and plot "
                                 "on the new parent run (see `mlcompare compare`)")
        parser.add_argument("--min-change", type=change_factor, default=None, metavar="FACTOR",
                            help=f"with --compare-to: the smallest change its verdicts call, as `mlcompare compare "
                                 f"--min-change` (default: {MIN_CHANGE:g}; 1 calls any change)")
        parser.add_argument("--quiet", action="store_true",
                            help="no progress output (on a terminal: no bar and no summary table; "
                                 "elsewhere: no lines)")
        add_pairing_flags(parser)

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from mlcompare.suite.interrupts import Interrupted, SignalGuard

        with SignalGuard() as guard:
            try:
                outcome = _run_suite(args, guard)
            except Interrupted as stop:
                print(f"mlcompare: interrupted by {stop.signal_name}; the current case and the suite "
                      "are marked KILLED (`--resume` runs what is left)", file=sys.stderr)
                return stop.exit_code
        ok, skipped, failed = (outcome.count(s) for s in (Status.OK, Status.SKIPPED, Status.FAILED))
        reused = f", {outcome.reused} already finished (resumed)" if args.resume else ""
        print(f"mlcompare: {ok} ran, {skipped} skipped, {failed} failed{reused}; parent run {outcome.parent_run_id}")
        if outcome.runs_page:
            print(f"mlcompare: the runs table: {outcome.runs_page}")
        return 1 if failed or outcome.stopped_early else 0


def _run_suite(args: argparse.Namespace, guard):
    early = None
    if args.warm_worker and not args.scheduler:
        from mlcompare.suite.isolation import start_warm_worker_early

        # its base imports (numpy, scikit-learn, pyarrow) run beside the reading of the file
        early = start_warm_worker_early()
    try:
        return _run_checked(args, guard, early)
    finally:
        if early is not None:  # the file was refused, or the suite is over: gone either way
            early.shutdown()


def _run_checked(args: argparse.Namespace, guard, early):
    experiment = experiment_from_args(args)
    experiment.system_metrics = experiment.system_metrics or args.system_metrics
    reference = None
    if args.min_change is not None and not args.compare_to:
        raise InputError("--min-change", None, "compares with an earlier suite: give --compare-to SUITE as well")
    if args.compare_to:  # found before anything runs: an unknown suite is bad input
        reference = find_reference(args.compare_to)
    # Imported only now: a bad file must not even open the store.
    from mlcompare.suite.cases import PreparingBeside
    from mlcompare.suite.runner import run_suite

    live = None
    if args.quiet:
        say = lambda line: None  # noqa: E731
    elif sys.stderr.isatty():
        from mlcompare.suite.progress import LiveProgress

        live = LiveProgress(sys.stderr)
        say = live.say
    else:
        say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    cluster = warm = None
    if args.scheduler:  # reached before the store is touched: a bad address is an input error
        from mlcompare.suite.dask_distribution import connect

        _check_not_training_on(experiment, args.scheduler)
        cluster = connect(args.scheduler)
        say(f"mlcompare: spreading the cases over {cluster.describe()}")
    elif args.warm_worker:
        from mlcompare.measure.threads import default_threads
        from mlcompare.suite.cases import case_skip_reason
        from mlcompare.suite.isolation import start_warm_worker

        # the estimators' imports overlap the datasets' preparation and the store's opening
        warm = start_warm_worker(experiment.cases(), experiment.allowed_modules, case_skip_reason, early,
                                 experiment.threads or default_threads(), renewals=experiment.rounds - 1)
    # made by a forked child while this process opens the store; spread, every case's data
    # (the workers may lack it); before any run is written
    preparing = PreparingBeside(experiment, say, guard, everywhere=cluster is not None)
    try:
        from mlcompare.tracking.writer import Recorder  # MLflow: imported after the fork

        recorder = Recorder(experiment.name)
        suite = dict(say=say, prepared=preparing.result(), guard=guard, resume=args.resume,
                     fail_fast=args.fail_fast, cluster=cluster, warm=warm or False)
        if live:
            with live:
                outcome = run_suite(experiment, recorder, progress=live, **suite)
            live.summary(outcome.skipped_everywhere)
        else:
            outcome = run_suite(experiment, recorder, **suite)
        if reference is not None:
            attach_comparison(reference, outcome.parent_run_id, say,
                              MIN_CHANGE if args.min_change is None else args.min_change)
        return outcome
    finally:
        preparing.stop()
        if cluster is not None:
            cluster.close()
        if warm is not None:
            warm.shutdown()


def _check_not_training_on(experiment, address: str) -> None:
    """The cluster that runs the cases cannot also train them: its workers are busy with cases."""
    for case in experiment.cases():
        if case.pairing.estimator_params(case.implementation).get("scheduler_address") == address:
            raise InputError("--scheduler", None, f"{case.name} trains on {address} (scheduler_address), the "
                             "cluster this suite is spread over: its workers would wait for each other; "
                             "give the cases another cluster to train on, or leave scheduler_address out")


