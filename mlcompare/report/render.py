"""The comparison in each output format: terminal table, Markdown, CSV, self-contained HTML.

`RENDERERS` is the registry `mlcompare report --format` chooses from.
"""

from __future__ import annotations

import base64
import html
import io
from typing import Callable, Iterable, cast

import pandas as pd

from mlcompare.report.table import Comparison, sections, suite_headers


def to_csv(comparison: Comparison) -> str:
    return comparison.table.to_csv(index=False)


def to_markdown(comparison: Comparison) -> str:
    out = ["# mlcompare comparison", ""]
    for lines in suite_headers(comparison):
        out += [f"- {lines[0]}"] + [f"  {line}" for line in lines[1:]]
    out += ["", legend(comparison), ""]
    for pairing, cells, notes, evens in sections(comparison):
        out += [f"## {pairing}", "", markdown_table(cells), ""]
        out += [f"- {line}" for line in evens + notes]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def markdown_table(cells: pd.DataFrame) -> str:
    headers = [" ".join(part for part in col if part) for col in cells.columns]
    escape = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(escape(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(escape(v) for v in row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


def legend(comparison: Comparison) -> str:
    text = ("fit s: median warm fit in seconds [interval of the median from the repeats, and the share of "
            "such intervals that cover the true median at this number of repeats]; speed-up: the baseline's "
            "fit time over this one's [interval, and its coverage]; noisy: the repeats or the machine's load "
            "say the timing is unsteady; quality: the pairing's main metric; parity: whether that metric "
            "kept up with the baseline.")
    if comparison.cases["speedup_fit_lower_bound"].notna().any():
        text += (" ≥ N×: the baseline's time limit stopped it in its first fit, which had run N times this one's "
                 "fit.")
    if comparison.cases["fit_cost_ratio"].notna().any():
        text += (" cost ratio: this fit's cost over the baseline's, each fit time priced at its machine's "
                 "cost_per_hour (below 1: cheaper; a GPU 10× faster at 19× the price is 1.9).")
    return text


def to_text(comparison: Comparison) -> str:
    """A terminal rendering (rich), as plain text."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None, highlight=False)
    for lines in suite_headers(comparison):
        for line in lines:
            console.print(line, markup=False)
    console.print()
    for pairing, cells, notes, evens in sections(comparison):
        table = Table(title=pairing, box=box.SIMPLE_HEAD, title_justify="left")
        for col in cast(Iterable[tuple[str, str]], cells.columns):  # (implementation, heading)
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
    for lines in suite_headers(comparison):
        parts.append("<ul class='meta'>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>")
    parts.append(f"<p class='legend'>{html.escape(legend(comparison))}</p>")
    for pairing, cells, notes, evens in sections(comparison):
        parts.append(f"<h2>{html.escape(pairing)}</h2>")
        parts.append(cells.to_html(index=False, border=0, escape=True))
        if evens or notes:
            parts.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in evens + notes) + "</ul>")
    for name, png in (images or {}).items():
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{html.escape(name)}</h2><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)




def _html_with_plots(comparison: Comparison) -> str:
    from mlcompare.report import plots

    return to_html(comparison, plots.render_all(comparison.cases, comparison.break_evens))


#: `mlcompare report --format NAME`: how each format is written.
RENDERERS: dict[str, Callable[[Comparison], str]] = {
    "table": lambda comparison: to_text(comparison), "markdown": lambda comparison: to_markdown(comparison),
    "csv": lambda comparison: to_csv(comparison), "html": _html_with_plots,
}
FORMATS = tuple(RENDERERS)


def render(comparison: Comparison, fmt: str) -> str:
    """`mlcompare report`'s output in one of FORMATS."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}")
    return RENDERERS[fmt](comparison)
