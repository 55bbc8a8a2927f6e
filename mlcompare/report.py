"""Comparison tables built from suites read back from the MLflow store.

One code path serves both the suite's parent-run artifacts and `mlcompare report`: the
suite is read from the store (`mlcompare.tracking`), flattened to one row per case
(`mlcompare.results`), then shaped here into the comparison table, a row per pairing ×
dataset × size and a column group per implementation, and written as CSV, Markdown,
self-contained HTML or a terminal table.

Sweeps follow the comparison groups: each point of a shared sweep (`sweep_shared`, which
the baseline follows) is a row of its own, each point of an implementation's own sweep
(`sweep_own`, compared with the same baseline) a column group of its own.
"""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pandas as pd

from mlcompare import breakeven, results

if TYPE_CHECKING:
    from mlcompare.tracking import StoredSuite

FORMATS = ("table", "markdown", "csv", "html")
#: Per implementation, the comparison table's columns (CSV and `log_table`).
FIELDS = ("status", "fit_time_s", "fit_ci_low_s", "fit_ci_high_s", "speedup_fit", "speedup_fit_ci_low",
          "speedup_fit_ci_high", "quality", "parity", "note")
_ROW_KEYS = ["suite", "suite_run_id", "host", "pairing", "dataset", "n_samples", "n_features", "main_metric"]
_DESCRIPTION_LIMIT = 5500  # MLflow keeps tags up to 8000 characters; the recorder clips at 6000


@dataclass
class Comparison:
    """Everything one report shows, computed once from the stored suites."""

    suites: list[StoredSuite]
    cases: pd.DataFrame
    break_evens: list[breakeven.BreakEven]
    table: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.table = comparison_table(self.cases)


@dataclass
class SuiteReport:
    """What the suite attaches to its parent run."""

    files: dict[str, str | bytes]
    tables: dict[str, pd.DataFrame]
    metrics: dict[str, float]
    description: str


def compare(suites: list[StoredSuite]) -> Comparison:
    cases = results.case_frame(suites)
    return Comparison(suites, cases, breakeven.break_evens(cases))


def suite_report(suite: StoredSuite) -> SuiteReport:
    """The parent run's table (CSV, Markdown, HTML, `log_table`), plots, break-evens and description."""
    from mlcompare import plots

    comparison = compare([suite])
    images = plots.render_all(comparison.cases, comparison.break_evens)
    return SuiteReport(
        files={"comparison.csv": to_csv(comparison), "comparison.md": to_markdown(comparison),
               "comparison.html": to_html(comparison, images),
               **{f"plots/{name}": png for name, png in images.items()}},
        tables={"comparison_table.json": comparison.table},
        metrics=breakeven.as_metrics(comparison.break_evens),
        description=description(comparison))


def render(comparison: Comparison, fmt: str) -> str:
    """`mlcompare report`'s output in one of FORMATS."""
    if fmt == "csv":
        return to_csv(comparison)
    if fmt == "markdown":
        return to_markdown(comparison)
    if fmt == "html":
        from mlcompare import plots

        return to_html(comparison, plots.render_all(comparison.cases, comparison.break_evens))
    if fmt == "table":
        return to_text(comparison)
    raise ValueError(f"unknown format {fmt!r}")


# --- the comparison table --------------------------------------------------------------

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


def to_csv(comparison: Comparison) -> str:
    return comparison.table.to_csv(index=False)


def _pairing_cells(cases: pd.DataFrame, several_suites: bool) -> pd.DataFrame:
    """One pairing's table as display strings, columns (implementation, heading).

    A row per dataset, size and shared sweep point (shown after the dataset); a column
    group per implementation and own sweep point (`xgboost_cpu [max_bin=64]`).
    """
    impls = _impl_labels(cases)
    metric = next((m for m in cases["main_metric"] if isinstance(m, str)), "quality")
    show_parity = cases["parity"].isin(["ok", "degraded"]).any()
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
            row[(impl, metric)] = _number(r["quality"]) if r and r["status"] == "ok" else ""
            if show_parity and not baseline:
                row[(impl, "parity")] = (r["parity"] or "") if r else ""
        out.append(row)
    frame = pd.DataFrame(out).fillna("")
    frame.columns = pd.MultiIndex.from_tuples(frame.columns)
    return frame


def _fit_cell(r: dict | None) -> str:
    if r is None:
        return ""
    if r["status"] != "ok":
        return r["status"]
    text = _number(r["fit_time_s"])
    if r["repeats_done"] and r["repeats_done"] > 1 and not math.isnan(r["fit_ci_low_s"]):
        text += f" [{_number(r['fit_ci_low_s'])}–{_number(r['fit_ci_high_s'])}]"
    return text


