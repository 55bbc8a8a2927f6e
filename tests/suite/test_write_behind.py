"""Runs written behind: a thread writes each finished case while the next one runs, never during
a case's timed calls, and nothing the suite reported is lost when it stops on Ctrl-C, SIGTERM
or an error. Real suites, a real SQLite store, real signals."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time

import pytest
from conftest import faults_experiment, start_cli, store_runs, write

from mlcompare.config.experiment import load_experiment
from mlcompare.suite import runner
from mlcompare.tracking.write_behind import WriteBehind
from mlcompare.tracking.writer import Recorder


def _slow_writes(monkeypatch, seconds: float) -> list[tuple[str, float, float]]:
    """Record (run name, start, end) of every case run written, each made `seconds` slower (a slow store)."""
    writes = []
    write_case = Recorder._write_case

    def recording(self, run_name, *args):
        start = time.monotonic()
        time.sleep(seconds)
        try:
            return write_case(self, run_name, *args)
        finally:
            writes.append((run_name, start, time.monotonic()))

    monkeypatch.setattr(Recorder, "_write_case", recording)
    return writes


def _probe_fits(workdir) -> list[tuple[int, float, float]]:
    lines = (workdir / "faults" / "fits").read_text().splitlines()
    return [(int(pid), float(start), float(end)) for pid, _, start, end in (line.split() for line in lines)]


def test_runs_are_written_while_the_next_case_runs_and_never_during_its_timed_fits(workdir, faults_here,
                                                                                 monkeypatch):
    writes = _slow_writes(monkeypatch, 0.3)
    ahead = []  # the report's libraries, loaded ahead: in which thread, when
    load_ahead = runner._report_libraries

    def recording_load_ahead():
        start = time.monotonic()
        load_ahead()
        ahead.append((threading.current_thread().name, start, time.monotonic()))

    monkeypatch.setattr(runner, "_report_libraries", recording_load_ahead)
    experiment = load_experiment(faults_experiment(workdir, ["sklearn", "probe"], sizes=[200, 300, 400]))
    outcome = runner.run_suite(experiment, Recorder("faults"), say=lambda line: None)
    assert outcome.count("ok") == 6
    assert len(writes) == 6
    fits = _probe_fits(workdir)
    # loaded once, by the writer's thread, in its turn: beside no timed fit
    assert [name for name, _, _ in ahead] == ["mlcompare-writer"]
    assert not [fit for fit in fits if fit[1] < ahead[0][2] and ahead[0][1] < fit[2]]
    for name, start, end in writes:
        overlapping = [fit for fit in fits if fit[1] < end and start < fit[2]]
        assert not overlapping, f"{name} was written during a timed fit"
    # each baseline's run is written once the case after it has started and its fits are over:
    # the next case did not wait for the write
    by_process = {}
    for pid, _, end in fits:
        by_process[pid] = max(end, by_process.get(pid, 0))
    probe_done = sorted(by_process.values())
    baseline_writes = sorted(start for name, start, _ in writes if "· sklearn ·" in name)
    assert all(written > done for written, done in zip(baseline_writes, probe_done))
    runs = store_runs("faults")
    assert len(runs) == 7 and {r.info.status for r in runs} == {"FINISHED"}


def test_an_error_in_the_suite_writes_what_was_queued_first(workdir, faults_here, monkeypatch):
    """A crash of the suite (an error in its own code, here at the fourth case) ends it with
    every run it had accepted written, the parent FAILED and nothing RUNNING."""
    _slow_writes(monkeypatch, 0.3)
    said = []
    summary = runner._summary

    def failing_summary(record):
        said.append(record)
        if len(said) == 4:
            raise RuntimeError("a bug in the suite")
        return summary(record)

    monkeypatch.setattr(runner, "_summary", failing_summary)
    experiment = load_experiment(faults_experiment(workdir, ["sklearn", "probe"], sizes=[200, 300, 400]))
    with pytest.raises(RuntimeError, match="a bug in the suite"):
        runner.run_suite(experiment, Recorder("faults"), say=lambda line: None)
    runs = store_runs("faults")
    parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert [p.info.status for p in parent] == ["FAILED"]
    assert len(children) == 4 and {r.info.status for r in children} == {"FINISHED"}


ROUNDS_WITH_A_FAILURE = """\
    name: rounds
    repeats: 1
    rounds: 3
    precision: 0
    datasets: [{generator: regression, n_samples: [300, 400], n_features: 3}]
    pairings: [faults]
    implementations: [sklearn, probe, exits]
