"""Phase timing, repeat statistics and peak memory.

GPU libraries return before their kernels finish; a timer stopped then measures the
launch, not the work. Every timed call on a GPU implementation therefore ends with
`device.synchronize()` inside the timed region.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any, Callable

import numpy as np
import psutil

from mlcompare import device

#: A `min_time_s` loop never runs more fits than this, however fast they are.
MAX_REPEATS = 1000


def timed(fn: Callable[[], Any], on_gpu: bool) -> tuple[Any, float]:
    """Run fn, wait for the device if on_gpu, and return (result, seconds)."""
    start = time.perf_counter()
    result = fn()
    if on_gpu:
        device.synchronize()
    return result, time.perf_counter() - start


def repeat(fn: Callable[[], Any], on_gpu: bool, repeats: int, min_time_s: float = 0.0) -> tuple[Any, list[float]]:
    """At least `repeats` timed calls, more until their total reaches `min_time_s`.

    Returns the last call's result and every call's seconds.
    """
    times: list[float] = []
    result = None
    while len(times) < repeats or (sum(times) < min_time_s and len(times) < MAX_REPEATS):
        result, seconds = timed(fn, on_gpu)
        times.append(seconds)
    return result, times


def summarise(times: list[float]) -> dict[str, float]:
    """Median (the headline figure), minimum, interquartile range and coefficient of variation."""
    q1, q3 = np.percentile(times, [25, 75])
    mean = statistics.fmean(times)
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "iqr": float(q3 - q1),
            "cv": statistics.stdev(times) / mean if len(times) > 1 and mean > 0 else 0.0}


def bootstrap_ratio_ci(numerator: list[float], denominator: list[float], confidence: float = 0.95,
                       resamples: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(numerator) / median(denominator).

    Both samples are resampled independently (the two implementations' repeats are not
    paired). With a handful of repeats the interval is coarse, and says so by its width.
    """
    rng = np.random.default_rng(seed)
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    num_medians = np.median(rng.choice(num, size=(resamples, num.size)), axis=1)
    den_medians = np.median(rng.choice(den, size=(resamples, den.size)), axis=1)
    ratios = num_medians / den_medians
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


class PeakMemory:
    """Peak growth of this process's resident memory (and of used GPU memory) in a block.

    A background thread samples every `interval_s`; growth is measured against the level
    when the block was entered, so it is what the block itself allocated. With `children`
    the resident memory of every descendant process counts too (a local Dask cluster's
    workers); listing them costs more, so those samples are ten times rarer.
    """

    def __init__(self, gpu: bool = False, interval_s: float = 0.005, children: bool = False) -> None:
        self.gpu = gpu
        self.children = children
        self.interval_s = interval_s * (10 if children else 1)
        self.host_mb = 0.0
        self.gpu_mb: float | None = None
        self.samples = 0  # taken so far (a sampler starved by a loaded machine takes few)
        self._process = psutil.Process()
        self._stop = threading.Event()

    def __enter__(self) -> "PeakMemory":
        self._host_start = self._host_peak = self._rss()
        if self.gpu:
            self._gpu_start = self._gpu_peak = device.gpu_memory_used()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._take()

    def _take(self) -> None:
        self.samples += 1
        self._host_peak = max(self._host_peak, self._rss())
        if self.gpu:
            self._gpu_peak = max(self._gpu_peak, device.gpu_memory_used())

    def _rss(self) -> int:
        total = self._process.memory_info().rss
        if self.children:
            for child in self._process.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:  # it ended between the listing and the reading
                    pass
        return total

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()
        self.host_mb = (self._host_peak - self._host_start) / 2**20
        if self.gpu:
            self.gpu_mb = (self._gpu_peak - self._gpu_start) / 2**20


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
