"""The warm worker: CPU cases forked from a server that imported the libraries once; a case's
first fit is still the first fit in its process, a crash still ends that case alone, and
nothing that may touch a GPU is ever forked. Real processes, real estimators, real signals."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections import defaultdict

import psutil
import pytest
from conftest import (
    FAULTS,
    alive,
    by_implementation,
    faults_experiment,
    main_here,
    run_cli,
    start_cli,
    store_runs,
    wait_for_file,
    write,
)

from mlcompare.config.experiment import load_experiment
from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.pairings.imports import ALLOWED_MODULE_PREFIXES
from mlcompare.suite import isolation
from mlcompare.suite.cases import case_skip_reason
from mlcompare.suite.warm_worker import WarmWorker


def _spec(tmp_path, **change):
    spec = {"estimator": "sklearn.linear_model.LinearRegression", "library": "sklearn", "device": "cpu",
            "params": {}, "task": "regression", "metrics": ["r2"], "repeats": 1,
            "dataset_dir": str(materialise(DatasetSpec("regression", 200, 3), tmp_path))}
    return spec | change


def _fits(workdir) -> dict[int, list[tuple[int, float, float]]]:
    """The Probe estimator's log: per process, (fits before this one, start, end) of each fit."""
    by_pid = defaultdict(list)
    for line in (workdir / "faults" / "fits").read_text().splitlines():
        pid, before, start, end = line.split()
        by_pid[int(pid)].append((int(before), float(start), float(end)))
    return by_pid


def test_cpu_cases_are_forked_and_cases_that_may_touch_a_gpu_start_fresh(tmp_path):
    warm = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES, isolation.worker_env())
    try:
        with isolation.serving(warm, None):
            cpu = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
            # cuml.accel must be installed before scikit-learn is imported; a GPU case may create a
            # CUDA context; a distributed one starts a cluster: all in a fresh process (they fail
            # here, where none of those can run, which is beside the point)
            others = {name: isolation.run_isolated(_spec(tmp_path, **change), timeout_s=300) for name, change in {
                "accelerated": {"accelerator": "cuml.accel", "device": "gpu"},
                "gpu": {"device": "gpu", "library": "xgboost", "estimator": "xgboost.XGBRegressor",
                        "params": {"device": "cuda"}},
                "distributed": {"distributed": "dask", "library": "xgboost.dask",
                                "estimator": "xgboost.dask.DaskXGBRegressor"}}.items()}
        assert warm.unusable is None and warm.ready_s > 0
    finally:
        warm.shutdown()
    assert cpu["status"] == "ok" and cpu["process"] == "forked" and cpu["metrics"]["r2"] > 0.9
    assert {name: r["process"] for name, r in others.items()} == dict.fromkeys(others, "fresh")


def test_the_servers_of_later_rounds_are_started_ahead_and_ready_before_the_first_case(tmp_path):
    """`add_spares`: the servers the renewals will take import beside the suite's start-up; the
    first case waits for them all (no import runs beside a timed call), a renewal takes one
    at once, and one past them starts a server then; shutdown ends those left."""
    warm = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES, isolation.worker_env())
    warm.add_spares(2)
    spare_pids = [pid for pid, _ in warm.spares]
    try:
        assert len(spare_pids) == 2 and warm.pid not in spare_pids
        with isolation.serving(warm, None):
            first = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
            assert warm.spares == [(pid, True) for pid in spare_pids]  # their imports were done first
            servers = [warm.pid]
            for _ in range(3):
                assert isolation.renew_warm_worker()
                servers.append(warm.pid)
                record = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
                assert record["status"] == "ok" and record["process"] == "forked"
        assert servers[1:3] == spare_pids and len(set(servers)) == 4  # the third renewal started its own
        assert (warm.starts, warm.renewals) == (4, 3) and warm.spares == []
        assert first["status"] == "ok" and not alive(servers[0])
        leftover = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES,
                              isolation.worker_env())
        leftover.add_spares(2)
        unused = [pid for pid, _ in leftover.spares]
        leftover.shutdown()
        assert not any(alive(pid) for pid in unused)
    finally:
        warm.shutdown()
    assert not any(alive(pid) for pid in servers)


def test_servers_added_while_one_serves_are_ready_before_its_next_case(tmp_path):
    """advise adds the servers of each step's rounds while the server of the last step serves:
    the next case's process is forked only once their imports are done."""
    warm = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES, isolation.worker_env())
    try:
        with isolation.serving(warm, None):
            assert isolation.run_isolated(_spec(tmp_path), timeout_s=300)["status"] == "ok"
            warm.add_spares(2)
            assert [ready for _, ready in warm.spares] == [False, False]  # importing
            record = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
            assert warm.spares and all(ready for _, ready in warm.spares)
            warm.add_spares(2)  # as many waiting as asked: none more
            assert len(warm.spares) == 2
        assert record["status"] == "ok" and record["process"] == "forked"
    finally:
        warm.shutdown()