def _speedup_cell(r: dict | None) -> str:
    if r is None or r["status"] != "ok" or pd.isna(r["speedup_fit"]):
        return ""
    text = f"{r['speedup_fit']:.3g}×"
    if not pd.isna(r["speedup_fit_ci_low"]) and not pd.isna(r["speedup_fit_ci_high"]):
        text += f" [{r['speedup_fit_ci_low']:.3g}–{r['speedup_fit_ci_high']:.3g}]"
    return text


def _number(value: float) -> str:
    if value is None or pd.isna(value):
        return ""
    return f"{value:.3g}"


def _notes(cases: pd.DataFrame) -> list[str]:
    """Why implementations did not run, once per implementation and reason, with the sweep
    points it concerns when it is not all of that implementation's points."""
    bad = cases[cases["status"] != "ok"]
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
                         f"{_rows(b.rows)} rows on {_break_even_data(b)}{where}")
    return lines


def _break_even_data(b: breakeven.BreakEven) -> str:
    return results.group_label(f"{b.dataset} ×{b.n_features}", b.sweep_shared)


def worker_lines(cases: pd.DataFrame) -> list[str]:
    """Per implementation and comparison group run on several Dask worker counts: the fit
    speed-up from the fewest workers to the most."""
    ran = cases[(cases["status"] == "ok") & cases["fit_time_s"].notna() & cases["dask_workers"].notna()]
    several = cases["suite_run_id"].nunique() > 1
    lines = []
    keys = ["suite_label", "pairing", "dataset_label", "sweep_shared", "implementation"]
    for (suite, pairing, dataset, shared, impl), group in ran.groupby(keys, sort=False):
        few, many = group.loc[group["dask_workers"].idxmin()], group.loc[group["dask_workers"].idxmax()]
        if few["dask_workers"] == many["dask_workers"]:
            continue
        where = results.group_label(dataset, shared) + (f", {suite}" if several else "")
        speedup = few["fit_time_s"] / many["fit_time_s"]
        lines.append(f"{pairing} · {impl} on {where}: fit {_number(few['fit_time_s'])} s on {few['dask_workers']} "
                     f"worker{'s' if few['dask_workers'] > 1 else ''}, {_number(many['fit_time_s'])} s on "
                     f"{many['dask_workers']} ({speedup:.2f}× the speed)")
    return lines


def _rows(n: float) -> str:
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


def _sections(comparison: Comparison):
    """(pairing, cells, notes, break-even and workers lines) per pairing, in the order they ran."""
    several = len(comparison.suites) > 1
    for pairing in dict.fromkeys(comparison.cases["pairing"].dropna()):
        part = comparison.cases[comparison.cases["pairing"] == pairing]
        part = part.sort_values(["dataset", "n_features", "n_samples", "suite_label"], kind="stable")
        evens = _break_even_lines(comparison, pairing) + worker_lines(part)
        yield pairing, _pairing_cells(part, several), _notes(part), evens


def _suite_headers(comparison: Comparison) -> list[list[str]]:
    labels = dict(zip(comparison.cases["suite_run_id"], comparison.cases["suite_label"]))
    return [[line for line in _suite_lines(s, labels.get(s.run.run_id, results.suite_label(s))) if line]
            for s in comparison.suites]


# --- renderers -----------------------------------------------------------------------

