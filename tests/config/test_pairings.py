"""The pairing catalog: its data, the shared-parameter mapping and the import allow-list."""

from __future__ import annotations

import pytest

from mlcompare.config.estimators import check_pairing, estimator_class
from mlcompare.config.pairing import load_catalog, parse_pairing
from mlcompare.errors import InputError
from mlcompare.pairings.imports import import_estimator, unknown_params

CATALOG = load_catalog()


def test_the_four_mission_pairings_have_every_implementation():
    expected = {
        "kmeans": {"sklearn": "cpu", "cuml": "gpu", "sklearnex": "cpu", "cuml_accel": "gpu", "cuml_dask": "gpu"},
        "random_forest": {"sklearn": "cpu", "cuml": "gpu", "sklearnex": "cpu", "cuml_accel": "gpu", "cuml_dask": "gpu",
                          "xgboost_rf_cpu": "cpu", "xgboost_rf_gpu": "gpu"},
        "gradient_boosting": {"sklearn": "cpu", "xgboost_cpu": "cpu", "xgboost_gpu": "gpu", "lightgbm": "cpu",
                              "catboost_cpu": "cpu", "catboost_gpu": "gpu", "xgboost_dask_cpu": "cpu",
                              "xgboost_dask_gpu": "gpu"},
        "linear_regression": {"sklearn": "cpu", "cuml": "gpu", "sklearnex": "cpu", "cuml_accel": "gpu",
                              "cuml_dask": "gpu"},
    }
    for name, impls in expected.items():
        pairing = CATALOG[name]
        assert {k: v.device for k, v in pairing.implementations.items()} == impls
        assert pairing.baseline == "sklearn"
    assert CATALOG["kmeans"].metrics == ("adjusted_rand", "inertia")
    assert CATALOG["random_forest"].metrics == ("accuracy", "roc_auc")
    assert CATALOG["gradient_boosting"].metrics == ("accuracy", "roc_auc", "log_loss")
    assert CATALOG["linear_regression"].metrics == ("r2", "rmse")


def test_shared_params_reach_each_library_under_its_own_name():
    gb = CATALOG["gradient_boosting"]
    sk = gb.estimator_params(gb.implementations["sklearn"])
    xgb = gb.estimator_params(gb.implementations["xgboost_gpu"])
    assert sk["max_iter"] == xgb["n_estimators"] == gb.params["n_estimators"]
    assert sk["max_bins"] == xgb["max_bin"] == gb.params["max_bins"]
    assert sk["early_stopping"] is False  # or scikit-learn stops early above 10k rows
    assert xgb["device"] == "cuda" and gb.estimator_params(gb.implementations["xgboost_cpu"])["device"] == "cpu"


@pytest.mark.parametrize("pairing", sorted(CATALOG))
def test_installed_estimators_accept_every_param(pairing):
    """What `mlcompare validate` checks: every installed estimator imports and takes its params."""
    check_pairing(CATALOG[pairing])  # raises InputError naming the field
    for impl in CATALOG[pairing].implementations.values():
        cls = estimator_class(impl.estimator)
        if not impl.library.startswith("cuml"):  # cuML is not installed on CPU machines; checked on the GPU box
            assert cls is not None, impl.estimator
            unchecked = set(impl.passthrough)  # LightGBM's own params, taken through **kwargs
            if impl.distributed:  # the cluster's params are taken out before the estimator is built
                unchecked |= {"n_workers", "threads_per_worker", "scheduler_address"}
            assert set(unknown_params(cls, CATALOG[pairing].estimator_params(impl))) <= unchecked


def test_unmatched_params_are_written_as_differences():
    pairing = parse_pairing({
        "name": "p", "task": "regression", "params": {"alpha": 1.0, "tol": 0.1},
        "implementations": {
            "sklearn": {"estimator": "sklearn.linear_model.Ridge", "device": "cpu"},
            "other": {"estimator": "sklearn.linear_model.LinearRegression", "device": "cpu",
                      "rename": {"alpha": None, "tol": None}, "differences": ["no regularisation"]},
        }}, "p.yaml")
    other = pairing.implementations["other"]
    assert pairing.estimator_params(other) == {}
    assert pairing.differences(other) == [
        "alpha: sklearn has no such parameter, left at its own default",
        "tol: sklearn has no such parameter, left at its own default",
        "no regularisation"]
    assert unknown_params(import_estimator("sklearn.linear_model.Ridge"), {"alpha": 1, "bogus": 2}) == ["bogus"]


@pytest.mark.parametrize("estimator", ["os.system", "subprocess.Popen", "sklearnfoo.X", "builtins.eval", "sklearn"])
def test_estimators_outside_the_allow_list_are_refused(estimator):
    data = {"name": "p", "task": "regression",
            "implementations": {"a": {"estimator": estimator, "device": "cpu"}}}
    with pytest.raises(InputError) as err:
        parse_pairing(data, "p.yaml")
    assert err.value.field == "implementations.a.estimator"
    assert "not under an allowed module" in err.value.message


@pytest.mark.parametrize("change,field", [
    ({"task": "ranking"}, "task"),
    ({"metrics": ["accuracy"]}, "metrics[0]"),
    ({"baseline": "nope"}, "baseline"),
    ({"colour": 1}, "colour"),
    ({"implementations": {}}, "implementations"),
    ({"implementations": {"a": {"estimator": "sklearn.linear_model.Ridge", "device": "tpu"}}},
     "implementations.a.device"),
    ({"implementations": {"a": {"estimator": "sklearn.linear_model.Ridge", "device": "cpu",
                                "rename": {"missing": "x"}}}}, "implementations.a.rename.missing"),
])
def test_bad_pairings_name_the_field(change, field):
    data = {"name": "p", "task": "regression",
            "implementations": {"a": {"estimator": "sklearn.linear_model.Ridge", "device": "cpu"}}} | change
    with pytest.raises(InputError) as err:
        parse_pairing(data, "p.yaml")
    assert (err.value.source, err.value.field) == ("p.yaml", field)


def test_accelerated_implementations_are_probed_and_checked():
    from mlcompare.measure import device

    impl = CATALOG["kmeans"].implementations["cuml_accel"]
    assert (impl.library, impl.device, impl.accelerator) == ("cuml.accel", "gpu", "cuml.accel")
    if not device.library_installed("cuml"):
        assert device.skip_reason(impl.library, impl.device).startswith("cuml not installed")
    base = {"name": "p", "task": "regression"}
    for bad, field in [({"estimator": "sklearn.linear_model.Ridge", "device": "cpu"}, "device"),
                       ({"estimator": "xgboost.XGBRegressor", "device": "gpu"}, "estimator"),
                       ({"estimator": "sklearn.linear_model.Ridge", "device": "gpu", "accelerator": "x"},
                        "accelerator")]:
        data = base | {"implementations": {"a": {"accelerator": "cuml.accel"} | bad}}
        with pytest.raises(InputError) as err:
            parse_pairing(data, "p.yaml")
        assert err.value.field == f"implementations.a.{field}"
