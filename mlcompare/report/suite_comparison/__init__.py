"""Two suites compared: did the new version, the other machine or the other setting make it faster?

`table` matches the cases two suites share and compares each (B over A: fit and predict
time with exact intervals over the processes of both runs, verdicts controlled as one
family, the main quality metric) and lists what
differs between the suites; `render` writes the comparison in
`mlcompare report`'s formats; `plot` draws B/A per case. Used by `mlcompare compare` and
by `mlcompare run --compare-to`, which attaches `artifacts` to the new suite's parent run.
"""

from __future__ import annotations

from mlcompare.report.suite_comparison.render import FORMATS, render, summary_line
from mlcompare.report.suite_comparison.table import (
    SuiteComparison,
    compare_suites,
    slower_than,
    undecided_for_quality,
    undecided_for_slower,
    worse_than,
)

__all__ = ["FORMATS", "SuiteComparison", "artifacts", "compare_suites", "render", "slower_than",
           "summary_line", "undecided_for_quality", "undecided_for_slower", "worse_than"]

#: Where the comparison goes on B's parent run (`mlcompare run --compare-to A`).
FOLDER = "compare"


def artifacts(comparison: SuiteComparison) -> dict[str, str | bytes]:
    """The comparison as files for B's parent run: table (CSV, Markdown, HTML with the plot) and plot."""
    from mlcompare.report.suite_comparison.plot import comparison_plot
    from mlcompare.report.suite_comparison.render import to_csv, to_html, to_markdown

    plot = comparison_plot(comparison, comparison.fail_slower)
    name = f"{FOLDER}/vs_{comparison.a.run.run_id[:8]}"
    return {f"{name}.csv": to_csv(comparison), f"{name}.md": to_markdown(comparison),
            f"{name}.html": to_html(comparison, plot), f"{name}.png": plot}
