"""The suite's plots as PNG bytes, drawn with matplotlib's Agg renderer (no display needed).

Figures are built as `matplotlib.figure.Figure` objects, never through pyplot, so nothing
here touches matplotlib's global backend or state.

Each function takes the case frame of `mlcompare.report.results.case_frame` and returns PNG bytes.
A plot with nothing to show still renders, with a line saying why, so a suite always
carries the same set of files.
"""

from __future__ import annotations

import functools
import io
import math
from typing import Any, Callable, Iterator, cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report.breakeven import BreakEven
from mlcompare.report.results import group_label

_DEVICE_COLOURS = {"cpu": "#4c72b0", "gpu": "#55a868"}
_MARKERS = "osD^vP*Xh"
#: Line colours of implementations in one panel (matplotlib's default cycle).
_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def render_all(cases: pd.DataFrame, found: list[BreakEven]) -> dict[str, bytes]:
    """Every plot of `PLOTS`, keyed by its file name, in the order they are shown (drawn by
    two processes: see `forked`)."""
    from mlcompare.report.two_process_plots import in_two_processes

    return in_two_processes({name: functools.partial(draw, cases, found) for name, draw in PLOTS.items()})


def speedup(cases: pd.DataFrame) -> bytes:
    """Fit speed-up of every case against its baseline, on a log axis (1 = as fast)."""
    data = _ran(cases)
    data = data[~data["is_baseline"] & data["speedup_fit"].notna()]
    data = data.sort_values(["pairing", "dataset", "n_features", "n_samples", "implementation"])
    rows: Iterator[Any] = data[["pairing", "impl_label", "dataset_label", "sweep_shared", "suite_label"]].itertuples()
    labels = [f"{r.pairing} · {r.impl_label} · {group_label(r.dataset_label, r.sweep_shared)}" + _suite_tag(cases, r)
              for r in rows]
    # wider for long labels (sweep points), so the bars keep about four inches
    width = max(8.0, 4 + 0.065 * max(map(len, labels), default=0))
    fig, ax = _figure(width, max(2.5, 0.35 * len(data) + 1.3))
    if data.empty:
        return _empty(fig, ax, "no case to compare with a baseline ran")
    y = list(range(len(data)))[::-1]
    values = data["speedup_fit"].to_numpy()
    colours = [_DEVICE_COLOURS.get(d, "#8172b2") for d in data["device"]]
    ax.barh(y, values - 1.0, left=1.0, color=colours)  # bars grow from 1× (as fast) either way
    low, high = data["speedup_fit_ci_low"].to_numpy(), data["speedup_fit_ci_high"].to_numpy()
    has_ci = ~(pd.isna(low) | pd.isna(high))
    if has_ci.any():
        err = [[v - lo if ok else 0 for v, lo, ok in zip(values, low, has_ci)],
               [hi - v if ok else 0 for v, hi, ok in zip(values, high, has_ci)]]
        ax.errorbar(values, y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=1)
    ax.axvline(1.0, color="black", lw=1, ls="--")
    _log(ax, x=True, y=False)
    span = [min(values.min(), 1.0) / 1.3, max(values.max(), 1.0) * 1.5]
    if has_ci.any():
        span = [min(span[0], pd.Series(low).min() / 1.3), max(span[1], pd.Series(high).max() * 1.3)]
    ax.set_xlim(*span)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("fit speed-up against the baseline (×, log scale; > 1 is faster)")
    for yi, v in zip(y, values):
        ax.annotate(f"{v:.2g}×", (v, yi), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    handles = [_patch(c, d) for d, c in _DEVICE_COLOURS.items() if d in set(data["device"])]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    ax.set_title("Fit speed-up per case" + (" (bars: 95 % CI)" if has_ci.any() else ""))
    return _png(fig)


def time_vs_rows(cases: pd.DataFrame, found: list[BreakEven] | None = None) -> bytes:
    """Fit time against rows, one log-log panel per pairing, a line per implementation;
    dotted verticals mark break-even sizes."""
    data = _ran(cases)
    pairings = list(dict.fromkeys(data["pairing"]))
    fig, axes = _panels(len(pairings))
    if not pairings:
        return _empty(fig, axes[0], "no case ran")
    for ax, pairing in zip(axes, pairings):
        part = data[data["pairing"] == pairing]
        several = part.groupby(["dataset", "n_features"]).ngroups > 1
        for index, ((series, dataset, d), line) in enumerate(
                part.groupby(["series", "dataset", "n_features"], sort=False)):
            line = line.sort_values("training_rows")
            label = series + (f" · {dataset} ×{d}" if several else "")
            ax.plot(line["training_rows"].astype(float), line["fit_time_s"], marker=_MARKERS[index % len(_MARKERS)],
                    label=label, color=_colour(part, series), ls="--" if line["is_baseline"].iloc[0] else "-")
        for b in found or []:
            if b.pairing == pairing and b.suite_run_id in set(part["suite_run_id"]):
                ax.axvline(b.rows, color="#c44e52", ls=":", lw=1.2)
                ax.annotate(f"{group_label(b.impl_label, b.sweep_shared)} ≥ {_rows(b.rows)} rows", (b.rows, 1),
                            xycoords=("data", "axes fraction"),
                            xytext=(3, -12), textcoords="offset points", fontsize=7, color="#c44e52", rotation=90,
                            va="top", bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8})
        _log(ax, x=True, y=True)
        ax.set_title(pairing)
        ax.set_xlabel("training rows")
        ax.set_ylabel("fit time (s, median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Fit time against rows (log-log; dotted: break-even)")
    return _png(fig)


