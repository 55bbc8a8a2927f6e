"""Quality metrics: one scikit-learn function per metric, shared by every implementation.

Scoring always happens on the host, on the identical test split, from the predictions
each implementation returned, so a number never depends on a library's own scorer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import metrics as skm

#: Which quality metrics each task can report, and which need probabilities.
TASK_METRICS: dict[str, tuple[str, ...]] = {
    "classification": ("accuracy", "roc_auc", "log_loss"),
    "regression": ("r2", "rmse"),
    "clustering": ("adjusted_rand", "inertia"),
}
NEEDS_PROBA = {"roc_auc", "log_loss"}

#: Whether a larger value of the metric is better (for speed/quality trade-offs).
HIGHER_IS_BETTER = {"accuracy": True, "roc_auc": True, "log_loss": False,
                    "r2": True, "rmse": False, "adjusted_rand": True, "inertia": False}


def score(metric: str, y_true: np.ndarray, pred: np.ndarray, proba: np.ndarray | None = None,
          X: np.ndarray | None = None, centers: np.ndarray | None = None) -> float:
    """One metric on host arrays."""
    if metric == "accuracy":
        return float(skm.accuracy_score(y_true, pred))
    if metric == "roc_auc":
        if proba.ndim == 2 and proba.shape[1] == 2:
            return float(skm.roc_auc_score(y_true, proba[:, 1]))
        return float(skm.roc_auc_score(y_true, proba, multi_class="ovr"))
    if metric == "log_loss":
        return float(skm.log_loss(y_true, proba, labels=np.arange(proba.shape[1])))
    if metric == "r2":
        return float(skm.r2_score(y_true, pred))
    if metric == "rmse":
        return float(np.sqrt(skm.mean_squared_error(y_true, pred)))
    if metric == "adjusted_rand":
        return float(skm.adjusted_rand_score(y_true, pred))
    if metric == "inertia":
        # On the test split, from the returned labels and centres: the same formula for all.
        diff = X.astype(np.float64) - centers.astype(np.float64)[pred.astype(np.int64)]
        return float(np.einsum("ij,ij->", diff, diff))
    raise ValueError(f"unknown metric {metric!r}")


def score_all(metrics: tuple[str, ...], y_true: np.ndarray, outputs: dict[str, Any]) -> dict[str, float]:
    return {m: score(m, y_true, outputs["pred"], outputs.get("proba"), outputs.get("X"),
                     outputs.get("centers")) for m in metrics}
