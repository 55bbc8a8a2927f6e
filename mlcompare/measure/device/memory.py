"""Device memory of this process: the meter around a cold fit and NVML's counts."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from mlcompare.measure.device.nvml_reads import nvml, nvml_handle
from mlcompare.measure.device.sync import synchronize


@dataclass
class GpuMemory:
    """Peak growth of this process's device memory over a block (MB), and how it was measured."""

    method: str = "none"
    peak_mb: float | None = None
    parts: dict[str, float] = field(default_factory=dict)

    def describe(self) -> str:
        parts = ", ".join(f"{k} {v:.1f} MB" for k, v in self.parts.items())
        return f"{self.method} ({parts})" if parts else self.method


@contextlib.contextmanager
def gpu_memory_meter(library: str = "") -> Iterator[GpuMemory]:
    """Measure the device memory the block (a case's timed cold fit) takes, with nothing beside
    it: no thread samples while it runs. The method, kept in `GpuMemory.method`:

    - `rmm_statistics` for cuML and cuDF (RAPIDS libraries allocate through RMM, and route
      CuPy through it on import): the peak of RMM's statistics adaptor, which keeps its
      own peak (needs `init_device` to have switched it on);
    - `nvml_process_held` for anything else (XGBoost has its own caching allocator): NVML's
      count of this process's device memory read before and after the block, the growth:
      what the fit left held, which for a caching allocator that keeps what it took is its
      peak, and otherwise a lower bound of it (the CUDA context, made before, is not counted);
    - `nvml_device_held` where NVML cannot see this process (some containers, MIG): the
      device-wide used memory before and after, the same growth, every process on the GPU
      included;
    - none where NVML cannot be read at all: no figure (never a CuPy-pool figure for a library
      that does not allocate there).
    """
    result = GpuMemory()
    rapids = library.split(".", 1)[0] in ("cuml", "cudf")
    if rapids and _rmm_statistics_on():
        import rmm.statistics

        rmm.statistics.push_statistics()
        try:
            yield result
        finally:
            popped = rmm.statistics.pop_statistics()
            result.method, result.peak_mb = "rmm_statistics", popped.peak_bytes / 2**20
            result.parts["rmm peak"] = result.peak_mb
        return
    handle = nvml_handle(0)
    for method, read in (("nvml_process_held", process_gpu_memory), ("nvml_device_held", device_gpu_memory)):
        before = read(handle) if handle is not None else None
        if before is None:
            continue
        try:
            yield result
        finally:
            synchronize()  # what the block queued has run: its memory is taken
            after = read(handle)
            if after is not None:
                result.method, result.peak_mb = method, max(0, after - before) / 2**20
                result.parts["held after the fit"] = result.peak_mb
        return
    yield result


def _rmm_statistics_on() -> bool:
    if "rmm" not in sys.modules:
        return False
    import rmm.statistics

    return rmm.statistics.get_statistics() is not None


def process_gpu_memory(handle: Any = None) -> int | None:
    """Bytes of device memory NVML counts for this process on this process's GPU, or None
    when NVML cannot see this process (no NVML, a container's own process ids, MIG)."""
    pynvml, _ = nvml()
    handle = handle if handle is not None else nvml_handle(0)
    if pynvml is None or handle is None:
        return None
    try:
        processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except pynvml.NVMLError:
        return None
    mine = [p.usedGpuMemory for p in processes if p.pid == os.getpid() and p.usedGpuMemory is not None]
    return int(sum(mine)) if mine else None


def device_gpu_memory(handle: Any = None) -> int | None:
    """Bytes of device memory in use on this process's GPU by every process (NVML), or None."""
    pynvml, _ = nvml()
    handle = handle if handle is not None else nvml_handle(0)
    if pynvml is None or handle is None:
        return None
    try:
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used)
    except pynvml.NVMLError:
        return None


def gpu_memory_used() -> int:
    """Bytes in use on the current device, by every process (the driver's own count).

    Device-wide: not a measure of one case (see `gpu_memory_meter`).
    """
    import cupy

    free, total = cupy.cuda.runtime.memGetInfo()
    return int(total - free)
