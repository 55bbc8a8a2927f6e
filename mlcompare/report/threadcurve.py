"""How many threads of the baseline another implementation is worth, from a thread sweep.

With `threads: [1, 2, 4, 8]` the baseline implementation runs at each count (besides its
one case at the experiment's threads), so its fit time is a curve over threads. For every
other case of the same comparison group (a GPU implementation, or another CPU library at
one of its own thread counts) the question a GPU buyer asks is answered on that curve:
at how many threads would the baseline fit as fast? The curve is taken as straight lines
between measured counts on log-log axes, walked from the fewest threads, and the first
crossing of the other case's fit time is the answer. When the baseline is already as fast
at its fewest threads, the answer is "at most that many"; when it never gets as fast, "more
than the most it was measured with" (no number is made up beyond the measured range).

Threads are what mlcompare controls (`n_jobs` and the native pools); they are cores as
long as the sweep stays within the machine's physical cores.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from mlcompare.records import Status
from mlcompare.report.results import group_label

#: Comparison group of a thread curve: one suite, pairing, dataset, size and shared point.
GROUP = ["suite_run_id", "pairing", "dataset", "n_samples", "n_features", "sweep_shared"]


@dataclass(frozen=True)
class ThreadsWorth:
    """`impl_label` fits as fast as `baseline` with `threads` threads (or at most / more than `threads`)."""

    suite_run_id: str
    pairing: str
    dataset_label: str
    sweep_shared: str
    baseline: str
    impl_label: str
    fit_time_s: float
    threads: float
    relation: str  # "=": interpolated; "<=": the baseline is as fast at its fewest threads; ">": never as fast
    metric: str  # the parent-run metric name (logged only for "=")

    def text(self) -> str:
        where = group_label(self.dataset_label, self.sweep_shared)
        if self.relation == "=":
            worth = f"as fast as {self.baseline} with {self.threads:.3g} threads"
        elif self.relation == "<=":
            worth = f"no faster than {self.baseline} with {self.threads:g} thread{'s' if self.threads != 1 else ''}"
        else:
            worth = f"faster than {self.baseline} with any thread count measured (up to {self.threads:g})"
        return f"{self.pairing} · {self.impl_label} on {where}: fit {self.fit_time_s:.3g} s, {worth}"


def equivalent_threads(threads: list[float], times: list[float], time: float) -> tuple[float, str]:
    """(threads, relation) at which the curve (threads → fit time) first reaches `time`, on log-log axes."""
    points = sorted(zip(threads, times))
    if points[0][1] <= time:
        return points[0][0], "<="
    for (t0, y0), (t1, y1) in zip(points, points[1:]):
        if y1 <= time:  # crossed between t0 (slower than `time`) and t1
            fraction = (math.log(y0) - math.log(time)) / (math.log(y0) - math.log(y1))
            return math.exp(math.log(t0) + fraction * (math.log(t1) - math.log(t0))), "="
    return points[-1][0], ">"


def threads_worth(cases: pd.DataFrame) -> list[ThreadsWorth]:
    """Every other case against its group's baseline thread curve (at least two counts that ran)."""
    ok = cases[(cases["status"] == Status.OK) & cases["fit_time_s"].notna()]
    return [w for _, group in ok.groupby(GROUP, sort=False, dropna=False) for w in group_worth(group)]


def group_worth(group: pd.DataFrame) -> list[ThreadsWorth]:
    """One comparison group's cases that ran (`GROUP`) against its baseline's thread curve."""
    baseline = group["baseline"].iloc[0]
    curve = group[(group["implementation"] == baseline) & group["threads_swept"].notna()]
    if curve["threads_swept"].nunique() < 2:
        return []
    xs = curve["threads_swept"].astype(float).tolist()
    ys = curve["fit_time_s"].tolist()
    return [ThreadsWorth(r.suite_run_id, r.pairing, r.dataset_label, r.sweep_shared, baseline, r.impl_label,
                         r.fit_time_s, *equivalent_threads(xs, ys, r.fit_time_s), _metric(r))
            for r in group[group["implementation"] != baseline].itertuples()]


def _metric(r) -> str:
    name = f"threads_equivalent.{r.pairing}.{r.implementation}.{r.dataset}_{r.n_samples}x{r.n_features}"
    sweep = ", ".join(label for label in (r.sweep_shared, r.sweep_own) if label)
    if sweep:
        name += "." + re.sub(r"[^\w.\-]+", "_", sweep).strip("_")
    return name


def as_metrics(found: list[ThreadsWorth]) -> dict[str, float]:
    """The parent-run metrics: interpolated thread counts only (a bound is a line of text, not a number)."""
    return {w.metric: w.threads for w in found if w.relation == "="}
