"""Dask: distributed implementations on real local clusters, and suites spread over a real
`dask scheduler` with `dask worker` processes (the way the README tells users to start one)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import alive, cli_env, faults_experiment, run_cli, start_cli, store_runs, wait_for_file, write

pytest.importorskip("distributed", reason="the dask extra is not installed")

TRAIN_ON_TWO_WORKERS = """\
    name: dask-two
    repeats: 2
    rounds: 1
    datasets: [{generator: classification, n_samples: 3000, n_features: 8}]
    pairings:
      - pairing: gradient_boosting
        params: {n_estimators: 20}
        implementations: {xgboost_dask_cpu: {params: {n_workers: 2}}}
    implementations: [sklearn, xgboost_dask_cpu]
"""

SPREAD = """\
    name: spread
    repeats: 2
    rounds: 1
    datasets:
      - {generator: blobs, n_samples: 1500, n_features: 6, centers: 3}
      - {generator: classification, n_samples: 1500, n_features: 8}
      - {generator: regression, n_samples: 1500, n_features: 6}
    pairings:
      - kmeans
      - linear_regression
      - {pairing: gradient_boosting, params: {n_estimators: 20}}
    implementations: [sklearn, xgboost_cpu, xgboost_gpu, cuml, xgboost_dask_cpu]
"""


class DaskCluster:
    """`dask scheduler` and `dask worker` processes on loopback; workers named in `gpu` advertise GPU=1."""

    def __init__(self, root: Path, workers: list[str], gpu: set[str] = frozenset(), env: dict | None = None,
                 nanny: bool = True):
        self.file = root / "scheduler.json"
        self.env = cli_env(env)
        dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        self.procs = [subprocess.Popen(dask + ["--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                               "--scheduler-file", str(self.file)],
                                       env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        self._wait(lambda: self.file.exists(), "the scheduler file")
        self.address = json.loads(self.file.read_text())["address"]
        for name in workers:
            resources = ["--resources", "GPU=1"] if name in gpu else []
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                 "--name", name, "--no-dashboard", *resources, *([] if nanny else ["--no-nanny"])],
                env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(len(workers), timeout=120)
            self.workers = {w["name"]: a for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}

    def _wait(self, ready, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert time.monotonic() < deadline, f"{what} never appeared"
            assert self.procs[0].poll() is None, "the Dask scheduler exited"
            time.sleep(0.1)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two single-threaded workers; `gpu-worker` advertises a GPU resource (this machine has no GPU)."""
    started = DaskCluster(tmp_path_factory.mktemp("dask"), ["cpu-worker", "gpu-worker"], gpu={"gpu-worker"})
    yield started
    started.stop()


def _children(runs: list) -> list:
    return [r for r in runs if "mlflow.parentRunId" in r.data.tags]


def test_xgboost_dask_trains_on_a_two_worker_local_cluster_and_is_logged(workdir):
    write(workdir / "two.yaml", TRAIN_ON_TWO_WORKERS)
    result = run_cli("run", "two.yaml", cwd=workdir)
    assert result.returncode == 0, result.stderr
    runs = {r.data.params["implementation"]: r for r in _children(store_runs("dask-two"))}
    dask, sklearn = runs["xgboost_dask_cpu"], runs["sklearn"]
    assert dask.info.status == "FINISHED" and dask.data.tags["case_status"] == "ok"
    params, metrics, tags = dask.data.params, dask.data.metrics, dask.data.tags
    assert (params["distributed"], params["dask_workers"], params["dask_cluster"]) == ("dask", "2", "LocalCluster")
    assert params["dask_threads_per_worker"] == "1"  # this machine's 2 threads shared by 2 workers
    assert params["input_modes"] == "dask,host"
    assert "2 Dask workers" in tags["ran_on"] and tags["ran_on"].startswith("cpu (XGBoost booster config)")
    assert "each of 2 workers" in tags["threadpools"]
    assert metrics["cluster_start_time_s"] > 0 and metrics["transfer_time_s"] > 0
    assert metrics["fit_time_s"] > 0 and metrics["fit_host_input_time_s"] > 0
    # the local workers are measured with the case: sampled with its children (their own
    # high-water marks cannot be reset from the case's process)
    assert "fit_peak_host_memory_mb" in metrics and tags["memory_method"] == "sampled"
    # the same model as one process, up to float sums: the same quality, nearly the same labels
    assert abs(metrics["accuracy"] - sklearn.data.metrics["accuracy"]) < 0.05
    assert metrics["prediction_agreement"] > 0.9 and "speedup_fit" in metrics
    assert tags["parity"] == "ok"