def quality_vs_time(cases: pd.DataFrame) -> bytes:
    """Main quality metric against fit time per pairing; filled markers are on the Pareto
    front of their dataset (no other implementation both faster and at least as good)."""
    data = _ran(cases)
    data = data[data["quality"].notna()].copy()
    pairings = list(dict.fromkeys(data["pairing"]))
    fig, axes = _panels(len(pairings))
    if not pairings:
        return _empty(fig, axes[0], "no quality metric recorded")
    data["pareto"] = False
    for _, group in data.groupby(["suite_run_id", "pairing", "dataset", "n_samples", "n_features", "sweep_shared"]):
        front = pareto_front(group["fit_time_s"].tolist(), group["quality"].tolist(),
                             bool(group["higher_is_better"].iloc[0]))
        data.loc[group.index, "pareto"] = front
    for ax, pairing in zip(axes, pairings):
        part = data[data["pairing"] == pairing]
        for index, (series, points) in enumerate(part.groupby("series", sort=False)):
            colour = _colour(part, series)
            marker = _MARKERS[index % len(_MARKERS)]
            on = points[points["pareto"]]
            off = points[~points["pareto"]]
            ax.scatter(on["fit_time_s"], on["quality"], color=colour, marker=marker, s=45, label=series)
            ax.scatter(off["fit_time_s"], off["quality"], facecolors="none", edgecolors=colour, marker=marker, s=45,
                       label=None if len(on) else series)
            for r in points[["dataset_label", "fit_time_s", "quality"]].itertuples():
                ax.annotate(r.dataset_label.split(" ", 1)[-1], (r.fit_time_s, r.quality), xytext=(4, 3),
                            textcoords="offset points", fontsize=6, color="#555555")
        _log(ax, x=True, y=False)
        ax.set_title(pairing)
        ax.set_xlabel("fit time (s, log scale)")
        metric = part["main_metric"].iloc[0]
        ax.set_ylabel(f"{metric} ({'higher' if part['higher_is_better'].iloc[0] else 'lower'} is better)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Quality against fit time (filled: on the Pareto front of its dataset)")
    return _png(fig)


