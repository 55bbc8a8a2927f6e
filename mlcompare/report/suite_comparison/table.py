"""Two suites side by side: which cases they share, B against A for each, and the verdicts.

A case of A and a case of B are the same case when they agree on the pairing, the
implementation, the dataset and its size, the data layout (`order`; suites older than
it used C order), the sweep point and every `estimator.*` parameter both runs logged.
Thread counts (`n_jobs` and its other names) are left out of the match: they are a
setting being compared, like the machine or a library version, and are listed among the
differences instead. A parameter only one side logged (a new release added it) is listed
too, and does not keep the cases apart.

For each shared case: B's median fit time over A's, the exact Mann–Whitney interval of
that factor from one summary per process of both runs (`measure.stats.ratio_interval`, the
speed-up's interval) and a verdict; the same for predict time; and the main quality
metric of both, with a verdict against a tolerance.

The verdicts are one family. Each timing test is the exact Mann–Whitney test over the
processes (repeats inside one process are not independent draws of the next run) of a change
beyond the smallest one a verdict calls (`min_change`, a factor: 1.05 calls what is more than
5 % slower or faster, significantly; 1 calls any change), and the p-values of every test the
comparison makes are adjusted together by Benjamini–Hochberg: a change is called where the
adjusted p is at most 1 − the confidence. That keeps the expected share of false calls among
the calls at most that much, and, when nothing changed by more than `min_change` (an A/A
comparison), the chance of even one call. Why a smallest change: two suites of the same code
run minutes apart on one machine differ as wholes by a few per cent (bench/aa.py), which no
interval over one suite's processes covers. A test whose processes are too few to ever reach
that p (three against three: 0.1) is "too few processes".
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterator

import pandas as pd

from mlcompare.data.cache import human_count
from mlcompare.measure.stats import benjamini_hochberg, change_test, rank_test, ratio_interval, smallest_p
from mlcompare.measure.stopping import rule_levels
from mlcompare.pairings.quality import DEFAULT_TOLERANCE, HIGHER_IS_BETTER, METRICS, quality_delta
from mlcompare.records import Status
from mlcompare.report import results

if TYPE_CHECKING:
    from mlcompare.records import StoredRun, StoredSuite

#: Estimator parameters that only say how many threads to use: a setting, not the case.
THREAD_PARAMS = frozenset({"n_jobs", "nthread", "n_threads", "num_threads", "thread_count"})
#: Case params that are settings rather than identity: listed when they differ.
SETTING_PARAMS = ("threads", "dtype", "repeats", "rounds", "min_time_s", "estimator")
#: Case tags that say what ran (listed when they differ).
SETTING_TAGS = ("library_version", "threadpools", "ran_on")
#: The suite's own params and tags compared first: the machine, the versions, the settings.
SUITE_PARAMS = ("suite_threads", "suite_thread_sweep", "suite_repeats", "suite_rounds", "suite_min_time_s",
                "suite_timeout_s", "suite_file_sha256")
SUITE_TAG_PREFIXES = ("host.", "version.", "mlcompare.git_")

#: Timing verdicts. "too few processes": under two processes a side, or too few for their
#: p-value to ever reach the level; "no processes kept": a run logged no per-process times
#: (one recorded before they were kept).
FASTER, SLOWER, SAME, TOO_FEW, UNTESTED = "faster", "slower", "no change", "too few processes", "no processes kept"
#: How the family of timing tests is controlled, as said in every output.
FAMILY_METHOD = "Benjamini–Hochberg"
#: The smallest change a verdict calls by default, as a factor (`mlcompare compare --min-change`):
#: bench/aa.py measured identical suites a few minutes apart on one machine differing as wholes by
#: up to 5 %, the machine's drift, not the code's; 1 calls any significant change.
MIN_CHANGE = 1.05
#: Quality verdicts.
BETTER, WORSE, EQUAL = "better", "worse", "same"

#: Timed quantities compared: (name in the frame, median metric, per-process history).
TIMES = (("fit", "fit_time_s", "fit_time_process_s"), ("predict", "predict_time_s", "predict_time_process_s"))

COLUMNS = ("case", "pairing", "implementation", "dataset", "device", "a_run_id", "b_run_id", "a_status",
           "b_status", "status_verdict",
           *(f"{t}_{c}" for t, _, _ in TIMES for c in ("a_s", "b_s", "ratio", "low", "high", "level",
                                                      "a_processes", "b_processes", "p", "p_adjusted",
                                                      "p_any_change", "verdict")),
           "main_metric", "quality_a", "quality_b", "quality_delta", "quality_tolerance", "quality_verdict")


@dataclass
class SuiteComparison:
    """B against A: the shared cases (`rows`), the cases of one only, and what differs."""

    a: StoredSuite
    b: StoredSuite
    confidence: float
    rows: pd.DataFrame
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    case_differences: list[str] = field(default_factory=list)
    fail_slower: float | None = None  # the --fail-slower ratio, drawn on the plot
    #: the smallest change a verdict calls, a factor (1.05: more than 5 % either way)
    min_change: float = MIN_CHANGE
    #: per row of `rows`, per timed quantity: (A's, B's) per-process times, for the gates
    samples: list[dict[str, tuple[list[float], list[float]]]] = field(default_factory=list, repr=False)
    #: the speed-ups at equal quality both suites measured, 'case: A → B' (equal_quality runs)
    equal_quality: list[str] = field(default_factory=list)

    @property
    def false_call_rate(self) -> float:
        """The rate the family of verdicts is held to: 1 − the confidence."""
        return 1 - self.confidence

    def together(self) -> tuple[float, int, int] | None:
        """How B's cases sat against A's as a whole: (the median B/A over every timing test, how
        many of those ratios lie above 1, how many there are); None without a test."""
        ratios = sorted(float(r) for name, _, _ in TIMES
                        for r, v in zip(self.rows[f"{name}_ratio"], self.rows[f"{name}_verdict"])
                        if v in (FASTER, SLOWER, SAME) and not math.isnan(r))
        if not ratios:
            return None
        return statistics.median(ratios), sum(r > 1 for r in ratios), len(ratios)

    def relative_tests(self) -> list[tuple[str, str, float, float, bool]]:
        """Each timing test again with B's processes divided by the comparison's common shift
        (`together`'s median B/A): (case, quantity, its B/A over the shift, the exact test's p of
        a move beyond `min_change` from the shift, whether on the slow side), unadjusted."""
        found = self.together()
        if found is None:
            return []
        shift = found[0]
        tests = []
        for i, row in enumerate(self.rows.to_dict("records")):
            for name, _, _ in TIMES:
                if row[f"{name}_verdict"] not in (FASTER, SLOWER, SAME) or i >= len(self.samples):
                    continue
                a, b = self.samples[i][name]
                p, slow = change_test([t / shift for t in b], a, self.min_change)
                tests.append((row["case"], name, row[f"{name}_ratio"] / shift, p, slow))
        return tests

    def relative_calls(self) -> list[tuple[str, str, float, str]]:
        """The cases that moved more than the suite as a whole: `relative_tests` adjusted together
        (Benjamini–Hochberg at the false-call rate). (case, quantity, its B/A over the shift,
        slower or faster), most moved first. They tell a change that hit a few cases from one
        every case shares; they do not remove a machine's drift between two suites, which moves
        cases by different factors (bench/aa.py: relative tests at p ≤ 0.05 as often as raw
        ones), nor say whether the shift itself was the machine or a change."""
        tests = self.relative_tests()
        adjusted = benjamini_hochberg([p for *_, p, _ in tests])
        calls = [(case, name, ratio, SLOWER if above else FASTER)
                 for (case, name, ratio, _, above), p in zip(tests, adjusted) if p <= self.false_call_rate + 1e-12]
        return sorted(calls, key=lambda c: -abs(math.log(c[2])))

    def family(self) -> dict[str, int]:
        """How many timing tests the verdicts made, called, and could not decide."""
        verdicts = [v for name, _, _ in TIMES for v in self.rows[f"{name}_verdict"] if isinstance(v, str) and v]
        return {"tests": sum(v in (FASTER, SLOWER, SAME) for v in verdicts),
                "calls": sum(v in (FASTER, SLOWER) for v in verdicts),
                "undecided": sum(v in (TOO_FEW, UNTESTED) for v in verdicts)}


def compare_suites(a: StoredSuite, b: StoredSuite, confidence: float = 0.95,
                   quality_tolerance: float | None = None, min_change: float = MIN_CHANGE) -> SuiteComparison:
    """Match the cases of A and B and compare each pair (B over A).

    `quality_tolerance`: how much worse B's main metric may be and still be "same"
    (absolute for scores, relative for losses, as `quality_delta`); default: each metric's
    parity tolerance. `min_change`: the smallest change of a time a verdict calls, a factor
    (module docstring).
    """
    pairs, only_a, only_b = match_cases(a.cases, b.cases)
    rows = [_row(ra, rb, confidence, quality_tolerance, min_change) for ra, rb in pairs]
    cap = min(_ratio_level_of_rule(a), _ratio_level_of_rule(b))  # cases stopped by a rule: its real level
    for row in rows:
        for name, _, _ in TIMES:
            if isinstance(row.get(f"{name}_level"), float) and not math.isnan(row[f"{name}_level"]):
                row[f"{name}_level"] = min(row[f"{name}_level"], cap)
    _judge_family(rows, 1 - confidence)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    samples = [{name: (ra.history.get(history, []), rb.history.get(history, [])) for name, _, history in TIMES}
               for ra, rb in pairs]
    return SuiteComparison(a, b, confidence, frame, only_a, only_b, suite_differences(a, b),
                           case_differences(pairs), samples=samples, equal_quality=equal_quality_changes(a, b),
                           min_change=min_change)


def equal_quality_changes(a: StoredSuite, b: StoredSuite) -> list[str]:
    """Each speed-up at equal quality of both suites, A → B (or the sentence where one did not reach)."""
    from mlcompare.report import equal_quality

    def by_case(suite: StoredSuite) -> dict[str, equal_quality.Curve]:
        return {f"{c.pairing} · {c.implementation} · {c.group}": c
                for c in equal_quality.curves(results.case_frame([suite]))}

    found_a, found_b = by_case(a), by_case(b)

    def said(curve: equal_quality.Curve) -> str:
        return curve.text().split(" at equal quality")[0] if curve.speedup is not None else "does not reach"

    return [f"{key}: {said(found_a[key])} → {said(found_b[key])}" for key in found_a if key in found_b]


# -- matching -------------------------------------------------------------------------------

def case_key(run: StoredRun) -> tuple[str, ...]:
    """What a case is, but its estimator parameters: pairing, implementation, data, layout, sweep point."""
    p = run.params
    return (p.get("pairing", ""), p.get("implementation", ""), p.get("dataset", ""), p.get("n_samples", ""),
            p.get("n_features", ""), p.get("order", "C"), p.get("sweep", ""))


def estimator_params(run: StoredRun) -> dict[str, str]:
    """The `estimator.*` params that identify the case (thread counts left out)."""
    return {k.removeprefix("estimator."): v for k, v in run.params.items()
            if k.startswith("estimator.") and k.removeprefix("estimator.") not in THREAD_PARAMS}


def params_agree(a: StoredRun, b: StoredRun) -> list[str]:
    """The estimator parameters both logged with different values, as 'name: a → b' (empty: same case)."""
    pa, pb = estimator_params(a), estimator_params(b)
    return [f"{k}: {pa[k]} → {pb[k]}" for k in sorted(pa.keys() & pb.keys()) if pa[k] != pb[k]]


def _ratio_level_of_rule(suite: StoredSuite) -> float:
    """The most a speed-up's level may state for cases of `suite` (`measure.stopping.rule_levels`;
    1 for a suite that ran a fixed number of processes, or was recorded before the rule)."""
    params = suite.run.params
    try:
        rounds, low, precision = (int(params["suite_rounds"]), int(params["suite_min_rounds"]),
                                  float(params["suite_precision"]))
    except (KeyError, ValueError):
        return 1.0
    return rule_levels(low, rounds, precision)[1]


def match_cases(a: list[StoredRun], b: list[StoredRun]) -> tuple[list[tuple[StoredRun, StoredRun]], list[str],
                                                                  list[str]]:
    """(pairs of the same case, labels of A's cases not in B, labels of B's not in A), in A's order."""
    by_key: dict[tuple, list[StoredRun]] = {}
    for run in b:
        by_key.setdefault(case_key(run), []).append(run)
    pairs, only_a, used = [], [], set()
    for run in a:
        candidates = [c for c in by_key.get(case_key(run), []) if c.run_id not in used]
        same = next((c for c in candidates if not params_agree(run, c)), None)
        if same is None:
            why = f" (estimator params differ: {'; '.join(params_agree(run, candidates[0]))})" if candidates else ""
            only_a.append(case_label(run) + why)
            continue
        used.add(same.run_id)
        pairs.append((run, same))
    only_b = [case_label(run) for run in b if run.run_id not in used]
    return pairs, only_a, only_b


