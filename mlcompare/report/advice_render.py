"""The advice in words and tables: the terminal's text, one Markdown page, one self-contained HTML page.

All three say the same things in the same order: what was asked and how sure each kind of
figure is, one recommendation per pairing, then per pairing the table at the table's size,
the scaling fits with their self-checks, the extrapolation, the break-even sizes and what
was not measured.
"""

from __future__ import annotations

import base64
import html

from mlcompare.data.cache import human_count
from mlcompare.report import scaling
from mlcompare.report.advice import Advice, Implementation, Pairing, crossing_text, figure_text, percent, seconds

PLOT_TITLES = {"time_vs_rows.png": "Fit time against rows: the ladder, the fits and the table's size",
               "speedup_vs_rows.png": "Speed-up against the baseline along the rows, by the fits"}


def header(advice: Advice) -> list[str]:
    t = advice.table
    lines = [f"mlcompare advise: {t.name}, {t.rows:,} rows × {t.features} features, {t.task} of {t.target}"
             + (f" ({t.task_note})" if t.task_note else "")]
    if advice.host:
        lines.append(f"measured on {advice.host}; ladder: {', '.join(human_count(n) for n in advice.sizes)} rows")
    if advice.reference:
        lines.append(f"reference: {advice.reference} (its figures are marked with where they were measured)")
    lines.append("how sure: a measured time is the median over its processes, [interval of that median, its "
                 "level]; a measured speed-up is the suite's own, [interval over both sides' processes, its "
                 f"level]; a predicted figure comes from the power-law fit of the ladder, [{scaling.LEVEL * 100:.3g} % "
                 "prediction interval], beside the self-check error of each fit it uses (its largest size "
                 "predicted from the smaller ones)")
    return lines


def table_rows(pairing: Pairing, advice: Advice, prices: bool) -> tuple[list[str], list[list[str]]]:
    rows = human_count(advice.table.rows)
    heads = ["implementation", f"fit at {rows}", f"predict at {rows}", pairing.metric, "speed-up", "sizes run"]
    if prices:
        heads.insert(5, "cost per fit")
    out = []
    for i in pairing.implementations:
        cells = [i.label + (" (baseline)" if i.baseline else ""),
                 figure_text(i.fit) if i.fit else "—", figure_text(i.predict) if i.predict else "—",
                 _quality(i), "1 (baseline)" if i.baseline and i.fit else figure_text(i.speedup, "×") if i.speedup
                 else "—", ", ".join(human_count(n) for n, _, _ in i.points) or f"{i.status}: {i.note}"]
        if prices:
            cells.insert(5, figure_text(i.cost, "$") if i.cost else "—")
        out.append(cells)
    return heads, out


def _quality(impl: Implementation) -> str:
    if impl.quality is None:
        return "—"
    text = f"{impl.quality.value:.4g}"
    if impl.fit is None or impl.quality.rows != (impl.fit.rows if impl.fit else 0):
        text += f" at {human_count(impl.quality.rows)}"
    return text + (" (behind the baseline)" if impl.parity == "degraded" else "")


def scaling_lines(pairing: Pairing, advice: Advice) -> list[str]:
    lines = []
    for i in pairing.implementations:
        if i.law is None:
            continue
        bounds = i.law.exponent_interval()
        exponent = f"{i.law.b:.2f}" + (f" [{bounds[0]:.2f}–{bounds[1]:.2f}, {scaling.LEVEL * 100:.3g} %]"
                                       if bounds else " (two sizes: no interval)")
        text = f"{i.label}: fit time ∝ rows^{exponent} over the {len(i.law.sizes)} largest sizes"
        if i.check is not None:
            c = i.check
            text += (f"; self-check: {human_count(int(c.rows))} rows predicted from the {c.from_sizes} below it "
                     f"{seconds(c.predicted_s)}, measured {seconds(c.measured_s)}: error {percent(c.error)}")
            if c.covered is not None:
                text += " (inside its interval)" if c.covered else " (outside its interval)"
        lines.append(text)
    return lines


