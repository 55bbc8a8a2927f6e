"""A case's processes summarised into one record, and whether its timings can be trusted.

A round is one run of a case in a fresh process, and the process is the unit of noise: its
memory layout, hash seeds, CPU frequency and neighbours are drawn once for all its repeats.
With `rounds: N` every case runs in N processes, spread over the whole suite (round 1 of
every case, then round 2, each round in a new shuffled order), so that neither the order
(baseline always first) nor one moment of the machine decides a comparison.

Each process gives one summary: the median of its repeats. The headline times are the
median of those summaries, and every interval is taken over them (one value per process),
never over the repeats pooled as if they were independent. A case in one process has a
range of repeats and no level (`interval_note` says so). The repeats themselves are kept
(metric history), and the spread of the processes' summaries is logged
(`fit_time_rounds_cv`) beside the spread inside them (`fit_time_cv`).
"""

from __future__ import annotations

import statistics
from typing import Literal

from mlcompare.measure import latency
from mlcompare.measure.stats import interval_metrics, summarise
from mlcompare.records import CaseRecord, Status

#: Above this coefficient of variation of the warm fits (or of the rounds' medians) a
#: case's timing is flagged as noisy.
NOISY_CV = 0.10
#: Metrics a round measures once (not from repeats): their median over the rounds.
_ONCE = ("fit_cold_time_s", "predict_cold_time_s", "transfer_time_s", "load_time_s", "device_init_time_s",
         "fit_energy_gpu_board_j", "fit_power_gpu_board_w", "fit_energy_cpu_packages_dram_j",
         "fit_power_cpu_packages_dram_w")
#: Metrics where the worst round counts.
_WORST = ("fit_peak_host_memory_mb", "fit_peak_gpu_memory_mb", "peak_host_memory_mb",
          "load_avg_1m_at_start", "cpu_steal_pct_at_start", "cpu_others_cores_during_timed")
#: Calls per value (`timing.repeat`'s loops): the fewest any process used, so that a case
#: one of whose processes timed its calls alone never says it was timed in loops.
_LEAST = ("fit_loops", "predict_loops")
#: What the case's first process decided for the others (`suite.plan`): as its last process had it.
_LAST = ("fit_warmups", "predict_warmups")
#: Above this many CPUs' worth of time taken by other processes during a case's timed calls
#: (on average), the case is flagged noisy: something else ran beside it.
NOISY_OTHERS_CORES = 0.25
#: Record keys of a process's repeats, and of their per-process summaries.
_RepeatsKey = Literal["fit_times", "fit_host_times", "predict_times"]
_ProcessKey = Literal["fit_process_times", "fit_host_process_times", "predict_process_times"]
_REPEATS: tuple[_RepeatsKey, ...] = ("fit_times", "fit_host_times", "predict_times")
#: Per-process summaries a record carries: (record key, the repeats it summarises).
PROCESS_SERIES: dict[_ProcessKey, _RepeatsKey] = {
    "fit_process_times": "fit_times", "fit_host_process_times": "fit_host_times",
    "predict_process_times": "predict_times"}
#: Record keys of the processes' first calls, by call.
COLD_SERIES: dict[str, Literal["fit_cold_process_times", "predict_cold_process_times"]] = {
    "fit": "fit_cold_process_times", "predict": "predict_cold_process_times"}
#: What a case in one process says instead of an interval's level.
ONE_PROCESS_NOTE = ("one process: no interval across runs (its repeats share one process's luck); "
                    "rounds: 2 or more give one")


