"""`mlcompare advise TABLE --target COL`: which implementation to use on this table, at what size,
at what price, and how sure, measured within a budget.

The table is checked as a `{file: ...}` dataset (one line and exit 2 for bad input, before any
run is written); a ladder of its subsamples (`mlcompare.suite.ladder`) runs as suites nested
under one advice run, as long as the budget affords the next step; the advice
(`mlcompare.report.advice`) is built from what the store holds, printed, and attached to the
advice run as one HTML and one Markdown page with their plots.

Exit codes: 0 the advice was made (implementations that failed or could not run are part of
it); 2 bad input; 128 + the signal's number when interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from mlcompare.cli.command import Command, register
from mlcompare.cli.flags import add_pairing_flags, name_list_or_empty, name_or_empty, positive_int_or_empty
from mlcompare.errors import InputError

if TYPE_CHECKING:
    from mlcompare.config.advice_input import Chosen
    from mlcompare.config.pairing import Pairing
    from mlcompare.data.own_table import OwnTable
    from mlcompare.records import StoredSuite

#: Below this, the first steps alone would not fit: a budget is at least this many seconds.
MIN_BUDGET_S = 30.0
DEFAULT_BUDGET_S = 600.0
#: Processes per case: three give the median's interval 75 % and a speed-up's 90 % (six: 96.9 and 95.9 %).
DEFAULT_ROUNDS = 3
TASKS = ("classification", "regression")


def budget_seconds(text: str) -> float:
    """--budget-s: seconds >= MIN_BUDGET_S (empty: the default)."""
    if text.strip() == "":
        return DEFAULT_BUDGET_S
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < MIN_BUDGET_S:
        raise argparse.ArgumentTypeError(f"expected at least {MIN_BUDGET_S:g} seconds (the ladder's first steps "
                                         f"need them), got {text!r}")
    return value


def factor_or_empty(text: str) -> float | None:
    """--extrapolate: a factor > 1 of the table's rows; empty: none."""
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 1:
        raise argparse.ArgumentTypeError(f"expected a factor of the table's rows above 1 (e.g. 10), got {text!r}")
    return value


def task_or_empty(text: str) -> str | None:
    if text.strip() == "":
        return None
    if text not in TASKS:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(TASKS)} (or nothing: inferred), got {text!r}")
    return text


def nan_rule(text: str) -> str:
    if text not in ("error", "drop"):
        raise argparse.ArgumentTypeError(f"expected error or drop, got {text!r}")
    return text


def columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