def case_label(run: StoredRun) -> str:
    """'random_forest · sklearn [threads=1] · classification 4k×20 · max_depth=4'."""
    p = run.params
    impl = results.impl_label(p.get("implementation"), p.get("sweep_own", ""))
    data = results.group_label(_dataset_label(p), p.get("sweep_shared", ""))
    order = f" · order {p['order']}" if p.get("order", "C") != "C" else ""
    return f"{p.get('pairing', '?')} · {impl} · {data}{order}"


def _dataset_label(params: dict[str, str]) -> str:
    n, d = _int(params.get("n_samples")), _int(params.get("n_features"))
    dataset = params.get("dataset", "")
    return f"{dataset} {human_count(n)}×{d}" if n is not None and d is not None else dataset


# -- one shared case ------------------------------------------------------------------------

def _row(a: StoredRun, b: StoredRun, confidence: float, tolerance: float | None,
         min_change: float) -> dict[str, Any]:
    status_a, status_b = _status(a), _status(b)
    row: dict[str, Any] = {
        "case": case_label(a), "pairing": a.params.get("pairing"),
        "implementation": results.impl_label(a.params.get("implementation"), a.params.get("sweep_own", "")),
        "dataset": results.group_label(_dataset_label(a.params), a.params.get("sweep_shared", "")),
        "device": a.params.get("device"), "a_run_id": a.run_id, "b_run_id": b.run_id,
        "a_status": status_a, "b_status": status_b, "status_verdict": _status_verdict(status_a, status_b)}
    both = status_a == Status.OK and status_b == Status.OK
    for name, metric, history in TIMES:
        row.update({f"{name}_{k}": v for k, v in timing(
            a.metrics.get(metric), b.metrics.get(metric), a.history.get(history, []),
            b.history.get(history, []), confidence, min_change).items()} if both else {})
    main = results.main_metric(a.params.get("pairing", ""), a.tags, a.metrics)
    row["main_metric"] = main
    if both and main and main in a.metrics and main in b.metrics:
        row.update(quality(main, a.metrics[main], b.metrics[main], tolerance))
    return row


