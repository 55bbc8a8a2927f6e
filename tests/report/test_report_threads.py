"""A thread sweep recorded by a real suite: the runs, the time-vs-threads plot, and how many
threads of the baseline another implementation is worth.

This machine has no GPU, so the "threads worth" number is taken for another CPU library
(LightGBM against scikit-learn's curve): the same computation a GPU implementation gets.
"""

from __future__ import annotations

import math

import pytest
from conftest import run_cli, write
from mlflow.tracking import MlflowClient

from mlcompare.report.threadcurve import equivalent_threads

EXPERIMENT = """\
    name: threads
    repeats: 3
    rounds: 1
    timeout_s: 300
    threads: [1, 2]
    datasets: [{generator: classification, n_samples: 1500, n_features: 10}]
    pairings: [{pairing: gradient_boosting, params: {n_estimators: 20}}]
    implementations: [sklearn, lightgbm, xgboost_gpu]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    root = tmp_path_factory.mktemp("threads")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    write(root / "threads.yaml", EXPERIMENT)
    env = {"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data")}
    result = run_cli("run", "threads.yaml", "--quiet", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("threads")
    [parent] = client.search_runs([experiment.experiment_id], "tags.`mlcompare.kind` = 'suite'")
    children = client.search_runs([experiment.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    return client, parent, children, root, env


def _by_point(children) -> dict:
    return {(c.data.params["implementation"], c.data.params.get("sweep.threads")): c for c in children}


def test_each_cpu_case_ran_with_its_thread_count(swept):
    _, parent, children, _, _ = swept
    runs = _by_point(children)
    assert set(runs) == {("sklearn", None), ("sklearn", "1"), ("sklearn", "2"), ("lightgbm", "1"),
                         ("lightgbm", "2"), ("xgboost_gpu", None)}
    assert parent.data.params["suite_thread_sweep"] == "1,2"
    baseline = runs["sklearn", None]
    assert baseline.data.params["threads"] == parent.data.params["suite_threads"]
    for (impl, point), run in runs.items():
        if point is None:
            continue
        p, m, t = run.data.params, run.data.metrics, run.data.tags
        assert p["threads"] == point and p["sweep_own"] == f"threads={point}"
        assert f"openmp:{point}" in t["threadpools"]  # the native pool really had that many threads
        # compared with the baseline at the experiment's threads, like any other case
        assert m["speedup_fit"] == baseline.data.metrics["fit_time_s"] / m["fit_time_s"]
    assert runs["xgboost_gpu", None].data.tags["case_status"] == "skipped"


def test_how_many_baseline_threads_lightgbm_is_worth(swept):
    client, parent, children, root, env = swept
    runs = _by_point(children)
    curve = {int(point): run.data.metrics["fit_time_s"] for (impl, point), run in runs.items()
             if impl == "sklearn" and point}
    metrics = client.get_run(parent.info.run_id).data.metrics
    report = run_cli("report", "--experiment", "threads", cwd=root, env=env).stdout
    for point in ("1", "2"):
        time = runs["lightgbm", point].data.metrics["fit_time_s"]
        threads, relation = _on_curve(curve, time)
        name = f"threads_equivalent.gradient_boosting.lightgbm.classification_1500x10.threads_{point}"
        line = f"gradient_boosting · lightgbm [threads={point}] on classification 1.5k×10: fit {time:.3g} s, "
        if relation == "=":
            assert metrics[name] == pytest.approx(threads, rel=1e-9)
            assert f"{line}as fast as sklearn with {threads:.3g} threads" in report
        else:  # outside the measured curve: said in words, no number logged
            assert name not in metrics
            assert line + ("no faster than sklearn with 1 thread" if relation == "<=" else
                           "faster than sklearn with any thread count measured (up to 2)") in report


def _on_curve(curve: dict[int, float], time: float) -> tuple[float, str]:
    """The baseline's thread count with this fit time: straight lines between the counts on log-log axes."""
    counts = sorted(curve)
    if curve[counts[0]] <= time:
        return counts[0], "<="
    for low, high in zip(counts, counts[1:]):
        if curve[high] <= time:
            share = math.log(curve[low] / time) / math.log(curve[low] / curve[high])
            return low * (high / low) ** share, "="
    return counts[-1], ">"


@pytest.mark.parametrize("threads,times,time,expected", [
    ([1, 2, 4, 8], [8.0, 4.0, 2.0, 1.0], 2.0, (4.0, "=")),
    ([1, 2, 4, 8], [8.0, 4.0, 2.0, 1.0], math.sqrt(8.0), (2 ** 1.5, "=")),  # half-way on log axes
    ([1, 2, 4], [8.0, 4.0, 5.0], 4.5, (2 ** (math.log(8 / 4.5) / math.log(2)), "=")),  # the first crossing
    ([1, 2, 4], [8.0, 4.0, 2.0], 9.0, (1, "<=")),  # slower than the baseline on one thread
    ([1, 2, 4], [8.0, 4.0, 2.0], 1.0, (4, ">")),  # faster than the baseline on every count measured
])
def test_the_thread_count_is_read_off_the_curve(threads, times, time, expected):
    got = equivalent_threads(threads, times, time)
    assert got[1] == expected[1] and got[0] == pytest.approx(expected[0])


def test_the_time_vs_threads_plot_is_on_the_parent_run(swept):
    client, parent, _, _, _ = swept
    with open(client.download_artifacts(parent.info.run_id, "plots/time_vs_threads.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