def to_markdown(comparison: Comparison) -> str:
    out = ["# mlcompare comparison", ""]
    for lines in _suite_headers(comparison):
        out += [f"- {lines[0]}"] + [f"  {line}" for line in lines[1:]]
    out += ["", _legend(comparison), ""]
    for pairing, cells, notes, evens in _sections(comparison):
        out += [f"## {pairing}", "", _markdown_table(cells), ""]
        out += [f"- {line}" for line in evens + notes]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _markdown_table(cells: pd.DataFrame) -> str:
    headers = [" ".join(part for part in col if part) for col in cells.columns]
    escape = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(escape(v) for v in row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


def _legend(comparison: Comparison) -> str:
    levels = comparison.cases["fit_ci_level"].dropna()
    level = f"{levels.min() * 100:.0f} %" if not levels.empty else "95 %"
    return (f"fit s: median warm fit in seconds [confidence interval of the median from the repeats, "
            f"at least {level}]; speed-up: the baseline's fit time over this one's [95 % CI when recorded]; "
            f"quality: the pairing's main metric; parity: whether that metric kept up with the baseline.")


def to_text(comparison: Comparison) -> str:
    """A terminal rendering (rich), as plain text."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None, highlight=False)
    for lines in _suite_headers(comparison):
        for line in lines:
            console.print(line, markup=False)
    console.print()
    for pairing, cells, notes, evens in _sections(comparison):
        table = Table(title=pairing, box=box.SIMPLE_HEAD, title_justify="left")
        for col in cells.columns:
            table.add_column(_text_header(col), justify="left" if not col[0] else "right", vertical="bottom",
                             no_wrap=True)
        for row in cells.itertuples(index=False):
            table.add_row(*[Text(str(v)) for v in row])
        console.print(table)
        for line in evens + notes:
            console.print(f"  {line}", markup=False)
        console.print()
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()).rstrip() + "\n"


def _text_header(col: tuple[str, str]):
    """Implementation, own sweep point and heading on lines of their own, as plain text (not markup:
    `[max_bin=64]` would read as a style tag)."""
    from rich.text import Text

    return Text("\n".join(col).replace(" [", "\n[") if col[0] else f"\n{col[1]}")


def to_html(comparison: Comparison, images: dict[str, bytes] | None = None) -> str:
    """One file, no external resources: styles inline, plots as data URIs."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>mlcompare comparison</title><style>",
             "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0}"
             "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
             "th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}"
             "ul.meta{color:#555;font-size:90%}p.legend{color:#555;font-size:90%;max-width:60em}"
             "img{max-width:100%;border:1px solid #eee;margin:.5em 0}",
             "</style></head><body><h1>mlcompare comparison</h1>"]
    for lines in _suite_headers(comparison):
        parts.append("<ul class='meta'>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>")
    parts.append(f"<p class='legend'>{html.escape(_legend(comparison))}</p>")
    for pairing, cells, notes, evens in _sections(comparison):
        parts.append(f"<h2>{html.escape(pairing)}</h2>")
        parts.append(cells.to_html(index=False, border=0, escape=True))
        if evens or notes:
            parts.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in evens + notes) + "</ul>")
    for name, png in (images or {}).items():
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{html.escape(name)}</h2><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


# --- the parent run's description ------------------------------------------------------

def description(comparison: Comparison) -> str:
    """Markdown for the parent run's description (`mlflow.note.content`): the headline numbers."""
    cases = comparison.cases
    suite = comparison.suites[0]
    counts = cases["status"].value_counts().to_dict()
    name = suite.run.params.get("suite_name", suite.run.name)
    lines = [f"**mlcompare suite `{name}`** on {results.host_label(suite.run.tags)}: "
             f"{counts.get('ok', 0)} cases ran, {counts.get('skipped', 0)} skipped, {counts.get('failed', 0)} failed.",
             ""]
    ran = cases[(cases["status"] == "ok") & ~cases["is_baseline"] & cases["speedup_fit"].notna()]
    if not ran.empty:
        lines.append("Fit speed-up against the baseline, best per pairing and implementation:")
        best = (ran.sort_values("speedup_fit", ascending=False)
                .groupby(["pairing", "implementation"], sort=False).head(1))
        for r in best.itertuples():
            ci = (f" [{r.speedup_fit_ci_low:.3g}–{r.speedup_fit_ci_high:.3g}]"
                  if not pd.isna(r.speedup_fit_ci_low) and not pd.isna(r.speedup_fit_ci_high) else "")
            parity = f", parity {r.parity}" if r.parity in ("ok", "degraded") else ""
            lines.append(f"- {r.pairing} · {r.impl_label} on {results.group_label(r.dataset_label, r.sweep_shared)}: "
                         f"**{r.speedup_fit:.3g}×**{ci} vs {r.baseline}, {r.main_metric} {_number(r.quality)}{parity}")
        lines.append("")
    for b in comparison.break_evens:
        lines.append(f"- break-even: {b.pairing} · {b.impl_label} beats {b.baseline} from about "
                     f"{_rows(b.rows)} rows ({_break_even_data(b)})")
    lines += [f"- workers: {line}" for line in worker_lines(cases)]
    skipped = cases[cases["status"] == "skipped"]
    if not skipped.empty:
        reasons = dict.fromkeys(f"{r.implementation}: {r.note}" for r in skipped.itertuples())
        lines.append(f"- skipped here: {'; '.join(reasons)}")
    failed = cases[cases["status"] == "failed"]
    for r in failed.itertuples():
        lines.append(f"- FAILED {r.run_name}: {r.note}")
    lines += ["", "Artifacts: `comparison.html` (table and plots), `comparison.csv`, `comparison.md`, "
              "`comparison_table.json`, `plots/`."]
    text = "\n".join(lines)
    table = "\n".join(f"#### {pairing}\n\n{_markdown_table(cells)}\n" for pairing, cells, _, _ in _sections(comparison))
    if len(text) + len(table) + 2 <= _DESCRIPTION_LIMIT:
        text += "\n\n" + table
    return text[:_DESCRIPTION_LIMIT]