def test_a_case_s_process_time_holds_no_wait_for_the_servers_imports(tmp_path):
    """The first case waits for the server's (and the spares') imports before its clock starts:
    its `process_wall_s`, which sizes the next processes' values (`suite.plan.Overheads`), and
    its time limit hold none of them."""
    spec = _spec(tmp_path)  # the dataset made before the server starts
    warm = WarmWorker(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES, isolation.worker_env())
    warm.add_spares(1)
    try:
        with isolation.serving(warm, None):
            began = time.perf_counter()
            record = isolation.run_isolated(spec, timeout_s=300)
            elapsed = time.perf_counter() - began
    finally:
        warm.shutdown()
    assert record["status"] == "ok" and record["process"] == "forked"
    # the server's own figure for its imports, which this call waited for nearly all of
    assert record["process_wall_s"] < elapsed - 0.5 * warm.ready_s, (record["process_wall_s"], elapsed, warm.ready_s)


def test_a_server_that_loaded_a_gpu_module_refuses_and_cases_start_fresh(tmp_path):
    pytest.importorskip("numba.cuda")
    env = isolation.worker_env()
    env["PYTHONPATH"] = os.pathsep.join([str(FAULTS), env["PYTHONPATH"]])
    warm = WarmWorker(["gpu_module_estimators.NextToNumbaCuda"], (*ALLOWED_MODULE_PREFIXES, "gpu_module_estimators."),
                      env)
    try:
        with isolation.serving(warm, None):
            record = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
    finally:
        warm.shutdown()
    assert record["status"] == "ok" and record["process"] == "fresh"
    assert "numba.cuda" in warm.unusable and "cannot be forked" in warm.unusable


