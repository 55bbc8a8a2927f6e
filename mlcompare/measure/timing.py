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
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mlcompare.measure import device

#: A `min_time_s` loop never runs more values than this, however fast they are.
MAX_REPEATS = 1000
#: A call shorter than this is not timed alone: the clock's own jitter, a page fault or a
#: timer interrupt are then a sizeable part of it. Each value is instead the mean of a loop
#: of calls lasting at least LOOP_VALUE_S, as `timeit` and pyperf do.
SHORT_CALL_S = 0.005
LOOP_VALUE_S = 0.05
#: A loop never has more calls than this.
MAX_LOOPS = 1000
#: A first call between SHORT_CALL_S and this may be one slow call of a fast function (a page
#: fault, a timer interrupt, the process's first warm call): up to two more calls decide.
RECHECK_BELOW_S = 0.05
#: A process's fit values take at least this many times what the process spends around its
#: model calls (its start, data read, scoring and end, as the suite measured them): several
#: values where a fit is short, one where it is long. Not a kept warm-up: more values would
#: only hide its cost in a larger share, each process's figure hardly steadier for them (the
#: spread between processes decides). The per-process median stays the unit of every interval.
VALUES_OVER_FIXED = 1.5
#: What a first call starts may outlast it. In a process forked from the warm worker no native
#: pool has threads yet: the first call that asks for OpenBLAS's starts them, and they spin
#: 2**28 cycles (about 0.1 s here) before they sleep, beside whatever comes next (scikit-learn's
#: k-means does so as it ends, restoring the pool's size it had lowered: its next fits, on
#: OpenMP's threads, then share the cores with two spinning ones and take twice as long). A
#: process that keeps its first call apart can keep warming up until this long after it
#: (`settle`); a case's first process times values past it to see whether that is needed
#: (`repeat(calibrate_until=...)`, `suite.plan`).
SETTLE_S = 0.15
#: Values past SETTLE_S are taken to calibrate, until they alone are a process's worth, while one
#: lasts less than this: the window then holds a few values, each a small part of a process's figure.
CALIBRATE_BELOW_S = 0.25
#: A longer call, up to this, still calibrates, by count: one value starts in the window (the
#: first after the first fit) and LONG_CALIBRATION_VALUES after it. Such a process's figure is one
#: or two values, so a second fit that pays for what the first left (scikit-learn's
#: LinearRegression on 375k×64: the heap grown anew after the first fit's large frees raised
#: glibc's mmap threshold, 7-17 % slower than the third) would be the figure. Longer calls would
#: pay seconds for it in the first process and are left alone.
CALIBRATE_LONG_BELOW_S = 1.0
LONG_CALIBRATION_VALUES = 2
#: A first call within this fraction of the next calls' median is no warm-up: it is a value.
#: Above it the first call differs (JIT, caches, thread pools, first-touch pages) and every
#: process spends it apart (`suite.plan`). An undetected difference below it biases a one-value
#: process by at most this much, less than the processes of this machine differ between
#: themselves. A long call's second fit is checked (above) only in a process whose first call
#: differed so: what makes a second fit slow is what the first one left.
WARMUP_TOLERANCE = 0.03


def long_call(value_s: float, loops: float = 1) -> bool:
    """Whether a value (a loop's mean where `loops` > 1) is a call of CALIBRATE_BELOW_S or more: its
    process's figure is then one value or two, and the second fit is calibrated by count."""
    return value_s * loops >= CALIBRATE_BELOW_S


def values_time_s(min_time_s: float, around_s: float) -> float:
    """How long a process's fit values should add up to: the experiment's `min_time_s`, or
    VALUES_OVER_FIXED × the seconds the process spends around its model calls, whichever is longer."""
    return max(min_time_s, VALUES_OVER_FIXED * around_s)


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