def pool_rounds(records: list[CaseRecord]) -> CaseRecord:
    """One record from a case's rounds: the first that did not run fine if any, else the
    first round's, its times and intervals taken over one summary per process."""
    bad = next((r for r in records if r["status"] != Status.OK), None)
    if bad is not None:
        if len(records) > 1 and bad["status"] == Status.FAILED:
            bad["error"] = f"{bad.get('error', '')} (round {records.index(bad) + 1} of {len(records)})"
        return bad
    # quality and everything measured once: as the first round saw it (the one that describes the
    # case: `plan.process_spec`)
    pooled: CaseRecord = records[0].copy()
    for key in _REPEATS:
        pooled[key] = [t for r in records for t in r.get(key) or []]
    for series, repeats in PROCESS_SERIES.items():
        pooled[series] = [statistics.median(r[repeats]) for r in records if r.get(repeats)]
    metrics = dict(records[0]["metrics"])
    if len(records) > 1:
        for name in _ONCE:
            values = [r["metrics"][name] for r in records if name in r["metrics"]]
            if values:
                metrics[name] = statistics.median(values)
        for name in _WORST:
            values = [r["metrics"][name] for r in records if name in r["metrics"]]
            if values:
                metrics[name] = max(values)
        for name in _LEAST:
            values = [r["metrics"][name] for r in records if name in r["metrics"]]
            if values:
                metrics[name] = min(values)
        for name in _LAST:
            if name in records[-1]["metrics"]:
                metrics[name] = records[-1]["metrics"][name]
    pooled["end_to_end_process_times"] = [_end_to_end(r) for r in records]
    metrics |= process_metrics(pooled, records)
    # each process's first call is a measurement of its own (JIT, caches, first touch): every
    # process's value kept, with its interval over them as for the warm ones
    for call, cold_key in COLD_SERIES.items():
        colds = [r["metrics"][f"{call}_cold_time_s"] for r in records if f"{call}_cold_time_s" in r["metrics"]]
        if colds:
            pooled[cold_key] = colds
            metrics |= interval_metrics(f"{call}_cold_time", colds)
    if len(records) > 1 and all(r.get("latency_calls") for r in records):  # every round's calls, pooled
        calls = {int(n): [t for r in records for t in r["latency_calls"].get(n, [])]
                 for n in records[0]["latency_calls"]}
        metrics |= latency.metrics_from_calls(calls)
    pooled["metrics"] = metrics
    pooled["rounds"] = len(records)
    if len(records) == 1:
        pooled["interval_note"] = ONE_PROCESS_NOTE
    pooled["model_time_s"] = sum(r.get("model_time_s", 0.0) for r in records)
    pooled["reported_time_s"] = sum(r.get("reported_time_s", 0.0) for r in records)
    return pooled


def _end_to_end(record: CaseRecord) -> float:
    """One process's end-to-end time, as the case's own: load, transfer, median fit, median predict."""
    m = record["metrics"]
    predict = statistics.median(record["predict_times"]) if record.get("predict_times") else 0.0
    return m.get("load_time_s", 0.0) + m.get("transfer_time_s", 0.0) + statistics.median(record["fit_times"]) + predict


def process_metrics(pooled: CaseRecord, records: list[CaseRecord]) -> dict[str, float]:
    """The timing metrics of a case from its processes: medians of the per-process summaries,
    intervals over them (none for one process), the spreads inside and between processes."""
    fit, host, predict = (pooled[k] for k in PROCESS_SERIES)
    inside = summarise(pooled["fit_times"])
    out = {"fit_time_s": statistics.median(fit), "fit_time_min_s": inside["min"], "fit_time_iqr_s": inside["iqr"],
           "fit_time_cv": _inside_cv(records, "fit_times"), "fit_repeats": len(pooled["fit_times"]),
           "fit_processes": len(fit), "fit_host_input_time_s": statistics.median(host),
           "end_to_end_time_s": statistics.median(pooled["end_to_end_process_times"]),
           **interval_metrics("fit_time", fit)}
    if predict:
        out |= {"predict_time_s": statistics.median(predict), "predict_time_cv": _inside_cv(records, "predict_times"),
                "predict_repeats": len(pooled["predict_times"]), **interval_metrics("predict_time", predict)}
    if len(fit) > 1:
        out["fit_time_rounds_cv"] = statistics.stdev(fit) / statistics.fmean(fit)
    return out


def _inside_cv(records: list[CaseRecord], key: _RepeatsKey) -> float:
    """The coefficient of variation inside the processes: the spread of each repeat over its own
    process's mean (for one process, its repeats' stdev over their mean); between processes
    is `fit_time_rounds_cv`."""
    scaled = [t / statistics.fmean(r[key]) for r in records if r.get(key) for t in r[key]]
    return statistics.stdev(scaled) if len(scaled) > 1 else 0.0


def stability(record: CaseRecord, cpus: int) -> str:
    """`stable`, or `noisy: <why>`: the warm fits vary by more than NOISY_CV, the rounds'
    medians do, or other processes took more than NOISY_OTHERS_CORES of the CPUs while the
    case's timed calls ran (in its worst round). The load average at the start is logged but
    not judged: it lags by a minute and counts the suite's own processes."""
    m = record["metrics"]
    why = []
    if m.get("fit_time_cv", 0.0) > NOISY_CV:
        why.append(f"fit-time CV {m['fit_time_cv']:.3f} > {NOISY_CV:.2f}")  # 3 digits: 0.104 > 0.10, never 0.10 > 0.10
    if m.get("fit_time_rounds_cv", 0.0) > NOISY_CV:
        why.append(f"CV of the rounds' medians {m['fit_time_rounds_cv']:.3f} > {NOISY_CV:.2f}")
    if m.get("cpu_others_cores_during_timed", 0.0) > NOISY_OTHERS_CORES:
        why.append(f"other processes took {m['cpu_others_cores_during_timed']:.2f} of {cpus} CPUs during the "
                   f"timed calls (> {NOISY_OTHERS_CORES})")
    return "noisy: " + "; ".join(why) if why else "stable"
