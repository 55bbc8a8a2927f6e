"""The device layer: the only module that touches CUDA, cupy, cudf or cuml.

Everything here is imported lazily, so the rest of mlcompare runs on machines with no
GPU and none of those libraries. Availability is probed, never assumed: the probe asks
the CUDA driver itself (through ctypes) how many devices it sees.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
from typing import Any

import numpy as np


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[list[str], str | None]:
    """Names of the CUDA devices the driver sees, and why there are none when empty."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return [], "no CUDA device (CUDA driver libcuda.so.1 not found)"
    if lib.cuInit(0) != 0:
        return [], "no CUDA device (the CUDA driver failed to initialise)"
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return [], "no CUDA device (the driver reports none)"
    names = []
    for ordinal in range(count.value):
        device, name = ctypes.c_int(0), ctypes.create_string_buffer(256)
        lib.cuDeviceGet(ctypes.byref(device), ordinal)
        lib.cuDeviceGetName(name, 256, device)
        names.append(name.value.decode(errors="replace"))
    return names, None


def library_installed(library: str) -> bool:
    """Whether the library's top-level package is installed (never imports it)."""
    return importlib.util.find_spec(library.split(".", 1)[0]) is not None


def skip_reason(library: str, device: str) -> str | None:
    """Why an implementation cannot run here, or None when it can.

    `library` may be an accelerator such as "cuml.accel": it needs cuML and a GPU.
    """
    reasons = []
    if not library_installed(library):
        reasons.append(f"{library.split('.', 1)[0]} not installed")
    if device == "gpu":
        if not library_installed("cupy"):
            reasons.append("cupy not installed")
        _, why = cuda_devices()
        if why:
            reasons.append(why)
    return "; ".join(reasons) or None


def to_device(array: np.ndarray) -> Any:
    """Copy a host array into device memory (a cupy array), waiting until it is there."""
    import cupy

    out = cupy.asarray(array)
    synchronize()
    return out


def to_host(array: Any) -> np.ndarray:
    """Bring any array-like (numpy, cupy, cudf, pandas) back to a numpy array."""
    if isinstance(array, np.ndarray):
        return array
    if type(array).__module__.startswith("cupy"):
        return array.get()
    if hasattr(array, "to_numpy"):  # cudf / pandas
        return np.asarray(array.to_numpy())
    return np.asarray(array)


def synchronize() -> None:
    """Wait for all queued device work, so a timer stopped next measures the real cost."""
    import cupy

    cupy.cuda.Device().synchronize()


def gpu_memory_used() -> int:
    """Bytes in use on the current device (all processes: the driver's own count)."""
    import cupy

    free, total = cupy.cuda.runtime.memGetInfo()
    return int(total - free)


@functools.lru_cache(maxsize=1)
def driver_versions() -> dict[str, str]:
    """The NVIDIA driver's version and the newest CUDA version it supports, when present."""
    out: dict[str, str] = {}
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0:
            out["cuda_driver_api"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        return out
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        text = ctypes.create_string_buffer(96)
        if nvml.nvmlInit_v2() == 0 and nvml.nvmlSystemGetDriverVersion(text, 96) == 0:
            out["driver"] = text.value.decode(errors="replace")
    except OSError:
        pass
    return out


class NvmlUnavailable(RuntimeError):
    """NVML cannot answer on this machine (or for this GPU); the message says why."""


@functools.lru_cache(maxsize=1)
def _nvml() -> Any:
    """nvidia-ml-py's module, NVML initialised once per process."""
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable("nvidia-ml-py is not installed (pip install nvidia-ml-py)") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"NVML cannot start: {exc}") from None
    return pynvml


def nvml_gpus(count: int = 1) -> list[tuple[Any, str]]:
    """(NVML handle, name) of the first `count` CUDA devices this process computes on.

    NVML numbers every GPU of the machine and ignores CUDA_VISIBLE_DEVICES; CUDA's ordinal
    0 is the first visible one. The two are matched by PCI bus id.
    """
    nvml = _nvml()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        raise NvmlUnavailable("no CUDA driver (libcuda.so.1 not found)") from None
    if cuda.cuInit(0) != 0:
        raise NvmlUnavailable("the CUDA driver failed to initialise")
    out = []
    for ordinal in range(count):
        device, bus = ctypes.c_int(0), ctypes.create_string_buffer(64)
        if cuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0 or cuda.cuDeviceGetPCIBusId(bus, 64, device) != 0:
            raise NvmlUnavailable(f"CUDA device {ordinal} is not visible to this process")
        try:
            handle = nvml.nvmlDeviceGetHandleByPciBusId(bus.value.decode())
            name = nvml.nvmlDeviceGetName(handle)
        except nvml.NVMLError as exc:
            raise NvmlUnavailable(f"NVML does not know CUDA device {ordinal} ({bus.value.decode()}): {exc}") from None
        out.append((handle, name.decode() if isinstance(name, bytes) else str(name)))
    return out


def gpu_energy_mj(handle: Any) -> int:
    """The GPU's total energy counter: millijoules since the driver loaded (NVML, Volta and newer)."""
    nvml = _nvml()
    try:
        return int(nvml.nvmlDeviceGetTotalEnergyConsumption(handle))
    except nvml.NVMLError as exc:
        raise NvmlUnavailable(f"this GPU has no total-energy counter: {exc}") from None


def install_accelerator(name: str) -> None:
    """Install a zero-code-change accelerator in this process, before sklearn is imported."""
    if name != "cuml.accel":
        raise ValueError(f"unknown accelerator {name!r}")
    import cuml.accel

    cuml.accel.install()


def accel_profile() -> Any:
    """cuml.accel's profiler as a context manager (a no-op yielding None where it has none)."""
    import contextlib

    import cuml.accel

    profile = getattr(cuml.accel, "profile", None)
    return profile(quiet=True) if profile is not None else contextlib.nullcontext()


def accel_fit_calls(report: Any, class_name: str) -> tuple[int, int, list[str]] | None:
    """(GPU calls, CPU calls, fallback reasons) of `class_name.fit` in a cuml.accel profile."""
    calls = getattr(report, "method_calls", None)
    if calls is None:
        return None
    gpu = cpu = 0
    reasons: set[str] = set()
    for qualname, stats in calls.items():
        if qualname.split(".")[-2:] == [class_name, "fit"]:
            gpu += stats.gpu_calls
            cpu += stats.cpu_calls
            reasons |= set(stats.fallback_reasons)
    return gpu, cpu, sorted(reasons)


def cuml_device_type() -> str | None:
    """Where cuML says it executes ('gpu' or 'cpu'), when this cuML can say."""
    try:
        import cuml

        return str(cuml.global_settings.device_type.name).lower()
    except Exception:  # noqa: BLE001 - older cuML without device selection: it only runs on the GPU
        return None


def load_split(directory: Any) -> dict[str, Any]:
    """A cached split read by cuDF straight into device memory (no host round trip)."""
    import cudf

    out = {}
    for name in ("train", "test"):
        frame = cudf.read_parquet(f"{directory}/{name}.parquet")
        out[f"X_{name}"] = frame.drop(columns=["target"]).to_cupy()
        out[f"y_{name}"] = frame["target"].to_cupy()
    synchronize()
    return out


def local_cuda_cluster(**options: Any) -> Any:
    """A dask-cuda LocalCUDACluster: one Dask worker per visible GPU (the first n_workers)."""
    from dask_cuda import LocalCUDACluster

    n_workers = options.get("n_workers")
    if n_workers:  # the first n GPUs, each worker pinned to its own
        options.setdefault("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(n_workers)))
    return LocalCUDACluster(**options)
