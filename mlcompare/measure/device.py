"""The device layer: the only module that touches CUDA, cupy, cudf, cuml, rmm or NVML.

Everything here is imported lazily, so the rest of mlcompare runs on machines with no
GPU and none of those libraries. Availability is probed, never assumed: the probe asks
the CUDA driver itself (through ctypes) how many devices it sees.

A GPU case uses this module in a fixed order, so that every timer holds only the work
its name says: `init_device` (imports, CUDA context, memory pool: before any timer),
then the load (`read_split_device` with cuDF, or pyarrow on the host and `to_device`),
with the arrays in the experiment's layout (`in_layout`, untimed), then the fits, each
ended by `synchronize` inside its timer.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

#: The array layouts an experiment may ask for: row-major (C) or column-major (F).
ORDERS = ("C", "F")
#: cuML's first release with a `cuml.accel` that has its profiler (25.08) and takes
#: `disable_uvm` (25.02): without the profiler a CPU fallback cannot be told apart.
ACCEL_MIN_CUML = (25, 8)


# -- what this machine has ----------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[list[str], str | None]:
    """Names of the CUDA devices the driver sees, and why there are none when empty."""
    lib = _cuda_driver()
    if lib is None:
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


@functools.lru_cache(maxsize=1)
def _cuda_driver() -> Any:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


def _cuda_device(ordinal: int) -> Any:
    """CUDA's device handle for `ordinal` (counted among the devices this process may see)."""
    lib = _cuda_driver()
    if lib is None or cuda_devices()[1]:
        return None
    device = ctypes.c_int(0)
    return device if lib.cuDeviceGet(ctypes.byref(device), ordinal) == 0 else None


def primary_context_active(ordinal: int = 0) -> bool | None:
    """Whether this process holds a CUDA context on device `ordinal` (the primary context,
    which CuPy, cuML, XGBoost and every CUDA runtime user share), or None without a GPU.
    Asking creates none."""
    device, flags, active = _cuda_device(ordinal), ctypes.c_uint(0), ctypes.c_int(0)
    if device is None or _cuda_driver().cuDevicePrimaryCtxGetState(device, ctypes.byref(flags),
                                                                    ctypes.byref(active)) != 0:
        return None
    return bool(active.value)


def library_installed(library: str) -> bool:
    """Whether the library's top-level package is installed (never imports it)."""
    return importlib.util.find_spec(library.split(".", 1)[0]) is not None


#: Libraries whose import is tried in a fresh process before they are used: a broken RAPIDS
#: install (a library path, a pinned dependency) fails at import, and must not take the
#: other GPU cases down with it.
PROBED_IMPORTS = ("cuml", "cudf")
#: Seconds an import probe may take (RAPIDS imports take seconds; a hang is a failure).
IMPORT_PROBE_TIMEOUT_S = 120.0


@functools.lru_cache(maxsize=None)
def import_problem(module: str) -> str | None:
    """Why `import module` fails in a fresh Python here, in one line; None when it works.

    Asked once per process and module, in a child process with a time limit, so that a
    crash or a hang of the import is a reason, not the end of the suite.
    """
    import subprocess

    if not library_installed(module):
        return f"{module} not installed"
    try:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              timeout=IMPORT_PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{module} is installed but `import {module}` did not finish in {IMPORT_PROBE_TIMEOUT_S:.0f} s"
    if done.returncode == 0:
        return None
    last = next((line for line in reversed(done.stderr.strip().splitlines()) if line.strip()), "")
    return f"{module} is installed but `import {module}` fails: {last[:300] or f'exit {done.returncode}'}"


def skip_reason(library: str, device: str) -> str | None:
    """Why an implementation cannot run here, or None when it can.

    `library` may be an accelerator such as "cuml.accel": it needs cuML and a GPU. GPU
    implementations need CuPy (device arrays) and a CUDA device; cuDF is optional (without
    it the data is read by pyarrow and copied to the device). cuML and cuDF must also
    import (tried in a fresh process: `import_problem`).
    """
    reasons = []
    root = library.split(".", 1)[0]
    if not library_installed(library):
        reasons.append(f"{root} not installed")
    elif root in PROBED_IMPORTS and import_problem(root):
        reasons.append(import_problem(root))
    if device == "gpu":
        if not library_installed("cupy"):
            reasons.append("cupy not installed")
        _, why = cuda_devices()
        if why:
            reasons.append(why)
    return "; ".join(reasons) or None


