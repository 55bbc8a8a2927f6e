"""The reserved params of a distributed implementation: they shape its Dask cluster.

Declared here, below both sides: the suite checks them while it validates an experiment,
and a case's process splits them from the estimator's own (`mlcompare.measure.cluster`).
"""

from __future__ import annotations

from typing import Any

#: The reserved params of a distributed implementation: they shape its cluster.
CLUSTER_PARAMS = ("n_workers", "threads_per_worker", "scheduler_address")


def split_params(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the estimator's own params, the cluster's params)."""
    own = {k: v for k, v in params.items() if k not in CLUSTER_PARAMS}
    return own, {k: v for k, v in params.items() if k in CLUSTER_PARAMS}


def check_cluster_params(params: dict[str, Any]) -> tuple[str, str] | None:
    """(param, what is wrong) for the first bad cluster param, or None."""
    for key in ("n_workers", "threads_per_worker"):
        value = params.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            return key, f"expected a whole number of at least 1, got {value!r}"
    address = params.get("scheduler_address")
    if address is not None and (not isinstance(address, str) or "://" not in address):
        return "scheduler_address", f"expected a scheduler address like tcp://HOST:8786, got {address!r}"
    return None
