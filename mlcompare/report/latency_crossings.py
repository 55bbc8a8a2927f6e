"""Predict latency by batch size: where an implementation starts to answer faster than the baseline.

Within one comparison group (suite × pairing × dataset × size × shared sweep point), the
baseline's and an implementation's median latencies (p50) are curves over the batch sizes
measured. The crossing is found as for break-even rows (`breakeven.crossing`: piecewise
linear on log-log axes): the batch size after which the implementation stays faster up to
the largest batch measured. None when it is faster at every size, slower at the largest,
or fewer than two sizes were measured by both. This is where a GPU starts to win online
inference; between two CPU implementations it is the same question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report.breakeven import crossing
from mlcompare.report.results import group_label, impl_label


@dataclass(frozen=True)
class LatencyCrossing:
    suite_run_id: str
    pairing: str
    implementation: str
    sweep_own: str
    baseline: str
    group: str  # the dataset label and shared sweep point
    batch: float  # rows per call from which the implementation answers faster
    metric: str  # the parent-run metric name

    @property
    def impl_label(self) -> str:
        return impl_label(self.implementation, self.sweep_own)


def with_latency(cases: pd.DataFrame) -> pd.DataFrame:
    """The cases that ran and logged predict latency by batch size."""
    if cases.empty:
        return cases
    return cases[(cases["status"] == Status.OK) & cases["latency"].map(bool)]


def curve(latency: dict[int, dict[str, float]], percentile: str = "p50") -> dict[int, float]:
    """{batch size: milliseconds} at one percentile, where it was logged."""
    return {n: values[percentile] for n, values in latency.items() if percentile in values}


def crossings(cases: pd.DataFrame) -> list[LatencyCrossing]:
    """Every implementation's latency crossing with its baseline, per comparison group."""
    found: list[LatencyCrossing] = []
    data = with_latency(cases)
    keys = ["suite_run_id", "pairing", "dataset_label", "sweep_shared"]
    for key, group in data.groupby(keys, sort=False):
        suite, pairing, dataset, shared = cast(tuple[str, str, str, str], key)
        base_rows = group[group["is_baseline"]]
        if base_rows.empty:
            continue
        base = curve(cast(dict[int, dict[str, float]], base_rows.iloc[0]["latency"]))
        label = group_label(dataset, shared)
        r: Any  # a row: its columns as attributes (pandas-stubs type them all as any scalar)
        for r in group[~group["is_baseline"]].itertuples():
            mine = curve(r.latency)
            sizes = sorted(set(base) & set(mine))
            batch = crossing([float(n) for n in sizes], [base[n] for n in sizes], [mine[n] for n in sizes])
            if batch is None:
                continue
            name = f"latency_crossing_batch.{pairing}.{r.implementation}.{label}"
            if r.sweep_own:
                name += f".{r.sweep_own}"
            found.append(LatencyCrossing(suite, pairing, r.implementation, r.sweep_own, r.baseline, label, batch,
                                         re.sub(r"[^\w.\-]+", "_", name).strip("_")))
    return found


def as_metrics(found: list[LatencyCrossing]) -> dict[str, float]:
    """The parent-run metrics of one suite's latency crossings (rows per call, rounded)."""
    return {c.metric: float(round(c.batch)) for c in found}


def crossing_lines(found: list[LatencyCrossing], pairing: str) -> list[str]:
    return [f"predict latency: {c.impl_label} answers faster than {c.baseline} from batches of about "
            f"{round(c.batch):,} rows on {c.group} (median latency)" for c in found if c.pairing == pairing]
