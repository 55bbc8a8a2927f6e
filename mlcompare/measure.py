"""Phase timing: wall clock around a call, ended by a device synchronisation.

GPU libraries return before their kernels finish; a timer stopped then measures the
launch, not the work. Every timed call on a GPU implementation therefore ends with
`device.synchronize()` inside the timed region.
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any, Callable

from mlcompare import device


def timed(fn: Callable[[], Any], on_gpu: bool) -> tuple[Any, float]:
    """Run fn, wait for the device if on_gpu, and return (result, seconds)."""
    start = time.perf_counter()
    result = fn()
    if on_gpu:
        device.synchronize()
    return result, time.perf_counter() - start


def summarise(times: list[float]) -> dict[str, float]:
    """Median (the headline figure), minimum and spread of repeated timings."""
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
