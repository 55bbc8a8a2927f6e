"""Ctrl-C, SIGTERM and SIGHUP as an exception the suite can clean up after.

A signal that lands in the middle of a write to the tracking store must not leave a
half-written run behind, so the guard only raises at once where stopping is safe (while
waiting for a worker or generating data: `interruptible()`); anywhere else it remembers
the signal and the suite stops at its next `check()`. A second signal before that forces
the stop (a hung store call can still be interrupted); once stopping has begun, further
signals are ignored so that the KILLED statuses get written.
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator, cast

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: What `signal.signal` installs and returns.
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Interrupted(BaseException):
    """Raised by the guard: the suite was asked to stop by a signal."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {self.signal_name}")

    def __reduce__(self):  # rebuilt from its signal (a forked child raises it in its parent)
        return type(self), (self.signum,)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


class SignalGuard:
    """Turns SIGINT, SIGTERM and SIGHUP into `Interrupted` while installed (a context manager).

    Not installed (outside `with`, or off the main thread), it never raises: library code
    can take a guard unconditionally.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._interruptible = False
        self._stopping = False
        self._previous: dict[int, _Handler] = {}

    def __enter__(self) -> "SignalGuard":
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                if signal.getsignal(signum) is signal.SIG_IGN:
                    continue  # ignored on purpose (nohup, a shell's background job): leave it so
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._stopping:
            print(f"mlcompare: {signal.Signals(signum).name} ignored: writing the KILLED statuses",
                  file=sys.stderr, flush=True)
            return
        first = self.received is None
        if first:
            self.received = signum
        if self._interruptible or not first:
            self._stop()

    def _stop(self) -> None:
        self._stopping = True
        raise Interrupted(cast(int, self.received))  # both callers set it first

    def check(self) -> None:
        """Raise `Interrupted` if a signal has arrived (again, if it was raised and handled before)."""
        if self.received is not None:
            self._stop()

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """A region that a signal may interrupt at once (nothing is being written)."""
        self.check()
        self._interruptible = True
        try:
            yield
        finally:
            self._interruptible = False
