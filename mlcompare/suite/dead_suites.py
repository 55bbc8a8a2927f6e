"""Closing the runs of suites that died without closing them (SIGKILL, out of memory, a lost node).

Every suite records on its parent run the host and process that run it (`mlcompare.host`,
`mlcompare.pid`, and the process's start time, so that a reused pid is not mistaken for
the suite). On that same host a process that is gone, or that started at another time, is
proof the suite is dead: its parent run and its case runs still RUNNING are marked
KILLED, with the reason in the `killed_reason` tag. A suite recorded on another host
cannot be checked from here and is left alone unless the user says it is dead
(`mlcompare heal --other-hosts`). Case runs still RUNNING under a parent that is no longer
RUNNING are closed too.

`mlcompare run` heals the suites of its own MLflow experiment on this host before it
starts; `mlcompare heal` does it for any experiment, on demand.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Callable

import psutil

from mlcompare.records import StoredRun

HOST_TAG, PID_TAG, STARTED_TAG = "mlcompare.host", "mlcompare.pid", "mlcompare.pid_started"


def owner_tags() -> dict[str, str]:
    """The tags that let a later suite tell whether this one is still alive."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()),
            STARTED_TAG: f"{psutil.Process().create_time():.3f}"}


@dataclass(frozen=True)
class Verdict:
    alive: bool | None  # None: cannot be told from here (another host, an older mlcompare)
    why: str


def liveness(tags: dict[str, str], here: str | None = None) -> Verdict:
    """Whether the suite whose parent run carries these tags is still running."""
    here = here or socket.gethostname()
    host, pid, started = tags.get(HOST_TAG), tags.get(PID_TAG), tags.get(STARTED_TAG)
    if not host or not pid:
        return Verdict(None, "no host and process recorded (a suite of an older mlcompare, or another tool)")
    if host != here:
        return Verdict(None, f"it runs on host {host}, which cannot be checked from {here}")
    try:
        process = psutil.Process(int(pid))
        created = process.create_time()
        zombie = process.status() == psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, ValueError):
        return Verdict(False, f"its process {pid} on {host} is gone")
    if started and abs(created - float(started)) > 1.0:
        return Verdict(False, f"its process {pid} on {host} ended (the pid now belongs to another process)")
    if zombie:
        return Verdict(False, f"its process {pid} on {host} has exited")
    return Verdict(True, "running")


def heal(store, other_hosts: bool = False, say: Callable[[str], None] = lambda line: None) -> list[str]:
    """Close the runs of dead suites in `store` (`tracking.housekeeping.Housekeeping`); the
    closed run ids. `other_hosts`: suites of other hosts are taken as dead too."""
    closed: list[str] = []
    for suite in store.running_suites():
        verdict = liveness(suite.tags)
        if verdict.alive is None and other_hosts:
            verdict = Verdict(False, f"declared dead by the user (mlcompare heal --other-hosts): {verdict.why}")
        if verdict.alive is not False:
            if verdict.alive is None:
                say(f"mlcompare: suite run {suite.run_id} is RUNNING and {verdict.why}; left alone "
                    "(`mlcompare heal --other-hosts` closes it)")
            continue
        reason = f"the suite died without closing this run: {verdict.why}"
        for child in store.running_children(suite.run_id):
            store.close_killed(child.run_id, reason)
            closed.append(child.run_id)
        store.close_killed(suite.run_id, reason)
        closed.append(suite.run_id)
        say(f"mlcompare: suite run {suite.run_id} ({_name(suite)}) was still RUNNING, but {verdict.why}: "
            "marked KILLED")
    for case in store.running_cases():
        parent = case.tags.get("mlflow.parentRunId")
        if parent and parent not in closed and store.status(parent) != "RUNNING":
            store.close_killed(case.run_id, f"its suite run {parent} is no longer running")
            closed.append(case.run_id)
    return closed


def _name(run: StoredRun) -> str:
    return run.params.get("suite_name", run.name)