def test_a_distributed_case_trains_on_an_existing_cluster_and_asks_no_more_workers_than_it_has(workdir, cluster):
    write(workdir / "remote.yaml", f"""\
        name: remote-train
        repeats: 1
        rounds: 1
        datasets: [{{generator: regression, n_samples: 2000, n_features: 6}}]
        pairings:
          - pairing: gradient_boosting_regressor
            params: {{n_estimators: 10}}
            implementations:
              xgboost_dask_cpu: {{params: {{n_workers: [2, 3], scheduler_address: "{cluster.address}"}}}}
        implementations: [sklearn, xgboost_dask_cpu]
    """)
    result = run_cli("run", "remote.yaml", cwd=workdir)
    assert result.returncode == 1, result.stderr  # one case failed, on purpose
    runs = {r.data.params.get("sweep_own"): r for r in _children(store_runs("remote-train"))
            if r.data.params["implementation"] == "xgboost_dask_cpu"}
    two, three = runs["n_workers=2"], runs["n_workers=3"]
    assert two.data.tags["case_status"] == "ok"
    assert two.data.params["dask_cluster"] == cluster.address and two.data.params["dask_workers"] == "2"
    assert "fit_peak_host_memory_mb" not in two.data.metrics  # the workers are not this process's children
    assert three.info.status == "FAILED"
    assert f"n_workers=3, but the cluster at {cluster.address} has 2 workers" in three.data.tags["error"]


def test_a_suite_spread_over_a_cluster_logs_the_same_runs_as_a_local_suite(workdir, cluster):
    path = write(workdir / "spread.yaml", SPREAD)
    local = run_cli("run", str(path), cwd=workdir, env={"MLFLOW_TRACKING_URI": f"sqlite:///{workdir / 'local.db'}"})
    assert local.returncode == 0, local.stderr
    spread = run_cli("run", str(path), "--scheduler", cluster.address, cwd=workdir,
                     env={"MLFLOW_TRACKING_URI": f"sqlite:///{workdir / 'spread.db'}"})
    assert spread.returncode == 0, spread.stderr
    assert "spreading the cases over 2 Dask workers" in spread.stderr

    def stored(db: str) -> tuple[dict, list]:
        runs = store_runs("spread", f"sqlite:///{workdir / db}")
        return {r.info.run_name: r for r in _children(runs)}, [r for r in runs if r not in _children(runs)]

    here, local_parent = stored("local.db")
    there, spread_parent = stored("spread.db")
    assert len(here) == 8 and set(there) == set(here)  # the same cases, one run each
    for name, run in here.items():
        other = there[name]
        assert other.data.tags["case_status"] == run.data.tags["case_status"], name
        assert set(other.data.params) == set(run.data.params), name
        # what other processes took is measured only over timed calls of 0.2 s or more: how long a
        # small case's calls take depends on where it ran
        judged = {"cpu_others_cores_during_timed"}
        assert set(other.data.metrics) - judged == set(run.data.metrics) - judged, name
        assert other.data.tags["worker_host"] == socket.gethostname()
        if run.data.params["device"] == "gpu":  # only the GPU worker took them, and said why it skipped
            assert other.data.tags["dask_worker"] == cluster.workers["gpu-worker"], name
            assert "(on worker" in other.data.tags["skip_reason"]
        else:  # CPU cases stay off the GPU worker while a CPU-only one exists
            assert other.data.tags["dask_worker"] == cluster.workers["cpu-worker"], name
    assert len({r.data.tags["dask_worker"] for r in there.values()}) == 2  # both workers had cases
    assert spread_parent[0].data.tags["dask_scheduler"] == cluster.address
    assert "dask_scheduler" not in local_parent[0].data.tags
    # comparisons are made as locally: every case that ran has its speed-up against the baseline
    assert all("speedup_fit" in r.data.metrics for r in there.values() if r.data.tags["case_status"] == "ok")


