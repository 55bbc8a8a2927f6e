"""Distributed implementations: a Dask cluster for one case, and its data spread over it.

A distributed implementation (`distributed: dask` in its pairing) trains through Dask:
`xgboost.dask` on CPU or GPU workers, `cuml.dask` on GPU workers. Its cluster is set by
three reserved params beside the estimator's own, so an experiment can sweep them:

- `n_workers`: how many workers hold a share of the data and train (default: 2 CPU
  workers, or one GPU worker per visible GPU);
- `threads_per_worker`: CPU threads of each worker (default: the case's threads divided
  among the workers, at least 1; GPU workers: 1);
- `scheduler_address`: an existing cluster to train on (`tcp://HOST:PORT`); without it
  the case starts its own `LocalCluster` (`LocalCUDACluster` for GPU implementations,
  one worker per GPU) in its worker process and closes it afterwards.

The rows are cut into `n_workers` contiguous blocks and each block is put on its own
worker, as a pandas partition of a dask DataFrame (converted to cuDF there on GPU
workers): every worker holds exactly one share, which cuML's forest needs and which makes
"2 workers" mean two workers really training. Only this module imports dask and
distributed, lazily; what touches cuDF or CUDA goes through `mlcompare.device`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from mlcompare.measure import device

DEFAULT_WORKERS = 2
#: Python packages each kind of distributed implementation needs in the process that runs it.
NEEDS = {"cpu": ("dask", "distributed", "pandas"), "gpu": ("dask", "distributed", "dask_cuda", "dask_cudf")}
CONNECT_TIMEOUT_S = 10


def skip_reason(on_gpu: bool, params: dict[str, Any]) -> str | None:
    """Why a distributed implementation with these params cannot run here, or None."""
    missing = [name for name in NEEDS["gpu" if on_gpu else "cpu"] if importlib.util.find_spec(name) is None]
    if missing:
        return f"{', '.join(missing)} not installed (pip install 'mlcompare[dask]'; GPU workers need the cuda extra)"
    if on_gpu and not params.get("scheduler_address"):
        wanted = params.get("n_workers") or 1
        gpus, why = device.cuda_devices()
        if why:
            return why
        if len(gpus) < wanted:
            return f"n_workers={wanted} needs {wanted} GPUs for a LocalCUDACluster, this machine has {len(gpus)}"
    return None


@dataclass
class Cluster:
    """A Dask client and the workers one case trains on."""

    client: Any
    workers: list[str]
    kind: str  # "LocalCluster", "LocalCUDACluster" or the scheduler's address
    threads_per_worker: int
    start_time_s: float
    local: bool  # the workers are this process's children (their memory can be measured)
    _closers: list[Any] = field(default_factory=list, repr=False)

    def describe(self) -> str:
        return f"{_count(len(self.workers), 'Dask worker')} × {_count(self.threads_per_worker, 'thread')} ({self.kind})"

    def place(self, arrays: dict[str, np.ndarray], on_gpu: bool, labels: bool = True) -> dict[str, Any]:
        """X_train, X_test (and y_train) as dask DataFrames/Series, a contiguous block on each worker.

        Returns once every block is on its worker (in device memory on GPU workers): the
        time this takes is the case's transfer time.
        """
        from distributed import wait

        names = ("X_train", "y_train", "X_test") if labels else ("X_train", "X_test")
        out = {name: self._spread(arrays[name], on_gpu) for name in names}
        persisted = self.client.persist(list(out.values()))
        wait(persisted)
        return dict(zip(out, persisted))

    def _spread(self, array: np.ndarray, on_gpu: bool) -> Any:
        import dask.dataframe as dd
        import pandas as pd

        def frame(block: np.ndarray, start: int) -> Any:
            index = pd.RangeIndex(start, start + len(block))
            if block.ndim == 1:
                return pd.Series(block, index=index, name="target")
            return pd.DataFrame(block, index=index, columns=[f"f{i}" for i in range(block.shape[1])])

        bounds = np.linspace(0, len(array), len(self.workers) + 1).astype(int)
        blocks = [self.client.scatter(frame(array[lo:hi], int(lo)), workers=[worker], hash=False)
                  for worker, lo, hi in zip(self.workers, bounds[:-1], bounds[1:])]
        divisions = [int(b) for b in bounds[:-1]] + [int(bounds[-1]) - 1]
        # dask annotates `divisions` as a tuple but takes any sequence; kept the list it always was
        collection = dd.from_delayed(blocks, meta=frame(array[:0], 0), divisions=divisions)  # type: ignore[arg-type]
        # cuDF conversion happens on each worker, on the block it already holds
        return collection.to_backend("cudf") if on_gpu else collection

    def estimator_params(self, cls: type[Any], params: dict[str, Any]) -> dict[str, Any]:
        """Tell estimators that take a worker list (cuml.dask's forest) which workers to use."""
        if "workers" in inspect.signature(cls.__init__).parameters and "workers" not in params:
            return {**params, "workers": list(self.workers)}
        return params

    def thread_pools(self) -> str:
        """The native thread pools of the workers, e.g. 'openmp:1 (each of 2 workers)'."""
        from mlcompare.measure.threads import thread_pools

        pools = set(self.client.run(thread_pools, workers=self.workers).values())
        each = "the one worker" if len(self.workers) == 1 else f"each of {len(self.workers)} workers"
        return " | ".join(sorted(pools)) + f" ({each})"

    def close(self) -> None:
        for closer in reversed(self._closers):
            with contextlib.suppress(Exception):
                closer.close()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def collect(value: Any) -> Any:
    """A lazy Dask result computed into the client's memory (other values as they are).

    Asked through `dask.is_dask_collection`: reading `.dask` of a dask-expr collection
    builds its graph, which a timed predict would then build twice.
    """
    import dask

    return value.compute() if dask.is_dask_collection(value) else value


@contextlib.contextmanager
def cluster(settings: dict[str, Any], on_gpu: bool, threads: int | None) -> Iterator[Cluster]:
    """The case's cluster: its own local one, or workers of the scheduler at `scheduler_address`."""
    n_workers = settings.get("n_workers") or default_workers(on_gpu)
    started = time.perf_counter()
    if settings.get("scheduler_address"):
        made = _connect(settings["scheduler_address"], n_workers, on_gpu)
    else:
        per_worker = settings.get("threads_per_worker") or (1 if on_gpu else max(1, (threads or 1) // n_workers))
        made = _start_local(n_workers, per_worker, on_gpu)
    made.start_time_s = time.perf_counter() - started
    try:
        yield made
    finally:
        made.close()


def default_workers(on_gpu: bool) -> int:
    """CPU: 2; GPU: every GPU this process sees."""
    return max(1, len(device.cuda_devices()[0])) if on_gpu else DEFAULT_WORKERS


def _start_local(n_workers: int, per_worker: int, on_gpu: bool) -> Cluster:
    import dask
    from distributed import Client, LocalCluster

    # Dask's nanny starts workers with OMP/MKL/OpenBLAS at 1 thread: give them the
    # threads each worker has, so a 1-worker cluster is not a 1-thread one.
    pools = {f"distributed.nanny.pre-spawn-environ.{name}": str(per_worker)
             for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    options = dict(n_workers=n_workers, threads_per_worker=per_worker, dashboard_address=None,
                   silence_logs=logging.ERROR)
    with dask.config.set(pools):
        local = (device.local_cuda_cluster(**options) if on_gpu
                 else LocalCluster(processes=True, host="127.0.0.1", **options))
    client = Client(local)
    workers = sorted(scheduler_workers(client))
    return Cluster(client, workers, type(local).__name__, per_worker, 0.0, local=True, _closers=[local, client])


def _connect(address: str, n_workers: int, on_gpu: bool) -> Cluster:
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except OSError as exc:
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    workers = scheduler_workers(client)
    usable = sorted(a for a, w in workers.items() if not on_gpu or w.get("resources", {}).get("GPU", 0) >= 1)
    if len(usable) < n_workers:
        client.close()
        kind = "workers advertising a GPU resource" if on_gpu else "workers"
        raise RuntimeError(f"n_workers={n_workers}, but the cluster at {address} has {len(usable)} {kind}")
    chosen = usable[:n_workers]
    threads = min(int(workers[a].get("nthreads", 1)) for a in chosen)
    return Cluster(client, chosen, address, threads, 0.0, local=False, _closers=[client])


def scheduler_workers(client: Any) -> dict[str, dict[str, Any]]:
    """Every worker the scheduler knows, by address (newer distributed lists only 5 unless asked)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before 2025.4 lists all of them
        info = client.scheduler_info()
    return info["workers"]
