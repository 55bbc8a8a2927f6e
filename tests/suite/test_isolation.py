"""Cases in their own process: errors, crashes and hangs become failed records."""

from __future__ import annotations

import signal
import threading
import time

import psutil

from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.suite.isolation import run_isolated


def _spec(tmp_path, **change):
    spec = {"estimator": "sklearn.linear_model.LinearRegression", "library": "sklearn", "device": "cpu",
            "params": {}, "task": "regression", "metrics": ["r2"], "repeats": 1,
            "dataset_dir": str(materialise(DatasetSpec("regression", 200, 3), tmp_path))}
    return spec | change


def test_a_case_runs_in_a_worker(tmp_path):
    record = run_isolated(_spec(tmp_path), timeout_s=120)
    assert record["status"] == "ok" and record["metrics"]["r2"] > 0.9


def test_an_exception_in_the_case_is_a_failed_record_with_stderr(tmp_path):
    record = run_isolated(_spec(tmp_path, params={"no_such_param": 1}), timeout_s=120)
    assert record["status"] == "failed"
    assert record["error"].startswith("TypeError") and "no_such_param" in record["error"]
    assert (record["failure"], record["error_type"]) == ("exception", "TypeError")
    assert "Traceback" in record["stderr_tail"]


def test_a_missing_dataset_is_a_failed_record(tmp_path):
    record = run_isolated(_spec(tmp_path, dataset_dir=str(tmp_path / "missing")), timeout_s=120)
    assert record["status"] == "failed" and "FileNotFoundError" in record["error"]


def test_a_worker_killed_by_a_signal_is_failed_with_the_signal(tmp_path):
    """As the kernel's out-of-memory killer would: SIGKILL to the worker mid-case."""
    spec = _spec(tmp_path, repeats=100_000)  # long enough to be caught running
    killed = []

    def kill_worker():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            for child in psutil.Process().children(recursive=True):
                if "mlcompare.measure.worker" in " ".join(child.cmdline()):
                    time.sleep(0.5)
                    child.send_signal(signal.SIGKILL)
                    killed.append(child.pid)
            time.sleep(0.05)

    thread = threading.Thread(target=kill_worker)
    thread.start()
    record = run_isolated(spec, timeout_s=120)
    thread.join()
    assert killed
    assert record["status"] == "failed"
    assert (record["failure"], record["signal"]) == ("signal", "SIGKILL")
    assert record["error"].startswith("worker killed by signal SIGKILL")


def test_a_hung_case_is_killed_at_its_timeout(tmp_path):
    # 0.2 s is far less than a Python start with scikit-learn: the worker is killed mid-way
    record = run_isolated(_spec(tmp_path), timeout_s=0.2)
    assert record["status"] == "failed" and record["error"].startswith("timeout")
    assert record["failure"] == "timeout"


def test_a_cases_process_gets_no_password_or_token_of_the_store(monkeypatch):
    """Estimators' code runs there, and the Dask workers a case starts inherit it: it never talks to
    MLflow (the suite records the case), so the store's secrets stay in the suite's process."""
    from mlcompare.suite.isolation import worker_env

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://bob:uri-secret@127.0.0.1:5000")
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "bob")
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "env-secret")
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "token-secret")
    env = worker_env()
    assert env["MLFLOW_TRACKING_URI"] == "http://bob:***@127.0.0.1:5000"
    assert env["MLFLOW_TRACKING_USERNAME"] == "bob"
    assert "MLFLOW_TRACKING_PASSWORD" not in env and "MLFLOW_TRACKING_TOKEN" not in env
    assert not [k for k, v in env.items() if "secret" in v]
