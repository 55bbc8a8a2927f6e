"""Break-even size: the training-row count from which an implementation fits faster than the baseline.

Within one suite, for each pairing, each dataset swept over sizes (same generator and
feature count) and each shared sweep point, the baseline's and an implementation's (at
each of its own sweep points) fit times are curves over the sizes. On log-log
axes each is taken as piecewise linear between measured sizes, so their gap
`log(t_impl / t_base)` is linear on each segment and the crossing is found exactly there.

The break-even is the crossing after which the implementation stays faster up to the
largest size measured. There is none (and nothing is reported) when the implementation is
faster at every size, slower at the largest size, or fewer than two sizes ran.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report.results import impl_label


@dataclass(frozen=True)
class BreakEven:
    suite_run_id: str
    pairing: str
    implementation: str
    baseline: str
    dataset: str
    n_features: int
    rows: float
    metric: str  # the parent-run metric name
    sweep_shared: str = ""  # the shared sweep point of its comparison group
    sweep_own: str = ""  # the implementation's own sweep point

    @property
    def impl_label(self) -> str:
        return impl_label(self.implementation, self.sweep_own)


def crossing(sizes: list[float], base_times: list[float], impl_times: list[float]) -> float | None:
    """Rows at which `impl` starts beating `base` for good, interpolated on log-log; None if no such point."""
    points = sorted(zip(sizes, base_times, impl_times))
    if len(points) < 2:
        return None
    gaps = [math.log(t_impl / t_base) for _, t_base, t_impl in points]  # > 0: impl is slower
    if gaps[-1] > 0:
        return None
    slower = [i for i, gap in enumerate(gaps) if gap > 0]
    if not slower:
        return None
    i = slower[-1]
    x0, x1 = math.log(points[i][0]), math.log(points[i + 1][0])
    fraction = gaps[i] / (gaps[i] - gaps[i + 1])
    return math.exp(x0 + fraction * (x1 - x0))


def break_evens(cases: pd.DataFrame) -> list[BreakEven]:
    """Every break-even in a case frame (see `mlcompare.report.results.case_frame`).

    Named `break_even_rows.<pairing>.<impl>`; when one pairing was swept over several
    datasets in a suite, `.<dataset>_<n>f` is added so the names stay apart, and at a
    sweep point (shared and own) the point, as `.max_depth_4_max_bin_64`.
    """
    ok = cases[(cases["status"] == Status.OK) & cases["fit_time_s"].notna()]
    keys = ["suite_run_id", "pairing", "dataset", "n_features", "sweep_shared"]
    sizes_per_group = ok.groupby(keys, sort=False)["training_rows"].nunique()
    swept = sizes_per_group[sizes_per_group > 1].reset_index()
    datasets_per_pairing = (swept.drop_duplicates(["suite_run_id", "pairing", "dataset", "n_features"])
                            .groupby(["suite_run_id", "pairing"]).size())
    found: list[BreakEven] = []
    for key, group in ok.groupby(keys, sort=False):
        suite, pairing, dataset, n_features, shared = cast(tuple[str, str, str, int, str], key)
        base = group[group["is_baseline"]].set_index("training_rows")["fit_time_s"]
        baseline = group["baseline"].iloc[0]
        for impl_key, rows in group[~group["is_baseline"]].groupby(["implementation", "sweep_own"], sort=False):
            impl, own = cast(tuple[str, str], impl_key)
            times = rows.set_index("training_rows")["fit_time_s"]
            sizes = sorted(set(times.index) & set(base.index))
            point = crossing([float(n) for n in sizes], [base[n] for n in sizes], [times[n] for n in sizes])
            if point is None:
                continue
            metric = f"break_even_rows.{pairing}.{impl}"
            if datasets_per_pairing.get((suite, pairing), 0) > 1:
                metric += f".{dataset}_{n_features}f"
            sweep = ", ".join(label for label in (shared, own) if label)
            if sweep:
                metric += "." + re.sub(r"[^\w.\-]+", "_", sweep).strip("_")
            found.append(BreakEven(suite, pairing, impl, baseline, dataset, int(n_features), point, metric,
                                   shared, own))
    return found


def as_metrics(found: list[BreakEven]) -> dict[str, float]:
    """The parent-run metrics of one suite's break-evens (whole rows)."""
    return {b.metric: float(round(b.rows)) for b in found}
