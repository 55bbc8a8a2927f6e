"""Shared fixtures: every test that writes gets its own SQLite store and dataset cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Set by `mlflow run`: a test's suite must never attach itself to an outer run.
_OUTER_RUN_VARS = ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME")


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
    timeout_s: 300
    datasets:
      - {generator: blobs, n_samples: 600, n_features: 4, centers: 3}
      - {generator: classification, n_samples: 600, n_features: 6}
      - {generator: regression, n_samples: 600, n_features: 5}
    pairings: [kmeans, random_forest, gradient_boosting, linear_regression]
    implementations: [sklearn, xgboost, cuml]
"""


@pytest.fixture
def small_experiment(workdir) -> Path:
    return write(workdir / "small.yaml", SMALL_EXPERIMENT)


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None,
            timeout: int = 600) -> subprocess.CompletedProcess:
    """`python -m mlcompare ...` in a fresh process, as a user would run it."""
    full_env = {k: v for k, v in os.environ.items() if k not in _OUTER_RUN_VARS} | (env or {})
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "mlcompare", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


SWEEP_EXPERIMENT = """\
    name: sweep
    repeats: 3
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
    return RecordedSuite(root, uri, parent.info.run_id, experiment.experiment_id, result.stderr)
