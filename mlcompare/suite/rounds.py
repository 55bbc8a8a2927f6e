"""Several rounds of a case pooled into one record, and whether its timings can be trusted.

A round is one run of a case in a fresh process. With `rounds: N`, every case of a
comparison group runs N times, the group's cases in a new shuffled order each round, so
that neither the order (baseline always first) nor one process's luck (its memory layout,
its CPU, a neighbour's burst) decides the comparison. The rounds' repeats are pooled:
the medians and their intervals are taken over all of them, and the spread of the rounds'
own medians is logged beside them (`fit_time_rounds_cv`).
"""

from __future__ import annotations

import statistics

from mlcompare.measure.case import timing_metrics
from mlcompare.records import CaseRecord, Status

#: Above this coefficient of variation of the warm fits (or of the rounds' medians) a
#: case's timing is flagged as noisy.
NOISY_CV = 0.10
#: Metrics a round measures once (not from repeats): their median over the rounds.
_ONCE = ("fit_cold_time_s", "predict_cold_time_s", "transfer_time_s", "load_time_s", "device_init_time_s",
         "fit_energy_j", "fit_power_w")
#: Metrics where the worst round counts.
_WORST = ("fit_peak_host_memory_mb", "fit_peak_gpu_memory_mb", "peak_host_memory_mb",
          "load_avg_1m_at_start", "cpu_steal_pct_at_start")


def pool_rounds(records: list[CaseRecord]) -> CaseRecord:
    """One record from a case's rounds: the first that did not run fine if any, else the
    first round's with every repeat of every round pooled."""
    bad = next((r for r in records if r["status"] != Status.OK), None)
    if bad is not None:
        if len(records) > 1 and bad["status"] == Status.FAILED:
            bad["error"] = f"{bad.get('error', '')} (round {records.index(bad) + 1} of {len(records)})"
        return bad
    pooled: CaseRecord = dict(records[0])  # quality and everything measured once: as the first round saw it
    if len(records) == 1:
        pooled["rounds"] = 1
        return pooled
    for key in ("fit_times", "fit_host_times", "predict_times"):
        pooled[key] = [t for r in records for t in r.get(key) or []]
    metrics = dict(records[0]["metrics"])
    for name in _ONCE:
        values = [r["metrics"][name] for r in records if name in r["metrics"]]
        if values:
            metrics[name] = statistics.median(values)
    for name in _WORST:
        values = [r["metrics"][name] for r in records if name in r["metrics"]]
        if values:
            metrics[name] = max(values)
    metrics |= timing_metrics(pooled["fit_times"], pooled["fit_host_times"], pooled["predict_times"],
                              metrics["transfer_time_s"])
    medians = [statistics.median(r["fit_times"]) for r in records]
    metrics["fit_time_rounds_cv"] = statistics.stdev(medians) / statistics.fmean(medians)
    pooled["metrics"] = metrics
    pooled["rounds"] = len(records)
    pooled["model_time_s"] = sum(r.get("model_time_s", 0.0) for r in records)
    return pooled


def stability(record: CaseRecord, cpus: int) -> str:
    """`stable`, or `noisy: <why>`: the warm fits vary by more than NOISY_CV, the rounds'
    medians do, or the machine's load when the case started exceeded its CPUs."""
    m = record["metrics"]
    why = []
    if m.get("fit_time_cv", 0.0) > NOISY_CV:
        why.append(f"fit-time CV {m['fit_time_cv']:.3f} > {NOISY_CV:.2f}")  # 3 digits: 0.104 > 0.10, never 0.10 > 0.10
    if m.get("fit_time_rounds_cv", 0.0) > NOISY_CV:
        why.append(f"CV of the rounds' medians {m['fit_time_rounds_cv']:.3f} > {NOISY_CV:.2f}")
    if m.get("load_avg_1m_at_start", 0.0) > cpus:
        why.append(f"load {m['load_avg_1m_at_start']:.1f} at start > {cpus} CPUs")
    return "noisy: " + "; ".join(why) if why else "stable"
