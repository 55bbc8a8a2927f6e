"""Drawing the plots in two processes: the suite's report is built when both cores are free.

Each plot costs matplotlib 0.05-1.5 s of pure Python (ticks, text, layout), one core's work.
`in_two_processes` has a forked child (`mlcompare.forked_call`) draw beside this process, each
taking the next job as soon as it is free: the jobs' numbers wait in a pipe, and a read of one
byte from it is one process's alone. So a long plot in one process leaves the short ones to the
other, as a fixed half each could not (quick.yaml's report: 1.0 s for its time-against-rows
plot, 0.03-0.9 s for the seven others). Whatever the child does not deliver (a job that failed
there, or all it had not sent within `CHILD_LIMIT_S`) is drawn here, so the result is always
the bytes drawing everything here would give.
"""

from __future__ import annotations

import os
from typing import Callable

from mlcompare import forked_call

#: How long this process waits for the child's jobs once no job is left to take.
CHILD_LIMIT_S = 120.0
#: Jobs are handed out as one byte each.
_MOST_JOBS = 255


def in_two_processes(jobs: dict[str, Callable[[], bytes]]) -> dict[str, bytes]:
    """{name: job()} for every job, in the jobs' order; some of them drawn by a forked child."""
    names = list(jobs)
    if len(names) < 2 or len(names) > _MOST_JOBS or not forked_call.can_fork():
        return {name: jobs[name]() for name in names}
    numbers, handing = os.pipe()
    try:
        os.write(handing, bytes(range(len(names))))
    finally:
        os.close(handing)  # once the numbers are read, a read finds the end: no job left
    try:
        child = forked_call.ForkedCall(lambda send: _draw_taken(jobs, names, numbers, skip_failed=True))
        try:
            done = _draw_taken(jobs, names, numbers, skip_failed=False)
            try:
                done.update(child.result(timeout_s=CHILD_LIMIT_S))
            except Exception:  # noqa: BLE001 - drawn here below, where an error is raised for real
                pass
        finally:
            child.end()
    finally:
        os.close(numbers)
    return {name: done[name] if name in done else jobs[name]() for name in names}


def _draw_taken(jobs: dict[str, Callable[[], bytes]], names: list[str], numbers: int,
                skip_failed: bool) -> dict[str, bytes]:
    """Draw the next job not taken yet, until none is left; a job that fails is left out
    (`skip_failed`: the other process draws it again) or raises."""
    done = {}
    while taken := os.read(numbers, 1):
        name = names[taken[0]]
        try:
            done[name] = jobs[name]()
        except Exception:
            if not skip_failed:
                raise
    return done
