"""Timing statistics and memory sampling on known inputs."""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

from mlcompare.measure.memory import PeakMemory
from mlcompare.measure.stats import bootstrap_ratio_ci, summarise
from mlcompare.measure.timing import repeat


def test_summary_statistics_of_known_times():
    stats = summarise([1.0, 2.0, 3.0, 4.0, 10.0])
    assert stats["median"] == 3.0 and stats["min"] == 1.0 and stats["max"] == 10.0
    assert stats["iqr"] == pytest.approx(4.0 - 2.0)
    assert stats["cv"] == pytest.approx(np.std([1, 2, 3, 4, 10], ddof=1) / 4.0)
    assert summarise([0.5])["cv"] == 0.0 and summarise([0.5])["iqr"] == 0.0


def test_bootstrap_interval_of_a_ratio():
    assert bootstrap_ratio_ci([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]) == (2.0, 2.0)
    rng = np.random.default_rng(1)
    slow, fast = 4.0 + rng.normal(0, 0.2, 30), 1.0 + rng.normal(0, 0.05, 30)
    low, high = bootstrap_ratio_ci(list(slow), list(fast))
    ratio = np.median(slow) / np.median(fast)
    assert low < ratio < high and 3.0 < low and high < 5.0
    # fewer repeats, wider interval: the width says how little three samples tell
    low3, high3 = bootstrap_ratio_ci(list(slow[:3]), list(fast[:3]))
    assert (high3 - low3) > (high - low)
    assert bootstrap_ratio_ci(list(slow), list(fast)) == (low, high)  # seeded: reproducible


def test_repeat_runs_at_least_repeats_and_until_min_time():
    calls = []
    result, times = repeat(lambda: calls.append(1) or len(calls), False, repeats=3)
    assert len(times) == 3 and result == 3
    _, times = repeat(lambda: time.sleep(0.01), False, repeats=2, min_time_s=0.15)
    assert sum(times) >= 0.15 and len(times) >= 2
    assert len(times) == len([t for t in times if t > 0])


def test_peak_memory_sees_an_allocation_that_is_freed_again():
    gc.collect()  # garbage of earlier tests freed inside the block would hide the growth
    with PeakMemory() as memory:
        block = np.ones(40 * 2**20 // 8)  # 40 MiB, touched
        seen, deadline = memory.samples, time.monotonic() + 30
        # a loaded machine may starve the sampling thread: wait for it to look a few times
        while memory.samples < seen + 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        del block
    assert memory.samples > 5, "the sampling thread stopped sampling"
    assert memory.host_mb > 30
    assert memory.gpu_mb is None  # not asked for on the CPU
    with PeakMemory() as quiet:
        time.sleep(0.02)
    assert quiet.host_mb < 10
