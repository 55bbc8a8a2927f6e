"""Thread control for CPU implementations: how many threads, and which native pools are loaded.

CPU implementations get every physical core this process may use by default (hyper-threads
do not speed up these fits), or the experiment's `threads`; `n_jobs` is set from it where a
pairing leaves it open, and threadpoolctl limits the BLAS and OpenMP pools (in `case`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import psutil
from threadpoolctl import threadpool_info

from mlcompare.config.imports import accepted_params


def default_threads(cgroup_root: Path = Path("/sys/fs/cgroup")) -> int:
    """Every physical core this process may use (hyper-threads don't speed up these fits):
    no more than the CPUs it may run on, nor than its control group's CPU quota (a container
    given 2 CPUs of a 64-core host must not start 64 threads)."""
    physical = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    usable = len(psutil.Process().cpu_affinity()) if hasattr(psutil.Process, "cpu_affinity") else physical
    quota = cgroup_cpu_limit(cgroup_root)
    return max(1, min(physical, usable, math.ceil(quota) if quota else physical))


def cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """CPUs' worth of time this process's control group may use, or None when unlimited or unknown.

    cgroup v2: `cpu.max` ("QUOTA PERIOD" or "max PERIOD") of the process's own group;
    cgroup v1: `cpu/cpu.cfs_quota_us` over `cpu/cpu.cfs_period_us` (-1: unlimited).
    """
    group = _own_cgroup_v2(root)
    for path in ([root / group.lstrip("/") / "cpu.max"] if group else []) + [root / "cpu.max"]:
        try:
            quota, period = path.read_text().split()[:2]
        except (OSError, ValueError):
            continue
        return None if quota == "max" else int(quota) / int(period)
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def _own_cgroup_v2(root: Path) -> str | None:
    """This process's cgroup v2 path ("0::/some/group"), where /proc says it."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
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
    """The native thread pools loaded in this process and their sizes, e.g. 'openblas:2 openmp:2'."""
    pools = [f"{info['internal_api']}:{info['num_threads']}" for info in threadpool_info()]
    return " ".join(sorted(set(pools))) or "none loaded"