def extrapolation_lines(pairing: Pairing, advice: Advice) -> list[str]:
    if not advice.extrapolate_rows:
        return []
    rows = human_count(advice.extrapolate_rows)
    lines = []
    for i in pairing.implementations:
        if i.origin != "here" or i.status != "measured":
            continue
        if i.extrapolated is not None:
            lines.append(f"{i.label} at {rows} rows: {figure_text(i.extrapolated)}")
        else:
            lines.append(f"{i.label} at {rows} rows: not predicted (too few sizes for an interval: "
                         f"{len(i.points)} measured, 3 needed)")
    return lines


def crossing_lines(pairing: Pairing) -> list[str]:
    return [crossing_text(pairing, c) for c in pairing.crossings] + pairing.no_crossing


def stop_lines(pairing: Pairing) -> list[str]:
    return [f"{i.label}: {i.note}" for i in pairing.implementations if i.note and i.status == "measured"]


def sections(advice: Advice) -> list[tuple[Pairing, list[tuple[str, list[str]]]]]:
    return [(p, [("Scaling", scaling_lines(p, advice)),
                 (f"Beyond the table ({human_count(advice.extrapolate_rows or 0)} rows)",
                  extrapolation_lines(p, advice)),
                 ("Break-even", crossing_lines(p)), ("Below the table's size", stop_lines(p))])
            for p in advice.pairings]


def _prices(advice: Advice) -> bool:
    return any(i.cost is not None for p in advice.pairings for i in p.implementations)


def to_text(advice: Advice) -> str:
    out = header(advice) + ["", "Recommendations"] + [f"  {p.recommendation}" for p in advice.pairings]
    prices = _prices(advice)
    for pairing, parts in sections(advice):
        out += ["", f"{pairing.name} ({pairing.metric}; baseline {pairing.baseline})"]
        heads, rows = table_rows(pairing, advice, prices)
        widths = [max(len(r[k]) for r in [heads, *rows]) for k in range(len(heads))]
        for r in [heads, *rows]:
            out.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        for title, lines in parts:
            if lines:
                out.append(f"  {title}:")
                out += [f"    {line}" for line in lines]
    if advice.notes:
        out += ["", "Notes"] + [f"  {n}" for n in advice.notes]
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(advice: Advice, images: list[str] | None = None) -> str:
    lines = [f"# mlcompare advise: {advice.table.name}", ""] + [f"- {h}" for h in header(advice)]
    lines += ["", "## Recommendations", ""] + [f"- {p.recommendation}" for p in advice.pairings]
    prices = _prices(advice)
    for pairing, parts in sections(advice):
        heads, rows = table_rows(pairing, advice, prices)
        lines += ["", f"## {pairing.name}", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        lines += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in rows]
        for title, items in parts:
            if items:
                lines += ["", f"{title}:", ""] + [f"- {_md_escape(i)}" for i in items]
    if images:
        lines += ["", "## Plots", ""] + [f"![{PLOT_TITLES.get(n, n)}](plots/{n})" for n in images]
    if advice.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in advice.notes]
    return "\n".join(lines) + "\n"


def to_html(advice: Advice, images: dict[str, bytes]) -> str:
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>mlcompare advise: {esc(advice.table.name)}</title><style>",
             "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:80em}"
             "table{border-collapse:collapse;margin:.5em 0}th,td{padding:3px 8px;border-bottom:1px solid #ddd;"
             "text-align:right;white-space:nowrap}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}"
             "ul.meta{color:#555;font-size:90%}li.rec{margin:.4em 0}img{max-width:100%;border:1px solid #eee}",
             "</style></head><body>", f"<h1>mlcompare advise: {esc(advice.table.name)}</h1>",
             "<ul class='meta'>" + "".join(f"<li>{esc(h)}</li>" for h in header(advice)) + "</ul>",
             "<h2>Recommendations</h2><ul>" + "".join(f"<li class='rec'>{esc(p.recommendation)}</li>"
                                                      for p in advice.pairings) + "</ul>"]
    prices = _prices(advice)
    for pairing, sections_ in sections(advice):
        heads, rows = table_rows(pairing, advice, prices)
        parts.append(f"<h2>{esc(pairing.name)}</h2><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in heads)
                     + "</tr>" + "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
                     + "</table>")
        for title, items in sections_:
            if items:
                parts.append(f"<h3>{esc(title)}</h3><ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>")
    for name, png in images.items():
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{esc(PLOT_TITLES.get(name, name))}</h2><img alt='{esc(name)}' "
                     f"src='data:image/png;base64,{data}'>")
    if advice.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in advice.notes) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
