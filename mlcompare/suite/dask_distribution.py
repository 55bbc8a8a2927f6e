"""Spreading a suite over a Dask cluster: `mlcompare run --scheduler tcp://HOST:PORT`.

The submitting process keeps everything a local suite does (the order, the comparisons,
the store: only it talks to MLflow) and hands out the cases: one case at a time to each
worker, so two cases never share a worker, and GPU cases only to workers started with a
`GPU` resource (`dask worker ... --resources GPU=1`). On its worker a case runs as it does
locally, in a fresh process (`mlcompare.isolation`), and its plain result record, its
predictions and the worker's hardware fingerprint come back to be logged here.

Each worker uses the dataset the submitter prepared when it can see the same files (one
machine, a shared file system), else it makes the dataset itself from the same spec; its
content checksum must equal the submitter's, or the case fails rather than compare
different data.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypedDict

import numpy as np

from mlcompare.data import cache as datasets
from mlcompare.errors import InputError
from mlcompare.measure import cluster as dask_cluster
from mlcompare.records import CaseRecord, CaseSpec, Failure, Status
from mlcompare.suite import host as sysinfo
from mlcompare.suite import isolation
from mlcompare.suite.interrupts import Interrupted, SignalGuard

#: A worker advertising at least one of this resource takes GPU cases.
GPU_RESOURCE = "GPU"
_POLL_S = 0.5
_LIVENESS_S = 5.0  # how often the scheduler is asked which workers are still there


@dataclass(frozen=True)
class Worker:
    address: str
    host: str
    gpu: bool


@dataclass
class Connection:
    """A client of a Dask scheduler and the workers it had when the suite started."""

    client: Any
    workers: list[Worker]
    address: str

    def describe(self) -> str:
        gpus = sum(w.gpu for w in self.workers)
        return f"{len(self.workers)} Dask workers at {self.address} ({gpus} with a {GPU_RESOURCE} resource)"

    def close(self) -> None:
        self.client.close()


@dataclass
class Job:
    """One case to run remotely: its spec (as for a local worker) and its dataset."""

    index: int
    spec: CaseSpec
    dataset: datasets.DatasetSpec
    dataset_sha256: str
    on_gpu: bool


def connect(address: str) -> Connection:
    """A client of the scheduler at `address` and its workers; any problem is an input error."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError("--scheduler", None, "spreading a suite needs dask and distributed: "
                         "pip install 'mlcompare[dask]'") from None
    if "://" not in address:
        raise InputError("--scheduler", None, f"expected a scheduler address like tcp://HOST:8786, got {address!r}")
    try:
        client = Client(address, timeout=dask_cluster.CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise InputError("--scheduler", None, f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        facts = client.run(worker_facts)
    except Exception as exc:  # noqa: BLE001 - a worker without mlcompare, say
        client.close()
        raise InputError("--scheduler", None, f"the workers at {address} cannot run mlcompare "
                         f"(install it there, with the same extras): {type(exc).__name__}: {exc}") from None
    if not facts:
        client.close()
        raise InputError("--scheduler", None, f"the Dask cluster at {address} has no workers")
    resources = {a: w.get("resources", {}) for a, w in dask_cluster.scheduler_workers(client).items()}
    workers = [Worker(a, facts[a]["host"], resources.get(a, {}).get(GPU_RESOURCE, 0) >= 1) for a in sorted(facts)]
    return Connection(client, workers, address)


def worker_facts() -> dict[str, str]:
    """Run on each worker before the suite starts: proves mlcompare imports there."""
    import mlcompare

    return {"host": socket.gethostname(), "mlcompare": mlcompare.__version__}


#: The load of the machine this Dask worker runs on, read before each case it runs.
_LOAD = sysinfo.LoadMeter()


class _Where(TypedDict):
    """Where a remote case ran: the record keys every record from a worker has."""

    worker_host: str
    dask_worker: str
    worker_fingerprint: dict[str, str]


def run_remote(spec: CaseSpec, dataset: datasets.DatasetSpec, sha256: str, timeout_s: float) -> CaseRecord:
    """One case on a Dask worker, in a fresh process: the record, its predictions, where it ran."""
    from distributed import get_worker

    from mlcompare.measure.capability import skip_reason
    from mlcompare.measure.threads import default_threads

    where: _Where = {"worker_host": socket.gethostname(), "dask_worker": get_worker().address,
                     "worker_fingerprint": sysinfo.fingerprint()}
    reason = skip_reason(spec["library"], spec["device"], spec["params"], spec.get("distributed"))
    if reason:
        return {**where, "status": Status.SKIPPED, "skip_reason": f"{reason} (on worker {where['worker_host']})"}
    threads = spec.get("threads") or default_threads()
    spec = {**spec, "threads": threads}
    try:
        spec["dataset_dir"] = str(_dataset_here(spec["dataset_dir"], dataset, sha256))
    except Exception as exc:  # noqa: BLE001 - the case fails, the suite goes on
        return {**where, "status": Status.FAILED, "failure": Failure.DATASET,
                "error": f"dataset {dataset.label} on worker {where['worker_host']}: {exc}"}
    with tempfile.TemporaryDirectory(prefix="mlcompare-remote-") as tmp:
        spec["predictions_path"] = os.path.join(tmp, "predictions.npy")
        load = _LOAD.reading()  # this worker machine's load, as a local suite reads its own
        record = isolation.run_isolated(spec, timeout_s)
        if record["status"] == Status.OK:
            record["predictions"] = np.load(record.pop("predictions_path"))  # a path on this worker
            record["metrics"].update(load)
    return {**where, **record, "threads": threads}


def _dataset_here(prepared: str, dataset: datasets.DatasetSpec, sha256: str) -> Path:
    """The submitter's copy when this worker sees it, else one made here; checked either way."""
    path = Path(prepared)
    if not (path.is_dir() and datasets.definition(path)["content_sha256"] == sha256):
        path = datasets.materialise(dataset)
        made = datasets.definition(path)["content_sha256"]
        if made != sha256:
            raise ValueError(f"made here with sha256 {made[:16]}…, the submitter's has {sha256[:16]}…; "
                             "the two machines disagree on the data (different library versions?)")
    return path


def run_jobs(cluster: Connection, jobs: list[Job], timeout_s: float, guard: SignalGuard,
             started: Callable[[Job], None]) -> Iterator[tuple[int, CaseRecord]]:
    """Run the jobs on the workers, one per worker at a time; yield (index, record) as each ends.

    GPU jobs go only to GPU workers (and are skipped when there are none); CPU jobs go to
    CPU-only workers, or to GPU workers when the cluster has no other. A signal kills the
    cases in flight, yields them as `killed` and raises `Interrupted`.
    """
    client, queue = cluster.client, list(jobs)
    if not any(w.gpu for w in cluster.workers):
        for job in [j for j in queue if j.on_gpu]:
            queue.remove(job)
            yield job.index, {"status": Status.SKIPPED, "skip_reason": f"no worker of the Dask cluster advertises a "
                              f"{GPU_RESOURCE} resource (start GPU workers with --resources {GPU_RESOURCE}=1)"}
    free = list(cluster.workers)
    alive = list(cluster.workers)
    running: dict[Any, tuple[Job, Worker]] = {}
    checked = time.monotonic()
    try:
        while queue or running:
            if time.monotonic() - checked > _LIVENESS_S:  # a task pinned to a worker that left waits forever
                checked = time.monotonic()
                gone = _left(client, alive)
                for future, (job, worker) in list(running.items()):
                    if worker in gone:
                        del running[future]
                        future.cancel()
                        yield job.index, _lost(worker)
                alive = [w for w in alive if w not in gone]
                free = [w for w in free if w not in gone]
            cpu_only = any(not w.gpu for w in alive)
            for job in [j for j in queue if not any(_may_take(w, j, cpu_only) for w in alive)]:
                queue.remove(job)
                yield job.index, {"status": Status.FAILED, "failure": Failure.WORKER,
                                  "error": "no worker of the Dask cluster that could run this case is left"}
            for worker in list(free):
                taken = _next_for(worker, queue, cpu_only)
                if taken is None:
                    continue
                queue.remove(taken)
                free.remove(worker)
                future = client.submit(run_remote, taken.spec, taken.dataset, taken.dataset_sha256, timeout_s,
                                       workers=[worker.address], allow_other_workers=False, pure=False,
                                       key=f"mlcompare-case-{taken.index}-{uuid.uuid4().hex[:8]}")
                running[future] = (taken, worker)
                started(taken)
            with guard.interruptible():
                done = _wait_first(list(running))
            for future in done:
                job, worker = running.pop(future)
                free.append(worker)
                yield job.index, _result(future, worker)
                checked = 0.0 if future.status == "error" else checked  # did its worker die? look now
    except Interrupted as stop:
        _kill_remote(client, [w.address for _, w in running.values()])
        for future, (job, worker) in running.items():
            future.cancel()
            yield job.index, {"status": Status.KILLED, "failure": Failure.INTERRUPTED, "signal": stop.signal_name,
                              "error": f"interrupted by {stop.signal_name}, its process on {worker.host} killed",
                              "worker_host": worker.host}
        raise
    finally:
        if running:  # stopped early (fail-fast, an error): nothing of ours keeps running
            _kill_remote(client, [w.address for _, w in running.values()])
            for future in running:
                future.cancel()


def _next_for(worker: Worker, queue: list[Job], cpu_only_workers: bool) -> Job | None:
    """The first waiting job this worker may take (see `_may_take`)."""
    return next((j for j in queue if _may_take(worker, j, cpu_only_workers)), None)


def _may_take(worker: Worker, job: Job, cpu_only_workers: bool = False) -> bool:
    """GPU jobs need a GPU worker; CPU jobs stay off GPU workers while CPU-only ones exist
    (several GPU workers on one machine would time each other's CPU cases)."""
    return job.on_gpu == worker.gpu or (not job.on_gpu and not cpu_only_workers)


def _left(client: Any, workers: list[Worker]) -> set[Worker]:
    """The workers no longer in the cluster."""
    try:
        present = set(dask_cluster.scheduler_workers(client))
    except Exception:  # noqa: BLE001 - the scheduler cannot say now: assume nothing changed
        return set()
    return {w for w in workers if w.address not in present}


def _lost(worker: Worker) -> CaseRecord:
    return {"status": Status.FAILED, "failure": Failure.WORKER, "worker_host": worker.host,
            "error": f"the Dask worker {worker.address} on {worker.host} left the cluster while running this case"}


def _wait_first(futures: list[Any]) -> set[Any]:
    """The futures done within a short poll (a signal is noticed between polls)."""
    from distributed import wait

    try:
        done, _ = wait(futures, timeout=_POLL_S, return_when="FIRST_COMPLETED")
    except TimeoutError:  # distributed's TimeoutError is the builtin one
        return set()
    return set(done)


def _result(future: Any, worker: Worker) -> CaseRecord:
    """The record the worker returned, or a failed one saying what happened to it."""
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - the worker died, lost the task, or the call raised
        return {"status": Status.FAILED, "failure": Failure.WORKER, "worker_host": worker.host,
                "error": f"the Dask worker {worker.address} on {worker.host} did not return a result: "
                         f"{type(exc).__name__}: {exc}"}


def _kill_remote(client: Any, addresses: list[str]) -> None:
    """Kill the case processes running on these workers (a Dask task cannot be stopped itself)."""
    if addresses:
        try:
            client.run(isolation.kill_running, workers=addresses)
        except Exception:  # noqa: BLE001 - a worker gone already has nothing running
            pass