@functools.lru_cache(maxsize=1)
def driver_versions() -> dict[str, str]:
    """The NVIDIA driver's version and the newest CUDA version it supports, when present."""
    out: dict[str, str] = {}
    lib = _cuda_driver()
    if lib is None:
        return out
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["cuda_driver_api"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    try:  # NVML's C library directly: the version is there even without nvidia-ml-py
        nvml_lib = ctypes.CDLL("libnvidia-ml.so.1")
        text = ctypes.create_string_buffer(96)
        if nvml_lib.nvmlInit_v2() == 0 and nvml_lib.nvmlSystemGetDriverVersion(text, 96) == 0:
            out["driver"] = text.value.decode(errors="replace")
    except OSError:
        pass
    return out


# -- NVML (nvidia-ml-py): the GPU's properties and state; no CUDA context ----------------------

@functools.lru_cache(maxsize=1)
def nvml() -> tuple[Any, str | None]:
    """The `pynvml` module, initialised once in this process, or (None, why not).

    NVML reads the driver's view of the GPUs (clocks, power, memory, energy) without a
    CUDA context, so the suite's own process may call it too.
    """
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML unavailable ({exc})"
    return pynvml, None


def nvml_handle(ordinal: int = 0) -> Any:
    """The NVML handle of this process's CUDA device `ordinal`, or None.

    Matched by PCI bus id, so it is the right GPU under CUDA_VISIBLE_DEVICES (NVML numbers
    every GPU of the machine; CUDA only the visible ones). A MIG instance maps to its GPU.
    """
    pynvml, _ = nvml()
    if pynvml is None:
        return None
    for lookup, key in ((pynvml.nvmlDeviceGetHandleByPciBusId, _pci_bus_id(ordinal)),
                        (pynvml.nvmlDeviceGetHandleByUUID, _uuid(ordinal))):
        if key is not None:
            try:
                return lookup(key)
            except pynvml.NVMLError:
                continue
    return None


def _pci_bus_id(ordinal: int) -> str | None:
    device, text = _cuda_device(ordinal), ctypes.create_string_buffer(64)
    if device is None or _cuda_driver().cuDeviceGetPCIBusId(text, 64, device) != 0:
        return None
    return text.value.decode()


def _uuid(ordinal: int) -> str | None:
    """The GPU's UUID as NVML writes it (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)."""
    device, raw = _cuda_device(ordinal), ctypes.create_string_buffer(16)
    if device is None or _cuda_driver().cuDeviceGetUuid(raw, device) != 0:
        return None
    h = raw.raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def gpu_properties() -> list[dict[str, str]]:
    """What a result depends on, per visible GPU: memory, compute capability, clocks, power
    limit, MIG and ECC mode (empty without NVML or a GPU). Each reading that fails is left out."""
    pynvml, _ = nvml()
    if pynvml is None:
        return []
    out = []
    for ordinal in range(len(cuda_devices()[0])):
        handle = nvml_handle(ordinal)
        if handle is None:
            continue
        sm, mem = pynvml.NVML_CLOCK_SM, pynvml.NVML_CLOCK_MEM
        readings = {
            "memory_mib": lambda h: str(pynvml.nvmlDeviceGetMemoryInfo(h).total // 2**20),
            "compute_capability": lambda h: "{}.{}".format(*pynvml.nvmlDeviceGetCudaComputeCapability(h)),
            "sm_clock_max_mhz": lambda h: str(pynvml.nvmlDeviceGetMaxClockInfo(h, sm)),
            "memory_clock_max_mhz": lambda h: str(pynvml.nvmlDeviceGetMaxClockInfo(h, mem)),
            "power_limit_w": lambda h: f"{pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000:.0f}",
            "mig": lambda h: _on_off(pynvml.nvmlDeviceGetMigMode(h)[0]),
            "ecc": lambda h: _on_off(pynvml.nvmlDeviceGetEccMode(h)[0]),
            "persistence": lambda h: _on_off(pynvml.nvmlDeviceGetPersistenceMode(h)),
        }
        gpu = {}
        for key, read in readings.items():
            with contextlib.suppress(pynvml.NVMLError):
                gpu[key] = read(handle)
        out.append(gpu)
    return out




#: NVML's reasons for clocks below their maximum, by bit (named once, shortest first).
_CLOCK_REASONS = (("gpu_idle", 0x1), ("applications_clocks", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
                  ("sync_boost", 0x10), ("sw_thermal", 0x20), ("hw_thermal", 0x40), ("hw_power_brake", 0x80),
                  ("display_clocks", 0x100))


def gpu_state(ordinal: int = 0) -> dict[str, Any] | None:
    """The GPU's SM clock (MHz) and why its clocks are held down now ('none' when they are not),
    or None without NVML. Read at a GPU case's start and end."""
    handle = nvml_handle(ordinal)
    if handle is None:
        return None
    pynvml, _ = nvml()
    state: dict[str, Any] = {}
    with contextlib.suppress(pynvml.NVMLError):
        state["sm_clock_mhz"] = float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
    reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) \
        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons  # the older name
    with contextlib.suppress(pynvml.NVMLError):
        mask = int(reasons(handle))
        state["clock_reasons"] = ",".join(name for name, bit in _CLOCK_REASONS if mask & bit) or "none"
    return state


def _on_off(value: Any) -> str:
    return "on" if value else "off"


# -- this process's device: initialised before any timer --------------------------------------

#: The RAPIDS libraries: they allocate through RMM, and importing them routes CuPy through it too.
RAPIDS = ("cuml", "cudf")


def choose_reader(library: str = "") -> tuple[str, str]:
    """(how a GPU case reads its cached dataset, why): 'cudf' (straight into device memory)
    for a RAPIDS library when cuDF imports here, else 'pyarrow' (into host memory, then one
    copy to the device). Another library (XGBoost, CatBoost) always reads with pyarrow:
    importing cuDF switches CuPy's allocator to RMM, so its inputs would be allocated
    differently depending on whether cuDF happens to be installed."""
    if library.split(".", 1)[0] not in RAPIDS:
        return "pyarrow", f"{library or 'this library'} does not allocate through RMM: read with pyarrow, cuDF unused"
    problem = import_problem("cudf")
    if problem:
        return "pyarrow", f"{problem}: read with pyarrow"
    return "cudf", ""


def device_reader(library: str = "") -> str:
    """`choose_reader`'s reader alone."""
    return choose_reader(library)[0]


#: What `init_device` set up for this process's device memory, in words (the `rmm_pool` tag).
_memory_setup = {"rmm_pool": "not set up"}


def memory_setup() -> dict[str, str]:
    """How `init_device` set up this process's device memory: {"rmm_pool": ...}."""
    return dict(_memory_setup)


def init_device(reader: str = "pyarrow", library: str = "") -> float:
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


def warm_harness_kernels(dtypes: tuple[str, ...] = ("float32", "float64", "int64")) -> None:
    """Run once, on tiny arrays, every device operation the harness itself times (the copy
    to the device in either layout, the layout change, the copy back), so that CuPy compiles
    their kernels (NVRTC, seconds the first time) here and not in the first case's timers."""
    for dtype in dtypes:
        host = np.zeros((4, 3), dtype=dtype)
        for order in ORDERS:
            copy = to_device(host, order)
            for other in ORDERS:
                in_layout(copy, other)
            to_host(copy)


def synchronize() -> None:
    """Wait for all queued device work, so a timer stopped next measures the real cost."""
    import cupy

    cupy.cuda.Device().synchronize()


# -- data: read, copied and laid out --------------------------------------------------------

def in_layout(array: Any, order: str) -> Any:
    """`array` (numpy or CuPy) row-major ('C') or column-major ('F'); a copy only when needed.

    1-D arrays are both at once and come back as they are.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    xp = np if isinstance(array, np.ndarray) else _cupy()
    return xp.ascontiguousarray(array) if order == "C" else xp.asfortranarray(array)


def layout(array: Any) -> str:
    """'C', 'F', 'C,F' (1-D or one column: both) or 'strided', read from the array's flags."""
    flags = array.flags
    both = [name for name, ok in (("C", flags.c_contiguous), ("F", flags.f_contiguous)) if ok]
    return ",".join(both) or "strided"


def to_device(array: np.ndarray, order: str = "C") -> Any:
    """Copy a host array into device memory (a CuPy array in `order`), waiting until it is there."""
    import cupy

    out = cupy.asarray(array, order=order)
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


def on_device(value: Any) -> bool:
    """Whether `value` lives in device memory (CuPy, cuDF, Numba: the CUDA array interface)."""
    return hasattr(value, "__cuda_array_interface__")


def read_split_device(directory: Any, parts: tuple[str, ...]) -> dict[str, Any]:
    """The cached split read by cuDF straight into device memory, as cuDF frames by split
    ('train', 'test'), waiting until the reads are done."""
    import cudf

    frames = {name: cudf.read_parquet(f"{directory}/{name}.parquet") for name in parts}
    synchronize()
    return frames


def frames_to_arrays(frames: dict[str, Any], order: str, wanted: tuple[str, ...]) -> dict[str, Any]:
    """CuPy arrays of cuDF frames, X in `order` (cuDF's `to_cupy` makes column-major
    matrices: converted here when C is asked for), for the names in `wanted` (X_train, ...)."""
    out = {}
    for name in wanted:
        kind, split = name.split("_", 1)
        frame = frames[split]
        if kind == "X":
            out[name] = in_layout(frame.drop(columns=["target"]).to_cupy(), order)
        else:
            out[name] = frame["target"].to_cupy()
    synchronize()
    return out


def _cupy() -> Any:
    import cupy

    return cupy


# -- device memory of this process ---------------------------------------------------------

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


# -- cuML -------------------------------------------------------------------------------------

def cuml_version() -> tuple[int, int] | None:
    """The installed cuML's (year, month) release, from its package metadata (no import)."""
    from importlib import metadata

    for dist in ("cuml-cu13", "cuml-cu12", "cuml"):
        try:
            text = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        year, month = text.split(".")[:2]
        return int(year), int(month)
    return None


class NvmlUnavailable(RuntimeError):
    """NVML cannot answer on this machine (or for this GPU); the message says why."""


def nvml_gpus(count: int = 1) -> list[tuple[Any, str]]:
    """(NVML handle, name) of the first `count` CUDA devices this process computes on
    (matched by `nvml_handle`); raises `NvmlUnavailable` saying why not."""
    pynvml, why = nvml()
    if pynvml is None:
        raise NvmlUnavailable(why)
    out = []
    for ordinal in range(count):
        handle = nvml_handle(ordinal)
        if handle is None:
            raise NvmlUnavailable(f"NVML does not know CUDA device {ordinal} (no CUDA driver, or the device "
                                  "is not visible to this process)")
        name = pynvml.nvmlDeviceGetName(handle)
        out.append((handle, name.decode() if isinstance(name, bytes) else str(name)))
    return out


def gpu_energy_mj(handle: Any) -> int:
    """The GPU's total energy counter: millijoules since the driver loaded (NVML, Volta and newer)."""
    pynvml, why = nvml()
    if pynvml is None:
        raise NvmlUnavailable(why)
    try:
        return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"this GPU has no total-energy counter: {exc}") from None


def install_accelerator(name: str) -> str:
    """Install a zero-code-change accelerator in this process, before sklearn is imported;
    return how it was installed, in words (for `ran_on`).

    cuml.accel is installed on plain device memory (`disable_uvm=True`): by default it
    switches RMM to managed (unified) memory, which would compare it with `cuml` under
    another allocator, count only resident pages, and can hang a GPU when oversubscribed.
    A cuml.accel without its profiler is refused: its fallbacks to the CPU could not be seen.
    """
    if name != "cuml.accel":
        raise ValueError(f"unknown accelerator {name!r}")
    version = cuml_version()
    if version is not None and version < ACCEL_MIN_CUML:
        raise RuntimeError(f"cuML {version[0]}.{version[1]:02d} has no cuml.accel.profile (new in 25.08): a CPU "
                           "fallback could not be told from a GPU fit; install cuML 25.12 or newer")
    import cuml.accel

    if not hasattr(cuml.accel, "profile"):
        raise RuntimeError("this cuml.accel has no profiler: a CPU fallback could not be told from a GPU fit")
    cuml.accel.install(disable_uvm=True)
    return f"cuml.accel installed with disable_uvm=True; {rmm_resource()}"


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


def accel_profile() -> Any:
    """cuml.accel's profiler as a context manager (`install_accelerator` made sure it exists)."""
    import cuml.accel

    return cuml.accel.profile(quiet=True)


def accel_calls(report: Any, class_name: str, method: str = "fit") -> tuple[int, int, list[str]] | None:
    """(GPU calls, CPU calls, fallback reasons) of `class_name.method` in a cuml.accel profile."""
    calls = getattr(report, "method_calls", None)
    if calls is None:
        return None
    gpu = cpu = 0
    reasons: set[str] = set()
    for qualname, stats in calls.items():
        if qualname.split(".")[-2:] == [class_name, method]:
            gpu += stats.gpu_calls
            cpu += stats.cpu_calls
            reasons |= set(stats.fallback_reasons)
    return gpu, cpu, sorted(reasons)


def cuml_device_selection() -> str | None:
    """cuML's global device type where this cuML still has one ('cpu'/'host' means CPU),
    or None: cuML 25.08 removed CPU execution outside cuml.accel, and the setting with it."""
    try:
        import cuml

        return str(cuml.global_settings.device_type.name).lower()
    except Exception:  # noqa: BLE001 - no such setting: this cuML runs its estimators on the GPU only
        return None


# -- Dask on GPUs -----------------------------------------------------------------------------

def local_cuda_cluster(**options: Any) -> Any:
    """A dask-cuda LocalCUDACluster: one worker per GPU, the first `n_workers` of the GPUs
    this process may see (dask-cuda reads CUDA_VISIBLE_DEVICES itself, UUIDs and MIG
    instances included; setting it here would pick other GPUs than the user's)."""
    from dask_cuda import LocalCUDACluster

    return LocalCUDACluster(**options)