def quality_vs_time_curves(cases: pd.DataFrame) -> bytes:
    """The equal-quality curves: a panel per pairing × dataset × size, one line per implementation
    along its ladder (fit time, log scale, against its main metric), the baseline's quality as a
    horizontal line and its fit time as a vertical one; where a line reaches the baseline's
    quality, a cross."""
    found = cases.attrs.get("curves") or []
    panels: dict[tuple[str, str, str], list] = {}
    for curve in found:
        panels.setdefault((curve.suite, curve.pairing, curve.group), []).append(curve)
    fig, axes = _panels(len(panels))
    if not panels:
        return _empty(fig, axes[0], "no equal-quality ladder ran (equal_quality: true in the experiment)")
    for ax, ((suite, pairing, group), part) in zip(axes, panels.items()):
        base = part[0]
        ax.axhline(base.baseline_point.quality, color="black", lw=1, ls="--", label=f"{base.baseline} (reference)")
        reached = [c.target for c in part if c.target is not None]
        if reached:  # within the pairing's parity tolerance of the baseline's quality counts as reached
            ax.axhspan(min(reached + [base.baseline_point.quality]), base.baseline_point.quality, color="black",
                       alpha=0.07, lw=0)
        ax.axvline(base.baseline_point.time_s, color="black", lw=1, ls=":")
        for index, curve in enumerate(part):
            colour = _PALETTE[index % len(_PALETTE)]
            points = sorted(curve.points, key=lambda p: p.budget)
            ax.plot([p.time_s for p in points], [p.quality for p in points], marker=_MARKERS[index % len(_MARKERS)],
                    color=colour, lw=1.2, label=f"{curve.implementation}: {curve.speedup:.3g}×" if curve.speedup
                    else f"{curve.implementation}: does not reach")
            for p in points:
                ax.annotate(f"{p.budget:g}", (p.time_s, p.quality), xytext=(3, 3), textcoords="offset points",
                            fontsize=6, color=colour)
            if curve.reached_s:
                ax.plot([curve.reached_s], [curve.target], "x", color=colour, ms=9, mew=2)
        _log(ax, x=True, y=False)
        ax.set_title(f"{pairing} · {group}", fontsize=9)
        ax.set_xlabel("fit time (s, log scale)")
        ax.set_ylabel(f"{base.metric}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Quality against fit time along each ladder of {found[0].budget} (dashed: the baseline's quality, "
                 "grey: within its tolerance;\ndotted: the baseline's fit time; ×: where a curve reaches it)",
                 fontsize=10)
    return _png(fig)


def cold_vs_warm(cases: pd.DataFrame) -> bytes:
    """First fit in a fresh process against the median warm fit; above the diagonal is start-up cost."""
    data = _ran(cases)
    data = data[data["fit_cold_time_s"].notna()]
    fig, ax = _figure(7, 5.5)
    if data.empty:
        return _empty(fig, ax, "no case ran")
    pairings = list(dict.fromkeys(data["pairing"]))
    for key, points in data.groupby(["series", "pairing"], sort=False):
        series, pairing = cast(tuple[str, str], key)
        ax.scatter(points["fit_time_s"], points["fit_cold_time_s"], color=_colour(data, series),
                   marker=_MARKERS[pairings.index(pairing) % len(_MARKERS)], s=40, label=f"{pairing} · {series}")
    low = min(data["fit_time_s"].min(), data["fit_cold_time_s"].min()) * 0.7
    high = max(data["fit_time_s"].max(), data["fit_cold_time_s"].max()) * 1.4
    ax.plot([low, high], [low, high], color="black", lw=1, ls="--")
    _log(ax, x=True, y=True)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("warm fit (s, median of repeats)")
    ax.set_ylabel("cold fit (s, first in the process)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Cold against warm fit (dashed: equal)")
    return _png(fig)


def time_vs_workers(cases: pd.DataFrame) -> bytes:
    """Fit time against Dask workers: a panel per `worker_panels`, a line per distributed
    implementation (bars: the interval of the median from the repeats), the panel's other
    implementations as dashed horizontal references."""
    panels = worker_panels(cases)
    fig, axes = _panels(len(panels))
    if not panels:
        return _empty(fig, axes[0], "no case logged dask_workers: no distributed implementation ran")
    for ax, (title, part) in zip(axes, panels):
        _workers_panel(ax, part)
        ax.set_title(title, fontsize=9)
    fig.suptitle("Fit time against Dask workers (log-log; dashed: not distributed)")
    return _png(fig)


