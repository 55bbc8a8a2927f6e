"""A plugin package (the one in docs/pairings.md), pip-installed for real, found and run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import run_cli
from docs_blocks import files
from mlflow.tracking import MlflowClient


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """The documented plugin, built and installed with pip into its own site directory."""
    root = tmp_path_factory.mktemp("plugin")
    pkg = root / "pkg"
    pkg.mkdir()
    docs = files()
    (pkg / "pyproject.toml").write_text(docs["pyproject.toml"])
    (pkg / "mlcompare_logtarget.py").write_text(docs["mlcompare_logtarget.py"])
    site = root / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
                    "--no-index", "--target", str(site), str(pkg)], check=True, capture_output=True, text=True)
    assert list(site.glob("mlcompare_logtarget*.dist-info/entry_points.txt"))
    return {"PYTHONPATH": str(site)}


def test_an_installed_plugin_is_listed(workdir, plugin_site):
    result = run_cli("list", cwd=workdir, env=plugin_site)
    assert result.returncode == 0, result.stderr
    assert "ridge_log_target (regression; metrics: median_abs_error, r2; plugin ridge_log_target)" in result.stdout
    assert "22 pairings" in result.stdout.splitlines()[-1]
    assert run_cli("list", cwd=workdir).stdout.count("ridge_log_target") == 0  # not installed there


def test_a_plugin_pairing_runs_with_its_data_preparation_and_metric(workdir, plugin_site):
    (workdir / "e.yaml").write_text(textwrap.dedent("""\
        name: plugin
        repeats: 2
        rounds: 1
        datasets: [{generator: regression, n_samples: 400, n_features: 5}]
        pairings: [ridge_log_target, ridge]
        implementations: [sklearn, cuml]
    """))
    result = run_cli("run", "e.yaml", cwd=workdir, env=plugin_site)
    assert result.returncode == 0, result.stderr
    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("plugin").experiment_id])
    by = {(r.data.params.get("pairing"), r.data.params.get("implementation")): r for r in runs}
    plugin_run, plain_run = by[("ridge_log_target", "sklearn")], by[("ridge", "sklearn")]
    assert plugin_run.data.tags["plugin"] == "ridge_log_target" and plugin_run.data.tags["case_status"] == "ok"
    # prepare() moved the target to a log scale: errors of a fraction, not of tens
    assert 0 <= plugin_run.data.metrics["median_abs_error"] < 1.0
    assert plain_run.data.metrics["rmse"] > 5.0
    assert plugin_run.data.metrics["speedup_fit"] == 1.0 and "quality_delta" in plugin_run.data.metrics
    assert by[("ridge_log_target", "cuml")].data.tags["case_status"] in ("skipped", "ok")
