"""Speed-up at equal quality, on real suites in a real store: read off each implementation's
measured curve of budget against fit time and quality."""

from __future__ import annotations

import math

import pytest
from conftest import FAULTS, run_cli, store_runs, write

PACED = """\
    name: paced-eq
    repeats: 1
    rounds: 3
    datasets: [{generator: regression, n_samples: 400, n_features: 4}]
    pairings:
      - name: paced
        task: regression
        metrics: [r2]
        parity_tolerance: 0
        params: {n_estimators: 100}
        equal_quality: {budget: n_estimators, ladder: [25, 50, 100, 200]}
        implementations:
          base: {estimator: faulty_estimators.Paced, device: cpu, params: {seconds_per_unit: 0.001, label: base}}
          twice_as_slow: {estimator: faulty_estimators.Paced, device: cpu,
                          params: {seconds_per_unit: 0.002, label: slow}}
          never_as_good: {estimator: faulty_estimators.Paced, device: cpu, params: {cap: 0.5, label: never}}
    equal_quality: true
"""


def _paced_env(root, uri: str) -> dict[str, str]:
    """The store, a dataset cache, and our paced estimators importable, with their counter folder."""
    (root / "faults").mkdir()
    return {"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data"), "PYTHONPATH": str(FAULTS),
            "MLCOMPARE_ALLOWED_MODULES": "faulty_estimators", "MLCOMPARE_FAULTS_DIR": str(root / "faults")}


@pytest.fixture(scope="module")
def paced(tmp_path_factory):
    """One suite of our own paced models, every point of their ladders in three processes."""
    root = tmp_path_factory.mktemp("paced")
    write(root / "paced.yaml", PACED)
    uri = f"sqlite:///{root / 'mlflow.db'}"
    result = run_cli("run", "paced.yaml", "--quiet", cwd=root, env=_paced_env(root, uri))
    assert result.returncode == 0, result.stderr
    runs = store_runs("paced-eq", uri)
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    return uri, parent, [r for r in runs if "mlflow.parentRunId" in r.data.tags]


def _metric(parent, name: str, impl: str, data: str = "regression_400_4") -> float | None:
    return parent.data.metrics.get(f"{name}.{impl}.{data}")


def test_twice_as_slow_per_unit_and_equally_good_is_half_as_fast_within_its_interval(paced):
    _, parent, children = paced
    assert len(children) == 1 + 4 + 4  # the baseline at its reference, two ladders of four
    speedup = _metric(parent, "speedup_equal_quality", "paced.twice_as_slow")
    low, high = (parent.data.metrics[f"speedup_equal_quality.paced.twice_as_slow.regression_400_4{end}"]
                 for end in ("_ci_low", "_ci_high"))
    # it reaches the baseline's R² exactly at budget 100, the baseline's own, in twice its time, process
    # for process (their spread of ±2 % makes the interval about 0.48–0.52)
    assert low <= 0.5 <= high and speedup == pytest.approx(0.5, rel=0.01), (low, speedup, high)
    assert high - low < 0.1
    level = parent.data.metrics["speedup_equal_quality.paced.twice_as_slow.regression_400_4_ci_level"]
    assert level == pytest.approx(1 - 2 * (1 - 0.75))  # two intervals of three processes each, Bonferroni
    assert "- at equal quality: paced · twice_as_slow vs base on regression 400×4: 0.5" in \
        parent.data.tags["mlflow.note.content"]


def test_one_that_never_reaches_the_baseline_gets_the_sentence_not_a_number(paced):
    _, parent, _ = paced
    assert _metric(parent, "speedup_equal_quality", "paced.never_as_good") is None
    note = parent.data.tags["mlflow.note.content"]
    assert "paced · never_as_good vs base on regression 400×4: does not reach the baseline's quality within " \
           "the ladder (best r2 " in note and "at n_estimators=200)" in note


def test_quality_at_equal_time_is_read_off_the_curve_at_the_baseline_s_time(paced):
    """Twice as slow per unit: in the baseline's time (budget 100 at 1 ms a unit) it fits budget 50,
    so its quality at equal time is its own logged R² at budget 50, not at 25 nor at 100. One as
    fast but capped: its R² at the baseline's own budget."""
    _, parent, children = paced
    r2 = {(r.data.params["implementation"], float(r.data.params["equal_quality.value"])): r.data.metrics["r2"]
          for r in children if r.data.params["implementation"] != "base"}
    at_equal_time = _metric(parent, "quality_at_equal_time", "paced.twice_as_slow")
    assert at_equal_time == pytest.approx(r2["twice_as_slow", 50], abs=0.01), (at_equal_time, r2)
    assert abs(r2["twice_as_slow", 25] - r2["twice_as_slow", 50]) > 0.05  # the budget it is read at matters
    capped = _metric(parent, "quality_at_equal_time", "paced.never_as_good")
    assert capped == pytest.approx(r2["never_as_good", 100], abs=0.01), (capped, r2)