def test_an_unreachable_scheduler_is_a_one_line_error_and_writes_nothing(workdir, small_experiment):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    result = run_cli("run", str(small_experiment), "--scheduler", f"tcp://127.0.0.1:{port}", cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"mlcompare: error: --scheduler: cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: "
        + result.stderr.split(f"{port}: ", 1)[1].strip()]
    assert not (workdir / "mlflow.db").exists()
    bad = run_cli("run", str(small_experiment), "--scheduler", "localhost:8786", cwd=workdir)
    assert bad.returncode == 2 and "expected a scheduler address like tcp://HOST:8786" in bad.stderr


@pytest.mark.parametrize("override,field,message", [
    ("{xgboost_dask_cpu: {params: {n_workers: 0}}}", "implementations.xgboost_dask_cpu.params.n_workers",
     "at least 1"),
    ("{xgboost_dask_cpu: {params: {scheduler_address: somewhere}}}",
     "implementations.xgboost_dask_cpu.params.scheduler_address", "tcp://HOST:8786"),
])
def test_bad_cluster_params_are_one_line_errors_naming_the_field(workdir, override, field, message):
    write(workdir / "bad.yaml", f"""\
        name: bad
        datasets: [{{generator: classification, n_samples: 100, n_features: 4}}]
        pairings: [{{pairing: gradient_boosting, implementations: {override}}}]
    """)
    result = run_cli("validate", "bad.yaml", cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and f"bad.yaml: pairings[0].{field}" in result.stderr
    assert message in result.stderr


def test_a_pairing_names_a_known_engine(workdir):
    write(workdir / "engine.yaml", """\
        name: engine
        datasets: [{generator: regression, n_samples: 100, n_features: 4}]
        pairings:
          - name: spark_ols
            task: regression
            implementations:
              sklearn: {estimator: sklearn.linear_model.LinearRegression, device: cpu, distributed: spark}
    """)
    result = run_cli("validate", "engine.yaml", cwd=workdir)
    assert result.returncode == 2
    assert "engine.yaml: pairings[0].implementations.sklearn.distributed" in result.stderr and "dask" in result.stderr


def test_ctrl_c_on_a_spread_suite_kills_the_case_on_its_worker(workdir, faults):
    remote = DaskCluster(workdir, ["w1"], env=faults)
    try:
        path = faults_experiment(workdir, ["sklearn", "gate"], sizes=[200])
        proc = start_cli("run", str(path), "--scheduler", remote.address, cwd=workdir, env=faults)
        started = workdir / "faults" / "started"
        wait_for_file(started, proc)  # the gate case is inside fit, on the worker
        case_process = int(started.read_text())
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        runs = store_runs("faults")
        assert not [r for r in runs if r.info.status == "RUNNING"]
        cases = {r.data.params["implementation"]: r for r in _children(runs)}
        assert cases["sklearn"].info.status == "FINISHED"
        assert cases["gate"].info.status == "KILLED" and cases["gate"].data.tags["failure_reason"] == "interrupted"
        deadline = time.monotonic() + 30
        while alive(case_process):  # killed on the worker, not left to run on
            assert time.monotonic() < deadline, "the case's process still runs on the worker"
            time.sleep(0.1)
    finally:
        remote.stop()


def test_a_worker_that_dies_fails_its_case_and_the_suite_ends(workdir, faults):
    remote = DaskCluster(workdir, ["w1"], env=faults, nanny=False)  # no nanny to start it again
    try:
        path = faults_experiment(workdir, ["sklearn", "gate"], sizes=[200, 300])
        proc = start_cli("run", str(path), "--scheduler", remote.address, cwd=workdir, env=faults)
        started = workdir / "faults" / "started"
        wait_for_file(started, proc)  # the gate case is inside fit, on the worker
        remote.procs[1].kill()  # the machine running the case goes away
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, err
        assert "1 ran, 0 skipped, 3 failed" in out
        runs = store_runs("faults")
        assert not [r for r in runs if r.info.status == "RUNNING"]
        cases = {(r.data.params["implementation"], r.data.params["n_samples"]): r for r in _children(runs)}
        lost = cases["gate", "200"]
        assert lost.info.status == "FAILED" and lost.data.tags["failure_reason"] == "worker"
        assert "left the cluster while running this case" in lost.data.tags["error"]
        assert ("no worker of the Dask cluster that could run this case is left"
                in cases["sklearn", "300"].data.tags["error"])
    finally:
        remote.stop()
