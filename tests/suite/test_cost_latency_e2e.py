"""A real suite with prices and batch sizes: every case that ran is priced and timed per batch size,
and the comparison (table, HTML, description, plot) shows the cost ratio and the latency curves."""

from __future__ import annotations

import csv
import io
import math
import textwrap

import pytest
from conftest import run_cli
from mlflow.tracking import MlflowClient

from mlcompare.measure import device, energy
from mlcompare.report import plots, results

EXPERIMENT = """\
    name: priced
    repeats: 2
    rounds: 1
    threads: 1        # no OpenMP barriers to wait at on a busy 2-core machine: latencies stay small
    timeout_s: 300
    cost_per_hour: {cpu: 0.192, gpu: 3.67}
    predict_batch_sizes: [1, 20, 100]
    predict_latency_budget_s: 1.0
    datasets:
      - {generator: classification, n_samples: 800, n_features: 6}
    pairings: [{pairing: gradient_boosting, params: {n_estimators: 20}}]
    implementations: [sklearn, xgboost_cpu, catboost_cpu, catboost_gpu]
"""
SIZES = (1, 20, 100)
CPU_PRICE = 0.5  # the flag's, replacing the file's 0.192
TEST_ROWS = 200  # a quarter of 800


@pytest.fixture(scope="module")
def priced(tmp_path_factory):
    root = tmp_path_factory.mktemp("priced")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    (root / "priced.yaml").write_text(textwrap.dedent(EXPERIMENT))
    result = run_cli("run", "priced.yaml", "--cost-per-hour", f"cpu={CPU_PRICE}", cwd=root,
                     env={"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data")})
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("priced")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    children = {r.data.params["implementation"]: r for r in runs if "mlflow.parentRunId" in r.data.tags}
    return client, parent, children


def _artifact(client, run_id: str, path: str) -> bytes:
    with open(client.download_artifacts(run_id, path), "rb") as f:
        return f.read()


def test_every_case_that_ran_is_priced_from_its_own_times(priced):
    _, _, children = priced
    ran = {name: run for name, run in children.items() if run.data.tags["case_status"] == "ok"}
    assert set(ran) == {"sklearn", "xgboost_cpu", "catboost_cpu"}  # CatBoost's CPU implementation runs here
    base = ran["sklearn"].data.metrics
    for name, run in ran.items():
        m = run.data.metrics
        assert run.data.params["price_per_hour_usd"] == str(CPU_PRICE)
        assert m["fit_cost_usd"] == pytest.approx(CPU_PRICE * m["fit_time_s"] / 3600, rel=1e-9)
        assert m["end_to_end_cost_usd"] == pytest.approx(CPU_PRICE * m["end_to_end_time_s"] / 3600, rel=1e-9)
        assert m["predict_cost_usd_per_1k_rows"] == pytest.approx(
            CPU_PRICE * m["predict_time_s"] / TEST_ROWS * 1000 / 3600, rel=1e-9)
        # both on the CPU at one price: the cost ratio is the inverse of the speed-up
        assert m["fit_cost_ratio"] == pytest.approx(m["fit_cost_usd"] / base["fit_cost_usd"], rel=1e-9)
        assert m["fit_cost_ratio"] == pytest.approx(1 / m["speedup_fit"], rel=1e-9)
    assert ran["catboost_cpu"].data.tags["ran_on"] == "cpu (CatBoost task_type=CPU)"


