"""One call done by a forked child of this process, on another core, its result sent back.

`mlcompare run` has work that needs nothing of what it does meanwhile: the datasets are
generated while the store is opened, and plots drawn by a child while this process draws the
others. A thread would share the interpreter's lock with the Python it runs beside; a child
forked from this process starts with every module already imported and computes on its own.

The child runs `work(send)`: `send(message)` hands a message to the parent as it goes (a
progress line), and what `work` returns (or raises) ends it. Everything crosses one pipe
as pickles, so messages, the result and an exception must pickle. The child never returns
into this process's code: it leaves with `os._exit` whatever happens, so no exit handler,
open store or buffered file of the parent is touched twice. It dies with its parent, and
the threads of the parent (the suite's writer, MLflow's telemetry) do not exist in it: the
work given to a child must use none of what they hold (the tracking store).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import time
import warnings
from typing import Any, Callable, NoReturn

from mlcompare import collector

_HEADER = struct.Struct("!Q")


class ChildLost(Exception):
    """The child ended without a result (killed, crashed) or did not end in time."""


def can_fork() -> bool:
    """Whether forking is possible here and worth it (a second CPU to compute on)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return hasattr(os, "fork") and cpus >= 2


class ForkedCall:
    """`work(send)` running in a forked child; `result` waits for it."""

    def __init__(self, work: Callable[[Callable[[Any], None]], Any]) -> None:
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        with warnings.catch_warnings():  # Python 3.12+: see the module's docstring on threads
            warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
            pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(work, write_end)  # never returns
        os.close(write_end)
        self.pid: int | None = pid
        self._pipe = read_end

    def result(self, on_message: Callable[[Any], None] | None = None, timeout_s: float | None = None) -> Any:
        """What `work` returned (its exception raised here); each message sent before it goes
        to `on_message` as it arrives. `ChildLost` if the child ended without a result or
        `timeout_s` passed (the child is killed then)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        try:
            while True:
                kind, payload = self._frame(deadline)
                if kind == "message":
                    if on_message is not None:
                        on_message(payload)
                    continue
                if kind == "error":
                    raise payload
                return payload
        finally:
            self.end()

    def end(self) -> None:
        """Kill the child if it still runs and reap it (idempotent)."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        os.close(self._pipe)
        if os.waitpid(pid, os.WNOHANG)[0] == 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)

    def _frame(self, deadline: float | None) -> tuple[str, Any]:
        header = self._read(_HEADER.size, deadline)
        data = self._read(_HEADER.unpack(header)[0], deadline)
        try:
            return pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - an exception type that cannot be rebuilt from its pickle
            raise ChildLost(f"the child {self.pid} sent what cannot be read back: {exc!r}") from None

    def _read(self, size: int, deadline: float | None) -> bytes:
        chunks, left = [], size
        while left:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and (wait <= 0 or not select.select([self._pipe], [], [], wait)[0]):
                raise ChildLost(f"the child {self.pid} did not finish in time")
            chunk = os.read(self._pipe, min(left, 1 << 20))
            if not chunk:
                raise ChildLost(f"the child {self.pid} ended without a result")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)


def die_with_parent(parent: int | str | None) -> None:
    """Ask Linux to SIGKILL this process when its parent (the suite, or the warm worker that
    forked it) dies: a SIGKILLed suite cannot kill its workers itself."""
    if not parent or not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != int(parent):  # the parent died before the request took effect
        os._exit(1)


def _child(work: Callable[[Callable[[Any], None]], Any], fd: int) -> None:
    code = 1
    try:
        die_with_parent(os.getppid())
        collector.started()  # forked while the parent was starting: collect this child's own garbage
        out = os.fdopen(fd, "wb")

        def send(kind: str, payload: Any) -> None:
            data = pickle.dumps((kind, payload))
            out.write(_HEADER.pack(len(data)) + data)
            out.flush()

        try:
            value = work(lambda message: send("message", message))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, raised there
            try:
                send("error", exc)
            except Exception:  # noqa: BLE001 - it does not pickle: its words still go
                send("error", RuntimeError(f"{type(exc).__name__}: {exc}"))
        else:
            send("result", value)
        code = 0
    finally:
        leave(code)


def leave(code: int) -> NoReturn:
    """End a forked child: its output flushed, then `os._exit`, so that nothing of the
    parent's (exit handlers, buffered files, open stores) runs a second time in it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)