def timing(a_median: float | None, b_median: float | None, a_processes: list[float], b_processes: list[float],
           confidence: float, min_change: float = MIN_CHANGE) -> dict[str, Any]:
    """B's median over A's, the interval of the factor, the exact p-value of "no change beyond
    `min_change`" (`p`, the verdict's) and of "no change at all" (`p_any_change`), all over one
    summary per process; the verdict is left to the family (`_judge_family`), but where the
    processes are too few ("too few processes") or missing ("no processes kept")."""
    out: dict[str, Any] = {"a_s": _num(a_median), "b_s": _num(b_median), "a_processes": len(a_processes),
                           "b_processes": len(b_processes), "ratio": math.nan, "low": math.nan, "high": math.nan,
                           "level": math.nan, "p": math.nan, "p_adjusted": math.nan, "p_any_change": math.nan,
                           "verdict": ""}
    if not (out["a_s"] > 0 and out["b_s"] > 0):
        return out
    out["ratio"] = out["b_s"] / out["a_s"]
    if not a_processes or not b_processes:
        out["verdict"] = UNTESTED
        return out
    interval = ratio_interval(b_processes, a_processes, confidence)
    if interval is not None:
        out.update(low=interval.low, high=interval.high, level=interval.level)
    if interval is None or smallest_p(len(b_processes), len(a_processes)) > 1 - confidence + 1e-12:
        out["verdict"] = TOO_FEW
        return out
    out["p"], out["slow_side"] = change_test(b_processes, a_processes, min_change)
    out["p_any_change"] = rank_test(b_processes, a_processes)
    return out


