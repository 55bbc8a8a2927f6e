"""Drawing the plots in two processes: the suite's report is built when both cores are free.

Each plot costs matplotlib 0.05-1 s of pure Python (ticks, text, layout), one core's work.
`in_two_processes` has a forked child (`mlcompare.forked_call`) draw every other job while
this process draws the rest. Whatever the child does not deliver (it failed, or took
longer than `CHILD_LIMIT_S`) is drawn here, so the result is always the bytes drawing
everything here would give.
"""

from __future__ import annotations

from typing import Callable

from mlcompare import forked_call

#: How long this process waits for the child's half once its own is drawn.
CHILD_LIMIT_S = 120.0


def in_two_processes(jobs: dict[str, Callable[[], bytes]]) -> dict[str, bytes]:
    """{name: job()} for every job, in the jobs' order; half of them drawn by a forked child."""
    names = list(jobs)
    theirs = names[1::2]
    if not theirs or not forked_call.can_fork():
        return {name: jobs[name]() for name in names}
    child = forked_call.ForkedCall(lambda send: {name: jobs[name]() for name in theirs})
    try:
        done = {name: jobs[name]() for name in names[0::2]}
        try:
            done.update(child.result(timeout_s=CHILD_LIMIT_S))
        except Exception:  # noqa: BLE001 - drawn here below, where an error is raised for real
            pass
    finally:
        child.end()
    return {name: done[name] if name in done else jobs[name]() for name in names}
