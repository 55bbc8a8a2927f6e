"""Quality metrics: one scikit-learn-based function per metric, shared by every implementation.

Scoring always happens on the host, on identical data, from what each implementation
returned (predictions, labels, projections, embeddings), so a number never depends on a
library's own scorer. `METRICS` is the one registry: each metric is a `Metric` record
with the tasks it can score (the first metric listed for a task is its default main
metric); plugins add theirs with `register_metric`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from mlcompare.pairings.tasks import TASKS
from mlcompare.records import QUALITY_METRICS


class _LazyMetrics:
    """scikit-learn's metrics, imported at the first score: `mlcompare list`, `report` and
    `compare` read this registry and never score (the import is 1.5-2 s of CPU here)."""

    def __getattr__(self, name: str) -> Any:
        from sklearn import metrics

        return getattr(metrics, name)


skm = _LazyMetrics()


@dataclass(frozen=True)
class Metric:
    """A quality metric computed on the host from a case's outputs.

    `fn(y_true, outputs)`: outputs holds what the runner took out of the model (see
    `needs`): `pred` (predictions or labels), `proba`, `X` (the rows scored), `centers`,
    `transformed`, `components`, `mean`, `embedding`.
    """

    fn: Callable[[np.ndarray, dict[str, Any]], float]
    higher_is_better: bool
    needs: frozenset[str] = frozenset({"pred"})
    tolerance: float = 0.01  # parity tolerance by default (see parity())
    relative: bool = False  # tolerance relative to the baseline's value (unbounded losses)
    tasks: tuple[str, ...] = ()  # the tasks that can report it (plugin metrics: their own pairing's)


def _roc_auc(y: np.ndarray, out: dict[str, Any]) -> float:
    proba = out["proba"]
    if proba.ndim == 2 and proba.shape[1] == 2:
        return float(skm.roc_auc_score(y, proba[:, 1]))
    return float(skm.roc_auc_score(y, proba, multi_class="ovr"))


def _inertia(y: np.ndarray, out: dict[str, Any]) -> float:
    # On the scored rows, from the returned labels and centres: the same formula for all.
    X, centers = out["X"].astype(np.float64), out["centers"].astype(np.float64)
    diff = X - centers[out["pred"].astype(np.int64)]
    return float(np.einsum("ij,ij->", diff, diff))


def reconstruction(out: dict[str, Any]) -> np.ndarray:
    """The scored rows rebuilt from their projection: Z · components (+ mean when centred)."""
    Z = np.asarray(out["transformed"], dtype=np.float64)
    C = np.asarray(out["components"], dtype=np.float64)
    mean = out.get("mean")
    X_hat = Z @ C
    return X_hat + np.asarray(mean, dtype=np.float64) if mean is not None else X_hat


def _explained_variance_ratio(y: np.ndarray, out: dict[str, Any]) -> float:
    # Share of the scored rows' variance the projection keeps (R² of the reconstruction,
    # pooled over features): comparable between PCA and TruncatedSVD and across libraries.
    return float(skm.r2_score(out["X"].astype(np.float64), reconstruction(out), multioutput="variance_weighted"))


def _reconstruction_error(y: np.ndarray, out: dict[str, Any]) -> float:
    return float(skm.mean_squared_error(out["X"].astype(np.float64), reconstruction(out)))


def _trustworthiness(y: np.ndarray, out: dict[str, Any]) -> float:
    from sklearn.manifold import trustworthiness

    X, E = out["X"], out["embedding"]
    return float(trustworthiness(X, E, n_neighbors=min(5, max(1, len(X) // 2 - 1))))


_CLASSIFICATION, _REGRESSION = ("classification",), ("regression",)
_CLUSTERING = ("clustering", "clustering_fit_predict")
METRICS: dict[str, Metric] = {
    "accuracy": Metric(lambda y, o: float(skm.accuracy_score(y, o["pred"])), True, tasks=_CLASSIFICATION),
    "roc_auc": Metric(_roc_auc, True, frozenset({"proba"}), tasks=_CLASSIFICATION),
    "log_loss": Metric(lambda y, o: float(skm.log_loss(y, o["proba"], labels=np.arange(o["proba"].shape[1]))),
                       False, frozenset({"proba"}), 0.05, True, tasks=_CLASSIFICATION),
    "r2": Metric(lambda y, o: float(skm.r2_score(y, o["pred"])), True, tasks=_REGRESSION),
    "rmse": Metric(lambda y, o: float(np.sqrt(skm.mean_squared_error(y, o["pred"]))), False,
                   tolerance=0.05, relative=True, tasks=_REGRESSION),
    "adjusted_rand": Metric(lambda y, o: float(skm.adjusted_rand_score(y, o["pred"])), True, tolerance=0.02,
                            tasks=_CLUSTERING),
    "inertia": Metric(_inertia, False, frozenset({"pred", "centers"}), 0.01, True, tasks=("clustering",)),
    "explained_variance_ratio": Metric(_explained_variance_ratio, True,
                                       frozenset({"transformed", "components"}), 0.01, tasks=("decomposition",)),
    "reconstruction_error": Metric(_reconstruction_error, False, frozenset({"transformed", "components"}),
                                   0.05, True, tasks=("decomposition",)),
    "trustworthiness": Metric(_trustworthiness, True, frozenset({"embedding"}), 0.02, tasks=("embedding",)),
}

#: Which quality metrics each task can report (the first is the default main metric), from the registry.
TASK_METRICS: dict[str, tuple[str, ...]] = {
    task: tuple(name for name, metric in METRICS.items() if task in metric.tasks) for task in TASKS}
class _MetricField(Mapping[str, Any]):
    """A read-only view of one field of every registered metric (always current)."""

    def __init__(self, field: str) -> None:
        self._field = field

    def __getitem__(self, name: str) -> Any:
        return getattr(METRICS[name], self._field)

    def __iter__(self) -> Iterator[str]:
        return iter(METRICS)

    def __len__(self) -> int:
        return len(METRICS)


HIGHER_IS_BETTER: Mapping[str, bool] = _MetricField("higher_is_better")
#: How far an implementation's main metric may fall behind the baseline's and still be
#: "ok". Bounded scores take an absolute tolerance (points); unbounded losses a relative one.
DEFAULT_TOLERANCE: Mapping[str, float] = _MetricField("tolerance")


def register_metric(name: str, metric: Metric) -> None:
    """Add a metric (from a plugin); a name may be registered once, or again identically."""
    if name in METRICS and METRICS[name] != metric:
        raise ValueError(f"metric {name!r} is already defined")
    METRICS[name] = metric
    QUALITY_METRICS.add(name)


def score(metric: str, y_true: np.ndarray, pred: np.ndarray | None = None, proba: np.ndarray | None = None,
          X: np.ndarray | None = None, centers: np.ndarray | None = None, **outputs: Any) -> float:
    """One metric on host arrays."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}")
    return METRICS[metric].fn(y_true, {"pred": pred, "proba": proba, "X": X, "centers": centers, **outputs})