def _judge_family(rows: list[dict[str, Any]], rate: float) -> None:
    """Verdicts for every timing test with a p-value, adjusted together (Benjamini–Hochberg at `rate`):
    slower or faster (the side the processes lie on) where the adjusted p is at most `rate`."""
    tests = [(row, name) for row in rows for name, _, _ in TIMES if not math.isnan(row.get(f"{name}_p", math.nan))]
    adjusted = benjamini_hochberg([row[f"{name}_p"] for row, name in tests])
    for (row, name), p in zip(tests, adjusted):
        row[f"{name}_p_adjusted"] = p
        row[f"{name}_verdict"] = SAME if p > rate + 1e-12 else _side(row, name)


def _side(row: dict[str, Any], name: str) -> str:
    """Slower when the test found B's processes beyond the band on the slow side, else faster."""
    return SLOWER if row[f"{name}_slow_side"] else FASTER


def quality(metric: str, a: float, b: float, tolerance: float | None) -> dict[str, Any]:
    """B's main metric against A's: the delta (relative for losses), the tolerance used, the verdict."""
    known = metric in METRICS
    delta = quality_delta(metric, b, a) if known else b - a
    tol = tolerance if tolerance is not None else (DEFAULT_TOLERANCE[metric] if known else 0.0)
    worse = -delta if HIGHER_IS_BETTER.get(metric, True) else delta
    judged = WORSE if worse > tol + 1e-12 else BETTER if -worse > tol + 1e-12 else EQUAL
    return {"quality_a": a, "quality_b": b, "quality_delta": delta, "quality_tolerance": tol,
            "quality_verdict": judged}


