"""A new user adds a pairing by following docs/pairings.md alone, and sees its runs in MLflow."""

from __future__ import annotations

import shlex

from conftest import run_cli
from docs_blocks import commands, files
from mlflow.tracking import MlflowClient


def test_the_walkthrough_works_as_written(workdir):
    for name, text in files().items():
        if name.endswith(".yaml"):
            (workdir / name).write_text(text)
    steps = commands()
    assert steps[0] == "mlcompare validate --pairings kernel_ridge.yaml"
    for line in steps:
        result = run_cli(*shlex.split(line)[1:], cwd=workdir)
        assert result.returncode == 0, (line, result.stderr)

    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("kernel-ridge").experiment_id])
    kr = {r.data.params["implementation"]: r for r in runs if r.data.params.get("pairing") == "kernel_ridge"}
    assert kr["sklearn"].info.status == "FINISHED" and kr["sklearn"].data.tags["case_status"] == "ok"
    assert {"fit_time_s", "r2", "rmse"} <= set(kr["sklearn"].data.metrics)
    assert kr["sklearn"].data.params["estimator.gamma"] == "0.01"
    assert kr["cuml"].data.tags["case_status"] in ("skipped", "ok")
    assert any(r.data.params.get("pairing") == "linear_regression" for r in runs)

    sweep = client.search_runs([client.get_experiment_by_name("kernel-ridge-sweep").experiment_id])
    points = sorted(r.data.params["sweep.alpha"] for r in sweep
                    if r.data.params.get("implementation") == "sklearn")
    assert points == ["0.1", "10.0"]
    assert "kernel_ridge · sklearn · regression 1k×10 · alpha=0.1" in {r.info.run_name for r in sweep}


def test_the_documented_typo_is_caught_as_documented(workdir):
    (workdir / "kernel_ridge.yaml").write_text(files()["kernel_ridge.yaml"].replace("gamma: 0.01", "gama: 0.01"))
    result = run_cli("validate", "--pairings", "kernel_ridge.yaml", cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.startswith("mlcompare: error: kernel_ridge.yaml: params.gama: "
                                    "sklearn.kernel_ridge.KernelRidge does not accept the parameter 'gama'; "
                                    "did you mean 'gamma'?")
