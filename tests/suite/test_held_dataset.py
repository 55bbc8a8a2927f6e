"""A forked case's dataset is read by its warm server once a round, not by each case's process
(`measure.held_dataset`), and a round runs the cases of one dataset one after the other."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from conftest import run_cli, store_runs, write

from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.pairings.imports import ALLOWED_MODULE_PREFIXES
from mlcompare.suite import isolation
from mlcompare.suite.warm_worker import WarmWorker

HELD = """\
name: held
repeats: 2
rounds: 3
datasets: [{generator: regression, n_samples: [300, 400], n_features: 3}]
pairings:
  - name: sees
    task: regression
    metrics: [r2]
    implementations:
      a: {estimator: faulty_estimators.SeesItsData, device: cpu, params: {label: a}}
      b: {estimator: faulty_estimators.SeesItsData, device: cpu, params: {label: b}}
      c: {estimator: faulty_estimators.SeesItsData, device: cpu, params: {label: c}}
"""


def _cached_training_rows(cache: Path) -> dict[str, tuple[int, float]]:
    """Each cached dataset's folder name -> its training rows' count and sum, read from its files."""
    found = {}
    for folder in cache.iterdir():
        if (folder / "X_train.npy").exists():
            X = np.load(folder / "X_train.npy")
            found[folder.name] = (len(X), float(X.astype(np.float64).sum()))
    return found


def test_the_warm_server_reads_each_dataset_once_a_round_and_its_cases_fit_the_cached_rows(workdir, faults):
    write(workdir / "held.yaml", HELD)
    cache = workdir / "cache"
    result = run_cli("run", "held.yaml", cwd=workdir, env=faults | {"MLCOMPARE_DATA_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in (workdir / "faults" / "data").read_text().splitlines()]
    # each process's first fit, in the order the processes ran (one at a time)
    firsts = [next(g) for _, g in itertools.groupby(lines, key=lambda fields: fields[1])]
    assert len(firsts) == 3 * 2 * 3  # rounds × datasets × implementations, one process each
    rows = _cached_training_rows(cache)
    assert len(rows) == 2
    for label, _, n, total, held, read_now in firsts:
        # every process found its own dataset held, and fitted exactly its cached training rows
        assert held in rows, firsts
        assert (int(n), float(total)) == rows[held]
    # a round runs the three cases of a dataset one after the other: six runs of three processes,
    # the server reading the dataset for the first of them and holding it for the other two
    blocks = [list(g) for _, g in itertools.groupby(firsts, key=lambda fields: fields[4])]
    assert [[f[5] for f in block] for block in blocks] == [["1", "0", "0"]] * 6, firsts
    assert all(sorted(f[0] for f in block) == ["a", "b", "c"] for block in blocks)
    assert len({tuple(f[0] for f in block) for block in blocks}) > 1  # still drawn anew: not one fixed order
    runs = [r for r in store_runs("held") if "mlflow.parentRunId" in r.data.tags]
    assert len(runs) == 6
    for run in runs:
        m = run.data.metrics
        assert m["fit_processes"] == 3 and m["load_time_s"] > 0  # the server's read, timed as the case's would be
        assert run.data.tags.get("load_reader", run.data.params.get("load_reader")) == "numpy"


def _spec(dataset_dir: Path, **change) -> dict:
    return {"estimator": "sklearn.linear_model.LinearRegression", "library": "sklearn", "device": "cpu",
            "params": {}, "task": "regression", "metrics": ["r2"], "repeats": 1,
            "dataset_dir": str(dataset_dir)} | change


def test_a_held_dataset_is_read_once_for_the_cases_that_follow_and_an_unreadable_one_is_the_case_s_error(tmp_path):
    small = materialise(DatasetSpec("regression", 300, 3), tmp_path)
    other = materialise(DatasetSpec("regression", 400, 3), tmp_path)
    broken = materialise(DatasetSpec("regression", 500, 3), tmp_path)
    (broken / "X_train.npy").write_bytes(b"not an array")
    warm = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES, isolation.worker_env())
    try:
        with isolation.serving(warm, None):
            run = [isolation.run_isolated(_spec(d, keep_dataset=keep), timeout_s=300)
                   for d, keep in ((small, True), (small, True), (small, False), (other, False), (broken, False),
                                   (other, False))]
        fresh_broken = isolation.run_isolated(_spec(broken), timeout_s=300)  # no server: the case reads itself
    finally:
        warm.shutdown()
    first, second, third, elsewhere, failed, after = run
    assert all(r["status"] == "ok" and r["process"] == "forked" for r in (first, second, third, elsewhere, after))
    # read by the server for the first case, held for the two after it, read again for another dataset
    assert first["load_by_server_s"] > 0 and second["load_by_server_s"] == third["load_by_server_s"] == 0.0
    assert elsewhere["load_by_server_s"] > 0 and after["load_by_server_s"] > 0  # let go after `other`'s case
    for record in (first, second, third):
        # each case's load holds the server's read of its dataset, and its own part beside
        m = record["metrics"]
        assert m["load_time_s"] == first["load_by_server_s"] + record["load_in_process_s"]
    # the same models on the same rows as a case that read the dataset itself
    assert first["metrics"]["r2"] == second["metrics"]["r2"] == third["metrics"]["r2"]
    # a dataset the server could not read: the case read it itself and failed with its own error,
    # as a fresh process does; the server went on serving
    assert failed["status"] == "failed" and "load_by_server_s" not in failed
    assert failed["error_type"] == fresh_broken["error_type"] and failed["error"] == fresh_broken["error"]
