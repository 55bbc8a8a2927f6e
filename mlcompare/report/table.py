"""The comparison table: a row per pairing × dataset × size, a column group per implementation.

Built from the flat case frame (`results.case_frame`) of suites read back from the store,
shared by every rendering (`render`) and the parent run's description (`description`).
Sweeps follow the comparison groups: each point of a shared sweep (`sweep_shared`, which
the baseline follows) is a row of its own, each point of an implementation's own sweep
(`sweep_own`, compared with the same baseline) a column group of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Iterable, cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report import breakeven, cheapest, equal_quality, latency_crossings, results, threadcurve

if TYPE_CHECKING:
    from mlcompare.records import StoredSuite

#: Per implementation, the comparison table's columns (CSV and `log_table`).
FIELDS = ("status", "fit_time_s", "fit_ci_low_s", "fit_ci_high_s", "speedup_fit", "speedup_fit_ci_low",
          "speedup_fit_ci_high", "speedup_fit_lower_bound", "fit_cost_usd", "fit_cost_ratio",
          "quality", "parity", "note", "speedup_equal_quality", "equal_quality_text")
_ROW_KEYS = ["suite", "suite_run_id", "host", "pairing", "dataset", "n_samples", "n_features", "main_metric"]

@dataclass
class Comparison:
    """Everything one report shows, computed once from the stored suites."""

    suites: list[StoredSuite]
    cases: pd.DataFrame  # the cases the table shows: an equal-quality ladder's points only at the reference
    break_evens: list[breakeven.BreakEven]
    table: pd.DataFrame = field(init=False)
    threads_worth: list[threadcurve.ThreadsWorth] = field(default_factory=list)
    curves: list[equal_quality.Curve] = field(default_factory=list)  # speed-ups at equal quality
    ladders: pd.DataFrame | None = None  # every case, the ladders' points included (the curves' plot)
    sections_cache: list | None = field(default=None, init=False, repr=False)  # see `sections`

    def __post_init__(self) -> None:
        self.table = comparison_table(self.cases)


def compare(suites: list[StoredSuite]) -> Comparison:
    every = results.case_frame(suites)
    curves = equal_quality.curves(every)
    cases = with_equal_quality(every[~every["eq_ladder_only"].astype(bool)].copy(), curves)
    cases.attrs["curves"] = curves  # for the plot of the curves (plots take the case frame)
    return Comparison(suites, cases, breakeven.break_evens(cases), threadcurve.threads_worth(cases),
                      curves=curves, ladders=every)


def with_equal_quality(cases: pd.DataFrame, curves: list[equal_quality.Curve]) -> pd.DataFrame:
    """The speed-up at equal quality (or why there is none) on the reference case of each curve."""
    cases["speedup_equal_quality"] = math.nan
    cases["equal_quality_text"] = ""
    for curve in curves:
        at = ((cases["suite_label"] == curve.suite) & (cases["pairing"] == curve.pairing)
              & (cases["implementation"] == curve.implementation)
              & (cases["dataset_label"] + cases["sweep_shared"].map(lambda s: f" · {s}" if s else "") == curve.group))
        cases.loc[at, "speedup_equal_quality"] = curve.speedup if curve.speedup is not None else math.nan
        cases.loc[at, "equal_quality_text"] = curve.text()
    return cases


def comparison_table(cases: pd.DataFrame) -> pd.DataFrame:
    """A row per suite × pairing × dataset × size (× shared sweep point); `<implementation>.<field>`
    columns, `<implementation> [<own point>].<field>` for each point of an implementation's own sweep."""
    keys = _row_keys(cases)
    if cases.empty:
        return pd.DataFrame(columns=keys)
    rows: dict[tuple, dict[str, object]] = {}
    for r in cases.to_dict("records"):
        key = tuple(r[k] for k in keys if k != "main_metric")
        row = rows.setdefault(key, {k: r[k] for k in keys})
        if not row.get("main_metric"):
            row["main_metric"] = r["main_metric"]
        for name in FIELDS:
            row[f"{r['impl_label']}.{name}"] = r[name]
    columns = keys + [f"{impl}.{name}" for impl in _impl_labels(cases) for name in FIELDS]
    return pd.DataFrame(list(rows.values())).reindex(columns=columns)