def _status(run: StoredRun) -> str:
    return run.tags.get("case_status") or (Status.OK if run.status == "FINISHED" else Status.FAILED)


def _status_verdict(a: str, b: str) -> str:
    """'' when both ran; else what happened, e.g. 'failed in B' (a regression) or 'skipped in A'."""
    if a == b == Status.OK:
        return ""
    if a == Status.OK:
        return f"{b} in B"
    if b == Status.OK:
        return f"{a} in A"
    return f"{a} in A, {b} in B" if a != b else f"{a} in both"


# -- what differs ---------------------------------------------------------------------------

def suite_differences(a: StoredSuite, b: StoredSuite) -> list[str]:
    """The suites' machine, library versions and settings where they differ, as 'name: A → B'."""
    def values(suite: StoredSuite) -> dict[str, str]:
        run = suite.run
        out = {k: v for k, v in run.tags.items() if k.startswith(SUITE_TAG_PREFIXES)}
        out.update({k: run.params[k] for k in SUITE_PARAMS if k in run.params})
        return out

    va, vb = values(a), values(b)
    lines = []
    for key in sorted(va.keys() | vb.keys()):
        if va.get(key) != vb.get(key):
            lines.append(f"{key}: {va.get(key, '(none)')} → {vb.get(key, '(none)')}")
    return lines


def case_differences(pairs: list[tuple[StoredRun, StoredRun]]) -> list[str]:
    """Settings of the shared cases that differ (threads, dtype, library version, thread counts,
    parameters one side lacks), each with how many cases it concerns."""
    found: dict[str, list[str]] = {}
    for a, b in pairs:
        for key, va, vb in _case_settings(a, b):
            if va != vb:
                found.setdefault(f"{key}: {va} → {vb}", []).append(case_label(a))
    total = len(pairs)
    return [f"{what} ({'every shared case' if len(cases) == total else f'{len(cases)} of {total} shared cases'})"
            for what, cases in found.items()]


def _case_settings(a: StoredRun, b: StoredRun) -> Iterator[tuple[str, str, str]]:
    """(name, A's value, B's value) of every setting compared between two matched cases."""
    for key in SETTING_PARAMS:
        yield key, a.params.get(key, "(none)"), b.params.get(key, "(none)")
    for key in SETTING_TAGS:
        yield key, a.tags.get(key, "(none)"), b.tags.get(key, "(none)")
    pa = {k: v for k, v in a.params.items() if k.startswith("estimator.")}
    pb = {k: v for k, v in b.params.items() if k.startswith("estimator.")}
    for key in sorted(pa.keys() | pb.keys()):
        thread = key.removeprefix("estimator.") in THREAD_PARAMS
        if thread or key not in pa or key not in pb:
            yield key, pa.get(key, "(none)"), pb.get(key, "(none)")


