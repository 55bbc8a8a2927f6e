"""The catalog against the lowest cuML the cuda extras allow, checked without cuML installed.

`mlcompare validate` checks each installed estimator's parameters, but CPU machines have no
cuML, so a parameter that the floor release lacks would only surface on the GPU box, as an
input error that stops the whole catalog. The keyword arguments below were read from
cuML's sources (the `__init__` of each estimator, and of its base class where it passes
**kwargs on) at v25.12.00, v26.08.00 and the 26.10 branch; only names taken by all three
are listed, so the catalog must fit every release from the floor up.
"""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from mlcompare.config.pairing import load_catalog

CATALOG = load_catalog()
FLOOR = (25, 12)

#: Keyword arguments every cuML release from 25.12 to 26.10 takes (handle, verbose and
#: output_type left out: the catalog sets none of them, and 26.02 removed handle).
CUML_PARAMS = {
    "cuml.cluster.KMeans": "init max_iter max_samples_per_batch n_clusters n_init oversampling_factor random_state tol",
    "cuml.cluster.DBSCAN": "algorithm calc_core_sample_indices eps max_mbytes_per_batch metric min_samples",
    "cuml.cluster.hdbscan.HDBSCAN": "allow_single_cluster alpha build_algo build_kwds cluster_selection_epsilon "
                                    "cluster_selection_method gen_min_span_tree max_cluster_size metric "
                                    "min_cluster_size min_samples p prediction_data",
    "cuml.decomposition.PCA": "copy iterated_power n_components svd_solver tol whiten",
    "cuml.decomposition.TruncatedSVD": "algorithm n_components n_iter random_state tol",
    "cuml.manifold.TSNE": "angle early_exaggeration exaggeration_iter init late_exaggeration learning_rate "
                          "learning_rate_method max_iter method metric metric_params min_grad_norm n_components "
                          "n_iter_without_progress n_neighbors perplexity perplexity_max_iter post_momentum "
                          "pre_momentum precomputed_knn random_state square_distances",
    "cuml.manifold.UMAP": "a b build_algo build_kwds callback hash_input init learning_rate local_connectivity metric "
                          "metric_kwds min_dist n_components n_epochs n_neighbors negative_sample_rate "
                          "precomputed_knn random_state repulsion_strength set_op_mix_ratio spread target_metric "
                          "target_n_neighbors target_weight transform_queue_size",
    "cuml.ensemble.RandomForestClassifier": "bootstrap max_batch_size max_depth max_features max_leaves max_samples "
                                            "min_impurity_decrease min_samples_leaf min_samples_split n_bins "
                                            "n_estimators n_streams oob_score random_state split_criterion",
    "cuml.linear_model.LogisticRegression": "C class_weight fit_intercept l1_ratio lbfgs_memory linesearch_max_iter "
                                            "max_iter penalty penalty_normalized solver tol",
    "cuml.neighbors.KNeighborsClassifier": "algo_params algorithm metric metric_params n_jobs n_neighbors p weights",
    "cuml.svm.SVC": "C cache_size class_weight coef0 decision_function_shape degree gamma kernel max_iter "
                    "nochange_steps random_state tol",
    "cuml.svm.SVR": "C cache_size coef0 degree epsilon gamma kernel max_iter nochange_steps tol",
    "cuml.naive_bayes.GaussianNB": "priors var_smoothing",
    "cuml.linear_model.LinearRegression": "algorithm copy_X fit_intercept",
    "cuml.linear_model.Ridge": "alpha copy_X fit_intercept solver",
    "cuml.linear_model.Lasso": "alpha fit_intercept max_iter selection solver tol",
    "cuml.linear_model.ElasticNet": "alpha fit_intercept l1_ratio max_iter selection solver tol",
}
CUML_PARAMS["cuml.ensemble.RandomForestRegressor"] = CUML_PARAMS["cuml.ensemble.RandomForestClassifier"]
CUML_PARAMS["cuml.neighbors.KNeighborsRegressor"] = CUML_PARAMS["cuml.neighbors.KNeighborsClassifier"]
#: cuml.dask estimators take **kwargs and hand them to the single-GPU estimator.
DASK_TARGETS = {"cuml.dask.cluster.KMeans": "cuml.cluster.KMeans",
                "cuml.dask.ensemble.RandomForestClassifier": "cuml.ensemble.RandomForestClassifier",
                "cuml.dask.linear_model.LinearRegression": "cuml.linear_model.LinearRegression"}
