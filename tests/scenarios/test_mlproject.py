"""`mlflow run .` (the README's main command) end to end, in the current environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, faults_experiment, store_runs
from mlflow.tracking import MlflowClient

MLFLOW = shutil.which("mlflow", path=str(Path(sys.executable).parent)) or shutil.which("mlflow")


@pytest.mark.skipif(MLFLOW is None, reason="the mlflow command is not on PATH")
def test_mlflow_run_nests_the_cases_under_its_own_run(tmp_path):
    experiment = tmp_path / "one.yaml"
    experiment.write_text(
        "name: one\nrepeats: 1\nrounds: 1\n"
        "datasets: [{generator: regression, n_samples: 300, n_features: 3}]\n"
        "pairings: [linear_regression]\n")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env |= {"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(tmp_path / "data"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    result = subprocess.run(
        [MLFLOW, "run", str(REPO), "--env-manager", "local", "--experiment-name", "mlproject-test",
         "-P", f"experiment={experiment}", "-P", "implementations=sklearn,cuml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("mlproject-test")
    runs = client.search_runs([exp.experiment_id])
    outer = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(outer) == 1, "the suite must reuse the run `mlflow run` created, not add its own"
    outer = outer[0]
    assert outer.info.status == "FINISHED"
    assert outer.data.tags.get("mlflow.project.entryPoint") == "main"
    assert outer.data.params["suite_name"] == "one"
    assert outer.data.params["implementations"] == "sklearn,cuml"
    assert sorted(c.data.params["implementation"] for c in children) == ["cuml", "sklearn"]
    assert all(c.data.tags["mlflow.parentRunId"] == outer.info.run_id for c in children)
    ok = next(c for c in children if c.data.params["implementation"] == "sklearn")
    assert ok.data.metrics["r2"] > 0.9 and ok.data.metrics["speedup_fit"] == 1.0
    # the run `mlflow run` made carries the comparison: table, plots, description
    artifacts = {a.path for a in client.list_artifacts(outer.info.run_id)}
    artifacts |= {a.path for a in client.list_artifacts(outer.info.run_id, "plots")}
    assert {"comparison.csv", "comparison.html", "comparison_table.json", "plots/time_vs_rows.png"} <= artifacts
    assert "mlcompare suite `one`" in client.get_run(outer.info.run_id).data.tags["mlflow.note.content"]


@pytest.mark.skipif(MLFLOW is None, reason="the mlflow command is not on PATH")
def test_mlflow_run_resume_parameter_reruns_only_what_did_not_finish(tmp_path, faults):
    """`-P resume=true`: the second `mlflow run` skips the case the first one finished."""
    experiment = faults_experiment(tmp_path, ["sklearn", "flaky"])
    (tmp_path / "faults" / "fail").touch()
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")} | faults
    env |= {"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(tmp_path / "data"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}

    def mlflow_run(*params: str) -> subprocess.CompletedProcess:
        args = [MLFLOW, "run", str(REPO), "--env-manager", "local", "--experiment-name", "resume-test",
                "-P", f"experiment={experiment}", "-P", "timeout=120"]
        for param in params:
            args += ["-P", param]
        return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    first = mlflow_run()
    assert first.returncode != 0  # a case failed
    (tmp_path / "faults" / "fail").unlink()
    second = mlflow_run("resume=true")
    assert second.returncode == 0, second.stderr[-3000:]

    runs = store_runs("resume-test", uri)
    outer = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    assert [r.info.status for r in outer] == ["FAILED", "FINISHED"]
    assert outer[1].data.params["resume"] == "true" and outer[1].data.params["suite_resume"] == "True"
    assert outer[1].data.metrics["cases_reused"] == 1
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert sorted((r.data.params["implementation"], r.info.status, r.data.tags["mlflow.parentRunId"])
                  for r in children) == sorted([("sklearn", "FINISHED", outer[0].info.run_id),
                                                ("flaky", "FAILED", outer[0].info.run_id),
                                                ("flaky", "FINISHED", outer[1].info.run_id)])
