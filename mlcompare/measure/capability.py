"""Whether an implementation can run on this machine, and if not, why (the `skip_reason`).

Asked by the suite before a case runs, by `mlcompare list`, and on each Dask worker of a
spread suite, from the same function: its library, its device and, for a distributed
implementation, its engine's packages and GPUs.
"""

from __future__ import annotations

from typing import Any

from mlcompare.measure import cluster as dask_cluster
from mlcompare.measure import device


def skip_reason(library: str, device_kind: str, params: dict[str, Any], engine: str | None = None) -> str | None:
    """Why an implementation (its library, device, params and distributed engine) cannot
    run on this machine, or None."""
    reason = device.skip_reason(library, device_kind)
    if reason or not engine:
        return reason
    return dask_cluster.skip_reason(device_kind == "gpu", params)
