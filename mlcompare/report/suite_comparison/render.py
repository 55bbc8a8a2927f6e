"""The suite comparison in each output format `mlcompare report` has: terminal, Markdown, CSV, HTML.

The text formats start with the two suites and what differs between them (machine,
library versions, settings), then a row per shared case, then the cases of one suite only.
"""

from __future__ import annotations

import base64
import html
import io
import math
from typing import Callable

import pandas as pd

from mlcompare.report.render import markdown_table
from mlcompare.report.suite_comparison.table import FAMILY_METHOD, TIMES, UNTESTED, SuiteComparison, suite_line
from mlcompare.report.table import number_text


def header_lines(comparison: SuiteComparison) -> list[str]:
    """The two suites, then what differs between them, A → B."""
    lines = [suite_line(comparison.a, "A"), suite_line(comparison.b, "B"), "", "What differs, A → B:"]
    found = comparison.differences + [f"cases: {line}" for line in comparison.case_differences]
    lines += [f"  {line}" for line in found] or ["  nothing in the machine, library versions or settings"]
    if comparison.equal_quality:
        lines += ["", "Speed-up at equal quality, A → B:", *(f"  {line}" for line in comparison.equal_quality)]
    return lines


def change_text(comparison: SuiteComparison) -> str:
    """'a change beyond ×/÷ 1.05 (more than 5 %)' (--min-change 1.05), or 'any change' (1)."""
    factor = comparison.min_change
    if factor <= 1:
        return "any change"
    return f"a change beyond ×/÷ {factor:.3g} (more than {(factor - 1) * 100:.3g} %)"


def unchanged_text(comparison: SuiteComparison) -> str:
    """What a family's false-call bound assumes: 'nothing changed' (by more than the band)."""
    return "nothing changed" + (" by more than that" if comparison.min_change > 1 else "")


def legend(comparison: SuiteComparison) -> str:
    rate = f"{comparison.false_call_rate * 100:.3g} %"
    band = comparison.min_change > 1
    why = (f" (--min-change {comparison.min_change:g}: identical suites minutes apart on one machine differ as "
           f"wholes by a few per cent, which no interval over one suite's processes covers)" if band else "")
    inside = " (every case whose interval reaches into that band among them)" if band else ""
    return (f"B/A: B's median time over A's (> 1: B is slower), each the median of one summary per process (the "
            f"median of that process's repeats). Interval: the exact Mann–Whitney (Hodges–Lehmann) interval of "
            f"that factor over the processes of both runs, with the coverage it has and the processes it was taken "
            f"over (B vs A). Verdict: the exact Mann–Whitney test of the processes for {change_text(comparison)}"
            f"{why}, every test of this comparison adjusted together ({FAMILY_METHOD}): slower or faster where the "
            f"adjusted p is at most {rate}, so that false calls are at most {rate} of the calls, and, when "
            f"{unchanged_text(comparison)}, the chance of any call is at most {rate}; 'no change' otherwise{inside}; "
            f"'too few processes' where they can never reach it (3 against 3: p ≥ 0.1). Quality: the pairing's main "
            f"metric, A → B, worse or better beyond the tolerance shown.")


def cells(comparison: SuiteComparison) -> pd.DataFrame:
    """A row per shared case, as display strings."""
    rows = comparison.rows
    timed = [name for name, _, _ in TIMES if rows[f"{name}_ratio"].notna().any()] or ["fit"]
    # a quantity no run kept the processes of has medians only: no interval, no verdict
    tested = {name for name in timed if rows[f"{name}_level"].notna().any()} | {"fit"}
    out = []
    for r in rows.to_dict("records"):
        if r["a_status"] == r["b_status"] == "skipped":  # counted in the summary line, not a row
            continue
        row = {"case": r["case"]}
        for name in timed:
            if r["status_verdict"]:
                row.update({f"{name} A s": r["a_status"], f"{name} B s": r["b_status"], f"{name} B/A": "",
                            f"{name} interval": "", f"{name} verdict": r["status_verdict"] if name == "fit" else ""})
                continue
            row[f"{name} A s"] = number_text(r[f"{name}_a_s"])
            row[f"{name} B s"] = number_text(r[f"{name}_b_s"])
            row[f"{name} B/A"] = f"{r[f'{name}_ratio']:.3g}×" if not pd.isna(r[f"{name}_ratio"]) else ""
            row[f"{name} interval"] = _interval(r, name)
            row[f"{name} verdict"] = r[f"{name}_verdict"]
        row["quality"] = _quality(r)
        row["quality verdict"] = r["quality_verdict"] if isinstance(r["quality_verdict"], str) else ""
        out.append(row)
    columns = ["case"] + [f"{n} {h}" for n in timed for h in ("A s", "B s", "B/A", "interval", "verdict")
                          if n in tested or h not in ("interval", "verdict")]
    return pd.DataFrame(out, columns=columns + ["quality", "quality verdict"]).fillna("")