def worker_panels(cases: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, cases that ran) per suite × pairing × dataset × shared sweep point, where
    a case logged `dask_workers`."""
    data = _ran(cases)
    several = data["suite_run_id"].nunique() > 1
    panels = []
    for key, part in data.groupby(["suite_label", "pairing", "dataset_label", "sweep_shared"], sort=False):
        suite, pairing, dataset, shared = cast(tuple[str, str, str, str], key)
        if part["dask_workers"].notna().any():
            where = f" · {suite.split(' ', 1)[0]}" if several else ""
            panels.append((f"{pairing} · {group_label(dataset, shared)}{where}", part))
    return panels


def _workers_panel(ax, part: pd.DataFrame) -> None:
    distributed = part[part["dask_workers"].notna()]
    colours, first = _fit_time_lines(ax, distributed, "dask_workers")
    references = part[part["dask_workers"].isna()]
    for index, r in enumerate(references.itertuples(), start=first):
        ax.axhline(r.fit_time_s, color=colours(index % 10), ls="--", lw=1.2, label=f"{r.impl_label} (not distributed)")
    _counts_axis(ax, sorted({int(w) for w in distributed["dask_workers"]}), "Dask workers")


def _fit_time_lines(ax, swept: pd.DataFrame, column: str):
    """A line of median fit time (with its interval) against `column` per implementation; the
    colour map and the index of the next colour, for the reference lines drawn after them."""
    import matplotlib

    colours = matplotlib.colormaps["tab10"]
    lines = list(swept.groupby("implementation", sort=False))
    for index, (impl, line) in enumerate(lines):
        line = line.sort_values(column, kind="stable")
        x = line[column].astype(float).to_numpy()
        y = line["fit_time_s"].to_numpy(dtype=float)
        ax.plot(x, y, marker=_MARKERS[index % len(_MARKERS)], color=colours(index % 10), label=impl)
        low, high = line["fit_ci_low_s"].to_numpy(dtype=float), line["fit_ci_high_s"].to_numpy(dtype=float)
        has = ~(pd.isna(low) | pd.isna(high))
        if has.any():
            err = [(y[has] - low[has]).clip(min=0), (high[has] - y[has]).clip(min=0)]
            ax.errorbar(x[has], y[has], yerr=err, fmt="none", ecolor=colours(index % 10), capsize=3, lw=1)
    return colours, len(lines)


def _counts_axis(ax, counts: list[int], what: str) -> None:
    """A log2 x axis ticked at the counts swept (workers, threads) and a log fit-time y axis."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [str(c) for c in counts])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(counts[0] / 1.5, counts[-1] * 1.5)
    _log(ax, x=False, y=True)
    ax.set_xlabel(f"{what} (log2 scale)")
    ax.set_ylabel("fit time (s, median; bars: CI)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def latency_vs_batch(cases: pd.DataFrame) -> bytes:
    """Predict latency against rows per call, a log-log panel per comparison group that logged
    it: a line per implementation (solid: median, dashed: p99 where logged); a dotted vertical
    marks the batch size from which an implementation answers faster than the baseline."""
    from mlcompare.report import latency_crossings

    data = latency_crossings.with_latency(_ran(cases))
    several = data["suite_run_id"].nunique() > 1
    groups = list(data.groupby(["suite_run_id", "pairing", "dataset_label", "sweep_shared"], sort=False))
    fig, axes = _panels(len(groups))
    if not groups:
        return _empty(fig, axes[0], "no case logged predict latency by batch size (predict_batch_sizes)")
    found = latency_crossings.crossings(data)
    r: Any  # a row: its columns as attributes (pandas-stubs type them all as any scalar)
    for ax, (key, part) in zip(axes, groups):
        suite, pairing, dataset, shared = cast(tuple[str, str, str, str], key)
        for index, r in enumerate(part.itertuples()):
            colour = _colour(part, r.series)
            median, tail = latency_crossings.curve(r.latency, "p50"), latency_crossings.curve(r.latency, "p99")
            ax.plot(list(median), list(median.values()), marker=_MARKERS[index % len(_MARKERS)], color=colour,
                    label=f"{r.series} ({r.device})" + (" · baseline" if r.is_baseline else ""))
            if tail:
                ax.plot(list(tail), list(tail.values()), color=colour, ls="--", lw=1, alpha=0.8)
        for c in found:
            if (c.suite_run_id, c.pairing, c.group) == (suite, pairing, group_label(dataset, shared)):
                ax.axvline(c.batch, color="#c44e52", ls=":", lw=1.2)
                ax.annotate(f"{c.impl_label} faster ≥ {c.batch:,.0f} rows", (c.batch, 1),
                            xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points",
                            fontsize=7, color="#c44e52", rotation=90, va="top",
                            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8})
        _log(ax, x=True, y=True)
        where = f" · {part['suite_label'].iloc[0].split(' ', 1)[0]}" if several else ""
        ax.set_title(f"{pairing} · {group_label(dataset, shared)}{where}", fontsize=9)
        ax.set_xlabel("rows per predict call (batch size)")
        ax.set_ylabel("latency per call (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Predict latency against batch size (log-log)\nsolid: median, dashed: p99, dotted: where one "
                 "answers faster than the baseline", fontsize=10)
    return _png(fig)


