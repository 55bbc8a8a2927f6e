"""Thread control for CPU implementations: how many threads, and which native pools are loaded.

CPU implementations get every physical core this process may use by default (hyper-threads
do not speed up these fits), or the experiment's `threads`; `n_jobs` is set from it where a
pairing leaves it open, and threadpoolctl limits the BLAS and OpenMP pools (in `case`).
"""

from __future__ import annotations

from typing import Any

import psutil
from threadpoolctl import threadpool_info

from mlcompare.config.imports import accepted_params


def default_threads() -> int:
    """Every physical core this process may use (hyper-threads don't speed up these fits)."""
    physical = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    usable = len(psutil.Process().cpu_affinity()) if hasattr(psutil.Process, "cpu_affinity") else physical
    return max(1, min(physical, usable))


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