#: Values of enumerated parameters the releases accept (from their checks and docstrings).
CUML_VALUES = {
    ("cuml.cluster.KMeans", "init"): {"scalable-k-means++", "k-means||", "random"},
    ("cuml.cluster.DBSCAN", "algorithm"): {"brute", "rbc"},
    ("cuml.cluster.hdbscan.HDBSCAN", "build_algo"): {"brute_force", "nn_descent"},
    ("cuml.decomposition.PCA", "svd_solver"): {"auto", "full", "jacobi"},
    ("cuml.decomposition.TruncatedSVD", "algorithm"): {"auto", "full", "jacobi"},
    ("cuml.manifold.TSNE", "method"): {"barnes_hut", "fft", "exact"},
    ("cuml.manifold.UMAP", "build_algo"): {"auto", "brute_force_knn", "nn_descent"},
    ("cuml.linear_model.LinearRegression", "algorithm"): {"auto", "svd", "eig", "qr", "svd-qr", "svd-jacobi"},
    ("cuml.linear_model.Ridge", "solver"): {"auto", "eig", "svd"},
    ("cuml.linear_model.Lasso", "solver"): {"cd", "qn"},
    ("cuml.linear_model.ElasticNet", "solver"): {"cd", "qn"},
    ("cuml.linear_model.LogisticRegression", "solver"): {"qn"},
}
#: What the releases before the floor lacked: why the floor is 25.12 (v25.10.00's sources).
NEW_IN_25_12 = {"cuml.manifold.TSNE": {"max_iter"}, "cuml.cluster.hdbscan.HDBSCAN": {"build_algo"}}


def _cuml_implementations():
    for pairing in CATALOG.values():
        for impl in pairing.implementations.values():
            if impl.estimator.startswith("cuml."):
                yield pytest.param(pairing, impl, id=f"{pairing.name}.{impl.name}")


@pytest.mark.parametrize("pairing,impl", list(_cuml_implementations()))
def test_every_cuml_estimator_of_the_catalog_takes_its_params_from_the_floor_up(pairing, impl):
    params = pairing.estimator_params(impl)
    target = DASK_TARGETS.get(impl.estimator, impl.estimator)
    assert target in CUML_PARAMS, f"{impl.estimator}: add its parameters to this test's table"
    accepted = set(CUML_PARAMS[target].split())
    if impl.distributed:  # the cluster's params; the rest goes through **kwargs to the single-GPU estimator
        params = {k: v for k, v in params.items() if k not in ("n_workers", "threads_per_worker", "scheduler_address")}
    assert set(params) <= accepted, f"{impl.estimator} from cuML 25.12 on does not take {set(params) - accepted}"
    for (estimator, name), values in CUML_VALUES.items():
        if estimator == target and name in params:
            assert params[name] in values, f"{impl.estimator}: {name}={params[name]!r} is not one of {values}"


def test_the_parameters_that_set_the_floor_are_used_and_the_extras_require_it():
    used = {impl.estimator: set(pairing.estimator_params(impl))
            for pairing in CATALOG.values() for impl in pairing.implementations.values()}
    for estimator, new in NEW_IN_25_12.items():
        assert new <= used[estimator]  # drop one of them and the floor could come down
    pyproject = (REPO / "pyproject.toml").read_text()
    for extra in ("cuda12", "cuda13"):
        listed = re.findall(r'"([^"]+)"', re.search(rf"^{extra} = \[(.*?)\]", pyproject, re.M | re.S).group(1))
        for dist in (f"cuml-{extra.replace('cuda', 'cu')}", f"cudf-{extra.replace('cuda', 'cu')}", "dask-cuda"):
            spec = next(r for r in listed if re.match(rf"{re.escape(dist)}>=", r))
            year, month = (int(x) for x in re.search(r">=(\d+)\.(\d+)", spec).groups())
            assert (year, month) >= FLOOR, spec
        assert any(r.startswith("nvidia-ml-py") for r in listed)