def suite_line(suite: StoredSuite, letter: str) -> str:
    run = suite.run
    started = datetime.fromtimestamp(run.start_time / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{letter}: suite {run.params.get('suite_name', run.name)!r} (experiment {suite.experiment_name!r}), "
            f"run {run.run_id}, {started}, {results.host_label(run.tags)}")


# -- gates ----------------------------------------------------------------------------------

def slower_than(comparison: SuiteComparison, ratio: float) -> pd.DataFrame:
    """Shared cases slower than `ratio`, significantly, as asv's `--factor` asks, and the cases
    that ran in A but failed in B.

    Each timed quantity of each case is one test of "B is at most `ratio` × A" against "more"
    (the exact one-sided Mann–Whitney test of B's processes divided by `ratio` against A's),
    and the tests are one family (Benjamini–Hochberg at 1 − the confidence): the chance that
    identical code fails the gate at all is at most that. Cases the processes cannot decide
    are `undecided_for_slower`."""
    rows, rate = comparison.rows, comparison.false_call_rate
    tests = [(i, a, [t / ratio for t in b]) for i, (_, r) in enumerate(rows.iterrows()) for name, _, _ in TIMES
             for a, b in [comparison.samples[i][name] if i < len(comparison.samples) else ([], [])]
             if _both_ran(r) and _decidable(a, b, rate, "greater")]
    adjusted = benjamini_hochberg([rank_test(b, a, "greater") for _, a, b in tests])
    slow_rows = {i for (i, _, _), p in zip(tests, adjusted) if p <= rate + 1e-12}
    slow = pd.Series([i in slow_rows for i in range(len(rows))], index=rows.index, dtype=bool)
    failed = (rows["a_status"] == Status.OK) & rows["b_status"].isin([Status.FAILED, Status.KILLED])
    return rows[slow | failed]


def undecided_for_slower(comparison: SuiteComparison) -> list[str]:
    """'case (fit: 1 process against 1)': the timed quantities of cases that ran in both suites
    but whose processes cannot reach the gate's level (none kept, or too few)."""
    out = []
    for i, (_, r) in enumerate(comparison.rows.iterrows()):
        if not _both_ran(r):
            continue
        for name, metric, _ in TIMES:
            a, b = comparison.samples[i][name] if i < len(comparison.samples) else ([], [])
            measured = not pd.isna(r[f"{name}_a_s"]) and not pd.isna(r[f"{name}_b_s"])
            if measured and not _decidable(a, b, comparison.false_call_rate, "greater"):
                out.append(f"{r['case']} ({name}: {len(b)} process{'es' if len(b) != 1 else ''} in B against "
                           f"{len(a)} in A)")
    return out


def _both_ran(row: pd.Series) -> bool:
    return row["a_status"] == Status.OK and row["b_status"] == Status.OK


def _decidable(a: list[float], b: list[float], rate: float, alternative: str) -> bool:
    """Whether a test of these processes can reach `rate` at all."""
    return len(a) >= 1 and len(b) >= 1 and smallest_p(len(b), len(a), alternative) <= rate + 1e-12


def worse_than(comparison: SuiteComparison, delta: float) -> pd.DataFrame:
    """Shared cases whose main metric is worse in B by more than `delta` (in `quality_delta`'s units)."""
    rows = comparison.rows
    worse = [(-d if HIGHER_IS_BETTER.get(m, True) else d) > delta + 1e-12 if isinstance(m, str) and not pd.isna(d)
             else False for m, d in zip(rows["main_metric"], rows["quality_delta"])]
    return rows[pd.Series(worse, index=rows.index, dtype=bool)]


def undecided_for_quality(comparison: SuiteComparison) -> list[str]:
    """Cases that ran in both suites but lack the main metric on a side: the quality gate cannot judge them."""
    return [r["case"] for _, r in comparison.rows.iterrows() if _both_ran(r) and pd.isna(r["quality_delta"])]


def _num(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
