"""The advice's two plots, as PNG bytes (matplotlib's Agg, no pyplot, as `report.plots` draws).

- `time_vs_rows.png`: per pairing, each implementation's median fit time at every step of the
  ladder (bars: the interval of the median), its power-law fit (solid over the sizes it was
  fitted to, dashed beyond, with the prediction interval shaded there), the table's size and
  the extrapolation's marked, break-even sizes dotted.
- `speedup_vs_rows.png`: per pairing, each implementation's speed-up over the baseline along
  the rows by the two fits (shaded: the interval of the predicted ratio), the speed-ups
  measured at each step as points with their intervals, 1× dashed.
"""

from __future__ import annotations

import numpy as np

from mlcompare.data.cache import human_count
from mlcompare.report import scaling
from mlcompare.report.advice import HERE, Advice, Pairing
from mlcompare.report.plots import _PALETTE, _empty, _log, _panels, _png


def _span(advice: Advice, pairing: Pairing) -> tuple[float, float]:
    sizes = [n for i in pairing.implementations for n, _, _ in i.points] or [advice.table.rows]
    return min(sizes) / 1.3, max(advice.table.rows, advice.extrapolate_rows or 0, max(sizes)) * 1.3


def _marks(ax, advice: Advice) -> None:
    ax.axvline(advice.table.rows, color="black", lw=1.2)
    ax.annotate(f"your table: {human_count(advice.table.rows)} rows", (advice.table.rows, 0.02),
                xycoords=("data", "axes fraction"), rotation=90, fontsize=7, xytext=(-9, 0),
                textcoords="offset points")
    if advice.extrapolate_rows:
        ax.axvline(advice.extrapolate_rows, color="#777777", lw=1, ls="-.")
        ax.annotate(f"predicted: {human_count(advice.extrapolate_rows)}", (advice.extrapolate_rows, 0.02),
                    xycoords=("data", "axes fraction"), rotation=90, fontsize=7, xytext=(-9, 0),
                    textcoords="offset points", color="#555555")


def _time_range(pairing: Pairing, top: float) -> tuple[float, float]:
    """The y range: the times measured and predicted, not the widest of the bands (which may span
    decades: the text gives their bounds)."""
    values = [t for i in pairing.implementations for _, t, _ in i.points]
    values += [i.law.predict(top) for i in pairing.implementations if i.law is not None]
    return min(values) / 4, max(values) * 6


def time_vs_rows(advice: Advice) -> bytes:
    fig, axes = _panels(len(advice.pairings))
    if not advice.pairings:
        return _empty(fig, axes[0], "no pairing was measured")
    for ax, pairing in zip(axes, advice.pairings):
        low, high = _span(advice, pairing)
        drawn = False
        for index, impl in enumerate(pairing.implementations):
            if not impl.points:
                continue
            drawn = True
            colour = _PALETTE[index % len(_PALETTE)]
            rows = np.array([n for n, _, _ in impl.points], dtype=float)
            times = np.array([t for _, t, _ in impl.points])
            runs = [pairing.runs.get(r) for _, _, r in impl.points]
            lo = np.array([r.metrics.get("fit_time_ci_low_s", t) if r else t for r, t in zip(runs, times)])
            hi = np.array([r.metrics.get("fit_time_ci_high_s", t) if r else t for r, t in zip(runs, times)])
            marker = "o" if impl.origin == HERE else "s"
            ax.errorbar(rows, times, yerr=[np.clip(times - lo, 0, None), np.clip(hi - times, 0, None)], fmt=marker,
                        color=colour, mfc=colour if impl.origin == HERE else "none", capsize=3, lw=1,
                        label=impl.label + (" (baseline)" if impl.baseline else ""))
            law = impl.law
            if law is None:
                continue
            fitted = np.geomspace(min(law.sizes), max(law.sizes), 50)
            ax.plot(fitted, [law.predict(n) for n in fitted], color=colour, lw=1.4)
            beyond = np.geomspace(max(law.sizes), high / 1.3, 50)
            if law.has_interval and beyond[-1] > beyond[0]:
                ax.plot(beyond, [law.predict(n) for n in beyond], color=colour, lw=1.2, ls="--")
                bands = [law.interval(n) for n in beyond]
                ax.fill_between(beyond, [b[0] for b in bands if b], [b[1] for b in bands if b], color=colour,
                                alpha=0.12, lw=0)
        for cross in pairing.crossings:
            ax.axvline(cross.crossing.rows, color="#c44e52", ls=":", lw=1.2)
            ax.annotate(f"{cross.first} = {cross.second}" + (" (predicted)" if cross.predicted else ""),
                        (cross.crossing.rows, 0.98), xycoords=("data", "axes fraction"), rotation=90, va="top",
                        fontsize=7, color="#c44e52", xytext=(3, 0), textcoords="offset points")
        if not drawn:
            _empty(fig, ax, f"{pairing.name}: nothing measured")
            continue
        _marks(ax, advice)
        _log(ax, x=True, y=True)
        ax.set_xlim(low, high)
        ax.set_ylim(*_time_range(pairing, high / 1.3))
        ax.set_title(f"{pairing.name} (baseline {pairing.baseline})", fontsize=9)
        ax.set_xlabel("rows of the table")
        ax.set_ylabel("fit time (s; median, bars: its interval)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Fit time against rows: measured (points), power-law fit (solid), predicted beyond "
                 f"(dashed, {scaling.LEVEL * 100:.3g} % band)", fontsize=10)
    return _png(fig)


