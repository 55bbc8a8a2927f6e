"""Plots drawn by two processes: every job's bytes come back, half of them drawn by a forked
child, and whatever the child fails to deliver is drawn by the parent instead."""

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
def test_every_other_job_is_drawn_by_a_child_and_all_come_back_in_order():
    jobs = {f"plot{i}.png": _who(f"plot{i}") for i in range(7)}
    done = two_process_plots.in_two_processes(jobs)
    assert list(done) == list(jobs)
    drawn_by = {name: int(value.split()[1]) for name, value in done.items()}
    here = os.getpid()
    assert [drawn_by[f"plot{i}.png"] == here for i in range(7)] == [True, False] * 3 + [True]
    child = drawn_by["plot1.png"]
    assert {drawn_by[f"plot{i}.png"] for i in (1, 3, 5)} == {child} and not psutil.pid_exists(child)


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