def time_vs_threads(cases: pd.DataFrame) -> bytes:
    """Fit time against CPU threads (a thread sweep): a panel per suite × pairing × dataset ×
    size × shared point, a line per CPU implementation, the cases not swept (GPU ones, the
    baseline at the experiment's threads) as dashed horizontal references; a diamond on the
    baseline's curve where it would match a reference (`threadcurve`)."""
    from mlcompare.report.threadcurve import GROUP, group_worth

    data = _ran(cases)
    several = data["suite_run_id"].nunique() > 1
    panels = []
    for _, part in data.groupby(GROUP, sort=False, dropna=False):
        if part["threads_swept"].notna().any():
            first = part.iloc[0]
            where = f" · {first['suite_label'].split(' ', 1)[0]}" if several else ""
            panels.append((f"{first['pairing']} · {group_label(first['dataset_label'], first['sweep_shared'])}{where}",
                           part))
    fig, axes = _panels(len(panels))
    if not panels:
        return _empty(fig, axes[0], "no thread sweep ran (threads: [1, 2, 4, ...] in the experiment)")
    for ax, (title, part) in zip(axes, panels):
        _threads_panel(ax, part, [w for w in group_worth(part) if w.relation == "="])
        ax.set_title(title, fontsize=9)
    fig.suptitle("Fit time against CPU threads\n(log-log; dashed: not swept; ◆: where the baseline matches one)",
                 fontsize=10)
    return _png(fig)


def _threads_panel(ax, part: pd.DataFrame, worth: list) -> None:
    swept = part[part["threads_swept"].notna()]
    colours, first = _fit_time_lines(ax, swept, "threads_swept")
    references = part[part["threads_swept"].isna()]
    r: Any  # a row: its columns as attributes (pandas-stubs type them all as any scalar)
    for index, r in enumerate(references.itertuples(), start=first):
        threads = f", {r.threads} threads" if not pd.isna(r.threads) else ""
        ax.axhline(r.fit_time_s, color=colours(index % 10), ls="--", lw=1.2,
                   label=f"{r.impl_label} ({r.device}{threads})")
    for w in worth:
        if w.impl_label in set(references["impl_label"]):
            ax.plot([w.threads], [w.fit_time_s], marker="D", color="black", ms=5)
            ax.annotate(f"{w.threads:.2g}", (w.threads, w.fit_time_s), xytext=(4, 4), textcoords="offset points",
                        fontsize=7)
    _counts_axis(ax, sorted({int(t) for t in swept["threads_swept"]}), "CPU threads")


