"""Ctrl-C and SIGTERM: the current worker stops, its run and the parent are KILLED, nothing
stays RUNNING, and `--resume` finishes the rest. Real processes, real signals."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest
from conftest import alive, by_implementation, faults_experiment, run_cli, start_cli, store_runs, wait_for_file

from mlcompare.suite.interrupts import Interrupted, SignalGuard


def _interrupt(workdir, faults, signum: int):
    """Run four cases, send `signum` while the second one's worker is inside fit, check the store."""
    path = faults_experiment(workdir, ["sklearn", "gate"], sizes=[200, 300])
    proc = start_cli("run", str(path), cwd=workdir, env=faults)
    started = workdir / "faults" / "started"
    wait_for_file(started, proc)  # the second case's worker is inside fit
    worker = int(started.read_text())
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signum)  # what Ctrl-C at a terminal does: the whole foreground group
    else:
        os.kill(proc.pid, signum)  # what a batch system or `kill` does
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    assert f"interrupted by {name}" in err and "Traceback" not in err

    runs = store_runs("faults")
    assert not [r for r in runs if r.info.status == "RUNNING"]
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    assert parent.info.status == "KILLED" and parent.data.tags["interrupted_by"] == name
    cases = by_implementation(runs)
    assert sorted(cases) == [("gate", 200), ("sklearn", 200)]  # the cases after it never started
    assert cases["sklearn", 200].info.status == "FINISHED"
    killed = cases["gate", 200]
    assert killed.info.status == "KILLED"
    assert (killed.data.tags["case_status"], killed.data.tags["failure_reason"]) == ("killed", "interrupted")
    assert killed.data.tags["signal"] == name
    assert not alive(worker)
    return path


def test_ctrl_c_kills_the_current_case_and_resume_finishes_the_rest(workdir, faults):
    path = _interrupt(workdir, faults, signal.SIGINT)
    (workdir / "faults" / "open").touch()
    resumed = run_cli("run", str(path), "--resume", cwd=workdir, env=faults)
    assert resumed.returncode == 0, resumed.stderr
    assert "3 ran, 0 skipped, 0 failed, 1 already finished (resumed)" in resumed.stdout
    runs = store_runs("faults")
    assert not [r for r in runs if r.info.status == "RUNNING"]
    finished = [r for r in runs if "mlflow.parentRunId" in r.data.tags and r.info.status == "FINISHED"]
    keys = [r.data.tags["mlcompare.case_fingerprint"] for r in finished]
    assert len(keys) == len(set(keys)) == 4  # every case FINISHED exactly once
    assert [r.info.status for r in runs if "mlflow.parentRunId" not in r.data.tags] == ["KILLED", "FINISHED"]


def test_sigterm_kills_the_current_case_and_the_suite(workdir, faults):
    _interrupt(workdir, faults, signal.SIGTERM)


@pytest.fixture
def ctrl_c_handled():
    """Python's own Ctrl-C handler for the test, as in a foreground run (a test run started in
    the background inherits SIGINT ignored, which the guard leaves so)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_the_guard_defers_a_signal_outside_interruptible_regions(ctrl_c_handled):
    with SignalGuard() as guard:
        os.kill(os.getpid(), signal.SIGINT)  # as if during a write to the store: not raised there
        assert guard.received == signal.SIGINT
        with pytest.raises(Interrupted) as stop:
            guard.check()  # the next safe point
        assert stop.value.exit_code == 130
        os.kill(os.getpid(), signal.SIGTERM)  # while stopping: ignored
        assert guard.received == signal.SIGINT
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_the_guard_raises_at_once_inside_an_interruptible_region_and_on_a_second_signal():
    with SignalGuard() as guard:
        with pytest.raises(Interrupted) as stop:
            with guard.interruptible():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # never reached in full
        assert stop.value.signal_name == "SIGTERM"
    # SIGHUP, unless this run ignores it (under nohup the guard leaves it ignored, on purpose)
    hangup = signal.SIGTERM if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else signal.SIGHUP
    with SignalGuard() as guard:
        os.kill(os.getpid(), hangup)
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), hangup)  # a second signal forces the stop (a hung call)
            time.sleep(5)


@pytest.mark.parametrize("warm", [True, False], ids=["forked", "fresh"])
def test_a_sigkilled_suite_takes_its_worker_with_it(workdir, faults, warm):
    """SIGKILL cannot be caught: the parent stays RUNNING (`--resume` reruns the case), but
    the worker must not run on alone (on a GPU it would hold the device), nor the warm
    worker that forked it."""
    path = faults_experiment(workdir, ["sklearn", "gate"])
    proc = start_cli("run", str(path), *([] if warm else ["--no-warm-worker"]), cwd=workdir, env=faults)
    started = workdir / "faults" / "started"
    wait_for_file(started, proc)
    worker = int(started.read_text())
    parent = psutil.Process(worker).ppid()
    assert (parent != proc.pid) is warm  # forked by the warm worker, or started by the suite
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while (alive(worker) or alive(parent)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(worker) and not alive(parent)


def test_a_signal_ignored_on_purpose_stays_ignored():
    """Under nohup SIGHUP is ignored: the suite must not start stopping on a hang-up."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with SignalGuard() as guard:
            os.kill(os.getpid(), signal.SIGHUP)
            guard.check()  # nothing received
            assert guard.received is None
    finally:
        signal.signal(signal.SIGHUP, previous)
