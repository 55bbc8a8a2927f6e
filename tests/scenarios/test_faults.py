"""Fault injection: estimators that segfault, exit, run out of memory or hang, each in a
real `mlcompare run`, and what the SQLite store holds afterwards."""

from __future__ import annotations

from conftest import alive, by_implementation, faults_experiment, run_cli, store_runs, write
from mlflow.tracking import MlflowClient


def _stderr_artifact(run) -> str:
    path = MlflowClient().download_artifacts(run.info.run_id, "worker_stderr.txt")
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_crashes_and_hangs_fail_their_case_and_the_suite_goes_on(workdir, faults):
    """Each case is forked from the warm worker: a crash, an exit, an out-of-memory and a hang
    end that child alone, and the case after them (probe) still runs, forked from the same
    warm worker."""
    path = faults_experiment(workdir, ["sklearn", "segfault", "exits", "out_of_memory", "hang", "probe"])
    result = run_cli("run", str(path), "--timeout", "15", cwd=workdir, env=faults)
    assert result.returncode == 1, result.stderr
    assert "2 ran, 0 skipped, 4 failed" in result.stdout

    runs = store_runs("faults")
    assert [r.info.status for r in runs if "mlflow.parentRunId" not in r.data.tags] == ["FAILED"]
    assert not [r for r in runs if r.info.status == "RUNNING"]
    cases = by_implementation(runs)
    assert len(cases) == 6
    assert {r.data.tags["case_process"] for r in cases.values()} == {"forked"}
    assert cases["probe", 200].info.status == "FINISHED"

    ok = cases["sklearn", 200]
    assert ok.info.status == "FINISHED" and ok.data.metrics["r2"] > 0.9

    segfault = cases["segfault", 200]
    assert segfault.info.status == "FAILED"
    assert segfault.data.tags["case_status"] == "failed"
    assert (segfault.data.tags["failure_reason"], segfault.data.tags["signal"]) == ("signal", "SIGSEGV")
    assert segfault.data.tags["error"] == "worker killed by signal SIGSEGV"
    stderr = _stderr_artifact(segfault)
    assert "Segmentation fault" in stderr and "faulty_estimators.py" in stderr  # faulthandler's stack

    exits = cases["exits", 200]
    assert exits.info.status == "FAILED" and exits.data.tags["failure_reason"] == "exit"
    assert exits.data.tags["error"] == "worker exited with code 3 and no result"

    oom = cases["out_of_memory", 200]
    assert oom.info.status == "FAILED" and oom.data.tags["failure_reason"] == "out_of_memory"
    assert "Unable to allocate" in oom.data.tags["error"]
    assert "MemoryError" in _stderr_artifact(oom)

    hang = cases["hang", 200]
    assert hang.info.status == "FAILED" and hang.data.tags["failure_reason"] == "timeout"
    assert hang.data.tags["error"] == "timeout: no result after 15 s, worker killed"
    # the worker and the process it started are gone, not orphaned
    pids = [int(p) for p in (workdir / "faults" / "hang.pids").read_text().split()]
    assert not [p for p in pids if alive(p)]


def test_fail_fast_stops_then_resume_finishes_every_case_once(workdir, faults):
    path = faults_experiment(workdir, ["sklearn", "flaky"], sizes=[200, 300])
    (workdir / "faults" / "fail").touch()
    first = run_cli("run", str(path), "--fail-fast", cwd=workdir, env=faults)
    assert first.returncode == 1, first.stderr
    assert "stopping at the first failed case (--fail-fast); 2 cases not run" in first.stderr
    runs = store_runs("faults")
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    assert parent.info.status == "FAILED" and parent.data.metrics["cases_not_run"] == 2
    assert sorted((r.data.params["implementation"], r.info.status) for r in runs if r is not parent) == [
        ("flaky", "FAILED"), ("sklearn", "FINISHED")]

    (workdir / "faults" / "fail").unlink()
    second = run_cli("run", str(path), "--resume", cwd=workdir, env=faults)
    assert second.returncode == 0, second.stderr
    assert "3 ran, 0 skipped, 0 failed, 1 already finished (resumed)" in second.stdout
    runs = store_runs("faults")
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert [p.info.status for p in parents] == ["FAILED", "FINISHED"]
    assert parents[1].data.tags["resumed_from"] == parents[0].info.run_id
    finished = [r for r in runs if "mlflow.parentRunId" in r.data.tags and r.info.status == "FINISHED"]
    keys = [r.data.tags["mlcompare.case_fingerprint"] for r in finished]
    assert len(keys) == len(set(keys)) == 4  # every case FINISHED exactly once
    rerun = [r for r in finished if r.data.tags["mlflow.parentRunId"] == parents[1].info.run_id]
    assert sorted((r.data.params["implementation"], r.data.params["n_samples"]) for r in rerun) == [
        ("flaky", "200"), ("flaky", "300"), ("sklearn", "300")]
    # speed-ups of the rerun case use the baseline the first suite measured
    assert "speedup_fit" in by_implementation(rerun)["flaky", 200].data.metrics


