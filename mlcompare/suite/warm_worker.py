"""The suite's side of the warm worker (`mlcompare.measure.warm_server`).

One server per round of a suite (`WarmWorker.renew` says why), the first started as early as
possible and waited for at the first case it takes: `mlcompare run` starts it before it reads
the experiment file (the base imports run beside that), tells it which estimators to import
once the file is checked (`expect`; those imports run beside the preparation of the
datasets), and shuts it down unused when the file is refused or has no CPU case. The servers
of the later rounds are started then too (`add_spares`) and waited for with the first.
It takes the CPU cases only: a GPU case, a case under an accelerator (cuml.accel must be
installed before scikit-learn is imported, and the server has imported it) and a
distributed (Dask) case start a fresh Python process as before. Where it cannot serve
(not Linux, it failed to start, it died three times) the cases start fresh processes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, cast

from mlcompare.measure import warm_server
from mlcompare.records import CaseSpec

if TYPE_CHECKING:
    from mlcompare.config.experiment import Case

#: Seconds the server may take to import the libraries (a loaded machine is slow).
READY_TIMEOUT_S = 600.0
#: Seconds a killed child may take to be reported gone.
_KILL_WAIT_S = 60.0
#: After this many deaths of the server the suite stops restarting it.
_MAX_STARTS = 3
#: At most this many servers started ahead for the renewals (`WarmWorker.add_spares`): each
#: holds its imports in memory while it waits (the default six rounds renew five times).
MAX_SPARES = 5
_LOG_TAIL = 4000


class WorkerLost(Exception):
    """The server died while a case ran (its child died with it)."""


def forkable(spec: CaseSpec) -> bool:
    """Whether a case may run in a child of the warm worker: CPU, no accelerator, not distributed."""
    return spec.get("device") == "cpu" and not spec.get("accelerator") and not spec.get("distributed")


def preloads(cases: Iterable[Case], skip_reason: Callable[[Case], str | None]) -> list[str]:
    """The estimators the warm worker imports ahead: those of the CPU cases that can run here
    (`skip_reason` says why one cannot)."""
    found = []
    for case in cases:
        impl = case.implementation
        if impl.device == "cpu" and not impl.accelerator and not impl.distributed and not case.pairing.plugin:
            if impl.estimator not in found and not skip_reason(case):
                found.append(impl.estimator)
    return found


@dataclass
class _Spare:
    """A server started ahead for a renewal: its process, its socket, its ready message once read."""

    proc: subprocess.Popen
    sock: socket.socket
    ready: dict[str, Any] | None = None


class WarmWorker:
    """A fork server for one suite's CPU cases; `launch` hands it one case at a time."""

    def __init__(self, preload: list[str] | None, allowed: tuple[str, ...], env: dict[str, str],
                 threads: int | None = None) -> None:
        """`preload` None: the server starts with its base imports and waits for `expect`.
        `threads`: the suite's thread count, which the server sizes its native pools to before
        it forks a case (`measure.threads.set_pools`)."""
        self.preload = None if preload is None else list(preload)
        self.allowed, self.env, self.threads = tuple(allowed), env, threads
        self.unusable: str | None = None if sys.platform.startswith("linux") else "fork server: Linux only"
        self.starts = 0
        self.renewals = 0  # starts that replaced a server on purpose (`renew`), not after a death
        self.ready_s: float | None = None  # how long its imports took, once ready
        self.failed_imports: dict[str, str] = {}
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._ready = False
        self._spares: list[_Spare] = []
        self._log = tempfile.NamedTemporaryFile(prefix="mlcompare-warm-worker-", suffix=".log", delete=False)
        if self.unusable is None:
            self._start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def spares(self) -> list[tuple[int, bool]]:
        """(pid, ready) of each server started ahead and not yet taken by a renewal."""
        return [(spare.proc.pid, spare.ready is not None) for spare in self._spares]

    @property
    def _server_sock(self) -> socket.socket:
        """The socket to the server: set from `_start` to `close`, which is whenever it is used."""
        return cast(socket.socket, self._sock)

    def _spawn(self) -> tuple[subprocess.Popen, socket.socket]:
        """A new server process and the suite's end of its socket."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            command = [sys.executable, "-m", "mlcompare.measure.warm_server", str(theirs.fileno())]
            # its own session: a Ctrl-C at the terminal reaches the suite, which decides
            proc = subprocess.Popen(command, pass_fds=[theirs.fileno()], env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                    start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return proc, ours

    def _start(self) -> None:
        self.starts += 1
        self._proc, self._sock = self._spawn()
        self._ready = False
        if self.preload is not None:
            self._hello()

    def add_spares(self, count: int) -> None:
        """Start servers for the renewals to come (up to `count` waiting, MAX_SPARES at most),
        now, while the suite starts: their imports run beside its own start-up instead of
        between rounds. They are waited for before the next case's clock starts (`ready`: with
        the first server, or alone where it serves already, as at each step of advise), so
        that no import runs beside a timed call; an idle server only waits on its socket. Each
        is an exec of its own: the layout and hash seed each draws are as independent as a
        server started at its renewal."""
        if self.unusable or self.preload is None:
            return
        for _ in range(min(count, MAX_SPARES) - len(self._spares)):
            proc, sock = self._spawn()
            spare = _Spare(proc, sock)
            self._spares.append(spare)
            try:
                warm_server.send(sock, self._hello_message())
            except OSError:  # it died at once: the renewal starts one then
                self._drop(spare)

    def expect(self, preload: list[str], allowed: tuple[str, ...], threads: int | None = None) -> None:
        """The estimators to import ahead (and the suite's thread count), for a server started
        without them."""
        self.preload, self.allowed, self.threads = list(preload), tuple(allowed), threads
        if self._sock is not None:
            try:
                self._hello()
            except OSError:  # it died while importing: the first case starts another
                self.close(kill=True)

    def _hello_message(self) -> dict[str, Any]:
        return {"preload": self.preload, "allowed": list(self.allowed), "threads": self.threads}

    def _hello(self) -> None:
        warm_server.send(self._server_sock, self._hello_message())

    def _await_spares(self) -> None:
        """Read each spare's ready message (its imports are over); drop the ones that refused or died."""
        for spare in [s for s in self._spares if s.ready is None]:
            spare.sock.settimeout(READY_TIMEOUT_S)
            try:
                message, _ = warm_server.receive(spare.sock)
            except (TimeoutError, OSError):
                message = None
            except BaseException:  # interrupted while they import: nothing of a case has started
                self._drop(spare)
                raise
            if message is None or "refused" in message:
                self._drop(spare)
            else:
                spare.ready = message

    def _drop(self, spare: _Spare) -> None:
        spare.sock.close()
        _killpg(spare.proc.pid)
        spare.proc.wait()
        self._spares.remove(spare)

    def _drop_spares(self) -> None:
        for spare in list(self._spares):
            self._drop(spare)

    def _serving(self, ready: dict[str, Any]) -> None:
        """The current server has sent `ready` (its imports are over): it serves from now on."""
        self._ready, self.ready_s = True, ready["seconds"]
        self.failed_imports = ready.get("failed", {})

    def _wait_ready(self) -> bool:
        if self._ready:
            return True
        if self.preload is None:  # never told what to import: never used
            self.unusable = "the warm worker was not told which estimators to import"
            return False
        if self._proc is None:
            deaths = self.starts - self.renewals
            if deaths >= _MAX_STARTS:
                self.unusable = f"the warm worker died {deaths} times; fresh processes from now on"
                return False
            self._start()
        self._server_sock.settimeout(READY_TIMEOUT_S)
        try:
            message, _ = warm_server.receive(self._server_sock)
        except (TimeoutError, OSError) as exc:
            message = {"refused": f"no answer: {exc}"}
        except BaseException:  # interrupted while it imports: nothing of a case has started
            self.close(kill=True)
            raise
        if message is None or "refused" in message:
            why = message["refused"] if message else f"it exited while importing ({self.log_tail()[-300:]!r})"
            self.unusable = f"the warm worker cannot serve: {why}"
            self.close(kill=True)
            self._drop_spares()  # the same imports: they would not serve either
            return False
        self._serving(message)
        self._await_spares()
        return True

    def renew(self) -> bool:
        """Replace the server with a new one and wait until it is ready; False where none serves.

        The processes a server forks share what it made before the fork: its address space's
        layout (ASLR is drawn at exec), its hash seed, where its heap and its libraries' buffers
        lie. That is a draw per server, not per process, and it moves a fit's time by a few per
        cent. A suite renews its server before each round, so that a case's processes (one a
        round) come from as many servers and draw their layouts apart, as fresh processes do:
        the interval over them then holds the layout's share of the noise too."""
        if self.unusable or self._proc is None or self.preload is None:
            return False  # not serving (a dead server is started again at the next case)
        self.close(kill=True)  # idle, no child: killed, it does not spend its exit beside the next case
        self.renewals += 1
        self._await_spares()
        if not self._spares:
            self._start()
            return self._wait_ready()
        spare = self._spares.pop(0)  # started ahead (`add_spares`), its imports done
        self.starts += 1
        self._proc, self._sock = spare.proc, spare.sock
        self._serving(cast(dict, spare.ready))
        return True

    def ready(self) -> bool:
        """Wait until the server's imports are done, and those of the spares added meanwhile (a
        case is never forked beside an import); False where it cannot serve. The suite calls it
        before a case's clock starts: what the case's process costs (`process_wall_s`, which
        sizes the next processes' values) and its time limit hold none of this wait."""
        if self.unusable or not self._wait_ready():
            return False
        self._await_spares()  # those added while it served (advise: at each step)
        return True

    def launch(self, spec_path: Path, result_path: Path, stderr_path: Path, quiet_fd: int | None,
               spec: CaseSpec | None = None, timeout_s: float = _KILL_WAIT_S) -> ForkedCase | None:
        """Fork a child for the case; None when the server cannot (start a fresh process instead).
        The server reads the case's dataset (`spec`'s) before it forks, and keeps it when the spec
        says the next case reads it too (`measure.held_dataset`): the child is waited for up to
        `timeout_s` (the case's limit, which its own read was under) or _KILL_WAIT_S, the longer."""
        if not self.ready():
            return None
        request = {"spec": str(spec_path), "result": str(result_path), "stderr": str(stderr_path),
                   "dataset_dir": spec.get("dataset_dir") if spec else None,
                   "keep_dataset": bool(spec.get("keep_dataset")) if spec else False}
        waited = max(_KILL_WAIT_S, timeout_s)
        try:
            warm_server.send(self._server_sock, request, [quiet_fd] if quiet_fd is not None else None)
            self._server_sock.settimeout(waited)
            message, _ = warm_server.receive(self._server_sock)
        except TimeoutError:
            self._lost()
            raise WorkerLost(f"the warm worker did not start the case within {waited:g} s") from None
        except BaseException:  # interrupted mid-request, or the server is gone: its child dies with it
            self._lost()
            raise
        if not message or "started" not in message:
            self._lost()
            raise WorkerLost("the warm worker died before the case started")
        return ForkedCase(self, message["started"])

    def _lost(self) -> None:
        """Out of step with the server: end it (its children die with it); the next case starts another."""
        self.close(kill=True)

    def log_tail(self) -> str:
        try:
            return Path(self._log.name).read_bytes()[-_LOG_TAIL:].decode(errors="replace")
        except OSError:
            return ""

    def close(self, kill: bool = False) -> None:
        """End the server: end of file on its socket (it exits when idle), SIGKILL to its group when
        `kill` or when it lingers; a child of its still running dies with it."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            if kill:
                _killpg(self._proc.pid)
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _killpg(self._proc.pid)
                self._proc.wait()
            self._proc = None
        self._ready = False

    def shutdown(self) -> None:
        """End the server (and the spares left) for good and remove its log (its owner's last call)."""
        self.close(kill=True)
        self._drop_spares()
        self._log.close()
        try:
            os.unlink(self._log.name)
        except OSError:
            pass


class ForkedCase:
    """A case's process forked by the warm worker, as `isolation` waits for and kills it."""

    kind = "forked"

    def __init__(self, server: WarmWorker, pid: int) -> None:
        self.server, self.pid = server, pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None) -> int:
        """The child's exit code (negative: the signal that killed it); `subprocess.TimeoutExpired`."""
        if self.returncode is not None:
            return self.returncode
        sock = self.server._sock
        if sock is None:
            raise WorkerLost("the warm worker is gone")
        sock.settimeout(timeout)
        try:
            message, _ = warm_server.receive(sock)
        except TimeoutError:
            # raised only under a timeout
            raise subprocess.TimeoutExpired(f"case process {self.pid}", cast(float, timeout)) from None
        if not message or message.get("ended") != self.pid:
            self.server._lost()
            raise WorkerLost("the warm worker died while the case ran")
        self.returncode = message["code"]
        return self.returncode

    def kill(self) -> None:
        """SIGKILL the child's process group (what it started goes with it), and wait for it."""
        _killpg(self.pid)
        if self.returncode is None and self.server._sock is not None:
            try:
                self.wait(_KILL_WAIT_S)
            except (subprocess.TimeoutExpired, WorkerLost, OSError):
                self.server._lost()


class SpawnedCase:
    """A case in a fresh Python process (`python -m mlcompare.measure.worker`)."""

    kind = "fresh"

    def __init__(self, command: list[str], env: dict[str, str], stderr_path: Path, quiet_fd: int | None) -> None:
        with open(stderr_path, "wb") as err:
            # its own session: a Ctrl-C at the terminal reaches the suite, which decides
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env,
                                         start_new_session=True,
                                         pass_fds=[quiet_fd] if quiet_fd is not None else [])
        self.pid = self.proc.pid

    def wait(self, timeout: float | None) -> int:
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        _killpg(self.pid)
        self.proc.wait()


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