def _interval(r: dict, name: str) -> str:
    if pd.isna(r[f"{name}_low"]):
        return ""
    return (f"{r[f'{name}_low']:.3g}–{r[f'{name}_high']:.3g} ({r[f'{name}_level'] * 100:.3g} %, "
            f"{int(r[f'{name}_b_processes'])} vs {int(r[f'{name}_a_processes'])} processes)")


def _quality(r: dict) -> str:
    if not isinstance(r["main_metric"], str) or pd.isna(r["quality_a"]):
        return ""
    return f"{r['main_metric']} {number_text(r['quality_a'])} → {number_text(r['quality_b'])}"


def summary_line(comparison: SuiteComparison) -> str:
    """'3 shared cases: 1 slower, 2 no change; quality: 3 same; 1 only in A, 0 only in B'."""
    rows = comparison.rows
    parts = []
    for name, _, _ in TIMES:
        counts = rows[f"{name}_verdict"].replace(["", UNTESTED], pd.NA).dropna().value_counts()
        if not counts.empty:
            parts.append(f"{name}: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    failed = rows["status_verdict"].replace("", pd.NA).dropna().value_counts()
    if not failed.empty:
        parts.append(", ".join(f"{n} {v}" for v, n in failed.items()))
    quality = rows["quality_verdict"].dropna().value_counts()
    if not quality.empty:
        parts.append("quality: " + ", ".join(f"{n} {v}" for v, n in quality.items()))
    family = comparison.family()
    rate = f"{comparison.false_call_rate * 100:.3g} %"
    parts.append(f"{family['calls']} call{'s' if family['calls'] != 1 else ''} in {family['tests']} timing "
                 f"test{'s' if family['tests'] != 1 else ''} of {change_text(comparison)} ({FAMILY_METHOD} at "
                 f"{rate}: false calls at most {rate} of the calls; with {unchanged_text(comparison)}, any call "
                 f"at all has a chance of at most {rate})"
                 + (f", {family['undecided']} undecided (too few processes, or none kept)"
                    if family["undecided"] else ""))
    return (f"{len(rows)} shared case{'s' if len(rows) != 1 else ''}; " + "; ".join(parts) +
            f"; {len(comparison.only_a)} only in A, {len(comparison.only_b)} only in B")


#: How unlikely, with nothing changed, so many of a comparison's B/A ratios on one side of 1
#: must be (a two-sided sign test) before `together_line` speaks.
TOGETHER_P = 0.01


#: How many of the cases that moved more than the shift `together_line` names.
RELATIVE_LISTED = 5


def together_line(comparison: SuiteComparison) -> str | None:
    """A warning when the cases moved together, one way: what one suite a side cannot tell
    apart. With nothing changed about half of B's ratios lie above 1; on a shared machine whose
    speed drifts between two suites, nearly all of them lie on one side (bench/aa.py), as they
    do when something every case shares changed. No interval over one suite's processes
    covers that drift, so each verdict's level holds for the processes, not for the machine."""
    found = comparison.together()
    if found is None:
        return None
    median, above, total = found
    side = max(above, total - above)
    p = min(1.0, 2 * sum(math.comb(total, k) for k in range(side, total + 1)) / 2**total)
    if p > TOGETHER_P:
        return None
    calls = comparison.relative_calls()
    named = "; ".join(f"{case} ({name}) {verdict}, {ratio:.3g}× the shift"
                      for case, name, ratio, verdict in calls[:RELATIVE_LISTED])
    more = f"; and {len(calls) - RELATIVE_LISTED} more" if len(calls) > RELATIVE_LISTED else ""
    relative = (f"Relative to that shift ({FAMILY_METHOD} at {comparison.false_call_rate * 100:.3g} %, each "
                f"test with B's processes divided by {median:.3g}): "
                + (f"{len(calls)} test{'s' if len(calls) != 1 else ''} moved more than the rest: {named}{more}."
                   if calls
                   else "no case moved more than the rest."))
    return (f"The cases moved together: {side} of {total} timing ratios {'above' if above == side else 'below'} 1, "
            f"median B/A {median:.3g}. A change every case shares (threads, a library, the machine) looks like "
            "this, and so does this machine's speed drifting between the two suites, which no interval over one "
            "suite's processes covers: run each side twice to tell them apart, or gate with a margin "
            f"(--fail-slower 1.1). {relative}")


def summary_lines(comparison: SuiteComparison) -> list[str]:
    """The summary line, and the warning of `together_line` where it applies."""
    return [summary_line(comparison)] + [line for line in (together_line(comparison),) if line]


def _apart(comparison: SuiteComparison) -> list[tuple[str, list[str]]]:
    return [(f"Only in A ({len(comparison.only_a)})", comparison.only_a),
            (f"Only in B ({len(comparison.only_b)})", comparison.only_b)]


def to_text(comparison: SuiteComparison) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None, highlight=False)
    for line in header_lines(comparison):
        console.print(line, markup=False)
    console.print()
    table = Table(box=box.SIMPLE_HEAD, title="B against A", title_justify="left")
    frame = cells(comparison)
    for col in frame.columns:
        table.add_column(Text(col), justify="left" if col in ("case", "quality") else "right", no_wrap=True)
    for row in frame.itertuples(index=False):
        table.add_row(*[Text(str(v)) for v in row])
    console.print(table)
    for line in summary_lines(comparison):
        console.print(line, markup=False, soft_wrap=True)  # a sentence is one line, however long
    for title, labels in _apart(comparison):
        if labels:
            console.print(f"{title}:", markup=False)
            for label in labels:
                console.print(f"  {label}", markup=False)
    text = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()).rstrip()
    return f"{text}\n\n{legend(comparison)}\n"


