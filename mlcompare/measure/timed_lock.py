"""Turns on one lock file: the suite's writes to the store and a case's timed calls never overlap.

The suite writes finished runs to the store from a thread of its own while the next case
starts (tracking's writer). On a machine with few cores that thread would share them
with the fits being timed, so the two take turns on an exclusive `flock` of one file:

- the writer holds it while it writes a run;
- before it starts a case's process the suite takes it (waiting for a write under way to
  end) and the process inherits it, already held, as a file descriptor;
- the case lets go of it as soon as its last timed call is over (`release`), so the
  writer works while the case scores its predictions, exits and the next one starts.

A case that crashes or is killed lets go with its last file descriptor, by the kernel.
"""

from __future__ import annotations

import fcntl
import os
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

#: The lock this process was started holding (a case's process), until `release`.
_held: int | None = None


class Turns:
    """The suite's side: one lock file, a turn for the writer or for a case's process."""

    def __init__(self, path: Path, handed_over: Callable[[], None] | None = None) -> None:
        self.path = Path(path)
        #: called once a case's process has started holding its turn (the writer may queue now)
        self.handed_over = handed_over or (lambda: None)
        # the writer's own open file, from now on: it writes on after the file is removed
        self._writer_fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        self._closer = weakref.finalize(self, os.close, self._writer_fd)

    @contextmanager
    def writer(self) -> Iterator[None]:
        """The writer's turn, for one write."""
        fcntl.flock(self._writer_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._writer_fd, fcntl.LOCK_UN)

    def for_case(self) -> int:
        """A new open file of the lock, held: hand it to the case's process, then close it here."""
        fd = os.open(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:  # interrupted while waiting for a write to end
            os.close(fd)
            raise
        return fd

    def close(self) -> None:
        self._closer()


def adopt(fd: int | None) -> None:
    """In a case's process: the held lock it was started with (None: there is none)."""
    global _held
    if fd is not None:
        os.set_inheritable(fd, False)  # a process the case starts must not keep the suite waiting
    _held = fd


def release() -> None:
    """In a case's process: the timed calls are over; the suite's writer may go on."""
    global _held
    if _held is None:
        return
    fd, _held = _held, None
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