def speedup_vs_rows(advice: Advice) -> bytes:
    panels = [p for p in advice.pairings if p.of(p.baseline) is not None and len(p.implementations) > 1]
    fig, axes = _panels(len(panels))
    if not panels:
        return _empty(fig, axes[0], "no pairing has a baseline and another implementation measured")
    for ax, pairing in zip(axes, panels):
        base = pairing.of(pairing.baseline)
        assert base is not None
        low, high = _span(advice, pairing)
        for index, impl in enumerate(pairing.implementations):
            if impl.baseline or impl.origin != HERE:
                continue
            colour = _PALETTE[index % len(_PALETTE)]
            points = [(n, pairing.runs[r]) for n, _, r in impl.points if "speedup_fit" in pairing.runs[r].metrics]
            if points:
                rows = np.array([n for n, _ in points], dtype=float)
                values = np.array([r.metrics["speedup_fit"] for _, r in points])
                lo = np.array([r.metrics.get("speedup_fit_ci_low", v) for (_, r), v in zip(points, values)])
                hi = np.array([r.metrics.get("speedup_fit_ci_high", v) for (_, r), v in zip(points, values)])
                ax.errorbar(rows, values, yerr=[np.clip(values - lo, 0, None), np.clip(hi - values, 0, None)],
                            fmt="o", color=colour, capsize=3, lw=1, label=f"{impl.name} (measured)")
            if impl.law is None or base.law is None:
                continue
            grid = np.geomspace(max(min(impl.law.sizes), min(base.law.sizes)), high / 1.3, 80)
            ax.plot(grid, [base.law.predict(n) / impl.law.predict(n) for n in grid], color=colour, lw=1.3,
                    label=f"{impl.name} (fits)")
            bands = [scaling.ratio_interval(base.law, impl.law, n) for n in grid]
            if all(bands):
                ax.fill_between(grid, [b[0] for b in bands if b], [b[1] for b in bands if b], color=colour,
                                alpha=0.12, lw=0)
        ax.axhline(1.0, color="black", lw=1, ls="--")
        _marks(ax, advice)
        _log(ax, x=True, y=True)
        ax.set_xlim(low, high)
        ax.set_title(f"{pairing.name}: speed-up over {pairing.baseline}", fontsize=9)
        ax.set_xlabel("rows of the table")
        ax.set_ylabel("baseline's fit time / this one's (×)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Speed-up along the rows (shaded: {scaling.LEVEL * 100:.3g} % interval of the fits' ratio; "
                 "where it crosses 1× is the break-even)", fontsize=10)
    return _png(fig)


def render(advice: Advice) -> dict[str, bytes]:
    """Both plots, by file name under the advice run's `plots/`."""
    return {"time_vs_rows.png": time_vs_rows(advice), "speedup_vs_rows.png": speedup_vs_rows(advice)}


__all__ = ["render", "speedup_vs_rows", "time_vs_rows"]
