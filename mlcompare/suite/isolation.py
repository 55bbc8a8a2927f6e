"""Run a case in a fresh Python process and turn whatever happens into a record.

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
from pathlib import Path

import mlcompare
from mlcompare.measure.timing import FIRST_FIT
from mlcompare.measure.worker import PARENT_PID_ENV
from mlcompare.records import CaseRecord, CaseSpec, Failure, Status
from mlcompare.suite.interrupts import Interrupted, SignalGuard

_STDERR_TAIL = 20_000  # enough for a traceback and faulthandler's list of extension modules
#: Process ids of the workers running now in this process (a Dask worker may run one
#: case per thread): `kill_running` ends them when a spread suite stops.
_RUNNING: set[int] = set()


def run_isolated(spec: CaseSpec, timeout_s: float, guard: SignalGuard | None = None) -> CaseRecord:
    """Run the case in a worker; a signal caught by `guard` kills it and gives a `killed` record."""
    guard = guard or SignalGuard()  # not installed: never raises
    with tempfile.TemporaryDirectory(prefix="mlcompare-case-") as tmp:
        spec_path, result_path, err_path = (Path(tmp) / n for n in ("spec.json", "result.json", "stderr.txt"))
        progress_path = Path(tmp) / "progress.txt"
        spec_path.write_text(json.dumps({**spec, "progress_path": str(progress_path)}))
        env = dict(os.environ)
        package_root = str(Path(mlcompare.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env[PARENT_PID_ENV] = str(os.getpid())
        with open(err_path, "wb") as err:
            # its own session: a Ctrl-C at the terminal reaches the suite, which decides
            command = [sys.executable, "-m", "mlcompare.measure.worker", str(spec_path), str(result_path)]
            proc = subprocess.Popen(command,
                                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env,
                                    start_new_session=True)
            _RUNNING.add(proc.pid)
            try:
                with guard.interruptible():
                    code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                stopped = time.time()
                _kill(proc)
                return {"status": Status.FAILED, "failure": Failure.TIMEOUT,
                        "error": f"timeout: no result after {timeout_s:g} s, worker killed",
                        "stderr_tail": _tail(err_path), **_unfinished_first_fit(progress_path, stopped)}
            except Interrupted as stop:
                _kill(proc)
                return {"status": Status.KILLED, "failure": Failure.INTERRUPTED, "signal": stop.signal_name,
                        "error": f"interrupted by {stop.signal_name}, worker killed",
                        "stderr_tail": _tail(err_path)}
            except BaseException:  # anything else (KeyboardInterrupt without a guard): no orphan
                _kill(proc)
                raise
            finally:
                _RUNNING.discard(proc.pid)
            _kill(proc)  # what the worker started and left behind goes with it
        if result_path.exists():
            record = json.loads(result_path.read_text())
            if record["status"] != Status.OK:
                record["stderr_tail"] = _tail(err_path)
            return record
        if code < 0:
            name = _signal_name(-code)
            why = f"worker killed by signal {name}"
            if name == "SIGKILL":
                why += " (often the kernel's out-of-memory killer)"
            return {"status": Status.FAILED, "failure": Failure.SIGNAL, "signal": name, "error": why,
                    "stderr_tail": _tail(err_path)}
        return {"status": Status.FAILED, "failure": Failure.EXIT,
                "error": f"worker exited with code {code} and no result", "stderr_tail": _tail(err_path)}


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


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the worker's whole process group (it may have started processes of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _unfinished_first_fit(progress: Path, stopped: float) -> dict[str, float]:
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
