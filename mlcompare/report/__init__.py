"""Report: what a recorded suite means, from the stored runs alone.

Stored runs become one flat table of cases (`results`), then the comparison table
(`table`), its renderings (`render`: terminal, Markdown, CSV, self-contained HTML), the
parent run's description (`description`), break-even sizes (`breakeven`), the cheapest
implementation (`costs`), predict-latency crossings (`latency`) and the plots (`plots`,
one registry). It reads plain stored types, never MLflow itself, and is never
imported inside a case's process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlcompare.report.description import description
from mlcompare.report.render import FORMATS, render, to_csv, to_html, to_markdown, to_text
from mlcompare.report.table import Comparison, compare, comparison_table

if TYPE_CHECKING:
    import pandas as pd

    from mlcompare.records import StoredSuite

__all__ = ["FORMATS", "Comparison", "SuiteReport", "compare", "comparison_table", "description", "render",
           "suite_report", "to_csv", "to_html", "to_markdown", "to_text"]


@dataclass
class SuiteReport:
    """What the suite attaches to its parent run."""

    files: dict[str, str | bytes]
    tables: dict[str, pd.DataFrame]
    metrics: dict[str, float]
    description: str


def suite_report(suite: StoredSuite) -> SuiteReport:
    """The parent run's table (CSV, Markdown, HTML, `log_table`), plots, break-evens and description."""
    from mlcompare.report import breakeven, equal_quality, latency_crossings, plots, threadcurve

    comparison = compare([suite])
    images = plots.render_all(comparison.cases, comparison.break_evens)
    return SuiteReport(
        files={"comparison.csv": to_csv(comparison), "comparison.md": to_markdown(comparison),
               "comparison.html": to_html(comparison, images),
               **{f"plots/{name}": png for name, png in images.items()}},
        tables={"comparison_table.json": comparison.table},
        metrics={**breakeven.as_metrics(comparison.break_evens), **equal_quality.as_metrics(comparison.curves),
                 **latency_crossings.as_metrics(latency_crossings.crossings(comparison.cases)),
                 **threadcurve.as_metrics(comparison.threads_worth)},
        description=description(comparison))
