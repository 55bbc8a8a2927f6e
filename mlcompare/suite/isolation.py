"""Run a case in a process of its own and turn whatever happens into a record.

CPU cases run in a child forked by the suite's warm worker (`suite.warm`) when run_suite
has one `serving`; the others, and every case outside a suite, in a fresh Python process.
The case spec and the result travel as JSON files; the data is read by the worker from
the dataset cache. A crash, a kill by signal, a timeout or an interrupt of the suite
become records with the reason (`failure`: timeout, signal, exit, exception,
out_of_memory, interrupted) and the tail of the worker's stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, TypedDict, cast

import mlcompare
from mlcompare import collector
from mlcompare.measure.timed_lock import Turns
from mlcompare.measure.timing import FIRST_FIT
from mlcompare.measure.worker import PARENT_PID_ENV
from mlcompare.records import CaseRecord, CaseSpec, Failure, Recorder, Status
from mlcompare.redaction import redact
from mlcompare.suite.interrupts import Interrupted, SignalGuard
from mlcompare.suite.warm_worker import ForkedCase, SpawnedCase, WarmWorker, WorkerLost, forkable, preloads

if TYPE_CHECKING:
    from mlcompare.config.experiment import Case

_STDERR_TAIL = 20_000  # enough for a traceback and faulthandler's list of extension modules
#: Process ids of the workers running now in this process (a Dask worker may run one
#: case per thread): `kill_running` ends them when a spread suite stops.
_RUNNING: set[int] = set()


@dataclass
class Serving:
    """What a suite lends its cases: the warm worker, and the turns its writer takes with them."""

    warm: WarmWorker | None = None
    turns: Turns | None = None


_SERVING = Serving()


@contextmanager
def serving(warm: WarmWorker | None, turns: Turns | None) -> Iterator[Serving]:
    """While a suite runs here: its CPU cases go to `warm`, every case starts holding a turn."""
    global _SERVING
    previous, _SERVING = _SERVING, Serving(warm, turns)
    try:
        yield _SERVING
    finally:
        _SERVING = previous


@contextmanager
def case_processes(cases: list[Case], allowed: tuple[str, ...], skip_reason: Callable[[Case], str | None],
                   recorder: Recorder, scratch: Path, warm: WarmWorker | bool = True,
                   local: bool = True, threads: int | None = None) -> Iterator[None]:
    """While a suite's cases run here: its runs are written behind (by the recorder's thread,
    never during a case's timed calls) and its CPU cases are forked from a warm worker (`warm`,
    or one started here when True). A suite spread over a Dask cluster (not `local`) writes
    each run as it comes back and lends nothing."""
    if not local:
        yield
        return
    turns = Turns(scratch / "quiet.lock")
    # a finished case's run is written once the next case has started and its timed calls are
    # over: one run a case, a backlog spread over the cases that follow (`write_behind`)
    recorder.write_behind(turns.writer, hold=True)
    turns.handed_over = lambda: recorder.release_queued(1)
    server = warm if isinstance(warm, WarmWorker) else None
    if warm is True:
        server = start_warm_worker(cases, allowed, skip_reason, threads=threads)
    try:
        with serving(server, turns):
            yield
    finally:
        if server is not None and server is not warm:
            server.shutdown()


def renew_warm_worker() -> bool:
    """Between a suite's rounds: a new warm worker in place of the one that served the last
    round (`WarmWorker.renew` says why), ready before the next case's time limit starts."""
    return _SERVING.warm.renew() if _SERVING.warm is not None else False


#: The store's secrets, which a case's process (and the Dask workers a case starts) never needs:
#: it never talks to MLflow (the suite records it). Dropped from its environment.
_STORE_SECRETS = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN")
#: The store's URIs, kept for what may read them there, their passwords and tokens masked.
_STORE_URIS = ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI")


