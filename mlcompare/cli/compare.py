"""`mlcompare compare A B`: did B (a new version, another machine, another setting) get slower than A?

Exit codes: 0 the comparison was made and no gate failed; 1 a gate failed (`--fail-slower`,
`--fail-quality`: the offending cases are listed on stderr); 2 bad input (an unknown suite,
a bad flag, no case in common), one line, nothing else; 2 also when a gate cannot decide a
case (too few processes to reach its level, or a metric missing), one line naming them,
after the comparison (`--undecided warn` makes that a warning and the gate decides on the rest).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Callable

from mlcompare.cli.command import Command, register
from mlcompare.cli.report import REPORT_FORMATS, write_output
from mlcompare.errors import InputError

if TYPE_CHECKING:
    from mlcompare.records import StoredSuite
    from mlcompare.report.suite_comparison import SuiteComparison

EXIT_GATE = 1
#: --min-change's default: `report.suite_comparison.table.MIN_CHANGE` (not imported here: every
#: command's start would pay for pandas), held equal by tests/cli/test_compare_gates.py.
MIN_CHANGE = 1.05


def ratio_at_least_one(text: str) -> float:
    """--fail-slower: a factor >= 1 (1.3: fail when a case is more than 30 % slower, significantly)."""
    value = _number(text, "a ratio")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a ratio >= 1 (1.3 fails cases more than 30 % slower), got {text!r}")
    return value


def change_factor(text: str) -> float:
    """--min-change: a factor >= 1 (1.05: call what is more than 5 % slower or faster; 1: any change)."""
    value = _number(text, "a factor")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a factor >= 1 (1.05 calls changes of more than 5 %, "
                                         f"1 any change), got {text!r}")
    return value


def non_negative(text: str) -> float:
    value = _number(text, "a quality difference")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a quality difference >= 0, got {text!r}")
    return value


def confidence_level(text: str) -> float:
    value = _number(text, "a confidence level")
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a confidence level between 0.5 and 1 (e.g. 0.95), got {text!r}")
    return value


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


@register
class Compare(Command):
    name = "compare"
    help = "compare two recorded suites case by case: B's times over A's, with verdicts and CI gates"
    description = ("Match the cases two suites share and compare them: B's fit (and predict) time over A's with "
                   "an exact interval from the repeats and a verdict, and the main quality metric. A and B are "
                   "parent run ids, or MLflow experiment or suite names meaning their latest suite not still running "
                   "(NAME~1: the one before). Reads MLFLOW_TRACKING_URI, else ./mlflow.db.")
    order = 55

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("a", metavar="A", help="the reference suite: a parent run id, or an experiment or "
                                                   "suite name (its latest suite; NAME~N: N before it)")
        parser.add_argument("b", metavar="B", help="the suite compared with A, the same ways")
        parser.add_argument("--format", choices=REPORT_FORMATS, default="table", help="output format (default: table)")
        parser.add_argument("--output", metavar="PATH", help="write to this file instead of stdout")
        parser.add_argument("--confidence", type=confidence_level, default=0.95, metavar="LEVEL",
                            help="level of the intervals and verdicts (default: 0.95)")
        parser.add_argument("--min-change", type=change_factor, default=MIN_CHANGE, metavar="FACTOR",
                            help=f"the smallest change a verdict calls: B's time significantly more than FACTOR × "
                                 f"A's (slower) or less than A's ÷ FACTOR (faster); 1 calls any change (default: "
                                 f"{MIN_CHANGE:g}, the drift measured between identical suites on one machine)")
        parser.add_argument("--fail-slower", type=ratio_at_least_one, default=None, metavar="RATIO",
                            help="exit 1 when a shared case's fit or predict time in B is significantly more than "
                                 "RATIO × A's (one-sided test over the processes, every case one family), or it "
                                 "ran in A and failed in B")
        parser.add_argument("--fail-quality", type=non_negative, default=None, metavar="DELTA",
                            help="exit 1 when a shared case's main quality metric is worse in B by more than DELTA "
                                 "(absolute for scores such as accuracy, relative for losses such as rmse)")
        parser.add_argument("--undecided", choices=("fail", "warn"), default="fail",
                            help="a case a gate cannot decide (too few processes for its level, a metric "
                                 "missing): exit 2 naming it (fail, the default), or say so and go on (warn)")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from mlcompare.report import suite_comparison
        from mlcompare.tracking import reader

        suites = []
        for flag, ref in (("A", args.a), ("B", args.b)):
            try:
                suites.append(reader.find_suite(ref, flag))
            except reader.SelectionError as exc:
                raise InputError(exc.flag, None, str(exc)) from None
        a, b = suites
        if a.run.run_id == b.run.run_id:
            raise InputError("B", None, f"A and B are the same suite ({a.run.run_id}); name two suites "
                                        f"(e.g. {args.b}~1 for the one before the latest)")
        comparison = suite_comparison.compare_suites(a, b, args.confidence, args.fail_quality, args.min_change)
        if comparison.rows.empty:
            raise InputError("B", None, f"suites {a.run.run_id[:8]} and {b.run.run_id[:8]} have no case in common "
                                        f"({len(a.cases)} cases in A, {len(b.cases)} in B)")
        comparison.fail_slower = args.fail_slower
        write_output(suite_comparison.render(comparison, args.format), args.output, "the comparison")
        failed = report_gates(comparison, args.fail_slower, args.fail_quality)
        undecided = undecided_by_gates(comparison, args.fail_slower, args.fail_quality)
        if undecided and args.undecided == "fail":
            raise InputError(undecided[0], None, undecided[1])
        if undecided:
            print(f"mlcompare: warning: {undecided[0]}: {undecided[1]}", file=sys.stderr)
        return failed


def find_reference(ref: str) -> StoredSuite:
    """`run --compare-to`'s suite, read before the new suite starts (it may be the latest of the same name)."""
    from mlcompare.tracking import reader

    try:
        return reader.find_suite(ref, "--compare-to")
    except reader.SelectionError as exc:
        raise InputError(exc.flag, None, str(exc)) from None


