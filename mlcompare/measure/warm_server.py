"""`python -m mlcompare.measure.warm_server FD`: the warm worker, a fork server for CPU cases.

Starting a fresh Python for every case costs seconds of imports (numpy, scikit-learn,
XGBoost, pyarrow, mlcompare) that have nothing to do with the models. This server imports
them once, then forks one child per case. The child runs the case exactly as a fresh
process does (`worker.run`): its first fit is still the first fit in its process, and a
segfault, a hang or an out-of-memory ends that child alone. Each child is the leader of
its own process group (the suite kills the group at a timeout or an interrupt), and dies
with the server, as the server dies with the suite (Linux's parent-death signal).

It never touches CUDA: the suite sends GPU cases, cases under an accelerator (which must be
installed before scikit-learn is imported) and distributed cases to a fresh process, and
this server refuses to serve at all when a preloaded module brought a GPU library in.

It imports the modules every case needs (`BASE_MODULES`) as soon as it starts, before the
suite has said which estimators it wants: the suite starts it first thing, and these
imports run beside the suite's own checking of the experiment file.

The suite talks to it over the socket FD (SOCK_SEQPACKET: one JSON object per message):

    suite  -> server  {"preload": [estimator paths], "allowed": [module prefixes], "threads": n or null}
    server -> suite   {"ready": pid, "seconds": s, "failed": {path: error}}  or  {"refused": why}
    suite  -> server  {"spec": path, "result": path, "stderr": path, "dataset_dir": path,
                       "keep_dataset": bool}, the held quiet lock attached
    server -> suite   {"started": pid}   (after reading the case's dataset: `held_dataset`)
    server -> suite   {"ended": pid, "code": returncode}   (negative: killed by that signal)

End of file on the socket (the suite closed it) ends the server.
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from mlcompare import collector
from mlcompare.forked_call import leave
from mlcompare.measure import held_dataset, worker

#: Imported by every case, whatever its estimator (the case code scores with scikit-learn's
#: metrics, which `pairings.quality` imports at the first score; the cached dataset is read
#: through pyarrow).
BASE_MODULES = ("numpy", "scipy", "sklearn", "sklearn.metrics", "pyarrow.parquet", "threadpoolctl", "psutil",
                "mlcompare.measure.case")
#: Top-level modules of GPU libraries: none may be loaded in a process that forks cases.
GPU_MODULES = ("cupy", "cudf", "cuml", "rmm", "numba.cuda", "torch", "dask_cuda")
_MESSAGE_BYTES = 65536


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


def receive(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """One message and the file descriptors sent with it; (None, []) at end of file."""
    data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_BYTES, 4)
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), fds


def gpu_modules_loaded() -> list[str]:
    return sorted(m for m in sys.modules if m in GPU_MODULES or m.split(".")[0] in GPU_MODULES)


def import_base() -> None:
    """The modules every case imports, and the dataset reader set up."""
    for name in BASE_MODULES:
        importlib.import_module(name)
    from mlcompare.data.cache import warm_reader

    warm_reader()  # every child inherits a reader already set up (pyarrow copes with the fork)


def preload(estimators: list[str], allowed: tuple[str, ...], threads: int | None = None) -> dict[str, str]:
    """Import the estimators' modules; what failed, by path (the case itself will fail with
    that error, in its own process). The native pools are then sized to `threads` once, here,
    so that the cases forked with that count find them so (`threads.limit_pools`)."""
    from mlcompare.measure.audit import library_version
    from mlcompare.measure.threads import remember_pools, set_pools
    from mlcompare.pairings.imports import accepted_params, import_estimator

    failed = {}
    for path in estimators:
        try:
            # cached for every child: the constructor's parameters, its distribution's metadata
            accepted_params(import_estimator(path, allowed))
            library_version(path.split(".", 1)[0])
        except Exception as exc:  # noqa: BLE001 - reported; the case reports it again
            failed[path] = f"{type(exc).__name__}: {exc}"
    _scan_entry_points()
    if threads:
        set_pools(threads)
    remember_pools()  # the last: every import is done
    return failed


def _scan_entry_points() -> None:
    """The installed packages' entry points, read once here as the imports are: scikit-learn's
    input checks ask narwhals for its plugins on their first call, and narwhals lists every
    distribution's entry points to find them (25-40 ms a process here, inside the first fit)."""
    try:
        import numpy as np
        from sklearn.utils.validation import check_array

        check_array(np.zeros((2, 2)))
    except Exception:  # noqa: BLE001 - an optimisation only: the first fit does it otherwise
        pass


def serve(sock: socket.socket) -> int:
    started = time.perf_counter()
    collector.starting()
    import_base()
    importing_s = time.perf_counter() - started
    hello, _ = receive(sock)
    if hello is None:
        return 0
    started = time.perf_counter()
    failed = preload(hello.get("preload", []), tuple(hello.get("allowed", ())), hello.get("threads"))
    gpu = gpu_modules_loaded()
    if gpu:
        send(sock, {"refused": f"GPU libraries were imported while preloading ({', '.join(gpu)}): "
                              "cases cannot be forked from this process"})
        return 0
    importing_s += time.perf_counter() - started
    collector.started()  # before the first fork: the cases find the collector on
    send(sock, {"ready": os.getpid(), "seconds": importing_s, "failed": failed})
    while True:
        request, fds = receive(sock)
        if request is None:
            return 0
        quiet_fd = fds[0] if fds else None
        sys.stdout.flush()
        sys.stderr.flush()
        _hold(request.get("dataset_dir"))
        # what this process made is left out of the collector's reach in the child: a collection
        # there would otherwise walk every inherited object and copy the pages it writes to
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            _child(sock, request, quiet_fd)  # never returns
        if not request.get("keep_dataset"):
            held_dataset.drop()  # the child holds the only reference
        if quiet_fd is not None:
            os.close(quiet_fd)  # the child holds it now
        try:
            os.setpgid(pid, pid)  # as the child does: whichever runs first, the suite can kill the group
        except OSError:
            pass  # the child did it already (or is gone)
        send(sock, {"started": pid})
        _, status = os.waitpid(pid, 0)
        send(sock, {"ended": pid, "code": os.waitstatus_to_exitcode(status)})


def _hold(dataset_dir: str | None) -> None:
    """The case's dataset read (or still held) before the fork, for the child to inherit; where it
    cannot be read here, none is held and the case reads it itself (and fails there, with its error)."""
    if not dataset_dir:
        held_dataset.drop()
        return
    try:
        held_dataset.hold(dataset_dir)
    except Exception:  # noqa: BLE001 - the case's own read reports it
        held_dataset.drop()


def _child(sock: socket.socket, request: dict[str, Any], quiet_fd: int | None) -> None:
    """In the forked child: become a case's process, run the case, leave with os._exit."""
    code = 1
    try:
        server = os.getppid()
        os.setpgid(0, 0)
        sock.close()
        out = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        faulthandler.enable()
        worker.die_with_parent(server)
        code = worker.run(Path(request["spec"]), Path(request["result"]), quiet_fd)
    except SystemExit as exc:  # sys.exit() inside a library: the code a fresh process would exit with
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - whatever happens, this child must never return into the server
        traceback.print_exc()
    finally:
        leave(code)


def main(argv: list[str]) -> int:
    faulthandler.enable()
    worker.die_with_parent(os.environ.get(worker.PARENT_PID_ENV))
    sock = socket.socket(fileno=int(argv[0]))
    try:
        return serve(sock)
    finally:
        sock.close()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
