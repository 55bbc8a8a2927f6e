"""The GPU availability probe, on whatever machine the tests run on."""

from __future__ import annotations

import importlib.util

import pytest

from mlcompare.measure import device

GPUS, WHY = device.cuda_devices()


@pytest.mark.skipif(bool(GPUS), reason="this machine has a CUDA device")
def test_no_gpu_is_reported_with_a_reason():
    assert GPUS == []
    assert WHY.startswith("no CUDA device")
    reason = device.skip_reason("xgboost", "gpu")
    assert reason is not None and "no CUDA device" in reason


@pytest.mark.skipif(importlib.util.find_spec("cuml") is not None, reason="cuml is installed")
def test_missing_library_is_named():
    assert device.skip_reason("cuml", "gpu").startswith("cuml not installed")


def test_cpu_implementations_of_installed_libraries_can_run():
    assert device.skip_reason("sklearn", "cpu") is None
    assert device.skip_reason("xgboost", "cpu") is None
    assert device.skip_reason("surely_not_a_library", "cpu") == "surely_not_a_library not installed"


def test_to_host_passes_numpy_through():
    import numpy as np
    import pandas as pd

    a = np.arange(3)
    assert device.to_host(a) is a
    np.testing.assert_array_equal(device.to_host(pd.Series([1, 2])), [1, 2])