def _row_keys(cases: pd.DataFrame) -> list[str]:
    """The table's key columns; `sweep_shared` only when some case has one (unswept tables keep their shape)."""
    if not cases["sweep_shared"].astype(bool).any():
        return list(_ROW_KEYS)
    at = _ROW_KEYS.index("n_features") + 1
    return _ROW_KEYS[:at] + ["sweep_shared"] + _ROW_KEYS[at:]


def _impl_labels(cases: pd.DataFrame) -> list[str]:
    """Column groups: the baseline first, then each implementation (and own sweep point) as it ran."""
    return list(dict.fromkeys(cases.sort_values("is_baseline", ascending=False, kind="stable")["impl_label"]))


def _pairing_cells(cases: pd.DataFrame, several_suites: bool) -> pd.DataFrame:
    """One pairing's table as display strings, columns (implementation, heading).

    A row per dataset, size and shared sweep point (shown after the dataset); a column
    group per implementation and own sweep point (`xgboost_cpu [max_bin=64]`).
    """
    impls = _impl_labels(cases)
    metric = next((m for m in cases["main_metric"] if isinstance(m, str)), "quality")
    show_parity = cases["parity"].isin(["ok", "degraded"]).any()
    show_cost = not cheapest.priced(cases).empty
    show_equal_quality = "speedup_equal_quality" in cases and cases["equal_quality_text"].astype(bool).any()
    keys = ["suite_label", "dataset", "n_features", "n_samples", "sweep_shared"]
    out = []
    for _, group in cases.groupby(keys, sort=False):
        first = group.iloc[0]
        row: dict[tuple[str, str], str] = {}
        if several_suites:
            row[("", "suite")] = first["suite_label"]
        row[("", "dataset")] = results.group_label(first["dataset_label"], first["sweep_shared"])
        by_impl = {r["impl_label"]: r for r in group.to_dict("records")}
        for impl in impls:
            r = by_impl.get(impl)
            baseline = bool(r["is_baseline"]) if r else impl == first["baseline"]
            row[(impl, "fit s")] = _fit_cell(r)
            if not baseline:
                row[(impl, "speed-up")] = _speedup_cell(r)
            if show_cost and not baseline:
                row[(impl, "cost ratio")] = cheapest.ratio_text(r["fit_cost_ratio"]) if r else ""
            if show_equal_quality and not baseline:
                row[(impl, "at equal quality")] = _equal_quality_cell(r)
            row[(impl, metric)] = number_text(r["quality"]) if r and r["status"] == Status.OK else ""
            if show_parity and not baseline:
                row[(impl, "parity")] = (r["parity"] or "") if r else ""
        out.append(row)
    frame = pd.DataFrame(out).fillna("")
    frame.columns = pd.MultiIndex.from_tuples(cast(Iterable[tuple[str, str]], frame.columns))  # the rows' keys
    return frame


def _fit_cell(r: dict | None) -> str:
    if r is None:
        return ""
    if r["status"] != Status.OK:
        return r["status"]
    text = number_text(r["fit_time_s"])
    if not math.isnan(r["fit_ci_low_s"]):  # an interval over processes; one process has none
        text += (f" [{number_text(r['fit_ci_low_s'])}–{number_text(r['fit_ci_high_s'])}"
                 f"{level_text(r['fit_ci_level'])}]")
    if r.get("fit_loops", 1) > 1:  # a fit shorter than the clock holds: each value the mean of a loop
        text += f" (loops of {r['fit_loops']:.0f})"
    if str(r.get("timing_stability") or "").startswith("noisy"):
        text += " noisy"
    return text


