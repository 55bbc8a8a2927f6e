"""Reading stored runs into the case table: main metric, interval of the median, host labels."""

from __future__ import annotations

import math

import pytest

from mlcompare import results


def test_median_interval_from_order_statistics():
    low, high, cover = results.median_ci([3.0, 1.0, 2.0])
    assert (low, high) == (1.0, 3.0) and cover == pytest.approx(0.75)  # three repeats: the range, 75 %
    values = [float(v) for v in range(1, 11)]
    low, high, cover = results.median_ci(values)
    assert (low, high) == (2.0, 9.0)  # ten repeats: 2nd and 9th order statistics
    assert cover == pytest.approx(1 - 2 * 11 / 1024) and cover >= 0.95
    assert all(math.isnan(v) for v in results.median_ci([1.0]))


def test_main_metric_prefers_the_runs_own_tag_then_the_catalog():
    assert results.main_metric("kmeans", {"main_metric": "inertia"}, {}) == "inertia"
    assert results.main_metric("kmeans", {}, {"inertia": 1.0, "adjusted_rand": 0.5}) == "adjusted_rand"
    assert results.main_metric("not_in_catalog", {}, {"rmse": 1.0, "r2": 0.5}) == "r2"


def test_host_label_tells_machines_apart():
    laptop = {"host.cpu_model": "AMD EPYC", "host.cpu_physical_cores": "2", "host.ram_gb": "23.5",
              "host.gpu": "none: no CUDA device"}
    box = {"host.cpu_model": "Intel Xeon", "host.cpu_physical_cores": "16", "host.ram_gb": "128.0",
           "host.gpu": "NVIDIA H200"}
    assert results.host_label(laptop) == "AMD EPYC · 2 cores · 23.5 GB · no GPU"
    assert results.host_label(box) == "Intel Xeon · 16 cores · 128.0 GB · NVIDIA H200"
