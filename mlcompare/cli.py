"""`mlcompare run | validate | list | report | datasets`: the command line.

Bad input of any kind ends in one line on stderr naming the file and field (or the flag),
exit code 2, and nothing written to the tracking store.

Exit codes of `run`: 0 every case ran or was skipped with a reason; 1 a case failed (or
--fail-fast stopped the suite); 2 bad input; 128 + the signal's number when interrupted
(130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import NoReturn

from mlcompare.errors import InputError, one_line

EXIT_BAD_INPUT = 2
#: `mlcompare report --format` choices (the same as mlcompare.report.FORMATS; not imported
#: from there so that a bad command line never pays for pandas and matplotlib).
REPORT_FORMATS = ("table", "markdown", "csv", "html")
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off", "")


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line like every other input error (no usage block)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # "argument --repeats: expected ..." -> "--repeats: expected ..."
            message = message[len("argument "):]
        print(f"mlcompare: error: {one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _positive_int_or_empty(text: str) -> int | None:
    """--repeats, --threads: a positive integer; empty means 'as the experiment says' (MLproject default)."""
    if text.strip() == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seconds(text: str, minimum: float) -> float | None:
    """Seconds (>= minimum); empty means 'as the experiment says' (MLproject default)."""
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= {minimum:g}, got {text!r}")
    return value


def _timeout(text: str) -> float | None:
    return _seconds(text, 1)


def _min_time(text: str) -> float | None:
    return _seconds(text, 0)


def _boolean(text: str) -> bool:
    """--resume=VALUE as the MLproject passes it: true/false, yes/no, 1/0, on/off, empty = false."""
    word = text.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r} "
                                     "(write the experiment file before --resume)")


def _name_list_or_empty(text: str) -> list[str] | None:
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or None


def _address_or_empty(text: str) -> str | None:
    """A Dask scheduler address; empty means none (run here), as MLproject passes it."""
    text = text.strip()
    if not text:
        return None
    if "://" not in text:
        raise argparse.ArgumentTypeError(f"expected a scheduler address like tcp://HOST:8786, got {text!r}")
    return text


def _add_selection(parser: argparse.ArgumentParser, experiment_required: bool = True) -> None:
    """The flags that change what a suite runs: `validate` takes them too, to check them."""
    if experiment_required:
        parser.add_argument("experiment", help="experiment YAML file, e.g. experiments/quick.yaml")
    else:
        parser.add_argument("experiment", nargs="?",
                            help="experiment YAML file; without one, the catalog and --pairings files are checked")
    parser.add_argument("--repeats", type=_positive_int_or_empty, default=None,
                        help="warm fits per case (overrides the file)")
    parser.add_argument("--implementations", type=_name_list_or_empty, default=None,
                        help="comma-separated implementation or library names to run, e.g. sklearn,xgboost")
    parser.add_argument("--timeout", type=_timeout, default=None, metavar="SECONDS",
                        help="per-case time limit; the worker is killed and the case FAILED with "
                             "reason timeout (overrides the file's timeout_s)")
    parser.add_argument("--threads", type=_positive_int_or_empty, default=None,
                        help="CPU threads for every CPU implementation (default: the file's, else all physical cores)")
    parser.add_argument("--min-time", type=_min_time, default=None, metavar="SECONDS",
                        help="keep repeating warm fits until this much fit time is measured")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mlcompare", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run an experiment and record it in MLflow")
    _add_selection(run)
    run.add_argument("--system-metrics", action="store_true",
                     help="sample CPU/memory (and GPU, with nvidia-ml-py) on the suite run")
    run.add_argument("--resume", type=_boolean, nargs="?", const=True, default=False, metavar="BOOL",
                     help="skip the cases already FINISHED in the store for this experiment "
                          "fingerprint; rerun failed, killed and missing ones")
    stop = run.add_mutually_exclusive_group()
    stop.add_argument("--keep-going", dest="fail_fast", action="store_false", default=False,
                      help="run every case even after one failed (the default)")
    stop.add_argument("--fail-fast", dest="fail_fast", action="store_true",
                      help="stop at the first failed case; the cases not reached get no run")
    run.add_argument("--scheduler", type=_address_or_empty, default=None, metavar="tcp://HOST:PORT",
                     help="spread the cases over the workers of this Dask scheduler (one case per worker at "
                          "a time; GPU cases on workers started with --resources GPU=1); results are logged "
                          "here, to the tracking URI")
    run.add_argument("--quiet", action="store_true",
                     help="no progress output (on a terminal: no bar and no summary table; elsewhere: no lines)")
    _pairing_flags(run)

    validate = sub.add_parser("validate", help="check an experiment file (or only pairings) without running anything")
    _add_selection(validate, experiment_required=False)
    _pairing_flags(validate)

    listing = sub.add_parser("list", help="every pairing and implementation, and whether it can run here")
    _pairing_flags(listing)

    data = sub.add_parser("datasets", help="dataset cards and the local cache")
    data_sub = data.add_subparsers(dest="datasets_command", required=True, metavar="ACTION")
    data_sub.add_parser("list", help="every card, whether its download is cached, and the cached datasets")
    fetch = data_sub.add_parser("fetch", help="download (and verify) the named cards' files")
    fetch.add_argument("names", nargs="+", metavar="NAME")
    fetch.add_argument("--pin", action="store_true",
                       help="for a card without a published sha256: record this download's hash")
    verify = data_sub.add_parser("verify", help="check cached downloads and datasets against their hashes")
    verify.add_argument("names", nargs="*", metavar="NAME")
    clean = data_sub.add_parser("clean", help="delete the prepared datasets (and, with --downloads, the downloads)")
    clean.add_argument("--downloads", action="store_true")

    report = sub.add_parser("report", help="the comparison table of recorded suites, read from the MLflow store",
                            description="Rebuild the comparison table from the MLflow store "
                                        "(MLFLOW_TRACKING_URI, else ./mlflow.db). With no selection: every suite.")
    report.add_argument("--experiment", action="append", metavar="NAME",
                        help="an MLflow experiment name or a suite name (repeatable)")
    report.add_argument("--run-id", action="append", metavar="ID", help="a suite's parent run id (repeatable)")
    report.add_argument("--format", choices=REPORT_FORMATS, default="table", help="output format (default: table)")
    report.add_argument("--output", metavar="PATH", help="write to this file instead of stdout")
    return parser


def _pairing_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairings", action="append", default=[], metavar="PATH",
                        help="a pairing YAML file or a directory of them, added to the catalog and to the "
                             "run (repeatable)")
    parser.add_argument("--allow-module", action="append", default=[], metavar="MODULE", dest="allow_module",
                        help="also allow estimators from this module and its submodules (repeatable)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "report":
            return _report(args)
        if args.command == "datasets":
            from mlcompare import dataset_cli

            return dataset_cli.main(args)
        return _list(args)
    except InputError as exc:
        print(f"mlcompare: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _load(args: argparse.Namespace):
    from mlcompare.experiment import load_experiment

    experiment = load_experiment(args.experiment, repeats=args.repeats, implementations=args.implementations,
                                 timeout_s=args.timeout, pairing_paths=args.pairings,
                                 allow_modules=args.allow_module)
    if args.threads is not None:
        experiment.threads = args.threads
    if args.min_time is not None:
        experiment.min_time_s = args.min_time
    return experiment


def _run(args: argparse.Namespace) -> int:
    from mlcompare.interrupts import Interrupted, SignalGuard

    with SignalGuard() as guard:
        try:
            experiment = _load(args)
            experiment.system_metrics = experiment.system_metrics or args.system_metrics
            # Imported only now: a bad file must not even open the store.
            from mlcompare.suite import prepare_datasets, run_suite
            from mlcompare.tracking import Recorder

            live = None
            if args.quiet:
                say = lambda line: None  # noqa: E731
            elif sys.stderr.isatty():
                from mlcompare.progress import LiveProgress

                live = LiveProgress(sys.stderr)
                say = live.say
            else:
                say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
            cluster = None
            if args.scheduler:  # reached before the store is touched: a bad address is an input error
                from mlcompare.spread import connect

                _check_not_training_on(experiment, args.scheduler)
                cluster = connect(args.scheduler)
                say(f"mlcompare: spreading the cases over {cluster.describe()}")
            try:
                # before the store is touched; spread, every case's data (the workers may lack it)
                prepared = prepare_datasets(experiment, say, guard, everywhere=cluster is not None)
                suite = dict(say=say, prepared=prepared, guard=guard, resume=args.resume,
                             fail_fast=args.fail_fast, cluster=cluster)
                if live:
                    with live:
                        outcome = run_suite(experiment, Recorder(experiment.name), progress=live, **suite)
                    live.summary()
                else:
                    outcome = run_suite(experiment, Recorder(experiment.name), **suite)
            finally:
                if cluster is not None:
                    cluster.close()
        except Interrupted as stop:
            print(f"mlcompare: interrupted by {stop.signal_name}; the current case and the suite "
                  "are marked KILLED (`--resume` runs what is left)", file=sys.stderr)
            return stop.exit_code
    ok, skipped, failed = (outcome.count(s) for s in ("ok", "skipped", "failed"))
    reused = f", {outcome.reused} already finished (resumed)" if args.resume else ""
    print(f"mlcompare: {ok} ran, {skipped} skipped, {failed} failed{reused}; parent run {outcome.parent_run_id}")
    return 1 if failed or outcome.stopped_early else 0


def _check_not_training_on(experiment, address: str) -> None:
    """The cluster that runs the cases cannot also train them: its workers are busy with cases."""
    for case in experiment.cases():
        if case.pairing.estimator_params(case.implementation).get("scheduler_address") == address:
            raise InputError("--scheduler", None, f"{case.name} trains on {address} (scheduler_address), the "
                             "cluster this suite is spread over: its workers would wait for each other; "
                             "give the cases another cluster to train on, or leave scheduler_address out")


def _report(args: argparse.Namespace) -> int:
    from mlcompare import report, tracking

    try:
        suites = tracking.find_suites(experiments=args.experiment, run_ids=args.run_id)
    except tracking.SelectionError as exc:
        raise InputError(exc.flag, None, str(exc)) from None
    if not suites:
        where = f" in experiment {', '.join(args.experiment)}" if args.experiment else ""
        raise InputError("report", None, f"no mlcompare suite runs{where} in {tracking.store_uri()}")
    text = report.render(report.compare(suites), args.format)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            raise InputError("--output", None, f"cannot write {args.output}: {exc.strerror}") from None
        print(f"mlcompare: {len(suites)} suite(s) written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _validate(args: argparse.Namespace) -> int:
    if args.experiment is None:
        catalog = _checked_catalog(args)
        print(f"ok: {len(catalog)} pairings ({', '.join(sorted(catalog))})")
        return 0
    experiment = _load(args)
    cases = experiment.cases()
    print(f"{experiment.source}: ok: {len(cases)} cases "
          f"({len(experiment.pairings)} pairings, {len(experiment.datasets)} datasets, "
          f"repeats {experiment.repeats})")
    return 0


def _checked_catalog(args: argparse.Namespace) -> dict:
    """The catalog with plugins and --pairings files; installed estimators imported and checked
    (those of the --pairings files only, when given)."""
    from mlcompare.pairings import allowed_modules
    from mlcompare.pairings.checks import check_pairing
    from mlcompare.selection import build_catalog

    catalog, added = build_catalog(allowed_modules(args.allow_module), args.pairings)
    for pairing in catalog.values():
        if not added or pairing.name in added:  # with --pairings, just those files
            check_pairing(pairing)
    return catalog


def _list(args: argparse.Namespace) -> int:
    from mlcompare.pairings import allowed_modules
    from mlcompare.selection import build_catalog
    from mlcompare.suite import skip_reason

    catalog, _ = build_catalog(allowed_modules(args.allow_module), args.pairings)
    runnable = total = 0
    for pairing in sorted(catalog.values(), key=lambda p: (p.task, p.name)):
        origin = f"; plugin {pairing.plugin}" if pairing.plugin else ""
        print(f"{pairing.name} ({pairing.task}; metrics: {', '.join(pairing.metrics)}{origin})")
        for impl in pairing.implementations.values():
            reason = skip_reason(impl.library, impl.device, pairing.estimator_params(impl), impl.distributed)
            mark = "baseline, " if impl.name == pairing.baseline else ""
            state = f"cannot run here: {reason}" if reason else "can run here"
            under = f" under {impl.accelerator}" if impl.accelerator else ""
            under += f" on {impl.distributed}" if impl.distributed else ""
            print(f"  {impl.name:<16} {impl.device}  {impl.estimator}{under}  ({mark}{state})")
            total += 1
            runnable += reason is None
    print(f"{len(catalog)} pairings, {total} implementations, {runnable} can run here")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
