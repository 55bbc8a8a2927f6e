"""Whether a suite recorded in the store is still alive, from the host and process on its parent run."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil

from mlcompare.suite.dead_suites import HOST_TAG, PID_TAG, STARTED_TAG, liveness, owner_tags


def test_this_process_is_alive_and_its_tags_say_so():
    tags = owner_tags()
    assert tags[PID_TAG] == str(os.getpid())
    verdict = liveness(tags)
    assert verdict.alive is True


def test_a_process_that_ended_is_dead():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    started = psutil.Process(proc.pid).create_time()
    proc.wait()
    tags = {HOST_TAG: owner_tags()[HOST_TAG], PID_TAG: str(proc.pid), STARTED_TAG: f"{started:.3f}"}
    assert liveness(tags).alive is False
    assert "is gone" in liveness(tags).why


def test_a_reused_pid_is_not_taken_for_the_suite():
    tags = owner_tags() | {STARTED_TAG: "1000.000"}  # this pid, but a process started in 1970
    verdict = liveness(tags)
    assert verdict.alive is False and "another process" in verdict.why


def test_another_host_or_no_record_cannot_be_told():
    assert liveness(owner_tags() | {HOST_TAG: "elsewhere"}).alive is None
    assert liveness({}).alive is None
