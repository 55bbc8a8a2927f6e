"""The device layer: the only code that touches CUDA, cupy, cudf, cuml, rmm or NVML.

Everything here is imported lazily, so the rest of mlcompare runs on machines with no
GPU and none of those libraries. Availability is probed, never assumed: the probe asks
the CUDA driver itself (through ctypes) how many devices it sees.

A GPU case uses this layer in a fixed order, so that every timer holds only the work
its name says: `init_device` (imports, CUDA context, memory pool: before any timer),
then the load (`read_split_device` with cuDF, or a read on the host and `to_device`),
with the arrays in the experiment's layout (`in_layout`, untimed), then the fits, each
ended by `synchronize` inside its timer.

One module per concern; callers use the names below (`device.to_device(...)`):

| module | holds |
|---|---|
| `probe` | what this machine has: CUDA devices, driver versions, whether a GPU library imports |
| `nvml_reads` | NVML: the GPU's properties, state and energy counter |
| `context` | this process's device: the reader, `init_device`, the memory pool |
| `sync` | `synchronize`, the end of every device timer |
| `arrays` | data on the device: copies, layouts, cuDF reads |
| `memory` | this process's device memory around a fit |
| `accel` | cuML's release and `cuml.accel` |
| `dask` | a local CUDA cluster |
"""

from mlcompare.measure.device.accel import (
    ACCEL_MIN_CUML,
    accel_calls,
    accel_profile,
    cuml_device_selection,
    cuml_version,
    install_accelerator,
)
from mlcompare.measure.device.arrays import (
    ORDERS,
    frames_to_arrays,
    in_layout,
    layout,
    on_device,
    read_split_device,
    to_device,
    to_host,
    warm_harness_kernels,
)
from mlcompare.measure.device.context import (
    RAPIDS,
    choose_reader,
    device_reader,
    init_device,
    memory_setup,
    rmm_resource,
)
from mlcompare.measure.device.dask import local_cuda_cluster
from mlcompare.measure.device.memory import (
    GpuMemory,
    device_gpu_memory,
    gpu_memory_meter,
    gpu_memory_used,
    process_gpu_memory,
)
from mlcompare.measure.device.nvml_reads import (
    NvmlUnavailable,
    gpu_energy_mj,
    gpu_properties,
    gpu_state,
    nvml,
    nvml_gpus,
    nvml_handle,
)
from mlcompare.measure.device.probe import (
    IMPORT_PROBE_TIMEOUT_S,
    PROBED_IMPORTS,
    cuda_devices,
    driver_versions,
    import_problem,
    primary_context_active,
    skip_reason,
)
from mlcompare.measure.device.sync import synchronize
from mlcompare.pairings.libraries import library_installed

__all__ = [
    "ACCEL_MIN_CUML", "IMPORT_PROBE_TIMEOUT_S", "ORDERS", "PROBED_IMPORTS", "RAPIDS", "GpuMemory", "NvmlUnavailable",
    "accel_calls", "accel_profile", "choose_reader", "cuda_devices", "cuml_device_selection", "cuml_version",
    "device_gpu_memory", "device_reader", "driver_versions", "frames_to_arrays", "gpu_energy_mj", "gpu_memory_meter",
    "gpu_memory_used", "gpu_properties", "gpu_state", "import_problem", "in_layout", "init_device",
    "install_accelerator", "layout", "library_installed", "local_cuda_cluster", "memory_setup", "nvml", "nvml_gpus",
    "nvml_handle", "on_device", "primary_context_active", "process_gpu_memory", "read_split_device", "rmm_resource",
    "skip_reason", "synchronize", "to_device", "to_host", "warm_harness_kernels",
]
