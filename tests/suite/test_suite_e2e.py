"""`mlcompare run` end to end into a real SQLite store, read back with MLflow's client."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import REPO, SMALL_EXPERIMENT, run_cli
from mlflow.tracking import MlflowClient

CASE_PARAMS = {"pairing", "implementation", "library", "device", "dataset", "n_samples", "n_features", "dtype"}
TIME_METRICS = {"fit_time_s", "fit_cold_time_s", "predict_time_s", "transfer_time_s", "speedup_fit"}
QUALITY = {"kmeans": {"adjusted_rand", "inertia"}, "random_forest": {"accuracy", "roc_auc"},
           "gradient_boosting": {"accuracy", "roc_auc", "log_loss"}, "linear_regression": {"r2", "rmse"}}


@pytest.fixture(scope="module")
def suite_store(tmp_path_factory):
    """One run of the small experiment, shared by the assertions below (it takes seconds)."""
    root = tmp_path_factory.mktemp("suite")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    (root / "small.yaml").write_text(textwrap.dedent(SMALL_EXPERIMENT))
    env = {"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data")}
    result = run_cli("run", "small.yaml", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("small")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    return client, runs, result


def test_one_parent_and_one_nested_child_per_case(suite_store):
    _, runs, result = suite_store
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and len(children) == 9
    parent = parents[0]
    assert all(c.data.tags["mlflow.parentRunId"] == parent.info.run_id for c in children)
    assert parent.info.status == "FINISHED"
    assert parent.data.params["suite_name"] == "small"
    assert len(parent.data.params["suite_file_sha256"]) == 64
    assert parent.data.metrics["cases_ok"] == 5 and parent.data.metrics["cases_skipped"] == 4
    assert parent.data.tags["host.cpu_model"] and "version.mlflow" in parent.data.tags
    assert "5 ran, 4 skipped, 0 failed" in result.stdout


def test_cases_that_ran_have_params_times_and_quality(suite_store):
    client, runs, _ = suite_store
    ran = [r for r in runs if r.data.tags.get("case_status") == "ok"]
    assert {(r.data.params["pairing"], r.data.params["implementation"]) for r in ran} == {
        ("kmeans", "sklearn"), ("random_forest", "sklearn"), ("gradient_boosting", "sklearn"),
        ("gradient_boosting", "xgboost_cpu"), ("linear_regression", "sklearn")}
    for run in ran:
        assert CASE_PARAMS <= set(run.data.params)
        assert TIME_METRICS | QUALITY[run.data.params["pairing"]] <= set(run.data.metrics)
        assert run.info.status == "FINISHED"
        assert run.data.params["dtype"] == "float32"
        history = client.get_metric_history(run.info.run_id, "fit_time_repeat_s")
        # at least 2 repeats in each of 2 processes; more where a fit is short (the plan's values)
        assert sorted(m.step for m in history) == list(range(int(run.data.metrics["fit_repeats"])))
        assert len(history) >= 4
        processes = client.get_metric_history(run.info.run_id, "fit_time_process_s")
        assert sorted(m.step for m in processes) == [0, 1]
        if run.data.params["implementation"] == "sklearn":
            assert run.data.metrics["speedup_fit"] == 1.0
    xgb = next(r for r in ran if r.data.params["implementation"] == "xgboost_cpu")
    sk_gb = next(r for r in ran if r.data.params["pairing"] == "gradient_boosting"
                 and r.data.params["implementation"] == "sklearn")
    expected = sk_gb.data.metrics["fit_time_s"] / xgb.data.metrics["fit_time_s"]
    assert xgb.data.metrics["speedup_fit"] == pytest.approx(expected, rel=1e-9)
    assert xgb.data.params["estimator.max_bin"] == "255"
    assert "best-first" in sk_gb.data.tags["param_differences"]


def test_gpu_implementations_are_skipped_with_a_reason(suite_store):
    from mlcompare.measure import device

    if device.cuda_devices()[0]:
        pytest.skip("this machine has a CUDA device")
    _, runs, _ = suite_store
    skipped = [r for r in runs if r.data.tags.get("case_status") == "skipped"]
    assert {(r.data.params["pairing"], r.data.params["implementation"]) for r in skipped} == {
        ("kmeans", "cuml"), ("random_forest", "cuml"), ("gradient_boosting", "xgboost_gpu"),
        ("linear_regression", "cuml")}
    for run in skipped:
        assert run.data.params["device"] == "gpu"
        assert "no CUDA device" in run.data.tags["skip_reason"]
        assert "fit_time_s" not in run.data.metrics


def test_an_implementation_skipped_in_every_case_is_one_terminal_line(suite_store):
    """cuml (three cases) and xgboost_gpu (one) cannot run here: one line each, before the
    cases, with the reason and the count; no per-case skip line; every skip run in the store."""
    from mlcompare.measure import device

    if device.cuda_devices()[0]:
        pytest.skip("this machine has a CUDA device")
    _, runs, result = suite_store
    lines = result.stderr.splitlines()
    (cuml,) = [line for line in lines if line.startswith("cuml: ")]
    (xgb,) = [line for line in lines if line.startswith("xgboost_gpu: ")]
    assert cuml.startswith("cuml: skipped in all 3 of its cases (") and "no CUDA device" in cuml
    assert xgb.startswith("xgboost_gpu: skipped in its one case (") and "no CUDA device" in xgb
    first_case = next(i for i, line in enumerate(lines) if line.startswith("["))  # a skip is counted, not said
    assert lines.index(cuml) < first_case and lines.index(xgb) < first_case
    assert not [line for line in lines if line.startswith("[") and "skipped (" in line]
    assert len([line for line in lines if line.startswith("[")]) == 5  # the five that ran
    skipped = [r for r in runs if r.data.tags.get("case_status") == "skipped"]
    assert len(skipped) == 4 and all("no CUDA device" in r.data.tags["skip_reason"] for r in skipped)


def test_a_fit_shorter_than_the_clock_holds_is_timed_in_loops_on_the_run_and_in_the_table(suite_store):
    """LinearRegression on 450×5 fits in well under a millisecond: each logged value is the
    mean of a loop of fits, said by `fit_loops` on the run and beside the time in the table."""
    from mlcompare.measure.timing import SHORT_CALL_S

    client, runs, result = suite_store
    linear = next(r for r in runs if r.data.params.get("pairing") == "linear_regression"
                  and r.data.params["implementation"] == "sklearn")
    m = linear.data.metrics
    assert m["fit_loops"] > 1 and m["fit_time_s"] < SHORT_CALL_S
    # 2 repeats × 2 processes at least (more where 1.5 × a process's measured overhead is longer
    # than two loops of 50 ms: the later processes, which no longer score, often are not)
    assert len(client.get_metric_history(linear.info.run_id, "fit_time_repeat_s")) == m["fit_repeats"] >= 4
    long_fit = next(r for r in runs if r.data.params.get("implementation") == "sklearn"
                    and r.data.params["pairing"] == "random_forest")
    assert long_fit.data.metrics["fit_loops"] == 1 and long_fit.data.metrics["fit_time_s"] >= SHORT_CALL_S
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    table = client.download_artifacts(parent.info.run_id, "comparison.md")
    text = open(table, encoding="utf-8").read()
    assert f"(loops of {m['fit_loops']:.0f})" in text
    assert f"(mean of loops of {m['fit_loops']:.0f} fits)" in result.stderr


def test_the_fairness_audit_is_on_each_case_and_listed_on_the_parent(suite_store):
    """Defaults nobody passed (scikit-learn's L2 penalty 0 against XGBoost's lambda 1): on the
    case as a param of what its model reported and in its differences, and on the parent."""
    _, runs, _ = suite_store
    xgb = next(r for r in runs if r.data.params.get("implementation") == "xgboost_cpu")
    assert xgb.data.params["audit.l2_regularization"] == "1"
    assert "found: l2_regularization (l2_regularization / lambda, as the fitted models report them): " \
           "sklearn 0.0, xgboost_cpu 1" in xgb.data.tags["param_differences"]
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    assert "- fairness audit: gradient_boosting · xgboost_cpu vs sklearn: l2_regularization" in \
        parent.data.tags["mlflow.note.content"]


def test_parent_has_the_comparison_and_the_experiment(suite_store):
    client, runs, _ = suite_store
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    names = {a.path for a in client.list_artifacts(parent.info.run_id)}
    assert {"comparison.csv", "comparison.html", "experiment.yaml"} <= names
    csv = client.download_artifacts(parent.info.run_id, "comparison.csv")
    with open(csv) as f:  # a row per pairing × dataset × size: kmeans, two classifiers, one regressor
        assert len(f.read().strip().splitlines()) == 1 + 4
    assert "mlcompare suite `small`" in parent.data.tags["mlflow.note.content"]


def test_implementations_flag_limits_the_cases(workdir, small_experiment):
    result = run_cli("run", str(small_experiment), "--implementations", "xgboost_cpu,sklearn",
                     "--repeats", "1", "--quiet", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("[") == 0  # --quiet: no progress lines
    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("small").experiment_id])
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert sorted(r.data.params["implementation"] for r in children) == [
        "sklearn", "sklearn", "sklearn", "sklearn", "xgboost_cpu"]
    assert {r.data.params["repeats"] for r in children} == {"1"}


def test_default_store_is_mlflow_db_in_the_working_directory(tmp_path):
    """With no MLFLOW_TRACKING_URI, runs land in ./mlflow.db, where `mlflow ui` looks."""
    (tmp_path / "one.yaml").write_text(
        "name: one\nrepeats: 1\nrounds: 1\ndatasets: [{generator: regression, n_samples: 100, n_features: 2}]\n"
        "pairings: [linear_regression]\nimplementations: [sklearn]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLCOMPARE_DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run([sys.executable, "-m", "mlcompare", "run", "one.yaml"], cwd=tmp_path,
                            env=env | {"PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    assert len(client.search_runs([client.get_experiment_by_name("one").experiment_id])) == 2


def test_every_case_is_compared_with_its_baseline(suite_store):
    from mlcompare.measure.threads import default_threads

    _, runs, _ = suite_store
    ran = [r for r in runs if r.data.tags.get("case_status") == "ok"]
    for run in ran:
        m, tags = run.data.metrics, run.data.tags
        assert tags["parity"] in ("ok", "degraded")
        assert run.data.params["threads"] == str(default_threads())
        assert tags["threadpools"] and tags["ran_on"].startswith("cpu")
        assert len(tags["dataset_sha256"]) == 64 and tags["host.cpu_model"]
        assert {"fit_time_iqr_s", "fit_time_cv", "end_to_end_time_s", "fit_host_input_time_s",
                "speedup_end_to_end", "fit_peak_host_memory_mb", "load_time_s"} <= set(m)
        (logged,) = run.inputs.dataset_inputs
        assert logged.dataset.digest == tags["dataset_sha256"][:16] and logged.dataset.source_type == "code"
        if run.data.params["implementation"] == "sklearn":
            assert m["quality_delta"] == 0.0 and m["prediction_agreement"] == 1.0
            assert "speedup_fit_ci_low" not in m
    xgb = next(r for r in ran if r.data.params["implementation"] == "xgboost_cpu")
    m = xgb.data.metrics
    assert 0 < m["speedup_fit_ci_low"] <= m["speedup_fit"] <= m["speedup_fit_ci_high"]
    assert 0.8 < m["prediction_agreement"] <= 1.0  # two boosted models on easy data mostly agree
    assert abs(m["quality_delta"]) < 0.1
    assert xgb.data.params["estimator.n_jobs"] == xgb.data.params["threads"]


def test_system_metrics_are_sampled_on_request(workdir):
    """A suite shorter than the sampling interval still gets its samples: one step at least,
    the last one logged when the suite ends (MLflow's own monitor logged none before its first
    interval was over)."""
    (workdir / "one.yaml").write_text(
        "name: sysm\nrepeats: 3\nrounds: 1\nsystem_metrics: true\n"
        "datasets: [{generator: classification, n_samples: 3000, n_features: 10}]\n"
        "pairings: [random_forest]\nimplementations: [sklearn]\n")
    result = run_cli("run", "one.yaml", cwd=workdir)
    assert result.returncode == 0, result.stderr
    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("sysm").experiment_id])
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    assert any(k.startswith("system/cpu_utilization") for k in parent.data.metrics), parent.data.metrics
    history = client.get_metric_history(parent.info.run_id, "system/system_memory_usage_megabytes")
    wall = parent.data.metrics["suite_wall_time_s"]
    # a step every two seconds of the suite, and one more at its end: no more, and never none
    assert 1 <= len(history) <= wall / 2 + 2, (len(history), wall)
    assert sorted(h.step for h in history) == list(range(len(history)))


def test_a_suite_shorter_than_one_interval_logs_its_last_sample(workdir):
    """The sampler on a parent run that lives a tenth of a second: the step logged at the end."""
    from mlcompare.tracking.sampler import INTERVAL_S, SuiteSampler

    client = MlflowClient()
    run = client.create_run(client.create_experiment("short"))
    sampler = SuiteSampler(run.info.run_id)
    sampler.start()
    time.sleep(INTERVAL_S / 20)
    sampler.finish()
    metrics = client.get_run(run.info.run_id).data.metrics
    assert sampler.steps == 1
    assert 0 <= metrics["system/cpu_utilization_percentage"] <= 100
    assert metrics["system/system_memory_usage_megabytes"] > 0


def test_every_case_that_ran_carries_what_its_numbers_mean(suite_store):
    """The measurement record of issue 14: training rows, the first predict apart, the timing's
    stability, the memory method, and every interval with the level it really has."""
    _, runs, _ = suite_store
    ran = [r for r in runs if r.data.tags.get("case_status") == "ok"]
    for run in ran:
        p, m, t = run.data.params, run.data.metrics, run.data.tags
        assert int(p["training_rows"]) == int(p["n_samples"]) * 3 // 4  # test_size 0.25
        assert p["rounds"] == "2" and m["fit_processes"] == 2
        assert t["timing_stability"] == "stable" or t["timing_stability"].startswith("noisy: ")
        assert t["memory_method"] == "high-water mark"
        assert m["predict_cold_time_s"] > 0 and "predict_time_ci_level" in m
        assert m["fit_time_ci_low_s"] <= m["fit_time_s"] <= m["fit_time_ci_high_s"]
        assert m["fit_time_ci_level"] == pytest.approx(0.5)  # two processes: their range holds the median half the time
        assert "load_avg_1m_at_start" in m
    compared = [r for r in ran if r.data.params["implementation"] == "xgboost_cpu"]
    assert compared and all(r.data.metrics["speedup_fit_ci_level"] == pytest.approx(2 / 3) for r in compared)
    for run in compared:  # the intervals are over the two processes a side, never the four repeats
        (client, *_), m = suite_store, run.data.metrics
        processes = [h.value for h in client.get_metric_history(run.info.run_id, "fit_time_process_s")]
        assert len(processes) == 2 and m["fit_time_ci_low_s"] == min(processes)
