"""Quality metrics agree with the libraries' own definitions."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from mlcompare.quality import score, score_all


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
