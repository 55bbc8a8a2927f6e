"""Synthetic data at any scale, generated in chunks straight into the final float array.

One random model (centres, weights, cluster transforms) is drawn from the seed first;
then rows are drawn chunk by chunk from it, each chunk with its own derived seed. Peak
memory is the final array plus one chunk in float64, so tens of millions of rows fit.
The same seed, shape and chunk size give the same bytes (the chunk size is part of a
dataset's fingerprint).

`GENERATORS` is the registry: each generator is one `Generator` record (its name, the
tasks its data serves, its options, its model). Adding a generator is one entry there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

CHUNK_ROWS = 500_000


def generate(generator: str, n_samples: int, n_features: int, seed: int, dtype: str,
             options: dict[str, Any], chunk_rows: int = CHUNK_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """(X, y): X in `dtype`, y int32 labels (blobs, classification) or `dtype` targets."""
    kind = GENERATORS[generator]
    model = kind.model(n_features, np.random.default_rng(seed), options)
    X = np.empty((n_samples, n_features), dtype=dtype)
    y = np.empty(n_samples, dtype=dtype if kind.continuous_target else np.int32)
    for index, start in enumerate(range(0, n_samples, chunk_rows)):
        stop = min(start + chunk_rows, n_samples)
        rng = np.random.default_rng([seed, index + 1])
        X[start:stop], y[start:stop] = model(stop - start, rng)
    return X, y


Model = Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Option:
    """A generator-specific knob of an experiment's dataset entry."""

    minimum: float
    integer: bool
    description: str


@dataclass(frozen=True)
class Generator:
    """One kind of synthetic data: what it serves and how it is drawn."""

    name: str
    tasks: tuple[str, ...]  # the pairing tasks its data can serve
    model: Callable[[int, np.random.Generator, dict[str, Any]], Model]  # (n_features, rng, options) -> row drawer
    description: str
    options: dict[str, Option] = field(default_factory=dict)
    continuous_target: bool = False  # y in the data's dtype (regression), else int32 labels
    min_features: int = 1
    #: a check across options and n_features: the problem in words, or None
    check: Callable[[int, dict[str, Any]], str | None] = lambda n_features, options: None


def _blobs_model(d: int, rng: np.random.Generator, opts: dict[str, Any]) -> Model:
    """Isotropic Gaussian clusters around centres drawn uniformly in [-10, 10]^d."""
    centres = rng.uniform(-10.0, 10.0, size=(opts.get("centers", 8), d))
    std = opts.get("cluster_std", 1.0)

    def draw(n: int, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        labels = r.integers(0, len(centres), size=n)
        return centres[labels] + std * r.standard_normal((n, d)), labels

    return draw


def _classification_model(d: int, rng: np.random.Generator, opts: dict[str, Any]) -> Model:
    """Gaussian clusters on the vertices of a hypercube in the informative features
    (two per class, each with its own random covariance), redundant features as linear
    combinations of them, the rest noise; 1 % of labels flipped (as make_classification)."""
    n_classes = opts.get("n_classes", 2)
    informative = opts.get("n_informative", max(2, d // 2))
    redundant = min(d - informative, opts.get("n_redundant", 2))
    sep = opts.get("class_sep", 1.0)
    n_clusters = 2 * n_classes
    vertices = _distinct_vertices(rng, n_clusters, informative) * sep
    transforms = rng.uniform(-1.0, 1.0, size=(n_clusters, informative, informative))
    mixing = rng.uniform(-1.0, 1.0, size=(informative, redundant))
    order = rng.permutation(d)

    def draw(n: int, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        cluster = r.integers(0, n_clusters, size=n)
        inf = r.standard_normal((n, informative))
        for k in range(n_clusters):  # per cluster: no (n, informative, informative) temporary
            rows = cluster == k
            inf[rows] = inf[rows] @ transforms[k] + vertices[k]
        X = np.hstack([inf, inf @ mixing, r.standard_normal((n, d - informative - redundant))])
        labels = cluster % n_classes
        flip = r.random(n) < 0.01
        labels[flip] = r.integers(0, n_classes, size=int(flip.sum()))
        return X[:, order], labels

    return draw


def _distinct_vertices(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    """`count` different corners of the [-1, 1]^dims hypercube: no two clusters share a centre."""
    corners: list[tuple[float, ...]] = []
    while len(corners) < count:
        corner = tuple(rng.choice([-1.0, 1.0], size=dims))
        if corner not in corners:
            corners.append(corner)
    return np.array(corners)


def _regression_model(d: int, rng: np.random.Generator, opts: dict[str, Any]) -> Model:
    """A linear target on standard normal features: `n_informative` weights in [0, 100),
    plus Gaussian noise of standard deviation `noise` (as make_regression)."""
    informative = opts.get("n_informative", max(1, d // 2))
    weights = np.zeros(d)
    weights[rng.choice(d, size=informative, replace=False)] = 100.0 * rng.random(informative)
    noise = opts.get("noise", 10.0)

    def draw(n: int, r: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        X = r.standard_normal((n, d))
        return X, X @ weights + noise * r.standard_normal(n)

    return draw


def _classification_check(d: int, options: dict[str, Any]) -> str | None:
    informative = options.get("n_informative", max(2, d // 2))
    if informative + options.get("n_redundant", 0) > d:
        return f"informative plus redundant features exceed n_features {d}"
    # 2**informative < 2*n_classes, without computing a power of a huge exponent
    if informative < (2 * options.get("n_classes", 2) - 1).bit_length():
        return "too few informative features for n_classes (needs 2**n_informative >= 2 * n_classes)"
    return None


def _regression_check(d: int, options: dict[str, Any]) -> str | None:
    if options.get("n_informative", 1) > d:
        return f"informative plus redundant features exceed n_features {d}"
    return None


_INFORMATIVE = Option(1, True, "features that carry the signal")
#: Every synthetic generator, by name. Unsupervised tasks use the blobs: their labels score
#: clusterings, and their cluster structure is what decompositions and embeddings should keep.
GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("blobs", ("clustering", "clustering_fit_predict", "decomposition", "embedding"), _blobs_model,
              "isotropic Gaussian clusters; the labels are the cluster ids",
              {"centers": Option(1, True, "number of clusters"),
               "cluster_std": Option(0.0, False, "standard deviation of each cluster")}),
    Generator("classification", ("classification",), _classification_model,
              "Gaussian clusters on hypercube vertices, two per class, 1 % of labels flipped",
              {"n_informative": _INFORMATIVE, "n_redundant": Option(0, True, "linear combinations of informative ones"),
               "n_classes": Option(2, True, "number of classes"),
               "class_sep": Option(0.0, False, "distance between the cluster centres")},
              min_features=2, check=_classification_check),
    Generator("regression", ("regression",), _regression_model,
              "a linear target on standard normal features, plus Gaussian noise",
              {"n_informative": _INFORMATIVE, "noise": Option(0.0, False, "standard deviation of the noise")},
              continuous_target=True, check=_regression_check),
)}
#: Which pairing tasks each generator's data can serve.
GENERATOR_TASKS = {name: g.tasks for name, g in GENERATORS.items()}

