"""A SIGKILLed suite leaves RUNNING runs; the next suite on the same experiment closes them."""

from __future__ import annotations

import os
import signal

from conftest import faults_experiment, run_cli, start_cli, store_runs, wait_for_file
from mlflow.tracking import MlflowClient

from mlcompare.suite.dead_suites import HOST_TAG, PID_TAG, STARTED_TAG


def test_the_next_run_closes_the_runs_of_a_suite_killed_by_sigkill(workdir, faults):
    path = faults_experiment(workdir, ["sklearn", "gate"])
    proc = start_cli("run", str(path), cwd=workdir, env=faults)
    wait_for_file(workdir / "faults" / "started", proc)  # the gate case is running
    os.killpg(proc.pid, signal.SIGKILL)  # the suite and its case worker, as the OOM killer or a lost node would
    proc.wait()
    left = store_runs("faults")
    # the parent stays RUNNING; the baseline's run, written behind, is in the store only if the
    # writer got to it before the kill (it waits for the gate case's timed calls to end)
    statuses = {r.info.status for r in left}
    assert "RUNNING" in statuses and statuses <= {"RUNNING", "FINISHED"}
    (workdir / "faults" / "open").touch()
    again = run_cli("run", str(path), cwd=workdir, env=faults)
    assert again.returncode == 0, again.stderr
    assert "was still RUNNING, but its process" in again.stderr
    runs = {r.info.run_id: r for r in store_runs("faults")}
    for old in left:
        now = runs[old.info.run_id]
        if old.info.status == "RUNNING":
            assert now.info.status == "KILLED"
            assert "the suite died without closing this run" in now.data.tags["killed_reason"]
    assert not any(r.info.status == "RUNNING" for r in runs.values())


def test_a_suite_of_another_host_is_left_alone_unless_the_user_says(workdir, faults):
    client = MlflowClient()
    experiment = client.create_experiment("faults")
    elsewhere = client.create_run(experiment, tags={"mlcompare.kind": "suite", HOST_TAG: "another-host",
                                                    PID_TAG: "1", STARTED_TAG: "1.0"}).info.run_id
    child = client.create_run(experiment, tags={"mlcompare.kind": "case", "mlflow.parentRunId": elsewhere}).info.run_id
    path = faults_experiment(workdir, ["sklearn"])
    result = run_cli("run", str(path), cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    assert "runs on host another-host" in result.stderr
    assert client.get_run(elsewhere).info.status == "RUNNING"
    healed = run_cli("heal", "--experiment", "faults", "--other-hosts", cwd=workdir, env=faults)
    assert healed.returncode == 0, healed.stderr
    assert "2 run(s) marked KILLED" in healed.stdout
    for run_id in (elsewhere, child):
        run = client.get_run(run_id)
        assert run.info.status == "KILLED" and "declared dead by the user" in run.data.tags["killed_reason"]