def worker_env() -> dict[str, str]:
    """The environment of a case's process (and of the warm worker): this one, mlcompare
    importable, without the tracking store's password or token (estimators' code runs there)."""
    env = {k: v for k, v in os.environ.items() if k not in _STORE_SECRETS}
    for name in _STORE_URIS:
        if name in env:
            env[name] = redact(env[name])
    package_root = str(Path(mlcompare.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env[PARENT_PID_ENV] = str(os.getpid())
    return env


def start_warm_worker(cases: list[Case], allowed: tuple[str, ...], skip_reason: Callable[[Case], str | None],
                      started: WarmWorker | None = None, threads: int | None = None,
                      renewals: int = 0) -> WarmWorker | None:
    """A warm worker for the CPU cases that can run here (None when there is none; `started`,
    one started before the experiment was read, is then shut down); it imports their
    estimators now, sizes its native pools to `threads` (the suite's) and is waited for at its
    first case. `renewals`: the servers the suite's later rounds will take, started now
    (`WarmWorker.add_spares`)."""
    preload = preloads(cases, skip_reason)
    if started is None:
        if not preload:
            return None
        started = WarmWorker(preload, allowed, worker_env(), threads)
    elif not preload:
        started.shutdown()
        return None
    else:
        started.expect(preload, allowed, threads)
    started.add_spares(renewals)
    return started


def start_warm_worker_early() -> WarmWorker:
    """A warm worker that does its base imports while the experiment file is being read."""
    return WarmWorker(None, (), worker_env())


def run_isolated(spec: CaseSpec, timeout_s: float, guard: SignalGuard | None = None) -> CaseRecord:
    """Run the case in a worker; a signal caught by `guard` kills it and gives a `killed` record."""
    guard = guard or SignalGuard()  # not installed: never raises
    here = _SERVING
    with tempfile.TemporaryDirectory(prefix="mlcompare-case-") as tmp:
        spec_path, result_path, err_path = (Path(tmp) / n for n in ("spec.json", "result.json", "stderr.txt"))
        progress_path = Path(tmp) / "progress.txt"
        spec_path.write_text(json.dumps({**spec, "progress_path": str(progress_path)}))
        launched: list[float] = []
        try:
            worker = _launch(spec, spec_path, result_path, err_path, here, guard, launched, timeout_s)
        except Interrupted as stop:
            return _killed(stop, err_path)
        except WorkerLost as lost:
            return _lost(lost, err_path, here)
        _RUNNING.add(worker.pid)
        try:
            with guard.interruptible():
                # the limit counts from the launch: it covers the process's start as well as its fits
                code = worker.wait(max(1e-3, timeout_s - (time.perf_counter() - launched[0])))
        except subprocess.TimeoutExpired:
            stopped = time.time()
            worker.kill()
            return {"status": Status.FAILED, "failure": Failure.TIMEOUT, "process": worker.kind,
                    "error": f"timeout: no result after {timeout_s:g} s, worker killed",
                    "stderr_tail": _tail(err_path), **_unfinished_first_fit(progress_path, stopped)}
        except Interrupted as stop:
            worker.kill()
            return _killed(stop, err_path) | {"process": worker.kind}
        except WorkerLost as lost:
            return _lost(lost, err_path, here)
        except BaseException:  # anything else (KeyboardInterrupt without a guard): no orphan
            worker.kill()
            raise
        finally:
            _RUNNING.discard(worker.pid)
        worker.kill()  # what the worker started and left behind goes with it
        process = {"process": worker.kind}
        if result_path.exists():
            # the process's whole cost, from its launch (its turn held) to its record read
            record = json.loads(result_path.read_text()) | process
            record["process_wall_s"] = time.perf_counter() - launched[0]
            if record["status"] != Status.OK:
                record["stderr_tail"] = _tail(err_path)
            return record
        if code < 0:
            name = _signal_name(-code)
            why = f"worker killed by signal {name}"
            if name == "SIGKILL":
                why += " (often the kernel's out-of-memory killer)"
            return {"status": Status.FAILED, "failure": Failure.SIGNAL, "signal": name, "error": why,
                    "stderr_tail": _tail(err_path), "process": worker.kind}
        return {"status": Status.FAILED, "failure": Failure.EXIT,
                "error": f"worker exited with code {code} and no result", "stderr_tail": _tail(err_path),
                "process": worker.kind}


def _launch(spec: CaseSpec, spec_path: Path, result_path: Path, err_path: Path, here: Serving,
            guard: SignalGuard, launched: list[float], timeout_s: float) -> ForkedCase | SpawnedCase:
    """Start the case's process, holding the suite's turn when it has one (handed over, then
    closed here); the moment it is launched, once the warm worker is ready and the turn is held,
    is appended to `launched`. Waiting for the turn or the warm worker may be interrupted."""
    with guard.interruptible():
        if here.warm is not None and forkable(spec):
            here.warm.ready()  # its imports (and its spares') are not the case's time
        quiet_fd = here.turns.for_case() if here.turns else None
    collector.started()  # the suite's start-up is over at its first case
    launched.append(time.perf_counter())
    try:
        if here.warm is not None and forkable(spec):
            with guard.interruptible():
                forked = here.warm.launch(spec_path, result_path, err_path, quiet_fd, spec, timeout_s)
            if forked is not None:
                return forked
        command = [sys.executable, "-m", "mlcompare.measure.worker", str(spec_path), str(result_path)]
        if quiet_fd is not None:
            command.append(str(quiet_fd))
        return SpawnedCase(command, worker_env(), err_path, quiet_fd)
    finally:
        if quiet_fd is not None:
            os.close(quiet_fd)
            cast(Turns, here.turns).handed_over()  # the fd was taken from them


def _killed(stop: Interrupted, err_path: Path) -> CaseRecord:
    return {"status": Status.KILLED, "failure": Failure.INTERRUPTED, "signal": stop.signal_name,
            "error": f"interrupted by {stop.signal_name}, worker killed", "stderr_tail": _tail(err_path)}


def _lost(lost: WorkerLost, err_path: Path, here: Serving) -> CaseRecord:
    log = here.warm.log_tail() if here.warm else ""
    return {"status": Status.FAILED, "failure": Failure.EXIT, "process": "forked", "error": str(lost),
            "stderr_tail": _tail(err_path) + (f"\n--- warm worker's log ---\n{log}" if log else "")}


def kill_running() -> int:
    """SIGKILL every case worker this process is running now; how many there were."""
    pids = list(_RUNNING)
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return len(pids)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class _FirstFit(TypedDict, total=False):
    first_fit_unfinished_s: float


def _unfinished_first_fit(progress: Path, stopped: float) -> _FirstFit:
    """{'first_fit_unfinished_s': seconds} when the worker was stopped inside its first fit
    (its last mark, `timing.FIRST_FIT`), else nothing."""
    try:
        last = progress.read_text(encoding="utf-8").split("\n")[-2].split()
    except (OSError, IndexError):
        return {}
    if len(last) != 2 or last[0] != FIRST_FIT:
        return {}
    return {"first_fit_unfinished_s": max(0.0, stopped - float(last[1]))}


def _tail(path: Path) -> str:
    data = path.read_bytes()[-_STDERR_TAIL:] if path.exists() else b""
    return data.decode(errors="replace")
