"""Timing statistics and memory sampling on known inputs."""

from __future__ import annotations

import time

import numpy as np
import pytest

from mlcompare.measure.stats import summarise
from mlcompare.measure.timing import repeat


def test_summary_statistics_of_known_times():
    stats = summarise([1.0, 2.0, 3.0, 4.0, 10.0])
    assert stats["median"] == 3.0 and stats["min"] == 1.0 and stats["max"] == 10.0
    assert stats["iqr"] == pytest.approx(4.0 - 2.0)
    assert stats["cv"] == pytest.approx(np.std([1, 2, 3, 4, 10], ddof=1) / 4.0)
    assert summarise([0.5])["cv"] == 0.0 and summarise([0.5])["iqr"] == 0.0


def test_repeat_runs_at_least_repeats_and_until_min_time():
    calls = []
    found = repeat(lambda: calls.append(1) or len(calls), False, repeats=3, loops=1)
    assert len(found.times) == 3 and found.result == 3
    times = repeat(lambda: time.sleep(0.01), False, repeats=2, min_time_s=0.15).times
    assert sum(times) >= 0.15 and len(times) >= 2
    assert len(times) == len([t for t in times if t > 0])
