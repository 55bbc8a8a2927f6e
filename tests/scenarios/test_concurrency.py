"""Several writers on one SQLite store: every suite finishes with every run recorded."""

from __future__ import annotations

import sqlite3
import threading
import time

from conftest import start_cli, store_runs, write

from mlcompare.tracking.writer import Recorder

TWO_SUITES = """\
    name: together
    repeats: 1
    rounds: 1
    datasets: [{generator: regression, n_samples: [100, 150, 200], n_features: 3}]
    pairings: [linear_regression]
    implementations: [sklearn, cuml]
"""


def test_two_suites_write_to_one_new_sqlite_store_at_once(workdir):
    """Both start on a store that does not exist yet (creating it is the first race) and
    create the same MLflow experiment (the second)."""
    path = write(workdir / "together.yaml", TWO_SUITES)
    procs = [start_cli("run", str(path), cwd=workdir) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]

    runs = store_runs("together")
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 2 and {p.info.status for p in parents} == {"FINISHED"}
    for parent in parents:
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
        assert len(children) == 6  # sklearn and cuml at three sizes
        assert {c.info.status for c in children} == {"FINISHED"}


def test_a_store_locked_longer_than_sqlites_timeout_is_waited_for(workdir):
    """Another process holding the write lock past SQLite's 5 s busy timeout makes MLflow
    raise 'database is locked'; the recorder waits and writes once the lock is gone."""
    recorder = Recorder("locked")  # creates the store
    db = workdir / "mlflow.db"
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    released = []

    def release_later():
        time.sleep(7)
        released.append(time.monotonic())
        holder.execute("COMMIT")

    thread = threading.Thread(target=release_later)
    thread.start()
    parent = recorder.start_suite("suite · locked", params={"suite_name": "locked"}, tags={})
    written = time.monotonic()
    recorder.log_case("case", "FINISHED", params={"pairing": "kmeans"}, metrics={"fit_time_s": 1.0}, tags={})
    recorder.finish_suite("FINISHED", metrics={}, tags={}, files={"note.txt": "x"})
    thread.join()
    holder.close()
    assert released and written > released[0]  # it really waited for the lock
    runs = store_runs("locked")
    assert {r.info.run_id for r in runs} >= {parent}
    assert sorted(r.info.status for r in runs) == ["FINISHED", "FINISHED"]
