"""Shared fixtures: every test that writes gets its own SQLite store and dataset cache."""

from __future__ import annotations

import atexit
import contextlib
import functools
import http.server
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
# Set by `mlflow run`: a test's suite must never attach itself to an outer run.
_OUTER_RUN_VARS = ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME")
# Every run a test writes, in this process or a child, holds only names `mlcompare.records` declares:
# the writer refuses any other (a new metric must be added to the contract first).
os.environ["MLCOMPARE_CHECK_NAMES"] = "1"
# The user's cache (the migrated SQLite store every new store is copied from,
# `mlcompare.tracking.store_template`): one for the whole session, not the developer's.
_SESSION_CACHE = tempfile.mkdtemp(prefix="mlcompare-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _SESSION_CACHE
atexit.register(shutil.rmtree, _SESSION_CACHE, ignore_errors=True)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh working directory with its own MLflow store and dataset cache."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("MLCOMPARE_DATA_DIR", str(tmp_path / "data"))
    for var in _OUTER_RUN_VARS:
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


SMALL_EXPERIMENT = """\
    name: small
    repeats: 2
    rounds: 2
    timeout_s: 300
    datasets:
      - {generator: blobs, n_samples: 600, n_features: 4, centers: 3}
      - {generator: classification, n_samples: 600, n_features: 6}
      - {generator: regression, n_samples: 600, n_features: 5}
    pairings: [kmeans, random_forest, gradient_boosting, linear_regression]
    implementations: [sklearn, xgboost_cpu, xgboost_gpu, cuml]
"""


@pytest.fixture
def small_experiment(workdir) -> Path:
    return write(workdir / "small.yaml", SMALL_EXPERIMENT)


def cli_env(env: dict | None = None) -> dict:
    """This environment without `mlflow run`'s variables, plus `env`, with the repository importable."""
    full = {k: v for k, v in os.environ.items() if k not in _OUTER_RUN_VARS} | (env or {})
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full.get("PYTHONPATH")]))
    return full


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None,
            timeout: int = 600) -> subprocess.CompletedProcess:
    """`python -m mlcompare ...` in a fresh process, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "mlcompare", *args], cwd=cwd, env=cli_env(env),
                          capture_output=True, text=True, timeout=timeout)


def python_here(code: str, *args: str) -> subprocess.CompletedProcess:
    """`python -c CODE ARGS` in a fresh process with the repository importable: what a command
    imports can only be seen in a process of its own."""
    return subprocess.run([sys.executable, "-c", code, *args], env=cli_env(), capture_output=True, text=True,
                          timeout=600)


def modules_after(*argv: str) -> set[str]:
    """The top-level modules a fresh Python holds after `mlcompare ARGV` (which must exit 0)."""
    script = ("import contextlib, io, json, sys\nfrom mlcompare import cli\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n    code = cli.main(sys.argv[1:])\n"
              "print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules})]))\n")
    result = python_here(script, *argv)
    assert result.returncode == 0, result.stderr
    exit_code, modules = json.loads(result.stdout.strip().splitlines()[-1])
    assert exit_code == 0, result.stderr
    return set(modules)


@pytest.fixture
def forked_pids(monkeypatch) -> list[int]:
    """The pids of the children `mlcompare.forked_call` forks during a test (recorded, the real
    children still forked), to check that none is left behind."""
    from mlcompare import forked_call

    pids: list[int] = []
    forking_call = forked_call.ForkedCall.__init__

    def recording(self, *args, **kwargs):
        forking_call(self, *args, **kwargs)
        pids.append(self.pid)

    monkeypatch.setattr(forked_call.ForkedCall, "__init__", recording)
    return pids


def main_here(*argv: str) -> tuple[int, str, str]:
    """`mlcompare ARGV` in this process (argparse's exits caught): exit code, stdout, stderr."""
    from mlcompare import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


SWEEP_EXPERIMENT = """\
    name: sweep
    repeats: 3
    rounds: 2
    timeout_s: 300
    datasets:
      - {generator: classification, n_samples: [200, 1000], n_features: 6}
      - {generator: regression, n_samples: [200, 1000], n_features: 4}
    pairings: [gradient_boosting, linear_regression]
    implementations: [sklearn, xgboost, cuml]
"""


@dataclass
class RecordedSuite:
    root: Path
    uri: str
    parent_run_id: str
    experiment_id: str
    stderr: str
    stdout: str = ""


@pytest.fixture(scope="session")
def recorded_sweep(tmp_path_factory) -> RecordedSuite:
    """One real suite over two sizes in its own SQLite store, shared by the report and UI tests.

    Tests that add runs to this store put them in other MLflow experiments.
    """
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("sweep")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    write(root / "sweep.yaml", SWEEP_EXPERIMENT)
    result = run_cli("run", "sweep.yaml", cwd=root,
                     env={"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data")})
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("sweep")
    parent = client.search_runs([experiment.experiment_id], "tags.`mlcompare.kind` = 'suite'")[0]
    return RecordedSuite(root, uri, parent.info.run_id, experiment.experiment_id, result.stderr, result.stdout)