def _speedup_cell(r: dict | None) -> str:
    if r is not None and r["status"] == Status.OK and not pd.isna(r["speedup_fit_lower_bound"]):
        return f"≥ {r['speedup_fit_lower_bound']:.3g}×"  # the baseline timed out in its first fit
    if r is None or r["status"] != Status.OK or pd.isna(r["speedup_fit"]):
        return ""
    text = f"{r['speedup_fit']:.3g}×"
    if not pd.isna(r["speedup_fit_ci_low"]) and not pd.isna(r["speedup_fit_ci_high"]):
        text += (f" [{r['speedup_fit_ci_low']:.3g}–{r['speedup_fit_ci_high']:.3g}"
                 f"{level_text(r.get('speedup_fit_ci_level'))}]")
    return text


def _equal_quality_cell(r: dict | None) -> str:
    """The speed-up at equal quality with its interval, or the sentence why there is none."""
    if r is None or not r.get("equal_quality_text"):
        return ""
    if pd.isna(r["speedup_equal_quality"]):
        return r["equal_quality_text"]
    return r["equal_quality_text"].split(" at equal quality")[0]


def level_text(level: float | None) -> str:
    """", 90 %": the coverage an interval states, beside its bounds (nothing when not recorded)."""
    if level is None or pd.isna(level):
        return ""
    return f", {level * 100:.3g} %"


def number_text(value: float) -> str:
    if value is None or pd.isna(value):
        return ""
    return f"{value:.3g}"


def skipped_everywhere(cases: pd.DataFrame) -> list[str]:
    """Column groups (implementation labels) of a table in which no case ran: skipped in every row."""
    status = cases.groupby("impl_label", sort=False)["status"]
    return [cast(str, label) for label, statuses in status if (statuses == Status.SKIPPED).all()]


def _skipped_line(cases: pd.DataFrame) -> str:
    """One line for the implementations skipped in every row, grouped by reason."""
    by_reason: dict[str, list[str]] = {}
    for r in cases.to_dict("records"):
        names = by_reason.setdefault(r["note"] or "no reason recorded", [])
        if r["implementation"] not in names:
            names.append(r["implementation"])
    return "skipped everywhere (no column): " + "; ".join(f"{', '.join(names)} — {reason}"
                                                          for reason, names in by_reason.items())


def _notes(cases: pd.DataFrame) -> list[str]:
    """Why implementations did not run, once per implementation and reason, with the sweep
    points it concerns when it is not all of that implementation's points."""
    bad = cases[cases["status"] != Status.OK]
    lines = []
    for (impl, status, note), group in bad.groupby(["implementation", "status", "note"], sort=False, dropna=False):
        text = f"{impl} {status}: {note}" if note else f"{impl} {status}"
        points = [point for point in dict.fromkeys(group["sweep"]) if point]
        if points and set(points) != set(cases.loc[cases["implementation"] == impl, "sweep"]):
            text += f" (at {'; '.join(points)})"
        lines.append(text)
    return lines


def _break_even_lines(comparison: Comparison, pairing: str) -> list[str]:
    lines = []
    several = len(comparison.suites) > 1
    labels = dict(zip(comparison.cases["suite_run_id"], comparison.cases["suite_label"]))
    for b in comparison.break_evens:
        if b.pairing == pairing:
            where = f" ({labels.get(b.suite_run_id, b.suite_run_id)})" if several else ""
            lines.append(f"{b.impl_label} fits faster than {b.baseline} from about "
                         f"{rows_text(b.rows)} rows on {break_even_data(b)}{where}")
    return lines


def break_even_data(b: breakeven.BreakEven) -> str:
    return results.group_label(f"{b.dataset} ×{b.n_features}", b.sweep_shared)