@register
class Advise(Command):
    name = "advise"
    help = "your own table in, a measured recommendation out: which implementation, at what size, how sure"
    description = ("Run a ladder of subsamples of TABLE (CSV or Parquet) through the suite's own measurement, "
                   "within --budget-s, and advise per pairing: the time, quality, speed-up and cost of each "
                   "implementation at the table's size, power-law fits that check themselves, break-even sizes. "
                   "Recorded as one advice run (nesting a suite per step) in MLFLOW_TRACKING_URI, else ./mlflow.db.")
    order = 15
    runs_cases = True

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("table", metavar="TABLE", help="your CSV or Parquet file")
        parser.add_argument("--target", required=True, metavar="COLUMN", help="the column to predict")
        parser.add_argument("--task", type=task_or_empty, default=None, metavar="{classification,regression}",
                            help="the target's task (default: inferred from its values, and said)")
        parser.add_argument("--categorical", type=columns, default=[], metavar="COLS",
                            help="comma-separated columns to encode as category codes (text columns must be)")
        parser.add_argument("--drop", type=columns, default=[], metavar="COLS", help="comma-separated columns to "
                            "leave out")
        parser.add_argument("--nan", type=nan_rule, default="error", metavar="{error,drop}",
                            help="rows with missing or infinite values: an error (the default) or dropped")
        parser.add_argument("--models", type=name_list_or_empty, default=None, metavar="PAIRINGS",
                            help="comma-separated pairings to advise on (default: every pairing of the task)")
        parser.add_argument("--implementations", type=name_list_or_empty, default=None, metavar="NAMES",
                            help="comma-separated implementation or library names (default: every one but the "
                                 "distributed ones; the baseline always)")
        parser.add_argument("--budget-s", type=budget_seconds, default=DEFAULT_BUDGET_S, metavar="SECONDS",
                            help=f"the whole command's wall time (default: {DEFAULT_BUDGET_S:g}); the ladder stops "
                                 "growing where the next step would not fit")
        parser.add_argument("--rounds", type=positive_int_or_empty, default=None,
                            help=f"processes per case (default: {DEFAULT_ROUNDS})")
        parser.add_argument("--min-rows", type=positive_int_or_empty, default=None, metavar="ROWS",
                            help="rows of the ladder's first step (default: 250, or the table's rows / 81)")
        parser.add_argument("--max-rows", type=positive_int_or_empty, default=None, metavar="ROWS",
                            help="the ladder's top (default: the table's rows); figures at the table's size "
                                 "beyond it are predicted")
        parser.add_argument("--extrapolate", type=factor_or_empty, default=None, metavar="FACTOR",
                            help="also predict the fit time at FACTOR times the table's rows (e.g. 10)")
        parser.add_argument("--reference", type=name_or_empty, default=None, metavar="RUN_OR_NAME",
                            help="figures from a suite or advice recorded elsewhere on the same table (e.g. on a "
                                 "GPU machine): a run id, or an experiment or suite name (NAME~1: the one before)")
        parser.add_argument("--prices", type=name_or_empty, default=None, metavar="PRICES.yaml",
                            help="US dollars per hour of each machine, {cpu: 0.192, gpu: 3.67}: a cost per fit")
        parser.add_argument("--output", type=name_or_empty, default=None, metavar="DIR",
                            help="also write advice.md, advice.html and the plots into DIR")
        parser.add_argument("--quiet", action="store_true", help="no progress lines (the advice is still printed)")
        add_pairing_flags(parser)

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from mlcompare.suite.interrupts import Interrupted, SignalGuard

        with SignalGuard() as guard:
            try:
                return _advise(args, guard)
            except Interrupted as stop:
                print(f"mlcompare: interrupted by {stop.signal_name}; the current step and the advice run are "
                      "marked KILLED", file=sys.stderr)
                return stop.exit_code


def _started() -> float:
    """When this process started (the budget counts from there: interpreter and imports included)."""
    import psutil

    return psutil.Process().create_time()


def _advise(args: argparse.Namespace, guard: Any) -> int:
    started = _started()
    deadline = started + args.budget_s
    say: Callable[[str], None] = (lambda line: None) if args.quiet else \
        (lambda line: print(line, file=sys.stderr, flush=True))
    from mlcompare.suite.isolation import start_warm_worker_early

    early = start_warm_worker_early()  # its base imports run beside the reading of the table
    try:
        asked = _checked(args)
        say(f"mlcompare: advise: {asked.own.table.name}, {asked.own.rows:,} usable rows of {asked.own.raw_rows:,}, "
            f"{asked.own.features} features; task {asked.own.task}"
            + (f" (inferred: {asked.own.inferred}; --task to change it)" if asked.own.inferred else ""))
        return _measure_and_advise(args, asked, deadline, started, guard, say, early)
    finally:
        early.shutdown()


@dataclass(frozen=True)
class _Asked:
    """Everything the command line asks, checked."""

    own: OwnTable
    catalog: dict[str, Pairing]
    pairings: list[Pairing]
    chosen: Chosen
    prices: dict[str, float]
    reference: tuple[str, list[StoredSuite]] | None  # the reference's label and its suites
    sizes: list[int]  # the ladder's rows
    allowed: tuple[str, ...]  # the import allow-list