def pareto_front(times: list[float], qualities: list[float], higher_is_better: bool = True) -> list[bool]:
    """For each point, whether no other point is at least as fast and as good, and better in one."""
    sign = 1 if higher_is_better else -1
    front = []
    for i, (t, q) in enumerate(zip(times, qualities)):
        dominated = any(t2 <= t and sign * q2 >= sign * q and (t2 < t or sign * q2 > sign * q)
                        for j, (t2, q2) in enumerate(zip(times, qualities)) if j != i)
        front.append(not dominated)
    return front


# --- helpers -------------------------------------------------------------------------

def _ran(cases: pd.DataFrame) -> pd.DataFrame:
    """The cases that ran, each with its `series`: implementation, sweep point and (among several) suite."""
    data = cases[(cases["status"] == Status.OK) & cases["fit_time_s"].notna()].copy()
    several = cases["suite_run_id"].nunique() > 1
    # itertuples of only the columns used: of the whole (wide) case frame it costs ~30 ms a call
    data["series"] = [_series(r, several) for r in data[["impl_label", "sweep_shared", "suite_label"]].itertuples()]
    return data


def _series(row: Any, several_suites: bool) -> str:
    label = group_label(row.impl_label, row.sweep_shared)
    return f"{label} · {row.suite_label.split(' ', 1)[0]}" if several_suites else label


def _suite_tag(cases: pd.DataFrame, row: Any) -> str:
    return f" · {row.suite_label.split(' ', 1)[0]}" if cases["suite_run_id"].nunique() > 1 else ""


def _log(ax, x: bool, y: bool) -> None:
    """Log scale labelled with plain numbers (0.3, 2, 1e+04) instead of 3×10⁻¹."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def __call__(self, value: float, pos: int | None = None) -> str:
            return f"{value:g}" if super().__call__(value, pos) else ""

    for wanted, axis, scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if wanted:
            scale("log")
            axis.set_major_formatter(Plain(labelOnlyBase=False))
            axis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def _colour(part: pd.DataFrame, series: str) -> tuple[float, float, float, float]:
    import matplotlib

    names = list(dict.fromkeys(part["series"]))
    return matplotlib.colormaps["tab10"](names.index(series) % 10)


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def _panels(count: int):
    from matplotlib.figure import Figure

    count = max(count, 1)
    cols = min(count, 2)
    rows = math.ceil(count / cols)
    fig = Figure(figsize=(6 * cols, 4.2 * rows), dpi=100, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for extra in axes[count:]:
        extra.set_visible(False)
    return fig, axes[:count]


def _empty(fig, ax, why: str) -> bytes:
    ax.set_axis_off()
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes)
    return _png(fig)


def _patch(colour: str, label: str):
    from matplotlib.patches import Patch

    return Patch(color=colour, label=label)


def _rows(n: float) -> str:
    from mlcompare.data.cache import human_count

    return human_count(int(round(n)))


def _png(fig) -> bytes:
    """Rendered by Agg directly: no pyplot, no global backend, no display."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buffer)
    return buffer.getvalue()


#: The suite's plots: file name under the parent run's `plots/` folder -> how it is drawn
#: from the case frame and the break-evens. Adding a plot is one entry here.
PLOTS: dict[str, Callable[[pd.DataFrame, list[BreakEven]], bytes]] = {
    "speedup.png": lambda cases, found: speedup(cases),
    "time_vs_rows.png": time_vs_rows,
    "quality_vs_time.png": lambda cases, found: quality_vs_time(cases),
    "quality_vs_time_curves.png": lambda cases, found: quality_vs_time_curves(cases),
    "cold_vs_warm.png": lambda cases, found: cold_vs_warm(cases),
    "time_vs_workers.png": lambda cases, found: time_vs_workers(cases),
    "latency_vs_batch.png": lambda cases, found: latency_vs_batch(cases),
    "time_vs_threads.png": lambda cases, found: time_vs_threads(cases),
}
NAMES = tuple(PLOTS)
