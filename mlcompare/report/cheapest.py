"""Which implementation gives the answer for the least money, per pairing and dataset size.

From the cost metrics the suite logged (`mlcompare.suite.case_cost`: measured times at the
experiment's `cost_per_hour`). Only implementations that ran and were priced take part;
an implementation whose quality fell behind the baseline's (`parity` degraded) is still
named when it is cheapest, and the line says so.
"""

from __future__ import annotations

from typing import cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report.results import group_label


def priced(cases: pd.DataFrame) -> pd.DataFrame:
    """The cases that ran and have a fit cost."""
    if cases.empty:
        return cases
    return cases[(cases["status"] == Status.OK) & cases["fit_cost_usd"].notna()]


def cheapest_lines(cases: pd.DataFrame) -> list[str]:
    """One line per comparison group with at least two priced implementations."""
    lines = []
    several = cases["suite_run_id"].nunique() > 1
    keys = ["suite_label", "pairing", "dataset_label", "sweep_shared"]
    for key, group in priced(cases).groupby(keys, sort=False):
        suite, pairing, dataset, shared = cast(tuple[str, str, str, str], key)  # text columns
        if len(group) < 2:
            continue
        where = group_label(dataset, shared) + (f", {suite}" if several else "")
        # pandas-stubs: .loc's overloads take no Hashable, the label type idxmin returns
        fit = group.loc[group["fit_cost_usd"].idxmin()]  # type: ignore[call-overload]
        text = f"cheapest on {where}: fit {fit['impl_label']} (${fit['fit_cost_usd']:.3g} a fit"
        if not fit["is_baseline"] and not pd.isna(fit["fit_cost_ratio"]):
            text += f", {fit['fit_cost_ratio']:.3g}× {fit['baseline']}'s cost"
        text += ")" + (" but its quality is degraded" if fit["parity"] == "degraded" else "")
        predicting = group[group["predict_cost_usd_per_1k_rows"].notna()]
        if len(predicting) >= 2:
            # pandas-stubs: .loc's overloads take no Hashable, the label type idxmin returns
            best = predicting.loc[predicting["predict_cost_usd_per_1k_rows"].idxmin()]  # type: ignore[call-overload]
            text += (f"; predict {best['impl_label']} (${best['predict_cost_usd_per_1k_rows']:.3g} per 1,000 "
                     "rows)")
        lines.append(text)
    return lines


def ratio_text(value: float) -> str:
    return "" if value is None or pd.isna(value) else f"{value:.3g}×"
