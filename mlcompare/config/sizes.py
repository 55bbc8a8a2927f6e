"""Dataset sizes checked against this machine before anything runs.

A dataset is generated (or read) whole, cached as Parquet and read whole by every case, so
one whose arrays are larger than this machine's memory, or than the free space of the
dataset cache, can only fail, case after case, after minutes of work. `check_sizes` refuses
it first, in one line naming the file, the dataset entry, its size and what is available;
`mlcompare run --no-size-check` (or `validate --no-size-check`) skips the check, for a
machine that knows better (swap, a cache on another disk filled as it goes).

What counts is the arrays' own bytes (features and target, in the dataset's dtype); the
cache holds them twice (Parquet and NumPy files, about as large each), and the disk check
counts both. Sizes of a user's file are unknown until it is read.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mlcompare.data.cache import DatasetSpec, data_dir
from mlcompare.errors import InputError

if TYPE_CHECKING:
    from mlcompare.config.experiment import Experiment

#: Copies of a dataset's arrays the cache holds (`data/cache.py`: Parquet and NumPy files).
CACHED_COPIES = 2

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(n: float) -> str:
    """1536 -> '1.5 KiB', 4e15 -> '3.55 PiB'."""
    for unit in _BYTE_UNITS:
        if abs(n) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def array_bytes(spec: DatasetSpec) -> int | None:
    """Bytes of a dataset's arrays (features and target, in its dtype); None when unknown."""
    rows = spec.n_samples or (spec.table.rows if spec.table is not None else None)
    features = spec.n_features or (spec.table.features if spec.table is not None else None)
    if not rows or not features:
        return None
    return rows * (features + 1) * np.dtype(spec.dtype).itemsize


def memory_bytes() -> int:
    import psutil

    return psutil.virtual_memory().total


def free_disk_bytes(folder: Path) -> tuple[int, Path]:
    """Free bytes of the file system the folder is (or will be) on, and the folder that exists."""
    existing = folder.expanduser().resolve()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return shutil.disk_usage(existing).free, existing


def check_sizes(experiment: Experiment, memory: int | None = None, free_disk: int | None = None,
                cache: Path | None = None) -> None:
    """Raise InputError for the first dataset whose arrays cannot fit this machine's memory, or
    the dataset cache's free disk space together with the other datasets not cached yet."""
    memory = memory_bytes() if memory is None else memory
    cache = cache or data_dir()
    if free_disk is None:
        free_disk, _ = free_disk_bytes(cache)
    entries = getattr(experiment, "dataset_entries", None) or []
    new_bytes = 0
    seen: set[str] = set()
    for i, spec in enumerate(experiment.datasets):
        key = spec.fingerprint()
        nbytes = array_bytes(spec)
        if key in seen or nbytes is None:
            continue
        seen.add(key)
        field_ = f"datasets[{entries[i]}]" if i < len(entries) else "datasets"
        what = f"{spec.label} is {human_bytes(nbytes)} as {spec.dtype} arrays"
        override = "(--no-size-check to run it anyway)"
        if nbytes > memory:
            raise InputError(experiment.source, field_, f"{what}, more than this machine's "
                             f"{human_bytes(memory)} of memory {override}")
        if (cache / key / "definition.json").exists():
            continue
        cached = CACHED_COPIES * nbytes
        new_bytes += cached
        if new_bytes > free_disk:
            others = f" (with the other new datasets: {human_bytes(new_bytes)})" if new_bytes > cached else ""
            raise InputError(experiment.source, field_, f"{what}, {human_bytes(cached)} cached (Parquet and NumPy)"
                             f"{others}, more than the {human_bytes(free_disk)} free for the dataset cache {cache} "
                             f"{override}")
