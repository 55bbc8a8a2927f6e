"""bench/gpu_check.py on a machine without a GPU: it must run, skip what needs one, and say why."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pandas as pd
from conftest import REPO, cli_env, write

from mlcompare.measure import device, stats


def _bench_module():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "bench" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_json_recorder_takes_what_the_suite_hands_it(tmp_path):
    recorder = _bench_module().JsonRecorder(tmp_path / "records.jsonl")
    recorder.start_suite("suite · x", {"a": 1}, {"t": "v"})
    table = pd.DataFrame({"pairing": ["kmeans"], "speedup": [2.5]})
    recorder.finish_suite("FINISHED", {"m": 1.0}, {}, {"plots/p.txt": "text", "raw.bin": b"\x00"},
                          tables={"comparison_table.json": table})
    recorder.abort_suite("KILLED", tags={"interrupted_by": "SIGINT"})  # what the suite calls on Ctrl-C
    lines = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["suite", "suite_end", "suite_end"]
    assert lines[-1] == {"kind": "suite_end", "status": "KILLED", "tags": {"interrupted_by": "SIGINT"}}
    assert (tmp_path / "plots" / "p.txt").read_text() == "text" and (tmp_path / "raw.bin").read_bytes() == b"\x00"
    assert pd.read_json(tmp_path / "comparison_table.json", orient="split").equals(table)


BROKEN = 'raise ImportError("{name} blocked for the test: as on a GPU box where only XGBoost was carried")\n'


def _blocked(folder):
    """mlflow, cudf and cuml packages of our own on the path, each failing on import."""
    for name in ("mlflow", "cudf", "cuml"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(BROKEN.format(name=name))
    return folder


#: Every stage gpu_check.py knows (gpu-first.yaml has the first two only), at small sizes.
STAGED = """\
    name: staged
    rounds: 1
    timeout_s: 90
    datasets:
      - {generator: classification, n_samples: [400, 900], n_features: 5}
      - {generator: regression, n_samples: 400, n_features: 5}
      - {generator: blobs, n_samples: 400, n_features: 5, centers: 8, cluster_std: 4.0}
    pairings: [gradient_boosting, gradient_boosting_regressor, random_forest, random_forest_regressor, kmeans,
               linear_regression]
"""


def test_the_first_lease_plans_the_boosting_then_the_forests_with_a_level_for_every_case():
    """gpu-first.yaml: three xgboost_gpu and two xgboost_rf_gpu cases beside their CPU
    counterparts, boosting first, each in four processes (a level for every case)."""
    from mlcompare.config.experiment import load_experiment

    experiment = load_experiment(REPO / "experiments" / "gpu-first.yaml")
    cases = experiment.cases()
    by_impl = {name: [c for c in cases if c.implementation.name == name] for name in ("xgboost_gpu", "xgboost_rf_gpu")}
    assert len(by_impl["xgboost_gpu"]) == 3 and len(by_impl["xgboost_rf_gpu"]) == 2
    assert all(any(c.is_baseline and c.group == gpu.group for c in cases) for gpu in sum(by_impl.values(), []))
    assert experiment.rounds == 4 and stats.median_interval([1.0, 1.1, 1.2, 1.3]).level == 0.875
    plan = [name for name, _ in _bench_module().stages(experiment, 300_000)]
    assert plan == ["boosting", "forests"]


def test_without_mlflow_or_a_gpu_it_runs_in_stages_and_returns_three_files(workdir):
    """gpu-first.yaml's pairings at small sizes, MLflow, cuDF and cuML broken: the probe, every
    check skipped with its reason, the stages in order (boosting first), the GPU cases skipped
    with theirs (cuML's: its import fails), and OUT holding exactly runs.tgz, env.txt and the
    log; the datasets elsewhere."""
    import tarfile

    blocker = _blocked(workdir / "blocker")
    experiment = write(workdir / "check.yaml", STAGED)
    out, data = workdir / "out", workdir / "data-elsewhere"
    env = cli_env()
    env["PYTHONPATH"] = f"{blocker}:{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "--out", str(out),
                           "--experiment", str(experiment), "--data-dir", str(data), "--stage-rows", "500",
                           "--work", str(workdir / "work")], capture_output=True, text=True, env=env,
                          timeout=900, cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["env.txt", "gpu_check.log", "runs.tgz"]
    assert "MLflow not importable" in done.stdout and (data / ".").exists()
    log = (out / "gpu_check.log").read_text()
    order = [line.split(":")[0] for line in log.splitlines() if line.startswith("stage ") and "done" not in line]
    assert order == ["stage boosting", "stage forests", "stage others", "stage larger"], order
    assert "xgboost==" in (out / "env.txt").read_text()
    with tarfile.open(out / "runs.tgz") as tar:
        names = set(tar.getnames())
        assert {"runs/probe.json", "runs/checks.json", "runs/records.jsonl", "runs/results.json"} <= names
        probe = json.loads(tar.extractfile("runs/probe.json").read())
        checks = json.loads(tar.extractfile("runs/checks.json").read())
        lines = [json.loads(line) for line in tar.extractfile("runs/records.jsonl").read().splitlines()]
    assert probe["gpus"] == device.cuda_devices()[0]
    assert len(checks) >= 9 and all(c["status"] in ("pass", "skip") for c in checks)
    cases = [c for c in lines if c["kind"] == "case"]
    assert sum(c["kind"] == "suite" for c in lines) == 4  # a suite per stage
    ran = [c for c in cases if c["tags"]["case_status"] == "ok"]
    assert ran and all(c["tags"]["load_reader"] == "numpy" for c in ran)
    assert {c["params"]["implementation"] for c in ran} >= {"sklearn", "xgboost_cpu", "xgboost_rf_cpu"}
    if not probe["gpus"]:
        gpu = [c for c in cases if c["params"]["device"] == "gpu"]
        assert gpu and all(c["tags"]["case_status"] == "skipped" for c in gpu)
        cuml = [c for c in gpu if c["params"]["library"].startswith("cuml")]
        assert cuml and all("`import cuml` fails: ImportError: cuml blocked" in c["tags"]["skip_reason"]
                            for c in cuml)
        xgboost = [c for c in gpu if c["params"]["implementation"] == "xgboost_gpu"]
        assert xgboost and all("import" not in c["tags"]["skip_reason"] for c in xgboost)