def test_a_baseline_stopped_by_its_time_limit_gives_a_lower_bound_on_the_speed_up(workdir, faults):
    """The baseline hangs in its first fit until the time limit; the other implementation gets '≥ N×'."""
    write(workdir / "slow.yaml", """\
        name: slow
        repeats: 3
        rounds: 1
        timeout_s: 10
        datasets: [{generator: regression, n_samples: 300, n_features: 3}]
        pairings:
          - name: slow_baseline
            task: regression
            metrics: [r2]
            baseline: hang
            implementations:
              hang: {estimator: faulty_estimators.Hang, device: cpu}
              sklearn: {estimator: sklearn.linear_model.LinearRegression, device: cpu}
    """)
    result = run_cli("run", "slow.yaml", cwd=workdir, env=faults)
    assert result.returncode == 1, result.stderr  # the baseline failed
    cases = by_implementation(store_runs("slow"))
    hang, fast = cases["hang", 300], cases["sklearn", 300]
    assert hang.data.tags["failure_reason"] == "timeout"
    m = fast.data.metrics
    assert "speedup_fit" not in m
    assert m["speedup_fit_lower_bound"] == m["baseline_fit_at_least_s"] / m["fit_time_s"]
    # how long the hung fit ran: from when it started (it wrote hang.pids first thing) to when the suite
    # logged the timed-out run, just after stopping it. The worker's start-up came before, inside the limit,
    # but the suite's wait may wake a little after the limit on a loaded machine (CI: 10.00003 s), and the
    # figure runs to the stop: it is the fit's time, not the limit's, and at most a wake-up past it
    started = (workdir / "faults" / "hang.pids").stat().st_mtime
    logged = hang.info.start_time / 1000
    assert 0 < m["baseline_fit_at_least_s"] < 10 + 0.5
    assert abs((logged - started) - m["baseline_fit_at_least_s"]) < 1.5
    assert f"speed-up at least {m['speedup_fit_lower_bound']:.3g}x (the baseline timed out)" in result.stderr

    table = run_cli("report", "--experiment", "slow", cwd=workdir, env=faults)
    assert f"≥ {m['speedup_fit_lower_bound']:.3g}×" in table.stdout, table.stdout
    assert "≥ N×: the baseline's time limit stopped it in its first fit" in run_cli(
        "report", "--experiment", "slow", "--format", "markdown", cwd=workdir, env=faults).stdout


def test_no_lower_bound_when_the_time_limit_came_after_the_first_fit(tmp_path):
    from mlcompare.measure.timing import AFTER_FIRST_FIT, FIRST_FIT, mark
    from mlcompare.suite.isolation import _unfinished_first_fit

    progress = tmp_path / "progress.txt"
    assert _unfinished_first_fit(progress, 0.0) == {}  # stopped before the first fit started
    mark(str(progress), FIRST_FIT)
    started = float(progress.read_text().split()[1])
    assert _unfinished_first_fit(progress, started + 7.5) == {"first_fit_unfinished_s": 7.5}
    mark(str(progress), AFTER_FIRST_FIT)
    assert _unfinished_first_fit(progress, started + 9) == {}
