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


#: How far an implementation's main metric may fall behind the baseline's and still be
#: "ok". Bounded scores take an absolute tolerance (points); unbounded losses a relative one.
DEFAULT_TOLERANCE = {"accuracy": 0.01, "roc_auc": 0.01, "r2": 0.01, "adjusted_rand": 0.02,
                     "log_loss": 0.05, "rmse": 0.05, "inertia": 0.01}
RELATIVE_TOLERANCE = {"log_loss", "rmse", "inertia"}


def quality_delta(metric: str, value: float, baseline: float) -> float:
    """value − baseline; for unbounded losses relative to the baseline (0.05 = 5 % more loss)."""
    if metric in RELATIVE_TOLERANCE:
        return (value - baseline) / abs(baseline) if baseline else 0.0
    return value - baseline


def parity(metric: str, delta: float, tolerance: float) -> str:
    """'ok' unless the implementation is worse than the baseline by more than the tolerance."""
    worse = -delta if HIGHER_IS_BETTER[metric] else delta
    return "degraded" if worse > tolerance + 1e-12 else "ok"


def prediction_agreement(task: str, pred: np.ndarray, baseline_pred: np.ndarray) -> float:
    """How alike two implementations' test predictions are.

    Classifiers: the share of identical labels. Clusterings: the same after matching the
    cluster ids one to one (Hungarian method on the contingency table), since ids are
    arbitrary. Regressors: Pearson correlation of the predicted values.
    """
    if task == "regression":
        if np.std(pred) == 0 or np.std(baseline_pred) == 0:
            return float(np.array_equal(pred, baseline_pred))
        return float(np.corrcoef(pred.astype(np.float64), baseline_pred.astype(np.float64))[0, 1])
    if task == "clustering":
        from scipy.optimize import linear_sum_assignment

        table = skm.cluster.contingency_matrix(baseline_pred, pred)
        rows, cols = linear_sum_assignment(table, maximize=True)
        return float(table[rows, cols].sum() / len(pred))
    return float(np.mean(pred == baseline_pred))