def _checked(args: argparse.Namespace) -> _Asked:
    """The table, pairings, implementations, prices, reference and ladder: every mistake an
    InputError before the store is opened."""
    from mlcompare.config.advice_input import implementations_for, load_prices, named_by_flags, own_file, pairings_for
    from mlcompare.config.selection import build_catalog
    from mlcompare.data.own_table import read_own_table
    from mlcompare.pairings.imports import allowed_modules
    from mlcompare.suite.ladder import ladder_sizes

    table = own_file(args.table, args.target, args.categorical, args.drop, args.nan)
    with named_by_flags(args.table):
        own = read_own_table(table, args.task)
    allowed = allowed_modules(args.allow_module)
    catalog, _ = build_catalog(allowed, args.pairings)
    pairings = pairings_for(own.task, catalog, args.models)
    if not pairings:
        raise InputError("--models", None, f"no pairing serves the task {own.task}")
    chosen = implementations_for(pairings, args.implementations)
    prices = load_prices(args.prices) if args.prices else {}
    top = min(own.rows, args.max_rows or own.rows)
    if args.max_rows is not None and args.max_rows < 20:
        raise InputError("--max-rows", None, f"expected at least 20 rows, got {args.max_rows}")
    if args.min_rows is not None and args.min_rows > top:
        raise InputError("--min-rows", None, f"{args.min_rows} rows is more than the ladder's top, {top} rows "
                         f"({own.rows} usable rows in {args.table})")
    reference = None
    if args.reference:
        from mlcompare.tracking.advice import SelectionError, find_reference

        try:
            reference = find_reference(args.reference, "--reference")
        except SelectionError as exc:
            raise InputError(exc.flag, None, str(exc)) from None
    if args.output:
        try:
            Path(args.output).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError("--output", None, f"cannot make the folder {args.output}: {exc.strerror}") from None
    return _Asked(own=own, catalog=catalog, pairings=pairings, chosen=chosen, prices=prices, reference=reference,
                  sizes=ladder_sizes(top, args.min_rows), allowed=allowed)


def _measure_and_advise(args: argparse.Namespace, asked: _Asked, deadline: float, started: float, guard: Any,
                        say: Callable[[str], None], early: Any) -> int:
    from mlcompare.config.advice_input import step_experiment
    from mlcompare.data.cache import data_dir, human_count
    from mlcompare.data.own_table import SUBSAMPLE_FOLDER, subsample_file, table_key
    from mlcompare.measure.threads import default_threads
    from mlcompare.suite.cases import case_skip_reason
    from mlcompare.suite.dead_suites import owner_tags
    from mlcompare.suite.isolation import start_warm_worker
    from mlcompare.suite.ladder import PLAN_MARGIN, Step, Unit, run_ladder
    from mlcompare.suite.runner import run_suite
    from mlcompare.tracking.advice import AdviceRecorder, StepRecorder
    from mlcompare.tracking.reader import find_suite

    own, rounds = asked.own, args.rounds or DEFAULT_ROUNDS
    stem = Path(args.table).stem
    folder = data_dir() / SUBSAMPLE_FOLDER / table_key(own.table, 0)
    recorder = AdviceRecorder(f"advise-{stem}")
    advice_id = recorder.start_suite(
        run_name=f"advise · {stem}", params=_params(args, asked, rounds),
        tags={"mlcompare.kind": "advice", **owner_tags(), **_reference_tag(asked)})
    say(f"mlcompare: advice run {advice_id} in {recorder.tracking_uri}; ladder "
        f"{', '.join(human_count(n) for n in asked.sizes)} rows, {rounds} processes per case, budget "
        f"{args.budget_s:.0f} s")
    warm: Any = None  # the warm worker, once the first step names the libraries (False: none)

    def run_step(rows: int, implementations: dict[str, list[str]], timeout_s: float) -> Step:
        nonlocal warm
        began = time.time()
        subsample = subsample_file(own, rows)
        experiment = step_experiment(folder, f"advise-{stem}-{human_count(rows)}", subsample, rows, own.table,
                                     implementations, asked.catalog, rounds, timeout_s, asked.prices)
        if warm is None:  # the CPU libraries imported once for every step
            warm = start_warm_worker(experiment.cases(), experiment.allowed_modules, case_skip_reason, early,
                                     experiment.threads or default_threads()) or False
        if warm:  # the servers of this step's later rounds, importing beside its start (`add_spares`)
            warm.add_spares(rounds - 1)
        outcome = run_suite(experiment, StepRecorder(experiment.name, advice_id), say=say, guard=guard, warm=warm)
        stored = find_suite(outcome.parent_run_id, "advise")
        return Step(rows, outcome.parent_run_id, time.time() - began, stored.run.metrics.get("suite_wall_time_s", 0.0),
                    stored.cases)

    units = [Unit(p.name, name, name == p.baseline)
             for p in asked.pairings for name in asked.chosen.implementations[p.name]]
    try:
        ladder = run_ladder(units, asked.sizes, deadline, run_step, lambda done: _rehearse(args, asked, advice_id),
                            say, margin_s=PLAN_MARGIN * args.budget_s)
        notes = _notes(asked, ladder)
        recorder.log(tags={"advise_ladder_notes": _fitting_json(notes)})
        advice, files, text = _report(args, asked, advice_id)
        now = time.time()
        recorder.finish_suite(
            status="FINISHED", tags={"mlflow.note.content": text}, files=files,
            metrics={"advise_wall_time_s": now - started, "advise_steps": len(ladder.steps),
                     "advise_processes": sum(s.processes for s in ladder.steps),
                     "advise_overhead_per_process_s": ladder.per_process_s(), **_advice_metrics(advice)})
    except BaseException as exc:
        from mlcompare.suite.interrupts import Interrupted

        recorder.abort_suite("KILLED" if isinstance(exc, Interrupted) else "FAILED",
                             tags={"interrupted_by": exc.signal_name} if isinstance(exc, Interrupted) else None)
        raise
    finally:
        if warm:
            warm.shutdown()
    sys.stdout.write(text)
    if args.output:
        _write_output(args.output, files)
    print(f"mlcompare: advice in {time.time() - started:.0f} s of a {args.budget_s:.0f} s budget; advice run "
          f"{advice_id}; the runs: {recorder.runs_page()}", file=sys.stderr)
    return 0


