"""Phase timing: one timed call, and repeated calls.

GPU libraries return before their kernels finish; a timer stopped then measures the
launch, not the work. Every timed call on a GPU implementation therefore ends with
`device.synchronize()` inside the timed region.

Garbage collection is off inside every timed call, as `timeit` does: a collection that
happens to fall in one repeat (of garbage another phase left) would be charged to that
repeat's fit. It is switched back on between calls.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any, Callable

from mlcompare.measure import device

#: A `min_time_s` loop never runs more calls than this, however fast they are.
MAX_REPEATS = 1000


def timed(fn: Callable[[], Any], on_gpu: bool) -> tuple[Any, float]:
    """Run fn with the garbage collector off, wait for the device if on_gpu, and return (result, seconds)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        if on_gpu:
            device.synchronize()
        return result, time.perf_counter() - start
    finally:
        if collecting:
            gc.enable()


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


#: The phase names `mark` writes: the first fit has started / it has ended.
FIRST_FIT, AFTER_FIRST_FIT = "first_fit", "after_first_fit"


def mark(path: str | None, phase: str) -> None:
    """Note outside any timer that a phase starts now (wall clock), for whoever must stop this
    process: a suite that times a case out learns from it how long its first fit had run."""
    if path:
        with open(Path(path), "a", encoding="utf-8") as f:
            f.write(f"{phase} {time.time():.6f}\n")
