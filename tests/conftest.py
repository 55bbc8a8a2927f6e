"""Shared fixtures: every test that writes gets its own SQLite store and dataset cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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
