"""A case against its baseline: speed-ups with their intervals, cost ratio, quality delta, agreement, parity."""

from __future__ import annotations

import numpy as np

from mlcompare.config.experiment import Case
from mlcompare.measure import quality, stats
from mlcompare.records import CaseRecord
from mlcompare.suite.cost import cost_ratio


def compare(case: Case, record: CaseRecord, baseline: CaseRecord) -> dict[str, float]:
    """The case against its baseline: speed-ups (with a bootstrap CI) and quality parity.

    A baseline reused by --resume brings its metrics but no repeats or predictions: the
    interval and the agreement then need a rerun of the baseline and are left out.
    """
    m, b = record["metrics"], baseline["metrics"]
    out = {"speedup_fit": b["fit_time_s"] / m["fit_time_s"],
           "speedup_fit_host_input": b["fit_host_input_time_s"] / m["fit_host_input_time_s"],
           "speedup_end_to_end": b["end_to_end_time_s"] / m["end_to_end_time_s"]}
    out.update(cost_ratio(record, baseline))
    metric = case.pairing.main_metric
    if record is baseline:
        out |= {"quality_delta": 0.0, "prediction_agreement": 1.0}
    else:
        if baseline.get("fit_times") and record.get("fit_times"):
            out["speedup_fit_ci_low"], out["speedup_fit_ci_high"] = stats.bootstrap_ratio_ci(
                baseline["fit_times"], record["fit_times"])
        out["quality_delta"] = quality.quality_delta(metric, m[metric], b[metric])
        if record.get("predictions_path") and baseline.get("predictions_path"):
            out["prediction_agreement"] = quality.prediction_agreement(
                case.pairing.task, np.load(record["predictions_path"]), np.load(baseline["predictions_path"]))
    record["parity"] = quality.parity(metric, out["quality_delta"], case.pairing.parity_tolerance)
    return out