def test_an_exact_solver_says_equal_parameters_are_equal_quality(workdir):
    """Linear regression has no budget: the description says why it has no curve, and no case
    runs along a ladder."""
    write(workdir / "exact.yaml", """\
        name: exact-eq
        equal_quality: true
        rounds: 1
        datasets: [{generator: regression, n_samples: 500, n_features: 4}]
        pairings: [linear_regression]
        implementations: [sklearn]
        """)
    result = run_cli("run", "exact.yaml", "--quiet", cwd=workdir)
    assert result.returncode == 0, result.stderr
    runs = store_runs("exact-eq")
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    cases = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(cases) == 1 and "equal_quality.value" not in cases[0].data.params
    exact = cases[0].data.params["equal_quality.exact"]
    assert exact and f"- at equal quality, linear_regression: {exact}" in parent.data.tags["mlflow.note.content"]
    assert not any(name.startswith("speedup_equal_quality.") for name in parent.data.metrics)


def test_the_table_keeps_the_equal_parameter_columns_and_adds_the_equal_quality_one(paced):
    from mlflow.tracking import MlflowClient

    uri, parent, _ = paced
    with open(MlflowClient(tracking_uri=uri).download_artifacts(parent.info.run_id, "comparison.md"),
              encoding="utf-8") as f:
        text = f.read()
    assert "twice_as_slow at equal quality" in text and "[n_estimators=25]" not in text
    assert "does not reach the baseline's quality" in text


BOOSTING = """\
    name: boosting-eq
    repeats: 1
    rounds: 2
    datasets: [{generator: classification, n_samples: 1500, n_features: 6}]
    pairings:
      - {pairing: gradient_boosting, params: {n_estimators: 20}, equal_quality: [5, 10, 40]}
    implementations: [sklearn, xgboost_cpu]
"""


def test_real_fits_the_figure_is_the_one_read_by_hand_off_the_logged_cases(workdir):
    """Real boosting fits: the parent's speed-up at equal quality is what the logged cases give by
    hand (the first ladder point, by fit time, whose best accuracy so far is within the pairing's
    tolerance of the baseline's; interpolated in log time from the point before it), read
    nowhere outside the measured ladder."""
    write(workdir / "b.yaml", BOOSTING)
    result = run_cli("run", "b.yaml", "--quiet", cwd=workdir)
    assert result.returncode == 0, result.stderr
    runs = store_runs("boosting-eq")
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    cases = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    base = next(r for r in cases if r.data.params["implementation"] == "sklearn")
    ladder = sorted(((float(r.data.params["equal_quality.value"]), r.data.metrics["fit_time_s"],
                      r.data.metrics["accuracy"]) for r in cases if r.data.params["implementation"] == "xgboost_cpu"),
                    key=lambda p: p[1])
    assert [b for b, _, _ in sorted(ladder)] == [5, 10, 20, 40]  # the reference budget joined the ladder
    target = base.data.metrics["accuracy"] - float(base.data.params["parity_tolerance"])
    best, envelope = -math.inf, []
    for budget, time_s, accuracy in ladder:
        best = max(best, accuracy)
        envelope.append((budget, time_s, best))
    first = next((i for i, (_, _, q) in enumerate(envelope) if q >= target - 1e-12), None)
    name = "speedup_equal_quality.gradient_boosting.xgboost_cpu.classification_1.5k_6"
    if first is None:
        assert name not in parent.data.metrics
        return
    if first == 0:
        reached = envelope[0][1]
    else:
        (_, t0, q0), (_, t1, q1) = envelope[first - 1], envelope[first]
        fraction = (target - q0) / (q1 - q0)
        reached = math.exp(math.log(t0) + fraction * (math.log(t1) - math.log(t0)))
    assert parent.data.metrics[name] == pytest.approx(base.data.metrics["fit_time_s"] / reached, rel=1e-9)
    assert ladder[0][1] <= reached <= ladder[-1][1]  # never beyond the measured points


def test_compare_carries_the_speed_up_at_equal_quality(paced, tmp_path):
    """A second run of the same suite: `mlcompare compare` shows both suites' figures, A → B."""
    uri, parent, _ = paced
    write(tmp_path / "paced.yaml", PACED)
    env = _paced_env(tmp_path, uri)
    assert run_cli("run", "paced.yaml", "--quiet", cwd=tmp_path, env=env).returncode == 0
    result = run_cli("compare", parent.info.run_id, "paced-eq", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("Speed-up at equal quality, A → B:")[1].split("B against A")[0]
    assert "paced · twice_as_slow · regression 400×4: 0.5" in section and " → 0.5" in section
    assert "paced · never_as_good · regression 400×4: does not reach → does not reach" in section
