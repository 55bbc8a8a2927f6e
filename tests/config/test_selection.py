"""An experiment's pairings: names, files, inline pairings, overrides, sweeps, --pairings."""

from __future__ import annotations

import pytest
from conftest import write

from mlcompare.config.experiment import load_experiment
from mlcompare.errors import InputError

DATA = "datasets: [{generator: regression, n_samples: 200, n_features: 4}]\n"


def experiment(workdir, pairings: str, extra: str = "") -> str:
    return write(workdir / "e.yaml", f"name: e\n{DATA}{extra}pairings:\n{pairings}")


def test_a_shared_sweep_is_a_grid_compared_point_by_point(workdir):
    path = experiment(workdir, """\
  - pairing: random_forest_regressor
    params: {n_estimators: [10, 20], max_depth: [3, 5], bootstrap: false}
""", "implementations: [sklearn, sklearnex]\n")
    cases = load_experiment(path).cases()
    assert len(cases) == 8  # 2 × 2 points × 2 implementations
    assert [c.name for c in cases[:2]] == [
        "random_forest_regressor · sklearn · regression 200×4 · n_estimators=10, max_depth=3",
        "random_forest_regressor · sklearnex · regression 200×4 · n_estimators=10, max_depth=3"]
    assert cases[0].is_baseline and cases[0].group == cases[1].group != cases[2].group
    params = cases[3].pairing.estimator_params(cases[3].implementation)
    assert (params["n_estimators"], params["max_depth"], params["bootstrap"]) == (10, 5, False)
    assert cases[3].sweep == {"n_estimators": 10, "max_depth": 5}


def test_an_implementation_sweep_adds_cases_against_one_baseline(workdir):
    path = experiment(workdir, """\
  - pairing: knn_regressor
    implementations: {sklearnex: {params: {algorithm: [brute, kd_tree]}}}
""", "implementations: [sklearn, sklearnex]\n")
    cases = load_experiment(path).cases()
    assert [(c.implementation.name, c.implementation.params["algorithm"]) for c in cases] == [
        ("sklearn", "auto"), ("sklearnex", "brute"), ("sklearnex", "kd_tree")]
    assert len({c.group for c in cases}) == 1
    assert cases[2].name.endswith("· algorithm=kd_tree")


def test_one_value_lists_and_wrapped_lists_are_values(workdir):
    path = experiment(workdir, "  - {pairing: ridge, params: {alpha: [2.0]}}\n", "implementations: [sklearn]\n")
    (case,) = load_experiment(path).cases()
    assert case.pairing.params["alpha"] == 2.0 and case.sweep == {}


def test_inline_and_file_pairings(workdir):
    (workdir / "sub").mkdir()
    write(workdir / "sub" / "my_lasso.yaml", """\
        name: my_lasso
        task: regression
        params: {alpha: 0.5}
        implementations:
          sklearn: {estimator: sklearn.linear_model.Lasso, device: cpu}
    """)
    path = experiment(workdir, """\
  - sub/my_lasso.yaml
  - name: my_ridge
    task: regression
    implementations:
      sklearn: {estimator: sklearn.linear_model.Ridge, device: cpu}
      cuml: {estimator: cuml.linear_model.Ridge, device: gpu}
""")
    exp = load_experiment(path)
    assert [(c.pairing.name, c.implementation.name) for c in exp.cases()] == [
        ("my_lasso", "sklearn"), ("my_ridge", "sklearn"), ("my_ridge", "cuml")]
    assert exp.pairings[0].source.endswith("my_lasso.yaml")


def test_pairings_flag_adds_files_to_the_run(workdir):
    write(workdir / "extra.yaml", """\
        name: extra_ridge
        task: regression
        implementations:
          sklearn: {estimator: sklearn.linear_model.Ridge, device: cpu}
    """)
    path = experiment(workdir, "  - linear_regression\n", "implementations: [sklearn]\n")
    exp = load_experiment(path, pairing_paths=[str(workdir / "extra.yaml")])
    assert [c.pairing.name for c in exp.cases()] == ["linear_regression", "extra_ridge"]


def test_max_samples_keeps_big_datasets_from_slow_models(workdir):
    path = write(workdir / "e.yaml", """\
        name: e
        implementations: [sklearn]
        datasets: [{generator: regression, n_samples: [100, 1000], n_features: 4}]
        pairings: [{pairing: svr, max_samples: 500}, ridge]
    """)
    assert [(c.pairing.name, c.dataset.n_samples) for c in load_experiment(path).cases()] == [
        ("svr", 100), ("ridge", 100), ("ridge", 1000)]


@pytest.mark.parametrize("entry,field,message", [
    ("{pairing: ridge, implementations: {sklearn: {params: {solver: [auto, svd]}}}}",
     "pairings[0].implementations.sklearn.params", "baseline"),
    ("{pairing: ridge, implementations: {nope: {params: {}}}}", "pairings[0].implementations.nope",
     "no implementation 'nope'"),
    ("{pairing: ridge, params: {alpha: []}}", "pairings[0].params.alpha", "empty sweep"),
    ("{pairing: ridge, params: {alfa: 1.0}}", "pairings[0].params.alfa", "did you mean 'alpha'"),
    ("{pairing: ridge, implementations: {sklearn: {params: {solvr: svd}}}}",
     "pairings[0].implementations.sklearn.params.solvr", "does not accept"),
    ("{pairing: ridge, colour: red}", "pairings[0].colour", "unknown key"),
    ("{pairing: ridg}", "pairings[0].pairing", "unknown pairing 'ridg'"),
    ("{pairing: ridge, max_samples: 50}", "pairings[0].max_samples", "at most 50 rows"),
    ("missing.yaml", "pairings[0]", "no pairing file"),
    ("42", "pairings[0]", "expected a pairing name"),
])
def test_bad_entries_name_the_experiment_field(workdir, entry, field, message):
    path = experiment(workdir, f"  - {entry}\n")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert (err.value.source, err.value.field) == (str(path), field)
    assert message in err.value.message


def test_a_pairing_selected_twice_is_refused(workdir):
    path = experiment(workdir, "  - ridge\n  - {pairing: ridge, params: {alpha: [1, 2]}}\n")
    with pytest.raises(InputError, match="already selected by pairings\\[0\\]"):
        load_experiment(path)


def test_inline_pairing_named_like_a_catalog_one_is_refused(workdir):
    path = experiment(workdir, """\
  - name: ridge
    task: regression
    implementations: {sklearn: {estimator: sklearn.linear_model.Ridge, device: cpu}}
""")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert err.value.field == "pairings[0].name" and "already defined" in err.value.message