"""


def test_a_suite_of_rounds_writes_each_run_as_its_case_ends_and_the_report_keeps_the_file_s_order(
        workdir, faults_here, monkeypatch):
    """Three rounds: the case that fails is written in round 1, not after the last round behind
    its group's baseline; every run is written outside the timed fits; the store lists the runs
    as they were written, the suite read back lists them by case number, as the file does."""
    writes = _slow_writes(monkeypatch, 0.0)
    experiment = load_experiment(write(workdir / "rounds.yaml", ROUNDS_WITH_A_FAILURE))
    recorder = Recorder("rounds")
    outcome = runner.run_suite(experiment, recorder, say=lambda line: None)
    assert outcome.count("ok") == 4 and outcome.count("failed") == 2
    fits = _probe_fits(workdir)
    assert len({pid for pid, _, _ in fits}) == 6  # two probe cases, three processes each
    for name, start, end in writes:
        assert not [fit for fit in fits if fit[1] < end and start < fit[2]], f"{name} was written during a fit"
    process_starts = sorted(min(start for pid, start, _ in fits if pid == process) for process in {f[0] for f in fits})
    last_round_starts = process_starts[-2]  # the probes' six processes: the last two are round 3's
    failed = [start for name, start, _ in writes if "· exits ·" in name]
    assert len(failed) == 2 and max(failed) < last_round_starts
    in_the_file = [case.name for case in experiment.cases()]
    stored = recorder.load_suite()
    assert [case.name for case in stored.cases] == in_the_file
    assert [case.params["case_number"] for case in stored.cases] == [str(n) for n in range(1, 7)]
    written = [r.info.run_name for r in store_runs("rounds") if "mlflow.parentRunId" in r.data.tags]
    assert sorted(written) == sorted(in_the_file) and written != in_the_file


def test_a_release_lets_the_oldest_held_writes_go_and_a_drain_the_rest():
    """`release(1)`, once a case has started: one held write, the oldest; the others wait for
    the next release, or the drain."""
    behind = WriteBehind(hold=True)
    done: list[int] = []
    try:
        for number in range(3):
            behind.put(lambda number=number: done.append(number))
        time.sleep(0.2)
        assert done == []  # held
        behind.release(1)
        deadline = time.monotonic() + 10
        while not done and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # time enough for a second write, were one released
        assert done == [0]
        behind.drain()
        assert done == [0, 1, 2]
    finally:
        behind.stop()


STALLED = """\
    name: stalled
    repeats: 1
    rounds: 1
    datasets: [{generator: regression, n_samples: [200, 300, 400], n_features: 3}]
    pairings: [linear_regression]
    implementations: [sklearn, cuml, cuml_accel]
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_while_the_store_is_stalled_loses_no_run(workdir, signum):
    """Another process holds the store's write lock, so the writer is stuck mid-write with runs
    queued behind it; the suite is stopped then. It writes every run it reported before it
    exits: as many as the last `[k/N]` line counted (the skips of cuml and cuml_accel, said once
    before the cases, are counted there too), none left RUNNING."""
    path = write(workdir / "stalled.yaml", STALLED)
    proc = start_cli("run", str(path), cwd=workdir)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 300
        while not any(text in line for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.05)

    wait_for("[1/9]")
    holder = sqlite3.connect(workdir / "mlflow.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # the writer's next write waits (retried while locked)
    try:
        wait_for("[4/9]")  # the cases at 300 rows reported; the suite waits for the writer to start the next
        time.sleep(1)
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)  # Ctrl-C at a terminal: the whole foreground group
        else:
            os.kill(proc.pid, signum)
        time.sleep(2)  # the suite is stopping, its writer still stuck
        assert proc.poll() is None, "".join(lines)
    finally:
        holder.execute("COMMIT")
        holder.close()
    proc.wait(timeout=300)
    reader.join(timeout=10)
    assert proc.returncode == 128 + signum, "".join(lines)
    reported = max(int(line[1:].split("/")[0]) for line in lines if line.startswith("["))
    runs = store_runs("stalled")
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(children) == reported >= 7, "".join(lines)
    assert not [r for r in runs if r.info.status == "RUNNING"]
    assert [r.info.status for r in runs if "mlflow.parentRunId" not in r.data.tags] == ["KILLED"]
    assert sorted(r.data.tags["case_status"] for r in children).count("killed") == 1
