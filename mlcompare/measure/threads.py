"""Thread control: how many threads, and which native pools are loaded.

CPU implementations get one thread per physical core this process may use by default (as
scikit-learn_bench does; whether hyper-threads would speed a given fit up is not assumed
either way: sweep `threads: [...]` to see), or the experiment's `threads`; `n_jobs` is set
from it where a pairing leaves it open, and threadpoolctl limits the BLAS and OpenMP pools
(in `case`). GPU implementations get the same count for their host-side threads (XGBoost's
`n_jobs`, CatBoost's `thread_count`), so that a GPU case is not handed more (or fewer) CPU
threads than the CPU baseline it is compared with.
"""

from __future__ import annotations

import ctypes
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
from threadpoolctl import ThreadpoolController, threadpool_info

from mlcompare.pairings.imports import accepted_params


def default_threads(cgroup_root: Path = Path("/sys/fs/cgroup"),
                    topology: Path = Path("/sys/devices/system/cpu")) -> int:
    """One thread per physical core among the CPUs this process may run on (its affinity mask),
    and no more than its control groups' CPU quota (a container given 2 CPUs of a 64-core
    host must not start 64 threads).

    Not `joblib.cpu_count(only_physical_cores=True)`: it takes the smaller of the affinity
    mask's CPU count and the machine's physical cores (so a mask of two hyper-threads of one
    core counts 2), and reads only the root group's `cpu.max`, not a limit set on a parent
    group of this process's own (cgroup v2 nests them)."""
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    physical = physical_cores(usable, topology)
    quota = cgroup_cpu_limit(cgroup_root)
    return max(1, min(physical, math.ceil(quota) if quota else physical))


def physical_cores(cpus: list[int] | None = None, topology: Path = Path("/sys/devices/system/cpu")) -> int:
    """The physical cores among `cpus` (logical CPU numbers; None: all of them): distinct
    (package, core) pairs in the kernel's topology, so two hyper-threads of one core count once
    and a mask that leaves out one thread of a core still counts it. Where the topology cannot
    be read: psutil's machine-wide count, capped by the number of CPUs."""
    if cpus is not None:
        cores = set()
        for cpu in cpus:
            base = topology / f"cpu{cpu}" / "topology"
            try:
                cores.add((int((base / "physical_package_id").read_text()), int((base / "core_id").read_text())))
            except (OSError, ValueError):
                cores = set()
                break
        if cores:
            return len(cores)
    machine = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    return min(machine, len(cpus)) if cpus else machine


def cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup"), proc: Path = Path("/proc/self/cgroup")) -> float | None:
    """CPUs' worth of time this process's control groups may use, or None when unlimited or unknown.

    cgroup v2: the smallest `cpu.max` ("QUOTA PERIOD" or "max PERIOD") of the process's own
    group and every group above it (a limit set on a parent group binds its children too);
    cgroup v1: `cpu/cpu.cfs_quota_us` over `cpu/cpu.cfs_period_us` (-1: unlimited).
    """
    group = _own_cgroup_v2(root, proc)
    if group is not None:
        limits: list[float] = []
        seen = False
        path = Path(group.lstrip("/"))
        for level in [path, *path.parents]:
            try:
                limit, every = (root / level / "cpu.max").read_text().split()[:2]
            except (OSError, ValueError):
                continue
            seen = True
            if limit != "max":
                limits.append(int(limit) / int(every))
        if seen:
            return min(limits) if limits else None
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def _own_cgroup_v2(root: Path, proc: Path = Path("/proc/self/cgroup")) -> str | None:
    """This process's cgroup v2 path ("0::/some/group"), where /proc says it."""
    try:
        for line in proc.read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        return None
    return None


#: What estimators call their thread count: scikit-learn's name, then CatBoost's (its own
#: thread pool, which threadpoolctl cannot limit).
THREAD_PARAMS = ("n_jobs", "thread_count")


def with_threads(cls: type, params: dict[str, Any], threads: int | None) -> dict[str, Any]:
    """Give an estimator that takes `n_jobs` (or `thread_count`) the experiment's thread count.

    Only where the pairing leaves it open (absent, None or -1): an explicit number in
    a pairing is a deliberate choice and is kept.
    """
    if not threads:
        return params
    accepted = accepted_params(cls)
    name = next((n for n in THREAD_PARAMS if n in accepted), None)
    if name is None or params.get(name, -1) not in (-1, None):
        return params
    return {**params, name: threads}


def thread_pools() -> str:
    """The native thread pools loaded in this process and their sizes, e.g. 'openblas:2 openmp:2'.

    Their sizes are read now; which pools there are, from the warm worker's scan where no
    shared library has been loaded since (`remember_pools`), else from a new scan."""
    remembered = _still_loaded()
    infos = remembered.info() if remembered is not None else threadpool_info()
    pools = [f"{info['internal_api']}:{info['num_threads']}" for info in infos]
    return " ".join(sorted(set(pools))) or "none loaded"


#: The native pools the warm worker found once its imports were done, and how many shared
#: objects were loaded then (`remember_pools`).
_remembered: tuple[ThreadpoolController, int] | None = None


def remember_pools() -> None:
    """In the warm worker, once it has imported what its cases need: find the loaded native
    pools once for every process it forks (a scan of the loaded libraries cost 6-9 ms a
    process here, twice a case; counting the loaded objects, 0.2 ms)."""
    global _remembered
    count = loaded_objects()
    _remembered = (ThreadpoolController(), count) if count is not None else None


@contextmanager
def limit_pools(threads: int) -> Iterator[None]:
    """Every loaded native pool limited to `threads` until the block ends: the warm worker's
    scan where this process has loaded no shared library since it was forked, else (a library
    loaded since, a fresh process) a new scan (threadpoolctl).

    A pool already of that size is left alone. Setting one is not free: in a process forked
    from the warm worker, OpenBLAS answers `openblas_set_num_threads` by starting its worker
    threads, which then spin for about 0.1 s with nothing to do (two OpenBLAS copies here,
    NumPy's and SciPy's: both cores busy for 0.1 s at the start of every case's process,
    beside its data read and its first fit). A library that needs them starts them itself
    when it first calls into BLAS, as it would in a user's process.
    """
    remembered = _still_loaded()
    controller = remembered if remembered is not None else ThreadpoolController()
    changed = [(pool, pool.num_threads) for pool in controller.lib_controllers if pool.num_threads != threads]
    for pool, _ in changed:
        pool.set_num_threads(threads)
    try:
        yield
    finally:
        for pool, before in reversed(changed):
            pool.set_num_threads(before)


def set_pools(threads: int) -> None:
    """In the warm worker, before it forks any case: its pools sized to the suite's thread
    count once, so that `limit_pools` in the processes it forks finds them so and sets none."""
    for pool in ThreadpoolController().lib_controllers:
        if pool.num_threads != threads:
            pool.set_num_threads(threads)


def _still_loaded() -> ThreadpoolController | None:
    """The warm worker's scan, where this process has loaded the same shared objects since."""
    if _remembered is None or loaded_objects() != _remembered[1]:
        return None
    return _remembered[0]


_ON_OBJECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)


def loaded_objects() -> int | None:
    """How many shared objects this process has loaded (glibc's `dl_iterate_phdr`, the walk
    threadpoolctl's scan makes, without matching each path); None where there is no such call."""
    try:
        walk = ctypes.CDLL(None).dl_iterate_phdr
    except (AttributeError, OSError):
        return None
    count = 0

    def one(info: int, size: int, data: int) -> int:
        nonlocal count
        count += 1
        return 0

    walk(_ON_OBJECT(one), None)
    return count
