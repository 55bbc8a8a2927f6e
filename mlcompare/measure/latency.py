"""Predict latency by batch size: what one online-inference call costs at N rows.

For each batch size N the first N rows of the test split are predicted again and again by
the fitted model: one untimed call first (warm-up), then timed calls until the time
budget for that size is spent (at least `MIN_CALLS`, at most `MAX_CALLS`, and at least
`P99_MIN_CALLS` whenever that many calls at the median latency fit in the budget). Each call
starts from the batch in host memory (numpy) and ends with the predictions in host memory
as numpy, so a GPU implementation pays its copies both ways, as a service answering
requests would. The same call (predict, or transform for decomposition) as the task's
timed predict is used.

Percentiles are nearest-rank: p50 (p99) is the smallest latency that at least 50 % (99 %)
of the calls did not exceed. A nearest-rank p99 of n calls falls below the true p99 often
(of 100 calls, 26 % of the time): so a p99 is logged only with its upper bound
`predict_latency_p99_upper_ms_b<N>`, the smallest order statistic that is at or above the
true p99 with probability `..._upper_level_b<N>` ≥ 95 % (1 − P(Binomial(n, 0.99) ≥ k)),
which needs at least `P99_MIN_CALLS` = 299 calls (then it is the slowest call). Every round
measures its calls and the suite pools them (`metrics_from_calls`): with several processes
the calls are a stratified sample of the processes, for which the bound is, if anything,
conservative. `predict_latency_calls_b<N>` says how many calls each size had.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mlcompare.measure import device, timing

#: Seconds of timed calls per batch size, unless the experiment says otherwise.
DEFAULT_BUDGET_S = 1.0
#: Calls per batch size, whatever the budget: enough for a median; a bound on fast calls.
MIN_CALLS, MAX_CALLS = 5, 10_000
#: The fewest calls whose slowest bounds the true 99th percentile at 95 % (1 − 0.99^299 = 0.9504):
#: below, no p99 is logged.
P99_MIN_CALLS = 299
#: The level the p99's upper bound is asked for.
P99_LEVEL = 0.95
#: The task outputs that have a predict-like call to time.
CALLS = {"predict": "predict", "transform": "transform"}


@dataclass
class LatencyResult:
    metrics: dict[str, float] = field(default_factory=dict)
    note: str = ""  # batch sizes left out, and why
    seconds: float = 0.0  # spent in the model's calls, timed or not
    calls: dict[int, list[float]] = field(default_factory=dict)  # every timed call's seconds, by batch size

    def record(self) -> dict[str, str]:
        return {"latency_note": self.note} if self.note else {}


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile: the smallest value that at least p % of `values` do not exceed."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def percentile_upper_bound(values: list[float], p: float = 99.0,
                           level: float = P99_LEVEL) -> tuple[float, float] | None:
    """(x(k), its level): the smallest order statistic that is at or above the true p-th percentile
    with probability at least `level` for independent calls (P(Binomial(n, p/100) < k) ≥ level);
    None when even the slowest call is not enough."""
    from scipy.stats import binom

    ordered = sorted(values)
    n, q = len(ordered), p / 100
    for k in range(max(1, math.ceil(q * n)), n + 1):
        covered = float(binom.cdf(k - 1, n, q))  # P(fewer than k calls below the true percentile)
        if covered >= level:
            return ordered[k - 1], covered
    return None


def metrics_from_calls(calls: dict[int, list[float]]) -> dict[str, float]:
    """The latency metrics of every batch size from its timed calls (one round's, or all rounds' pooled)."""
    out: dict[str, float] = {}
    for n, times in sorted(calls.items()):
        out[f"predict_latency_p50_ms_b{n}"] = percentile(times, 50) * 1e3
        bound = percentile_upper_bound(times)
        if bound is not None:
            out[f"predict_latency_p99_ms_b{n}"] = percentile(times, 99) * 1e3
            out[f"predict_latency_p99_upper_ms_b{n}"] = bound[0] * 1e3
            out[f"predict_latency_p99_upper_level_b{n}"] = bound[1]
        out[f"predict_latency_calls_b{n}"] = float(len(times))
    return out


def time_calls(call: Callable[[], Any], on_gpu: bool, budget_s: float) -> list[float]:
    """One untimed warm-up call, then timed calls: until `budget_s` of them (at least MIN_CALLS, at
    most MAX_CALLS), and on to P99_MIN_CALLS when that many calls at the median latency so far fit
    in the budget, so a few slow calls cannot rob a fast batch of its p99."""
    call()
    times: list[float] = []
    while len(times) < MAX_CALLS:
        if len(times) >= MIN_CALLS and sum(times) >= budget_s:
            if len(times) >= P99_MIN_CALLS or percentile(times, 50) * P99_MIN_CALLS > budget_s:
                break
        times.append(timing.timed(call, on_gpu)[1])
    return times


def measure(model: Any, output: str, X_test: np.ndarray, sizes: list[int], device_input: bool, on_gpu: bool,
            budget_s: float = DEFAULT_BUDGET_S) -> LatencyResult:
    """`predict_latency_p50_ms_b<N>`, `..._p99_ms_b<N>` with its upper bound and level, and
    `predict_latency_calls_b<N>` for each size N; the calls themselves in `calls`.

    `device_input`: the model was trained on device arrays, so each call copies its batch to
    the device (inside the timer) before predicting.
    """
    if output not in CALLS:
        return LatencyResult(note=f"not measured: this task has no {' or '.join(CALLS)} call")
    method = getattr(model, CALLS[output])
    result = LatencyResult()
    too_big = [n for n in sizes if n > len(X_test)]
    started = time.perf_counter()
    for n in sorted(set(sizes) - set(too_big)):
        batch = np.ascontiguousarray(X_test[:n])
        if device_input:
            call = lambda b=batch: device.to_host(method(device.to_device(b)))  # noqa: E731
        else:
            call = lambda b=batch: device.to_host(method(b))  # noqa: E731
        result.calls[n] = time_calls(call, on_gpu, budget_s)
    result.metrics = metrics_from_calls(result.calls)
    result.seconds = time.perf_counter() - started
    if too_big:
        result.note = (f"batch sizes {', '.join(map(str, sorted(too_big)))} not measured: larger than the "
                       f"{len(X_test)}-row test split")
    return result
