"""The comparison plot: B's time over A's per shared case, with its interval, on a log axis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from mlcompare.report.plots import _empty, _log, _png
from mlcompare.report.suite_comparison.table import FASTER, SLOWER, TIMES, SuiteComparison

if TYPE_CHECKING:
    from mlcompare.records import StoredSuite

_VERDICT_COLOURS = {FASTER: "#55a868", SLOWER: "#c44e52"}
_OTHER = "#7f7f7f"


def comparison_plot(comparison: SuiteComparison, fail_slower: float | None = None) -> bytes:
    """A panel per timed quantity both suites measured (fit; predict when its processes were
    kept): a point per shared case at B/A, its interval as a bar, coloured by verdict;
    the dashed line at 1 is 'as fast', the grey band the changes too small to call
    (--min-change), the dotted line the --fail-slower ratio."""
    from matplotlib.figure import Figure

    rows = comparison.rows
    panels = [(name, rows[rows[f"{name}_ratio"].notna()]) for name, _, _ in TIMES]
    panels = [(name, part) for name, part in panels if not part.empty] or [("fit", rows.iloc[0:0])]
    height = max(2.8, 0.34 * max(len(part) for _, part in panels) + 1.6)
    width = max(8.0, 4.5 + 0.06 * max((len(c) for c in rows["case"]), default=0))
    fig = Figure(figsize=(width, height * len(panels)), dpi=100, layout="constrained")
    axes = fig.subplots(len(panels), 1, squeeze=False).ravel()
    if rows.empty or panels[0][1].empty:
        return _empty(fig, axes[0], "no shared case ran in both suites")
    for ax, (name, part) in zip(axes, panels):
        _panel(ax, name, part, fail_slower, comparison.min_change)
    levels = rows[[f"{name}_level" for name, _, _ in TIMES]].stack().dropna()
    level = f"; bars: exact intervals, {levels.min() * 100:.3g} % or more" if not levels.empty else ""
    open_ = any(part[f"{name}_low"].isna().any() for name, part in panels)
    note = "; open circles: no interval (too few processes)" if open_ else ""
    fig.suptitle(f"B = {_short(comparison.b)} over A = {_short(comparison.a)}\n"
                 f"log scale, > 1 is slower{level}{note}", fontsize=10)
    return _png(fig)


def _panel(ax, name: str, part: pd.DataFrame, fail_slower: float | None, min_change: float) -> None:
    y = list(range(len(part)))[::-1]
    ratio = part[f"{name}_ratio"].to_numpy(dtype=float)
    low, high = part[f"{name}_low"].to_numpy(dtype=float), part[f"{name}_high"].to_numpy(dtype=float)
    colours = [_VERDICT_COLOURS.get(v, _OTHER) for v in part[f"{name}_verdict"]]
    has = ~(pd.isna(low) | pd.isna(high))
    for yi, r, lo, hi, ok, colour in zip(y, ratio, low, high, has, colours):
        if ok:
            ax.errorbar([r], [yi], xerr=[[max(r - lo, 0)], [max(hi - r, 0)]], fmt="o", color=colour, capsize=3, lw=1.2)
        else:
            ax.plot([r], [yi], "o", color=colour, mfc="none")
        ax.annotate(f"{r:.3g}×", (r, yi), xytext=(4, 5), textcoords="offset points", fontsize=7)
    ax.axvline(1.0, color="black", lw=1, ls="--")
    if min_change > 1:
        ax.axvspan(1 / min_change, min_change, color=_OTHER, alpha=0.15, lw=0)
    if fail_slower:
        ax.axvline(fail_slower, color=_VERDICT_COLOURS[SLOWER], lw=1, ls=":")
    values = [v for v in [*ratio, *low[has], *high[has], 1.0, fail_slower or 1.0] if not math.isnan(v)]
    _log(ax, x=True, y=False)
    ax.set_xlim(min(values) / 1.3, max(values) * 1.3)
    ax.set_yticks(y, list(part["case"]), fontsize=8)
    ax.set_ylim(-0.7, len(part) - 0.3)
    ax.set_xlabel(f"{name} time, B / A (×, log scale)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    handles = [_marker(c, v) for v, c in (*_VERDICT_COLOURS.items(), ("no change or untested", _OTHER))]
    ax.legend(handles=handles, fontsize=7, loc="best")


def _marker(colour: str, label: str):
    from matplotlib.lines import Line2D

    return Line2D([], [], marker="o", ls="", color=colour, label=label)


def _short(suite: StoredSuite) -> str:
    return f"{suite.run.params.get('suite_name', suite.run.name)} ({suite.run.run_id[:8]})"
