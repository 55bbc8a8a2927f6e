"""Writing behind: a thread that writes queued runs to the store while the suite goes on.

A write to the store (a child run: create, one batch, its dataset, terminate) takes tens
of milliseconds on SQLite; done by the suite itself it would sit between every two cases.
Here it is queued and done by one thread, in order. Each write happens inside `turn()`,
which the suite uses to keep writes and the timed calls of a case apart (see
`mlcompare.measure.timed_lock`).

A run put in the queue is held until `release` (the suite calls it once the next case has
started, holding its turn) or `drain`: released at once, it would take the turn from the
next case and be written before that case starts. Held, it is written while the next
case scores its predictions and exits, once its timed calls are over. The suite releases
one write a case (`release(1)`): that gap fits about one run's write, and a case started
behind a queue of them could wait for all of them (nothing makes the writer let a waiting
case in between two writes), so a backlog (the skipped cases' runs, known at once) is
spread over the cases that follow.

Nothing queued is lost when the suite stops: `drain` waits until every queued write is
done (the suite drains before it reads the store back, before it closes the parent run,
and when it stops on a signal or an error); at interpreter exit the queue is drained too.
Only SIGKILL (or the machine going down) loses what was still queued.
"""

from __future__ import annotations

import atexit
import queue
import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Callable

Turn = Callable[[], AbstractContextManager]


class WriteBehind:
    """One writer thread and its queue of writes (callables)."""

    def __init__(self, turn: Turn | None = None, hold: bool = False) -> None:
        self._turn = turn or nullcontext
        self._hold = hold
        self._held: list[Callable[[], object]] = []
        self._lock = threading.Lock()
        self._queue: queue.Queue[Callable[[], object] | None] = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="mlcompare-writer", daemon=True)
        self._thread.start()
        atexit.register(self.stop)

    def put(self, write: Callable[[], object]) -> None:
        """Queue a write (held until `release` when holding); the error of an earlier write that
        failed is raised here."""
        self._raise()
        with self._lock:
            if self._hold:
                self._held.append(write)
                return
        self._queue.put(write)

    def release(self, count: int | None = None) -> None:
        """Let the thread write what is held: the `count` oldest writes, or all of them."""
        with self._lock:
            cut = len(self._held) if count is None else count
            held, self._held = self._held[:cut], self._held[cut:]
        for write in held:
            self._queue.put(write)

    def drain(self, raise_error: bool = True) -> None:
        """Release, wait until every write is done; then raise the first error one of them met."""
        self.release()
        self._queue.join()
        if raise_error:
            self._raise()

    def stop(self) -> None:
        """Drain, then end the thread (idempotent)."""
        atexit.unregister(self.stop)
        if self._thread.is_alive():
            self.release()
            self._queue.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _loop(self) -> None:
        while True:
            write = self._queue.get()
            try:
                if write is None:
                    return
                with self._turn():
                    write()
            except BaseException as exc:  # noqa: BLE001 - handed to the suite's thread at its next call
                if self._error is None:
                    self._error = exc
            finally:
                self._queue.task_done()