def worker_lines(cases: pd.DataFrame) -> list[str]:
    """Per implementation and comparison group run on several Dask worker counts: the fit
    speed-up from the fewest workers to the most."""
    ran = cases[(cases["status"] == Status.OK) & cases["fit_time_s"].notna() & cases["dask_workers"].notna()]
    several = cases["suite_run_id"].nunique() > 1
    lines = []
    keys = ["suite_label", "pairing", "dataset_label", "sweep_shared", "implementation"]
    for key, group in ran.groupby(keys, sort=False):
        suite, pairing, dataset, shared, impl = cast(tuple[str, str, str, str, str], key)
        # pandas-stubs: .loc's overloads take no Hashable, the label type idxmin and idxmax return
        few = group.loc[group["dask_workers"].idxmin()]  # type: ignore[call-overload]
        many = group.loc[group["dask_workers"].idxmax()]  # type: ignore[call-overload]
        if few["dask_workers"] == many["dask_workers"]:
            continue
        where = results.group_label(dataset, shared) + (f", {suite}" if several else "")
        speedup = few["fit_time_s"] / many["fit_time_s"]
        lines.append(f"{pairing} · {impl} on {where}: fit {number_text(few['fit_time_s'])} s on {few['dask_workers']} "
                     f"worker{'s' if few['dask_workers'] > 1 else ''}, {number_text(many['fit_time_s'])} s on "
                     f"{many['dask_workers']} ({speedup:.2f}× the speed)")
    return lines


def rows_text(n: float) -> str:
    return f"{int(round(n)):,}"


def _suite_lines(suite: StoredSuite, label: str) -> list[str]:
    """The suite's identity and the machine it ran on."""
    tags, params = suite.run.tags, suite.run.params
    started = datetime.fromtimestamp(suite.run.start_time / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    versions = ", ".join(f"{k.removeprefix('version.')} {v}" for k, v in sorted(tags.items())
                         if k.startswith("version.") and k != "version.mlcompare")
    return [f"{label}: experiment {suite.experiment_name!r}, run {suite.run.run_id}, {started}, "
            f"{params.get('suite_cases', len(suite.cases))} cases, repeats {params.get('suite_repeats', '?')}",
            f"host: {results.host_label(tags)}; {tags.get('host.os', '')}, Python {tags.get('host.python', '?')}",
            f"versions: {versions}" if versions else ""]


def sections(comparison: Comparison) -> list[tuple[str, pd.DataFrame, list[str], list[str]]]:
    """(pairing, cells, notes, break-even and workers lines) per pairing, in the order they ran.

    An implementation skipped in every row of a pairing's table (no GPU here, say) gets no
    column group there, only its share of one line under the table. Computed once per
    comparison: the Markdown, the HTML and the description all show them.
    """
    if comparison.sections_cache is None:
        comparison.sections_cache = list(_sections(comparison))
    return comparison.sections_cache


def _sections(comparison: Comparison):
    several = len(comparison.suites) > 1
    for pairing in dict.fromkeys(comparison.cases["pairing"].dropna()):
        part = comparison.cases[comparison.cases["pairing"] == pairing]
        part = part.sort_values(["dataset", "n_features", "n_samples", "suite_label"], kind="stable")
        evens = (_break_even_lines(comparison, pairing) + worker_lines(part) + cheapest.cheapest_lines(part)
                 + latency_crossings.crossing_lines(latency_crossings.crossings(part), pairing)
                 + [w.text() + _suite_of(comparison, w.suite_run_id) for w in comparison.threads_worth
                    if w.pairing == pairing])
        absent = part["impl_label"].isin(skipped_everywhere(part))
        if absent.all():  # nothing ran at all: the table itself says so
            yield pairing, _pairing_cells(part, several), _notes(part), evens
            continue
        notes = _notes(part[~absent]) + ([_skipped_line(part[absent])] if absent.any() else [])
        yield pairing, _pairing_cells(part[~absent], several), notes, evens


def _suite_of(comparison: Comparison, suite_run_id: str) -> str:
    if len(comparison.suites) < 2:
        return ""
    labels = dict(zip(comparison.cases["suite_run_id"], comparison.cases["suite_label"]))
    return f" ({labels.get(suite_run_id, suite_run_id)})"


def suite_headers(comparison: Comparison) -> list[list[str]]:
    labels = dict(zip(comparison.cases["suite_run_id"], comparison.cases["suite_label"]))
    return [[line for line in _suite_lines(s, labels.get(s.run.run_id, results.suite_label(s))) if line]
            for s in comparison.suites]