def test_every_case_that_ran_has_latency_by_batch_size(priced):
    _, _, children = priced
    for name, run in children.items():
        if run.data.tags["case_status"] != "ok":
            assert not any(k.startswith("predict_latency") for k in run.data.metrics)
            continue
        m = run.data.metrics
        assert run.data.params["predict_batch_sizes"] == "1,20,100"
        for n in SIZES:
            calls = m[f"predict_latency_calls_b{n}"]
            assert calls >= 5
            assert m[f"predict_latency_p50_ms_b{n}"] > 0
            assert (f"predict_latency_p99_ms_b{n}" in m) == (calls >= 299)
            if calls >= 299:  # a p99 only with its 95 % upper bound, never below it
                assert m[f"predict_latency_p99_ms_b{n}"] >= m[f"predict_latency_p50_ms_b{n}"]
                assert m[f"predict_latency_p99_upper_ms_b{n}"] >= m[f"predict_latency_p99_ms_b{n}"]
                assert m[f"predict_latency_p99_upper_level_b{n}"] >= 0.95
        # one row at a time, each answers in well under the 3.3 ms at which 299 calls fit in 1 s:
        # the loop goes on to 299 calls, whatever a few slow calls on a busy machine cost
        assert m["predict_latency_calls_b1"] >= 299 and "predict_latency_p99_ms_b1" in m, (
            name, m["predict_latency_calls_b1"], m["predict_latency_p50_ms_b1"])


@pytest.mark.skipif(bool(device.cuda_devices()[0]), reason="this machine has a CUDA device")
def test_the_gpu_implementation_is_skipped_with_a_reason(priced):
    _, _, children = priced
    run = children["catboost_gpu"]
    assert run.data.tags["case_status"] == "skipped" and "CUDA" in run.data.tags["skip_reason"]
    assert run.data.params["price_per_hour_usd"] == "3.67"


def test_energy_is_measured_or_its_absence_said(priced):
    _, _, children = priced
    try:
        energy.rapl_zones()
        readable = True
    except energy.Unavailable:
        readable = False
    for run in children.values():
        if run.data.tags["case_status"] != "ok":
            continue
        if readable:
            assert run.data.metrics["fit_energy_cpu_packages_dram_j"] > 0
            assert run.data.tags["energy_source"].startswith("RAPL")
        else:
            assert not [name for name in run.data.metrics if name.startswith("fit_energy")]
            assert run.data.tags["energy_unavailable"].startswith("RAPL: ")


def test_the_comparison_shows_the_cost_ratio_cheapest_and_latency_plot(priced):
    client, parent, children = priced
    pid = parent.info.run_id
    rows = list(csv.DictReader(io.StringIO(_artifact(client, pid, "comparison.csv").decode())))
    assert len(rows) == 1
    for name in ("xgboost_cpu", "catboost_cpu"):
        assert float(rows[0][f"{name}.fit_cost_ratio"]) == pytest.approx(
            children[name].data.metrics["fit_cost_ratio"], rel=1e-12)
    page = _artifact(client, pid, "comparison.html").decode()
    assert "cost ratio" in page and "cheapest on classification 800×6: fit " in page and "latency_vs_batch.png" in page
    assert page.count("data:image/png;base64,") == len(plots.NAMES)
    png = _artifact(client, pid, "plots/latency_vs_batch.png")
    assert png.startswith(b"\x89PNG") and png != plots.latency_vs_batch(results.case_frame([]))
    note = parent.data.tags["mlflow.note.content"]
    costs = {name: run.data.metrics["fit_cost_usd"] for name, run in children.items()
             if "fit_cost_usd" in run.data.metrics}
    cheapest = min(costs, key=costs.get)
    assert f"cheapest on classification 800×6: fit {cheapest} " in note
    assert "| sklearn fit s |" in note and "cost ratio" in note


def test_latency_crossings_agree_with_the_logged_medians(priced):
    _, parent, children = priced
    base = children["sklearn"].data.metrics
    for name in ("xgboost_cpu", "catboost_cpu"):
        m = children[name].data.metrics
        gaps = [math.log(m[f"predict_latency_p50_ms_b{n}"] / base[f"predict_latency_p50_ms_b{n}"]) for n in SIZES]
        metric = f"latency_crossing_batch.gradient_boosting.{name}.classification_800_6"
        crossing = parent.data.metrics.get(metric)
        # a crossing exactly when the implementation is slower at some size and faster at the largest
        assert (crossing is not None) == (gaps[-1] <= 0 and any(g > 0 for g in gaps)), (name, gaps)
        if crossing is not None:
            slower = max(i for i, g in enumerate(gaps) if g > 0)
            assert SIZES[slower] <= crossing <= SIZES[slower + 1]
