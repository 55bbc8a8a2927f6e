"""This process's device, initialised before any timer: the reader a GPU case uses, the
imports, the CUDA context and the memory pool."""

from __future__ import annotations

import sys
import time

from mlcompare.measure.device.arrays import warm_harness_kernels
from mlcompare.measure.device.probe import import_problem
from mlcompare.measure.device.sync import synchronize
from mlcompare.pairings.libraries import library_installed

#: The RAPIDS libraries: they allocate through RMM, and importing them routes CuPy through it too.
RAPIDS = ("cuml", "cudf")


def choose_reader(library: str = "") -> tuple[str, str]:
    """(how a GPU case reads its cached dataset, why): 'cudf' (straight into device memory)
    for a RAPIDS library when cuDF imports here, else 'host' (into host memory, as a CPU case
    reads it, then one copy to the device). Another library (XGBoost, CatBoost) always reads
    on the host:
    importing cuDF switches CuPy's allocator to RMM, so its inputs would be allocated
    differently depending on whether cuDF happens to be installed."""
    if library.split(".", 1)[0] not in RAPIDS:
        return "host", f"{library or 'this library'} does not allocate through RMM: read on the host, cuDF unused"
    problem = import_problem("cudf")
    if problem:
        return "host", f"{problem}: read on the host"
    return "cudf", ""


def device_reader(library: str = "") -> str:
    """`choose_reader`'s reader alone."""
    return choose_reader(library)[0]


#: What `init_device` set up for this process's device memory, in words (the `rmm_pool` tag).
_memory_setup = {"rmm_pool": "not set up"}


def memory_setup() -> dict[str, str]:
    """How `init_device` set up this process's device memory: {"rmm_pool": ...}."""
    return dict(_memory_setup)


def init_device(reader: str = "host", library: str = "") -> float:
    """Import the device libraries, create this process's CUDA context, set up the memory
    pool, make the first allocation and compile the kernels the harness itself uses; return
    the seconds it took.

    Called before any timer, so that neither the load nor the cold fit holds these one-off
    costs. For a RAPIDS library (cuML, cuDF) RMM is made a pool allocator first
    (`rmm.reinitialize(pool_allocator=True)`, as cuML users do: without it every warm fit
    pays cudaMalloc and cudaFree), then its allocation statistics are switched on (over the
    pool, before the first allocation they must count; see `gpu_memory_meter`). Other
    libraries never import RMM or cuDF: CuPy keeps its own pool for their inputs.
    """
    started = time.perf_counter()
    import cupy

    rapids = library.split(".", 1)[0] in RAPIDS
    if reader == "cudf":
        import cudf  # noqa: F401 - its import (seconds) must not be inside the timed load
    if rapids and library_installed("rmm"):
        import rmm
        import rmm.statistics

        rmm.reinitialize(pool_allocator=True)
        rmm.statistics.enable_statistics()
        _memory_setup["rmm_pool"] = "pool (rmm.reinitialize(pool_allocator=True)), statistics over it"
    elif rapids:
        _memory_setup["rmm_pool"] = "none: rmm not installed"
    else:
        _memory_setup["rmm_pool"] = f"none: {library or 'this library'} allocates outside RMM; CuPy's own pool"
    cupy.cuda.Device(0).use()
    cupy.zeros(1, dtype=cupy.float32)  # the context and the pool's first block
    warm_harness_kernels()
    synchronize()
    return time.perf_counter() - started


def rmm_resource() -> str:
    """RMM's current device memory resource, e.g. 'rmm resource CudaMemoryResource'.

    Raises when it is managed (unified) memory: cuml.accel's numbers would then be taken
    under another allocator than cuML's own.
    """
    if "rmm" not in sys.modules:
        return "rmm not loaded"
    import rmm

    chain, mr = [], rmm.mr.get_current_device_resource()
    while mr is not None:
        chain.append(type(mr).__name__)
        mr = getattr(mr, "upstream_mr", None)
    if any("Managed" in name for name in chain):
        raise RuntimeError(f"RMM allocates managed (unified) memory ({' <- '.join(chain)}), not plain device memory")
    return "rmm resource " + " <- ".join(chain)
