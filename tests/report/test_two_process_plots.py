"""Plots drawn by two processes: every job's bytes come back, each process taking the next job
when it is free, and whatever the child fails to deliver is drawn by the parent instead."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from mlcompare import forked_call
from mlcompare.report import two_process_plots

needs_two_cpus = pytest.mark.skipif(not forked_call.can_fork(), reason="draws in one process on one CPU")


def _who(name: str):
    return lambda: f"{name} {os.getpid()}".encode()


@needs_two_cpus
def test_each_process_takes_the_next_job_when_free_and_all_come_back_in_order():
    def job(name: str, seconds: float):
        def draw() -> bytes:
            time.sleep(seconds)
            return f"{name} {os.getpid()}".encode()
        return draw

    jobs = {"long.png": job("long", 2.0), **{f"short{i}.png": job(f"short{i}", 0.05) for i in range(6)}}
    done = two_process_plots.in_two_processes(jobs)
    assert list(done) == list(jobs)
    drawn_by = {name: int(value.split()[1]) for name, value in done.items()}
    here = os.getpid()
    assert set(drawn_by.values()) == {here, next(pid for pid in drawn_by.values() if pid != here)}
    # while one process draws the long job, the other draws every short one (a fixed half each
    # would have left three of them behind the long one)
    assert all(drawn_by[f"short{i}.png"] != drawn_by["long.png"] for i in range(6))
    assert not any(psutil.pid_exists(pid) for pid in drawn_by.values() if pid != here)


@needs_two_cpus
def test_what_the_child_cannot_draw_the_parent_draws():
    here = os.getpid()

    def only_here():
        if os.getpid() != here:
            raise RuntimeError("not in the child")
        return b"drawn here"

    done = two_process_plots.in_two_processes({"a.png": lambda: b"a", "b.png": only_here, "c.png": lambda: b"c"})
    assert done == {"a.png": b"a", "b.png": b"drawn here", "c.png": b"c"}


@needs_two_cpus
def test_a_child_that_takes_too_long_is_killed_and_its_half_drawn_here(monkeypatch, forked_pids):
    monkeypatch.setattr(two_process_plots, "CHILD_LIMIT_S", 0.5)
    here = os.getpid()

    def slow_in_the_child():
        if os.getpid() != here:
            time.sleep(60)
        return f"{os.getpid()}".encode()

    started = time.monotonic()
    done = two_process_plots.in_two_processes({"a.png": lambda: b"a", "b.png": slow_in_the_child})
    assert time.monotonic() - started < 30
    assert done == {"a.png": b"a", "b.png": str(here).encode()}
    assert len(forked_pids) == 1 and not psutil.pid_exists(forked_pids[0])


@needs_two_cpus
def test_an_error_in_the_parents_half_is_raised_and_leaves_no_child(forked_pids):
    def broken():
        raise ValueError("no such column")

    with pytest.raises(ValueError, match="no such column"):
        two_process_plots.in_two_processes({"a.png": broken, "b.png": lambda: b"b"})
    assert len(forked_pids) == 1 and not psutil.pid_exists(forked_pids[0])
