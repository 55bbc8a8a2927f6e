"""Quality metrics agree with the libraries' own definitions."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import modules_after, python_here
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from mlcompare.pairings.quality import score, score_all


def test_inertia_on_host_matches_kmeans_own_score():
    X, y = make_blobs(n_samples=500, n_features=3, centers=4, random_state=0)
    X = X.astype(np.float32)
    model = KMeans(n_clusters=4, n_init=1, random_state=0).fit(X)
    pred = model.predict(X)
    ours = score("inertia", y, pred, X=X, centers=model.cluster_centers_)
    assert ours == pytest.approx(-model.score(X), rel=1e-4)
    assert 0.9 < score("adjusted_rand", y, pred) <= 1.0


def test_classification_and_regression_metrics():
    y = np.array([0, 1, 1, 0])
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    out = score_all(("accuracy", "roc_auc", "log_loss"), y, {"pred": proba.argmax(1), "proba": proba})
    assert out["accuracy"] == 0.75
    assert out["roc_auc"] == 1.0
    assert out["log_loss"] == pytest.approx(-np.mean(np.log([0.9, 0.8, 0.4, 0.7])))
    reg = score_all(("r2", "rmse"), np.array([1.0, 2.0, 3.0]), {"pred": np.array([1.0, 2.0, 5.0])})
    assert reg["rmse"] == pytest.approx(np.sqrt(4 / 3))
    assert reg["r2"] == pytest.approx(1 - 4 / 2)


def test_multiclass_auc_uses_all_columns():
    y = np.array([0, 1, 2, 2])
    proba = np.eye(3)[[0, 1, 2, 2]] * 0.9 + 0.1 / 3
    assert score("roc_auc", y, proba.argmax(1), proba=proba) == 1.0


def test_parity_rules_per_metric():
    from mlcompare.pairings.quality import DEFAULT_TOLERANCE, parity, quality_delta

    assert DEFAULT_TOLERANCE["accuracy"] == 0.01 and DEFAULT_TOLERANCE["r2"] == 0.01
    assert DEFAULT_TOLERANCE["adjusted_rand"] == 0.02
    assert parity("accuracy", quality_delta("accuracy", 0.940, 0.945), 0.01) == "ok"
    assert parity("accuracy", quality_delta("accuracy", 0.930, 0.945), 0.01) == "degraded"
    assert parity("accuracy", quality_delta("accuracy", 0.990, 0.945), 0.01) == "ok"  # better is fine
    assert parity("adjusted_rand", quality_delta("adjusted_rand", 0.97, 0.99), 0.02) == "ok"
    assert parity("adjusted_rand", quality_delta("adjusted_rand", 0.96, 0.99), 0.02) == "degraded"
    # losses: relative, and larger is worse
    assert quality_delta("rmse", 11.0, 10.0) == pytest.approx(0.1)
    assert parity("rmse", quality_delta("rmse", 10.4, 10.0), 0.05) == "ok"
    assert parity("rmse", quality_delta("rmse", 10.6, 10.0), 0.05) == "degraded"
    assert parity("rmse", quality_delta("rmse", 5.0, 10.0), 0.05) == "ok"


def test_the_contingency_table_is_scikit_learn_s():
    """Counted without scikit-learn (the suite's process never imports it): the same table as its
    `contingency_matrix` for ids of any kind, noise labels (-1) and ids one side lacks."""
    from sklearn.metrics.cluster import contingency_matrix

    from mlcompare.pairings.quality import _contingency

    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(1, 400))
        a = rng.integers(-1, int(rng.integers(1, 30)), n)
        b = rng.integers(0, int(rng.integers(1, 40)), n) * 7 - 3
        if trial % 2:
            a = a.astype(np.float32)
        assert np.array_equal(_contingency(a, b), contingency_matrix(a, b))


def test_prediction_agreement():
    from mlcompare.pairings.quality import prediction_agreement

    base = np.array([0, 0, 1, 1, 2, 2])
    assert prediction_agreement("classification", np.array([0, 0, 1, 1, 2, 1]), base) == pytest.approx(5 / 6)
    # cluster ids are arbitrary: a renaming is full agreement, one moved point is not
    assert prediction_agreement("clustering", np.array([2, 2, 0, 0, 1, 1]), base) == 1.0
    assert prediction_agreement("clustering", np.array([2, 2, 0, 0, 1, 0]), base) == pytest.approx(5 / 6)
    # but classifier labels are not arbitrary
    assert prediction_agreement("classification", np.array([2, 2, 0, 0, 1, 1]), base) == 0.0
    y = np.linspace(0, 1, 50)
    assert prediction_agreement("regression", 3 * y + 1, y) == pytest.approx(1.0)
    assert prediction_agreement("regression", -y, y) == pytest.approx(-1.0)


def test_the_registry_is_read_without_scikit_learn_s_metrics_which_the_first_score_imports():
    """Listing the catalog and reading stored suites (`mlcompare list`, `report`, `compare`) use the
    registry and never score: scikit-learn's metrics (1-2 s of imports) are loaded by a score."""
    code = ("import sys\nimport numpy as np\nfrom mlcompare.pairings.quality import METRICS, score\n"
            "assert METRICS['accuracy'].higher_is_better and 'sklearn.metrics' not in sys.modules\n"
            "assert score('accuracy', np.array([0, 1]), np.array([0, 0])) == 0.5\n"
            "assert 'sklearn.metrics' in sys.modules\n")
    result = python_here(code)
    assert result.returncode == 0, result.stderr


def test_listing_the_catalog_imports_no_scikit_learn():
    assert "sklearn" not in modules_after("list")
