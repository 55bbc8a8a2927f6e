"""How `mlcompare run` starts: a forked child makes the datasets while this process opens the
store, and whatever stops the start leaves no child and no run behind."""

from __future__ import annotations

import os
import time

import psutil
import pytest
from conftest import main_here, write

from mlcompare.suite import cases, runner
from mlcompare.tracking import writer

ONE_CASE = """\
name: start
repeats: 1
rounds: 1
datasets: [{generator: regression, n_samples: 300000, n_features: 20}]
pairings: [linear_regression]
implementations: [sklearn]
"""


def test_the_datasets_are_made_by_a_child_while_the_store_opens(workdir, monkeypatch, forked_pids):
    log = workdir / "calls.log"  # the child's calls are only seen through a file
    opening, preparing = writer.Recorder.__init__, cases.prepare_datasets

    def note(what: str, begin: float) -> None:
        with open(log, "a") as out:
            out.write(f"{what} {os.getpid()} {begin} {time.monotonic()}\n")

    def recording_open(self, *args, **kwargs):
        begin = time.monotonic()
        opening(self, *args, **kwargs)
        note("open", begin)

    def recording_prepare(*args, **kwargs):
        begin = time.monotonic()
        prepared = preparing(*args, **kwargs)
        note("prepare", begin)
        return prepared

    monkeypatch.setattr(writer.Recorder, "__init__", recording_open)
    monkeypatch.setattr(cases, "prepare_datasets", recording_prepare)
    code, out, _ = main_here("run", str(write(workdir / "start.yaml", ONE_CASE)), "--quiet")
    assert code == 0 and "1 ran" in out
    calls = {what: (int(pid), float(begin), float(end))
             for what, pid, begin, end in (line.split() for line in log.read_text().splitlines())}
    (open_pid, open_begin, open_end), (prepare_pid, prepare_begin, prepare_end) = calls["open"], calls["prepare"]
    assert open_pid == os.getpid() and prepare_pid != os.getpid()
    assert prepare_begin < open_end and open_begin < prepare_end  # at the same time, not one after the other
    assert prepare_pid in forked_pids and not any(psutil.pid_exists(pid) for pid in forked_pids)


def test_a_store_that_cannot_be_opened_stops_the_suite_before_any_case_and_ends_the_child(workdir, monkeypatch,
                                                                                         forked_pids):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "nosuchscheme://store")
    ran = []
    monkeypatch.setattr(runner, "run_here", lambda *args, **kwargs: ran.append(args))
    with pytest.raises(Exception, match="nosuchscheme"):
        main_here("run", str(write(workdir / "start.yaml", ONE_CASE)), "--quiet")
    assert ran == [] and len(forked_pids) == 1 and not psutil.pid_exists(forked_pids[0])


def test_a_child_that_dies_while_making_the_datasets_leaves_them_to_the_suite(workdir, monkeypatch, forked_pids):
    suite_pid, preparing = os.getpid(), cases.prepare_datasets

    def dying_in_the_child(*args, **kwargs):
        if os.getpid() != suite_pid:
            os._exit(9)  # as the kernel's out-of-memory killer would end it: no result, no error
        return preparing(*args, **kwargs)

    monkeypatch.setattr(cases, "prepare_datasets", dying_in_the_child)
    code, out, err = main_here("run", str(write(workdir / "start.yaml", ONE_CASE)))
    assert code == 0 and "1 ran" in out
    assert "ended without a result; preparing the datasets here" in err and "preparing dataset regression" in err
    assert len(forked_pids) == 2 and not any(psutil.pid_exists(pid) for pid in forked_pids)  # the report's too