def _params(args: argparse.Namespace, asked: _Asked, rounds: int) -> dict[str, Any]:
    own = asked.own
    return {"advise_table": args.table, "advise_target": args.target, "advise_task": own.task,
            "advise_task_inferred": bool(own.inferred), "advise_categorical": ",".join(args.categorical),
            "advise_drop": ",".join(args.drop), "advise_nan": args.nan,
            "advise_models": ",".join(p.name for p in asked.pairings),
            "advise_implementations": ";".join(f"{p}:{','.join(names)}"
                                               for p, names in asked.chosen.implementations.items()),
            "advise_budget_s": args.budget_s, "advise_rounds": rounds, "advise_extrapolate": args.extrapolate or "",
            "advise_min_rows": args.min_rows or "", "advise_max_rows": args.max_rows or "",
            "advise_reference": args.reference or "", "advise_ladder": ",".join(map(str, asked.sizes)),
            "advise_table_rows": own.rows, "advise_table_features": own.features,
            "advise_prices": ",".join(f"{k}={v:g}" for k, v in asked.prices.items())}


def _reference_tag(asked: _Asked) -> dict[str, str]:
    if not asked.reference:
        return {}
    words, suites = asked.reference
    return {"advise_reference_runs": f"{words}: " + ",".join(s.run.run_id for s in suites)}


def _notes(asked: _Asked, ladder: Any) -> dict[str, Any]:
    """What the ladder did, in words: why each implementation stopped below the top, what it
    could not afford, what was left out (stored on the advice run, read back by the report)."""
    from mlcompare.data.cache import human_count

    stopped = {f"{u.pairing} · {u.implementation}": u.stopped for u in ladder.units if u.stopped and not u.skipped}
    lines = [f"{p} · {impl}: {why}" for p, left in asked.chosen.left_out.items() for impl, why in left.items()]
    ran = [s.rows for s in ladder.steps]
    missing = [n for n in ladder.planned if n not in ran]
    if missing:
        lines.append(f"sizes of the ladder not run: {', '.join(human_count(n) for n in missing)} rows (the budget "
                     "did not afford them for any implementation)")
    checks = [f"{human_count(s.rows)} rows: predicted {cost:.0f} s, took {s.wall_s:.0f} s"
              for s, cost in zip(ladder.steps, ladder.predicted_s) if cost is not None]
    if checks:
        lines.append(f"the budget's own predictions, step by step: {'; '.join(checks)}")
    lines.append(f"the harness cost {ladder.per_process_s():.2f} s per process beside the model's calls and "
                 f"{ladder.fixed_s():.1f} s per step (measured on the last steps); the report was given "
                 f"{ladder.reserve_s:.1f} s")
    return {"stopped": stopped, "notes": lines}


