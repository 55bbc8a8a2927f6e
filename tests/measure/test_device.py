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


def test_layouts_are_made_and_read_on_host_arrays():
    import numpy as np

    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    f = device.in_layout(a, "F")
    assert device.layout(f) == "F" and not f.flags.c_contiguous
    np.testing.assert_array_equal(f, a)
    assert device.in_layout(a, "C") is a  # already row-major: no copy
    assert device.layout(np.arange(3)) == "C,F"  # 1-D arrays are both
    assert device.layout(a[:, ::2]) == "strided"
    with pytest.raises(ValueError, match="order must be one of"):
        device.in_layout(a, "K")


@pytest.mark.skipif(bool(GPUS), reason="this machine has a CUDA device")
def test_without_a_gpu_nvml_says_why_and_reads_nothing():
    pynvml, why = device.nvml()
    assert pynvml is None
    if importlib.util.find_spec("pynvml") is None:
        assert why == "nvidia-ml-py not installed"
    else:  # installed, but no driver library to talk to
        assert why.startswith("NVML unavailable (")
    assert device.nvml_handle(0) is None and device.gpu_state() is None
    assert device.gpu_properties() == [] and device.process_gpu_memory() is None


@pytest.mark.skipif(bool(GPUS), reason="this machine has a CUDA device")
def test_without_a_gpu_the_memory_meter_measures_nothing_and_says_so():
    with device.gpu_memory_meter("xgboost") as memory:
        pass
    assert memory.peak_mb is None and memory.method == "none" and memory.describe() == "none"


def test_an_accelerator_other_than_cuml_accel_is_refused():
    with pytest.raises(ValueError, match="unknown accelerator"):
        device.install_accelerator("sklearnex.patch")


@pytest.mark.skipif(importlib.util.find_spec("cuml") is not None, reason="cuml is installed")
def test_without_cuml_there_is_no_device_selection_to_read():
    assert device.cuml_version() is None
    assert device.cuml_device_selection() is None


def test_the_memory_meter_reads_before_and_after_the_fit_with_no_thread_beside_it(monkeypatch):
    """Where NVML sees the process: this process's device memory read once before and once after
    the block (stand-ins for our own NVML readers), nothing running beside the timed fit."""
    import threading

    events = []
    readings = iter([1000 * 2**20, 1500 * 2**20])
    meter = device.memory  # the module whose functions gpu_memory_meter calls
    monkeypatch.setattr(meter, "nvml_handle", lambda ordinal=0: "gpu0")
    monkeypatch.setattr(meter, "process_gpu_memory", lambda handle=None: events.append("read") or next(readings))
    monkeypatch.setattr(meter, "synchronize", lambda: events.append("sync"))
    with device.gpu_memory_meter("xgboost") as memory:
        events.append(f"fit with {threading.active_count()} threads")
    assert events == ["read", f"fit with {threading.active_count()} threads", "sync", "read"]
    assert memory.method == "nvml_process_held" and memory.peak_mb == 500.0


def test_where_nvml_cannot_see_the_process_the_device_wide_figure_says_so(monkeypatch):
    readings = iter([2000 * 2**20, 2100 * 2**20])
    monkeypatch.setattr(device.memory, "nvml_handle", lambda ordinal=0: "gpu0")
    monkeypatch.setattr(device.memory, "process_gpu_memory", lambda handle=None: None)
    monkeypatch.setattr(device.memory, "device_gpu_memory", lambda handle=None: next(readings))
    monkeypatch.setattr(device.memory, "synchronize", lambda: None)
    with device.gpu_memory_meter("xgboost") as memory:
        pass
    assert memory.method == "nvml_device_held" and memory.peak_mb == 100.0


def test_the_harness_kernels_are_warmed_for_every_dtype_and_layout(monkeypatch):
    """Every device operation the harness times (copy in, layout change, copy back) runs once
    on tiny arrays in `init_device`, before any timer, so CuPy's compilation (NVRTC) of their
    kernels is not in the first case's timers (recording stand-ins for our own functions; the
    compilation itself needs a GPU)."""
    import numpy as np

    seen = []
    arrays = device.arrays  # the module whose functions warm_harness_kernels calls
    monkeypatch.setattr(arrays, "to_device", lambda a, order="C": seen.append(("in", a.dtype.name, order)) or
                        np.array(a, order=order))
    monkeypatch.setattr(arrays, "in_layout", lambda a, order: seen.append(("layout", a.dtype.name, order)) or a)
    monkeypatch.setattr(arrays, "to_host", lambda a: seen.append(("back", a.dtype.name)) or a)
    device.warm_harness_kernels()
    for dtype in ("float32", "float64", "int64"):
        for order in ("C", "F"):
            assert ("in", dtype, order) in seen and ("layout", dtype, order) in seen
        assert ("back", dtype) in seen
    assert "warm_harness_kernels()" in __import__("inspect").getsource(device.init_device)