def start_cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """`python -m mlcompare ...` started in its own process group with Ctrl-C and Ctrl-\\ at their
    defaults (as an interactive shell starts a foreground job), not awaited. Without the reset a
    test run started as a background job (`pytest &` in a script) would pass on its ignored
    SIGINT, which the suite rightly leaves ignored."""
    return subprocess.Popen([sys.executable, "-m", "mlcompare", *args], cwd=cwd, env=cli_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_as_a_foreground_job)


def _as_a_foreground_job() -> None:
    for signum in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_DFL)


FAULTS = Path(__file__).resolve().parent / "faults"


@pytest.fixture
def faults(workdir) -> dict:
    """Environment that adds the test-only `faults` pairing (estimators that crash, hang, ...)."""
    folder = workdir / "faults"
    folder.mkdir()
    return {"PYTHONPATH": str(FAULTS), "MLCOMPARE_PAIRING_DIRS": str(FAULTS / "pairings"),
            "MLCOMPARE_ALLOWED_MODULES": "faulty_estimators", "MLCOMPARE_FAULTS_DIR": str(folder)}


@pytest.fixture
def faults_here(faults, monkeypatch):
    """The faults pairing for a suite run in this process (its cases' processes inherit the environment)."""
    for name, value in faults.items():
        monkeypatch.setenv(name, value)
    monkeypatch.syspath_prepend(str(FAULTS))
    return faults


def faults_experiment(workdir: Path, implementations: list[str], sizes: list[int] = (200,),
                      name: str = "faults") -> Path:
    """An experiment over the `faults` pairing: one regression dataset per size."""
    sizes = ", ".join(str(n) for n in sizes)
    return write(workdir / f"{name}.yaml", f"""\
        name: {name}
        repeats: 1
        rounds: 1
        datasets: [{{generator: regression, n_samples: [{sizes}], n_features: 3}}]
        pairings: [faults]
        implementations: [{", ".join(implementations)}]
    """)


def store_runs(experiment_name: str, tracking_uri: str | None = None) -> list:
    """Every run of an MLflow experiment, oldest first, read back with MLflow's own client."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    experiment = client.get_experiment_by_name(experiment_name)
    if experiment is None:
        return []
    return client.search_runs([experiment.experiment_id], max_results=5000,
                              order_by=["attributes.start_time ASC"])


def no_runs(workdir: Path) -> bool:
    """No run in the working directory's SQLite store (read without creating the store)."""
    import sqlite3

    db = workdir / "mlflow.db"
    if not db.exists():
        return True
    with sqlite3.connect(db) as conn:
        return conn.execute("select count(*) from runs").fetchone()[0] == 0


def by_implementation(runs: list) -> dict:
    """Child runs keyed by (implementation, n_samples)."""
    return {(r.data.params["implementation"], int(r.data.params["n_samples"])): r
            for r in runs if "mlflow.parentRunId" in r.data.tags}


def alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a reaper (a container's init may never reap)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_for_file(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    """Until `path` exists (a faulty estimator's signal that its fit started), while `proc` runs."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving_folder(folder: Path) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving `folder`: its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=folder))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