def score_all(metrics: tuple[str, ...], y_true: np.ndarray, outputs: dict[str, Any]) -> dict[str, float]:
    return {m: METRICS[m].fn(y_true, outputs) for m in metrics}


def needs(metrics: tuple[str, ...] | list[str]) -> set[str]:
    """Every output the runner must produce for these metrics."""
    return set().union(*(METRICS[m].needs for m in metrics)) if metrics else set()


def quality_delta(metric: str, value: float, baseline: float) -> float:
    """value − baseline; for unbounded losses relative to the baseline (0.05 = 5 % more loss)."""
    if METRICS[metric].relative:
        return (value - baseline) / abs(baseline) if baseline else 0.0
    return value - baseline


def parity(metric: str, delta: float, tolerance: float) -> str:
    """'ok' unless the implementation is worse than the baseline by more than the tolerance."""
    worse = -delta if HIGHER_IS_BETTER[metric] else delta
    return "degraded" if worse > tolerance + 1e-12 else "ok"


def prediction_agreement(task: str, pred: np.ndarray, baseline_pred: np.ndarray) -> float:
    """How alike two implementations' outputs are (the array each case saved).

    Classifiers: the share of identical labels. Clusterings: the same after matching the
    cluster ids one to one (Hungarian method on the contingency table), since ids are
    arbitrary. Regressors: Pearson correlation of the predicted values. Decompositions:
    how much the two component subspaces overlap (mean squared cosine of their principal
    angles; blind to signs and rotations). Embeddings: the mean share of each point's 10
    nearest neighbours the two embeddings have in common.
    """
    if task == "regression":
        if np.std(pred) == 0 or np.std(baseline_pred) == 0:
            return float(np.array_equal(pred, baseline_pred))
        return float(np.corrcoef(pred.astype(np.float64), baseline_pred.astype(np.float64))[0, 1])
    if task in ("clustering", "clustering_fit_predict"):
        from scipy.optimize import linear_sum_assignment

        table = _contingency(baseline_pred, pred)
        rows, cols = linear_sum_assignment(table, maximize=True)
        return float(table[rows, cols].sum() / len(pred))
    if task == "decomposition":
        q1 = np.linalg.qr(baseline_pred.astype(np.float64).T)[0]
        q2 = np.linalg.qr(pred.astype(np.float64).T)[0]
        k = min(q1.shape[1], q2.shape[1])
        return float(np.sum((q1.T @ q2) ** 2) / k) if k else 1.0
    if task == "embedding":
        return _neighbour_overlap(pred, baseline_pred, k=10)
    return float(np.mean(pred == baseline_pred))


def _contingency(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many points each pair of ids (one of `a`'s, one of `b`'s) shares, a row per id of `a`:
    scikit-learn's `contingency_matrix`, counted here because this runs in the suite's own
    process, which would import scikit-learn for it (about 0.75 s of CPU here, between two cases)."""
    a_ids, a_index = np.unique(a, return_inverse=True)
    b_ids, b_index = np.unique(b, return_inverse=True)
    pairs = a_index.ravel().astype(np.int64) * len(b_ids) + b_index.ravel()
    return np.bincount(pairs, minlength=len(a_ids) * len(b_ids)).reshape(len(a_ids), len(b_ids))


def _neighbour_overlap(a: np.ndarray, b: np.ndarray, k: int) -> float:
    from sklearn.neighbors import NearestNeighbors

    k = min(k, len(a) - 1)
    if k < 1:
        return 1.0
    na = NearestNeighbors(n_neighbors=k + 1).fit(a).kneighbors(a, return_distance=False)[:, 1:]
    nb = NearestNeighbors(n_neighbors=k + 1).fit(b).kneighbors(b, return_distance=False)[:, 1:]
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(na, nb)]))
