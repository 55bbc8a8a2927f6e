"""A case against its baseline: speed-ups with their intervals, cost ratio, quality delta, agreement,
parity, and the differences found between what the two estimators actually used."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from mlcompare.config.experiment import Case
from mlcompare.measure import stats
from mlcompare.pairings import quality
from mlcompare.records import CaseRecord
from mlcompare.suite.case_cost import cost_ratio

#: Fitted counts (metrics) compared between an implementation and its baseline.
FITTED = ("fit_iterations", "fit_trees")


def compare(case: Case, record: CaseRecord, baseline: CaseRecord) -> dict[str, float]:
    """The case against its baseline: speed-ups (with an interval of the fit speed-up and the
    level it really has), quality delta and parity; fills `record["found_differences"]`.

    The intervals are over one summary per process of each side (none below two processes
    a side). A baseline reused by --resume brings its metrics but no processes or
    predictions: the intervals and the agreement then need a rerun of it and are left out.
    """
    m, b = record["metrics"], baseline["metrics"]
    out = {"speedup_fit": b["fit_time_s"] / m["fit_time_s"],
           "speedup_fit_host_input": b["fit_host_input_time_s"] / m["fit_host_input_time_s"],
           "speedup_end_to_end": b["end_to_end_time_s"] / m["end_to_end_time_s"]}
    if "predict_time_s" in m and "predict_time_s" in b:
        out["speedup_predict"] = b["predict_time_s"] / m["predict_time_s"]
    out.update(cost_ratio(record, baseline))
    metric = case.pairing.main_metric
    if record is baseline:
        out |= {"quality_delta": 0.0, "prediction_agreement": 1.0}
    else:
        # one summary per process on each side: repeats inside one process are not independent
        series: Literal["fit_process_times", "end_to_end_process_times"]
        for name, series in (("speedup_fit", "fit_process_times"), ("speedup_end_to_end", "end_to_end_process_times")):
            found = stats.ratio_interval(baseline.get(series) or [], record.get(series) or [])
            if found is not None:
                out |= {f"{name}_ci_low": found.low, f"{name}_ci_high": found.high, f"{name}_ci_level": found.level}
        out["quality_delta"] = quality.quality_delta(metric, m[metric], b[metric])
        if record.get("predictions_path") and baseline.get("predictions_path"):
            out["prediction_agreement"] = quality.prediction_agreement(
                case.pairing.task, np.load(record["predictions_path"]), np.load(baseline["predictions_path"]))
        record["found_differences"] = found_differences(case, record, baseline)
    record["parity"] = quality.parity(metric, out["quality_delta"], case.pairing.parity_tolerance)
    return out


def found_differences(case: Case, record: CaseRecord, baseline: CaseRecord) -> list[str]:
    """Where the two estimators' effective values of a shared parameter differ (each under
    its own name), where the pairing's audited defaults differ as the fitted models report
    them (`audit:`), and where they did different work (iterations, trees), in words."""
    pairing, impl = case.pairing, case.implementation
    base_impl = pairing.implementations[pairing.baseline]
    mine, theirs = record.get("effective_params") or {}, baseline.get("effective_params") or {}
    out = []
    for key in pairing.params:
        own, base = impl.rename.get(key, key), base_impl.rename.get(key, key)
        if own is None or base is None or own not in mine or base not in theirs:
            continue
        if not _same(mine[own], theirs[base]):
            names = own if own == base else f"{base} / {own}"
            out.append(f"{key} ({names}): {pairing.baseline} used {theirs[base]}, {impl.name} used {mine[own]}")
    # the defaults that decide the work and the model, as each fitted model reports them
    keys, base_keys = pairing.audit_keys(impl), pairing.audit_keys(base_impl)
    seen, known = record.get("audited") or {}, baseline.get("audited") or {}
    for concept in pairing.audit:
        if concept in seen and concept in known and not _same(seen[concept], known[concept]):
            out.append(f"{concept} ({base_keys[concept]} / {keys[concept]}, as the fitted models report them): "
                       f"{pairing.baseline} {known[concept]}, {impl.name} {seen[concept]}")
    for name in FITTED:
        a, b = baseline["metrics"].get(name), record["metrics"].get(name)
        if a is not None and b is not None and a != b:
            out.append(f"{name.removeprefix('fit_')}: {pairing.baseline} {a:g}, {impl.name} {b:g}")
    return out


def _same(a: str, b: str) -> bool:
    """Equal as text, or as numbers up to float32 rounding (XGBoost keeps 0.1 as 0.100000001)."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-12)


def lower_bound(record: CaseRecord, baseline: CaseRecord) -> dict[str, float]:
    """The case against a baseline its time limit stopped in its first fit.

    That fit had run `first_fit_unfinished_s` seconds: the baseline needs at least that for
    one fit, so its fit speed-up is at least that over this case's median warm fit (taking a
    warm fit of the baseline to be no faster than its first, as for CPU libraries).
    """
    at_least = baseline["first_fit_unfinished_s"]
    return {"baseline_fit_at_least_s": at_least, "speedup_fit_lower_bound": at_least / record["metrics"]["fit_time_s"]}