def attach_comparison(reference: StoredSuite, parent_run_id: str, say: Callable[[str], None],
                      min_change: float = MIN_CHANGE) -> None:
    """Compare the suite just recorded with `reference` and log the comparison on its parent run
    (its verdicts calling changes beyond `min_change`).

    Never fatal: the suite is already recorded; a comparison that cannot be made is said.
    """
    from mlcompare.report import suite_comparison
    from mlcompare.tracking import reader, writer

    try:
        suite = reader.find_suite(parent_run_id, "--compare-to")
        comparison = suite_comparison.compare_suites(reference, suite, min_change=min_change)
        if comparison.rows.empty:
            say(f"mlcompare: no case in common with suite {reference.run.run_id}: no comparison logged")
            return
        files = suite_comparison.artifacts(comparison)
        writer.attach(parent_run_id, files, tags={"compared_to": reference.run.run_id})
    except Exception as exc:  # noqa: BLE001
        say(f"mlcompare: the comparison with suite {reference.run.run_id} could not be made: {exc!r}")
        return
    html = next(name for name in files if name.endswith(".html"))
    say(f"mlcompare: against suite {reference.run.run_id[:8]}: {suite_comparison.summary_line(comparison)}; "
        f"logged on the parent run as {html}")


def report_gates(comparison: SuiteComparison, fail_slower: float | None, fail_quality: float | None) -> int:
    """Say on stderr which cases fail a gate; EXIT_GATE if any, else 0."""
    from mlcompare.report import suite_comparison

    failed = 0
    if fail_slower is not None:
        slow = suite_comparison.slower_than(comparison, fail_slower)
        if not slow.empty:
            failed += len(slow)
            print(f"mlcompare: --fail-slower {fail_slower:g}: {len(slow)} case(s) of B significantly more than "
                  f"{fail_slower:g}× slower than A ({comparison_family(comparison)}), or failed in B:", file=sys.stderr)
            for r in slow.to_dict("records"):
                print(f"  {r['case']}: {_slow_text(r, fail_slower)}", file=sys.stderr)
    if fail_quality is not None:
        worse = suite_comparison.worse_than(comparison, fail_quality)
        if not worse.empty:
            failed += len(worse)
            print(f"mlcompare: --fail-quality {fail_quality:g}: {len(worse)} case(s) of B worse by more than "
                  f"{fail_quality:g}:", file=sys.stderr)
            for r in worse.to_dict("records"):
                print(f"  {r['case']}: {r['main_metric']} {r['quality_a']:.4g} → {r['quality_b']:.4g} "
                      f"(delta {r['quality_delta']:+.4g})", file=sys.stderr)
    return EXIT_GATE if failed else 0


def comparison_family(comparison: SuiteComparison) -> str:
    """How the gate's tests are held together, in words."""
    from mlcompare.report.suite_comparison.table import FAMILY_METHOD

    return f"{FAMILY_METHOD} at {comparison.false_call_rate:.3g} over every case's fit and predict"


def undecided_by_gates(comparison: SuiteComparison, fail_slower: float | None,
                       fail_quality: float | None) -> tuple[str, str] | None:
    """(the gates, what they could not decide) in one line, or None: a gate that cannot decide a
    case must not pass it in silence."""
    from mlcompare.report import suite_comparison

    found = []
    if fail_slower is not None:
        found += [("--fail-slower", case) for case in suite_comparison.undecided_for_slower(comparison)]
    if fail_quality is not None:
        found += [("--fail-quality", f"{case} (no main metric on a side)")
                  for case in suite_comparison.undecided_for_quality(comparison)]
    if not found:
        return None
    gates = " and ".join(dict.fromkeys(gate for gate, _ in found))
    shown = "; ".join(case for _, case in found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    rate = comparison.false_call_rate
    return gates, (f"cannot decide {len(found)} case(s): {shown} (one process against one never reaches "
                   f"p ≤ {rate:g}; run both suites with rounds: 5 or more, or pass --undecided warn)")


def _slow_text(r: dict, ratio: float) -> str:
    if r["status_verdict"]:
        return r["status_verdict"]
    parts = []
    for name in ("fit", "predict"):
        if not r[f"{name}_ratio"] > ratio:
            continue
        interval = ("" if math.isnan(r[f"{name}_low"]) else
                    f" [{r[f'{name}_low']:.3g}–{r[f'{name}_high']:.3g}, {r[f'{name}_level'] * 100:.3g} %]")
        times = f"({r[f'{name}_a_s']:.3g} s → {r[f'{name}_b_s']:.3g} s)"
        parts.append(f"{name} {r[f'{name}_ratio']:.3g}×{interval} {times}")
    return "; ".join(parts)
