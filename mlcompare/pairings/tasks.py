"""Tasks: what a pairing's estimators are asked to do, and so how a case is run and scored.

A task fixes the protocol every implementation of a pairing follows, so their numbers
compare: whether the fit sees the labels and what comes out of the model afterwards (test
predictions, the training set's own labels, a projection of the test set, an embedding
of the training set). The quality metrics each task can report are listed by the metric
registry (`mlcompare.pairings.quality.METRICS`).
"""

from __future__ import annotations

from dataclasses import dataclass

#: What a case takes out of a fitted model, and on which split it is scored.
OUTPUTS = {
    "predict": "predict(X_test); scored against y_test",
    "labels": "labels_ after fit(X_train) (no predict on new data); scored against y_train",
    "transform": "transform(X_test) with components_; scored against X_test",
    "embedding": "embedding_ after fit(X_train); scored on a fixed subsample of X_train",
}


@dataclass(frozen=True)
class Task:
    name: str
    supervised: bool  # fit(X, y) rather than fit(X)
    output: str  # a key of OUTPUTS
    description: str

    @property
    def has_predict_phase(self) -> bool:
        """Whether a separate, timed call follows the fit (predict or transform)."""
        return self.output in ("predict", "transform")


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("classification", True, "predict",
         "supervised; predicts classes (and probabilities) of the test split"),
    Task("regression", True, "predict",
         "supervised; predicts the test split's target"),
    Task("clustering", False, "predict",
         "fit on the training split, assign the test split to the learned clusters"),
    Task("clustering_fit_predict", False, "labels",
         "density-based and other clusterers without predict: the training split's own labels"),
    Task("decomposition", False, "transform",
         "linear projection learned on the training split, applied to the test split"),
    Task("embedding", False, "embedding",
         "non-linear embedding of the training split (t-SNE, UMAP)"),
)}

#: Rows of the training split the embedding metrics are computed on (they are O(n²)).
EMBEDDING_SAMPLE = 1000
