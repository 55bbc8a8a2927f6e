"""Dask on GPUs: a local CUDA cluster for a distributed case."""

from __future__ import annotations

from typing import Any


def local_cuda_cluster(**options: Any) -> Any:
    """A dask-cuda LocalCUDACluster: one worker per GPU, the first `n_workers` of the GPUs
    this process may see (dask-cuda reads CUDA_VISIBLE_DEVICES itself, UUIDs and MIG
    instances included; setting it here would pick other GPUs than the user's)."""
    from dask_cuda import LocalCUDACluster

    return LocalCUDACluster(**options)
