"""bench/gpu_check.py on a machine without a GPU: it must run, skip what needs one, and say why."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pandas as pd
from conftest import REPO, cli_env, write

from mlcompare.measure import device


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


BLOCK_MLFLOW = """\
import sys

for name in ("mlflow", "cudf", "cuml"):  # as on a GPU box where only XGBoost and CuPy were carried
    sys.modules[name] = None
"""


def test_without_mlflow_or_a_gpu_it_probes_skips_each_check_with_a_reason_and_records_json(workdir):
    blocker = workdir / "blocker"
    blocker.mkdir()
    write(blocker / "sitecustomize.py", BLOCK_MLFLOW)
    experiment = write(workdir / "check.yaml", """\
        name: check
        repeats: 2
        rounds: 1
        datasets: [{generator: classification, n_samples: 400, n_features: 5, order: [C, F]}]
        pairings: [gradient_boosting]
        implementations: [sklearn, xgboost_gpu]
    """)
    out = workdir / "out"
    env = cli_env()
    env["PYTHONPATH"] = f"{blocker}:{env['PYTHONPATH']}"
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu_check.py"), "--out", str(out),
                           "--experiment", str(experiment)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MLflow not importable" in done.stdout and not (out / "mlflow.db").exists()
    probe = json.loads((out / "probe.json").read_text())
    assert probe["gpus"] == device.cuda_devices()[0]
    checks = json.loads((out / "checks.json").read_text())
    assert len(checks) >= 9 and all(c["status"] in ("pass", "skip") for c in checks)
    if not probe["gpus"]:
        assert all(c["status"] == "skip" and c["detail"] for c in checks)
    cases = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    cases = [c for c in cases if c["kind"] == "case"]
    assert sorted((c["params"]["implementation"], c["params"]["order"]) for c in cases) == [
        ("sklearn", "C"), ("sklearn", "F"), ("xgboost_gpu", "C"), ("xgboost_gpu", "F")]
    for case in cases:
        if case["params"]["implementation"] == "sklearn":
            assert case["tags"]["load_reader"] == "pyarrow" and case["metrics"]["accuracy"] > 0.5
        elif not probe["gpus"]:
            assert case["tags"]["case_status"] == "skipped" and "no CUDA device" in case["tags"]["skip_reason"]