@dataclass
class Repeated:
    """Repeated timed calls: the last call's result, each value's seconds per call, and how
    many calls each value is the mean of (1: every call timed alone)."""

    result: Any
    times: list[float]
    loops: int = 1
    calibration_s: float = 0.0  # the calls that chose `loops` and are left out of the values
    #: the first value is a call made before (`repeat(first=...)`: a process's cold fit, when the
    #: first call was found not to differ from the others)
    first_given: bool = False
    #: when each value's timer started (`time.perf_counter`; NaN for a given first call)
    starts: list[float] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Every call the values are made of."""
        return len(self.times) * self.loops

    @property
    def spent_s(self) -> float:
        """Every second the calls made here took, the calibration calls included (a given first
        call is the caller's)."""
        given = self.times[0] if self.first_given else 0.0
        return sum(self.times) * self.loops + self.calibration_s - given


def loops_for(seconds: float) -> int:
    """How many calls one value is made of, for a call that took `seconds`."""
    if seconds >= SHORT_CALL_S:
        return 1
    return min(MAX_LOOPS, max(2, math.ceil(LOOP_VALUE_S / max(seconds, 1e-9))))


def timed_loop(fn: Callable[[], Any], on_gpu: bool, loops: int) -> tuple[Any, float]:
    """`loops` calls in one timed block (garbage collector off, the device waited for once at
    its end) and the seconds per call."""
    if loops == 1:
        return timed(fn, on_gpu)

    def block() -> Any:
        result = None
        for _ in range(loops):
            result = fn()
        return result

    result, seconds = timed(block, on_gpu)
    return result, seconds / loops


def repeat(fn: Callable[[], Any], on_gpu: bool, repeats: int, min_time_s: float = 0.0,
           loops: int | None = None, first: tuple[Any, float] | None = None,
           calibrate_until: float | None = None, first_call_s: float | None = None) -> Repeated:
    """At least `repeats` values, more until the calls add up to `min_time_s`.

    A value is one call's seconds, or, where a call is shorter than SHORT_CALL_S, the mean
    of a loop of calls (`loops_for`). Unless `loops` is given (to time the same way as
    elsewhere), the first calls are timed alone and decide: the first, and, when it is under
    RECHECK_BELOW_S without being short, up to two more, so that one slow call of a fast
    function does not have it timed alone. The fastest of them decides: long enough, the
    first call is the first value (the others are left out, so a process gives `repeats`
    values as asked); too short, they only chose the loop's length and are all left out.

    `first`: (result, seconds) of a call already made and timed the same way (a process's
    cold fit, where its first call does not differ from the others): it is that first call.

    `calibrate_until` (a `time.perf_counter` moment): values go on until those that started
    after it alone meet the rule above (`repeats`, `min_time_s`), while a value lasts less than
    CALIBRATE_BELOW_S, and, while it lasts less than CALIBRATE_LONG_BELOW_S and the process's
    first call (`first_call_s`, apart from these values) was slower than the first of them by
    more than WARMUP_TOLERANCE, until at least LONG_CALIBRATION_VALUES started after it:
    `suite.plan` compares those before and after, and where it then drops the earlier ones
    (`drop_unsettled`) the process still gives what any other gives.
    """
    times: list[float] = []
    starts: list[float] = []
    result, calibration = None, 0.0
    if loops is None:
        first_started = time.perf_counter()
        result, first_s = first if first is not None else timed(fn, on_gpu)
        probes = [first_s]
        while SHORT_CALL_S <= min(probes) < RECHECK_BELOW_S and len(probes) < 3:
            result, seconds = timed(fn, on_gpu)
            probes.append(seconds)
        loops = loops_for(min(probes))
        if loops == 1:
            times.append(first_s)
            starts.append(math.nan if first is not None else first_started)
            calibration = sum(probes[1:])
        else:
            calibration = sum(probes[1:] if first is not None else probes)

    def short_of(values: list[float]) -> bool:  # the rule above: repeats values adding up to min_time_s
        return len(values) < repeats or (sum(values) * loops < min_time_s and len(values) < MAX_REPEATS)

    def calibrating() -> bool:
        if calibrate_until is None or not times or times[-1] * loops >= CALIBRATE_LONG_BELOW_S:
            return False
        late = [value for value, start in zip(times, starts) if start >= calibrate_until]
        if not long_call(times[-1], loops):
            return short_of(late)
        first_differed = first_call_s is not None and first_call_s > (1 + WARMUP_TOLERANCE) * times[0] * loops
        return first_differed and (short_of(late) or len(late) < LONG_CALIBRATION_VALUES)

    while short_of(times) or calibrating():
        starts.append(time.perf_counter())
        result, seconds = timed_loop(fn, on_gpu, loops)
        times.append(seconds)
    return Repeated(result, times, loops, calibration, first_given=first is not None and loops == 1, starts=starts)


@dataclass
class Settled:
    """The warm-up calls `settle` made: how many, and their seconds."""

    calls: int = 0
    seconds: float = 0.0


def settle(fn: Callable[[], Any], on_gpu: bool, first_ended: float, settle_s: float) -> Settled:
    """Warm-up calls (untimed values, garbage collector off as in the timed ones) until
    `settle_s` seconds have passed since the process's first call ended (`first_ended`, a
    `time.perf_counter` moment): what that call started has then run its course (SETTLE_S)."""
    done = Settled()
    while settle_s > 0 and time.perf_counter() - first_ended < settle_s:
        _, seconds = timed(fn, on_gpu)
        done.calls += 1
        done.seconds += seconds
    return done


#: The phase names `mark` writes: the first fit has started / it has ended.
FIRST_FIT, AFTER_FIRST_FIT = "first_fit", "after_first_fit"


def mark(path: str | None, phase: str) -> None:
    """Note outside any timer that a phase starts now (wall clock), for whoever must stop this
    process: a suite that times a case out learns from it how long its first fit had run."""
    if path:
        with open(Path(path), "a", encoding="utf-8") as f:
            f.write(f"{phase} {time.time():.6f}\n")