def to_markdown(comparison: SuiteComparison) -> str:
    out = ["# mlcompare: B against A", ""]
    head = header_lines(comparison)
    out += [f"- {line}" for line in head[:2]] + ["", f"**{head[3]}**", ""]
    out += [f"- {line.strip()}" for line in head[4:] if line.strip()] + [""]
    out += [markdown_table(_flat(cells(comparison))), ""]
    out += [part for line in summary_lines(comparison) for part in (line, "")]
    for title, labels in _apart(comparison):
        if labels:
            out += [f"**{title}:**", ""] + [f"- {label}" for label in labels] + [""]
    out += [legend(comparison)]
    return "\n".join(out).rstrip() + "\n"


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    """`markdown_table` takes (group, heading) columns."""
    flat = frame.copy()
    flat.columns = pd.MultiIndex.from_tuples([("", c) for c in frame.columns])
    return flat


def to_csv(comparison: SuiteComparison) -> str:
    """Every number of every shared case (`table.COLUMNS`), plus which suites A and B are."""
    frame = comparison.rows.copy()
    frame.insert(0, "suite_b", comparison.b.run.run_id)
    frame.insert(0, "suite_a", comparison.a.run.run_id)
    return frame.to_csv(index=False)


def to_html(comparison: SuiteComparison, plot: bytes | None = None) -> str:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>mlcompare: B against A</title><style>",
             "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}"
             "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
             "th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}"
             "p.legend,ul.meta{color:#555;font-size:90%;max-width:70em}img{max-width:100%}",
             "</style></head><body><h1>mlcompare: B against A</h1>"]
    head = header_lines(comparison)
    parts.append("<ul class='meta'>" + "".join(f"<li>{html.escape(line)}</li>" for line in head[:2]) + "</ul>")
    parts.append(f"<h2>{html.escape(head[3])}</h2><ul>"
                 + "".join(f"<li>{html.escape(line.strip())}</li>" for line in head[4:] if line.strip()) + "</ul>")
    parts.append(cells(comparison).to_html(index=False, border=0, escape=True))
    parts += [f"<p>{html.escape(line)}</p>" for line in summary_lines(comparison)]
    for title, labels in _apart(comparison):
        if labels:
            parts.append(f"<h3>{html.escape(title)}</h3><ul>"
                         + "".join(f"<li>{html.escape(label)}</li>" for label in labels) + "</ul>")
    parts.append(f"<p class='legend'>{html.escape(legend(comparison))}</p>")
    if plot:
        data = base64.b64encode(plot).decode("ascii")
        parts.append(f"<img alt='B over A per case' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _html_with_plot(comparison: SuiteComparison) -> str:
    from mlcompare.report.suite_comparison.plot import comparison_plot

    return to_html(comparison, comparison_plot(comparison, comparison.fail_slower))


#: `mlcompare compare --format NAME`: the same names as `mlcompare report --format`.
RENDERERS: dict[str, Callable[[SuiteComparison], str]] = {
    "table": to_text, "markdown": to_markdown, "csv": to_csv, "html": _html_with_plot}
FORMATS = tuple(RENDERERS)


def render(comparison: SuiteComparison, fmt: str) -> str:
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}")
    return RENDERERS[fmt](comparison)