def test_each_case_first_fit_is_the_first_in_its_process(workdir, faults):
    """The Probe estimator counts the fits its own process ran before each one: the cold fit of
    every case must find none, in a process of its own, forked from the warm worker."""
    path = faults_experiment(workdir, ["sklearn", "probe"], sizes=[200, 300, 400])
    result = run_cli("run", str(path), "--repeats", "3", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    runs = by_implementation(store_runs("faults"))
    assert {r.data.tags["case_process"] for r in runs.values()} == {"forked"}
    fits = _fits(workdir)
    assert len(fits) == 3  # one process per case
    for pid, calls in fits.items():
        calls.sort(key=lambda call: call[1])
        assert [before for before, _, _ in calls] == list(range(len(calls))), (pid, calls)
        assert len(calls) >= 1 + 3  # the cold fit, then the warm repeats (and whatever else fits untimed)
    for n in (200, 300, 400):
        assert runs["probe", n].data.metrics["fit_cold_time_s"] > 0


def test_each_round_forks_from_a_server_of_its_own(workdir, faults):
    """A server's children share its layout and hash seed (drawn at its exec): the processes of
    one round share a server, and each round has a new one, so a case's processes (one a round)
    come from as many servers and draw their seeds apart, as fresh processes would."""
    write(workdir / "faults.yaml", """\
        name: faults
        repeats: 1
        rounds: 3
        datasets: [{generator: regression, n_samples: [200, 300], n_features: 3}]
        pairings: [faults]
        implementations: [probe]
    """)
    # each exec draws its hash seed unless PYTHONHASHSEED fixes it (as CI's environment may):
    # "random" asks for the draw a user's default environment makes
    result = run_cli("run", "faults.yaml", cwd=workdir, env=faults | {"PYTHONHASHSEED": "random"})
    assert result.returncode == 0, result.stderr
    servers = defaultdict(list)
    for line in (workdir / "faults" / "parents").read_text().splitlines():
        pid, parent, seen_hash = line.split()
        servers[int(parent)].append(int(seen_hash))
    assert sorted(len(seeds) for seeds in servers.values()) == [2, 2, 2]  # both cases of a round, one server
    assert all(len(set(seeds)) == 1 for seeds in servers.values())
    assert len({seeds[0] for seeds in servers.values()}) == 3  # three servers, three hash seeds
    assert {r.data.tags["case_process"] for r in store_runs("faults")
            if "mlflow.parentRunId" in r.data.tags} == {"forked"}
    assert not any(alive(parent) for parent in servers)  # each renewed server is gone


def test_without_the_warm_worker_every_case_starts_fresh(workdir, faults):
    path = faults_experiment(workdir, ["sklearn", "probe"])
    result = run_cli("run", str(path), "--no-warm-worker", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    runs = by_implementation(store_runs("faults"))
    assert {r.data.tags["case_process"] for r in runs.values()} == {"fresh"}
    assert [calls[0][0] for calls in _fits(workdir).values()] == [0]


def test_a_case_that_really_exhausts_memory_fails_alone(workdir, faults):
    """It fills its memory (capped for the test) until an allocation fails: that case is FAILED
    with the reason, and the cases after it still run forked from the same warm worker."""
    path = faults_experiment(workdir, ["sklearn", "exhausts_memory", "probe"])
    result = run_cli("run", str(path), cwd=workdir, env=faults)
    assert result.returncode == 1, result.stderr
    assert "2 ran, 0 skipped, 1 failed" in result.stdout
    runs = by_implementation(store_runs("faults"))
    oom = runs["exhausts_memory", 200]
    assert oom.info.status == "FAILED" and oom.data.tags["failure_reason"] == "out_of_memory"
    assert oom.data.tags["case_process"] == "forked"
    assert runs["probe", 200].info.status == "FINISHED" and runs["probe", 200].data.tags["case_process"] == "forked"


def test_a_server_that_dies_mid_case_fails_that_case_and_the_next_cases_get_a_new_one(workdir, faults):
    path = faults_experiment(workdir, ["sklearn", "gate"], sizes=[200, 300])
    proc = start_cli("run", str(path), cwd=workdir, env=faults)
    started = workdir / "faults" / "started"
    wait_for_file(started, proc)  # the gate case's process is inside fit
    child = int(started.read_text())
    server = psutil.Process(child).ppid()
    assert server != proc.pid  # forked by the warm worker, not started by the suite
    (workdir / "faults" / "open").touch()  # the next gate case passes
    os.kill(server, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert not alive(child)  # it died with its server
    runs = by_implementation(store_runs("faults"))
    lost = runs["gate", 200]
    assert lost.info.status == "FAILED" and lost.data.tags["error"] == "the warm worker died while the case ran"
    for key in (("sklearn", 300), ("gate", 300)):
        assert runs[key].info.status == "FINISHED" and runs[key].data.tags["case_process"] == "forked"


def test_the_warm_worker_is_an_import_of_the_cpu_libraries_only(tmp_path):
    """What it imports ahead is the base modules and the CPU estimators of the suite; it has
    forked nothing and mapped no CUDA library while doing so."""
    warm = WarmWorker(["sklearn.cluster.KMeans", "xgboost.XGBClassifier"], ALLOWED_MODULE_PREFIXES,
                      isolation.worker_env())
    try:
        with isolation.serving(warm, None):
            record = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
        assert record["process"] == "forked" and warm.failed_imports == {}
        server = psutil.Process(warm.pid)
        maps = open(f"/proc/{warm.pid}/maps").read() if sys.platform.startswith("linux") else ""
        assert "libcuda.so" not in maps  # the driver was never loaded, so no CUDA context exists
        assert "xgboost" in maps and server.children() == []  # its case child is gone
    finally:
        warm.shutdown()


def test_a_worker_started_before_the_file_is_read_imports_the_base_first_and_serves_once_told(tmp_path):
    warm = isolation.start_warm_worker_early()
    try:
        server = psutil.Process(warm.pid)
        deadline = time.monotonic() + 120
        while "pyarrow" not in open(f"/proc/{warm.pid}/maps").read():  # the base, before any hello
            assert time.monotonic() < deadline and server.is_running()
            time.sleep(0.05)
        assert warm.preload is None
        warm.expect(["sklearn.linear_model.LinearRegression"], ALLOWED_MODULE_PREFIXES)
        with isolation.serving(warm, None):
            record = isolation.run_isolated(_spec(tmp_path), timeout_s=300)
        assert record["status"] == "ok" and record["process"] == "forked" and warm.failed_imports == {}
    finally:
        warm.shutdown()
    assert not server.is_running()


def test_an_early_worker_goes_when_the_suite_has_no_cpu_case_for_it(tmp_path, workdir):
    warm = isolation.start_warm_worker_early()
    server = psutil.Process(warm.pid)
    gpu_only = write(workdir / "gpu.yaml", "name: gpu\nrepeats: 1\nrounds: 1\ndatasets: [{dataset: diabetes}]\n"
                                           "pairings: [linear_regression]\nimplementations: [cuml]\n")
    experiment = load_experiment(gpu_only)
    assert {case.implementation.device for case in experiment.cases()} == {"gpu"}
    assert isolation.start_warm_worker(experiment.cases(), experiment.allowed_modules, case_skip_reason,
                                       warm) is None
    assert not server.is_running()


def test_a_refused_file_leaves_no_warm_worker_behind(workdir, monkeypatch):
    started = []
    real = isolation.start_warm_worker_early

    def recording():
        warm = real()
        started.append(warm.pid)
        return warm

    monkeypatch.setattr(isolation, "start_warm_worker_early", recording)
    bad = write(workdir / "bad.yaml", "name: bad\nrepeats: 0\nrounds: 1\ndatasets: [{dataset: diabetes}]\n"
                                      "pairings: [linear_regression]\n")
    code, _, err = main_here("run", str(bad))
    assert code == 2 and "repeats" in err and len(started) == 1
    assert not psutil.pid_exists(started[0])
    assert not (workdir / "mlflow.db").exists()