#: What a tag holds (MLflow clips longer values; the writer at 6,000 characters).
_TAG_LIMIT = 5800


def _fitting_json(notes: dict[str, Any]) -> str:
    """The ladder's notes as JSON within a tag's length: long sentences shortened first, then the
    last notes left out (said in the last one kept)."""
    text = json.dumps(notes)
    if len(text) <= _TAG_LIMIT:
        return text
    stopped = {k: v[:120] for k, v in notes["stopped"].items()}
    lines: list[str] = [n[:160] for n in notes["notes"]]
    while lines and len(json.dumps({"stopped": stopped, "notes": lines})) > _TAG_LIMIT - 80:
        lines.pop()
    while stopped and len(json.dumps({"stopped": stopped, "notes": lines})) > _TAG_LIMIT - 80:
        stopped.popitem()
    lines.append("(more notes than a tag holds: the rest left out)")
    return json.dumps({"stopped": stopped, "notes": lines})


def _build(args: argparse.Namespace, asked: _Asked, advice_id: str) -> Any:
    """The advice from the store: the advice run and its steps, read back."""
    from mlcompare.report import advice as advising
    from mlcompare.tracking.advice import advice_run, step_suites

    run = advice_run(advice_id)
    try:
        stored = json.loads(run.tags.get("advise_ladder_notes") or "{}")
    except json.JSONDecodeError:  # clipped by a store with a shorter limit: the advice goes on without them
        stored = {}
    own = asked.own
    table = advising.Table(own.table.name, int(run.params.get("advise_table_rows", own.rows)),
                           int(run.params.get("advise_table_features", own.features)), run.params.get("advise_task",
                                                                                                        own.task),
                           run.params.get("advise_target", args.target),
                           f"inferred: {own.inferred}" if own.inferred else "given by --task")
    return advising.build(step_suites(advice_id), table, stored.get("stopped", {}), args.extrapolate, asked.prices,
                          asked.reference, stored.get("notes", []))


def _report(args: argparse.Namespace, asked: _Asked, advice_id: str) -> tuple[Any, dict[str, str | bytes], str]:
    from mlcompare.report import advice as advising
    from mlcompare.report import advice_plots, advice_render

    advice = _build(args, asked, advice_id)
    images = advice_plots.render(advice)
    files: dict[str, str | bytes] = {
        "advice.html": advice_render.to_html(advice, images),
        "advice.md": advice_render.to_markdown(advice, list(images)),
        "advice.json": json.dumps(advising.as_dict(advice), indent=1, default=str),
        **{f"plots/{name}": png for name, png in images.items()}}
    return advice, files, advice_render.to_text(advice)


def _rehearse(args: argparse.Namespace, asked: _Asked, advice_id: str) -> float:
    """The seconds the report will need: measured once by building it from the first step (its
    imports are then paid), with room for more steps to read back and the run to close."""
    began = time.time()
    _report(args, asked, advice_id)
    spent = time.time() - began
    return 1.0 + 1.5 * spent + 0.2 * len(asked.sizes)


def _advice_metrics(advice: Any) -> dict[str, float]:
    from mlcompare.report.advice import metrics

    return metrics(advice)


def _write_output(folder: str, files: dict[str, str | bytes]) -> None:
    root = Path(folder)
    try:
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise InputError("--output", None, f"cannot write {folder}: {exc.strerror}") from None
    print(f"mlcompare: the advice written to {root / 'advice.md'} and {root / 'advice.html'}", file=sys.stderr)
