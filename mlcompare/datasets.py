"""Datasets: synthetic generators, one fixed train/test split, an on-disk cache.

A dataset is materialised once per suite and stored as .npy files keyed by a fingerprint
of its definition, so every case (each in its own process) reads identical bytes and
nothing is ever pickled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sklearn

GENERATORS = ("blobs", "classification", "regression")

#: Which pairing tasks a generator's data can serve.
GENERATOR_TASKS = {
    # Unsupervised tasks use the blobs: their labels score clusterings, and their cluster
    # structure is what decompositions and embeddings should keep.
    "blobs": ("clustering", "clustering_fit_predict", "decomposition", "embedding"),
    "classification": ("classification",),
    "regression": ("regression",),
}

#: Bump when the bytes a definition produces change.
_FORMAT_VERSION = 2
_ARRAYS = ("X_train", "X_test", "y_train", "y_test")


@dataclass(frozen=True)
class DatasetSpec:
    """One synthetic dataset at one size."""

    generator: str
    n_samples: int
    n_features: int
    seed: int = 0
    test_size: float = 0.25
    dtype: str = "float32"
    options: dict[str, Any] = field(default_factory=dict)  # generator-specific knobs

    @property
    def tasks(self) -> tuple[str, ...]:
        return GENERATOR_TASKS[self.generator]

    @property
    def label(self) -> str:
        return f"{self.generator} {human_count(self.n_samples)}×{self.n_features}"

    def fingerprint(self) -> str:
        definition = asdict(self) | {"format": _FORMAT_VERSION,
                                     "sklearn": ".".join(sklearn.__version__.split(".")[:2])}
        blob = json.dumps(definition, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def human_count(n: int) -> str:
    """10000 -> '10k', 2500000 -> '2.5M' (for run names)."""
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if n >= div:
            value = n / div
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.3g}{suffix}"
    return str(n)


def data_dir() -> Path:
    """Where datasets are cached: $MLCOMPARE_DATA_DIR, else the user's cache directory."""
    env = os.environ.get("MLCOMPARE_DATA_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mlcompare" / "datasets"


def generate(spec: DatasetSpec) -> tuple[np.ndarray, np.ndarray]:
    """The full (X, y) of a synthetic dataset, X in the requested dtype."""
    from sklearn import datasets as skd

    opts = dict(spec.options)
    n, d, seed = spec.n_samples, spec.n_features, spec.seed
    if spec.generator == "blobs":
        X, y = skd.make_blobs(n_samples=n, n_features=d, centers=opts.get("centers", 8),
                              cluster_std=opts.get("cluster_std", 1.0), random_state=seed)
    elif spec.generator == "classification":
        informative = opts.get("n_informative", max(2, d // 2))
        X, y = skd.make_classification(n_samples=n, n_features=d, n_informative=informative,
                                       n_redundant=min(d - informative, opts.get("n_redundant", 2)),
                                       n_classes=opts.get("n_classes", 2),
                                       class_sep=opts.get("class_sep", 1.0), random_state=seed)
    elif spec.generator == "regression":
        X, y = skd.make_regression(n_samples=n, n_features=d,
                                   n_informative=opts.get("n_informative", max(1, d // 2)),
                                   noise=opts.get("noise", 10.0), random_state=seed)
    else:  # validated earlier; kept as a guard for direct callers
        raise ValueError(f"unknown generator {spec.generator!r}")
    X = X.astype(spec.dtype, copy=False)
    y = y.astype(spec.dtype if spec.generator == "regression" else np.int32, copy=False)
    return X, y


def materialise(spec: DatasetSpec, root: Path | None = None) -> Path:
    """Generate, split and cache the dataset unless already cached; return its directory."""
    from sklearn.model_selection import train_test_split

    root = root or data_dir()
    target = root / spec.fingerprint()
    if (target / "definition.json").exists():  # written last: the cache entry is whole
        return target
    root.mkdir(parents=True, exist_ok=True)
    X, y = generate(spec)
    stratify = y if spec.generator != "regression" else None
    parts = train_test_split(X, y, test_size=spec.test_size, random_state=spec.seed, stratify=stratify)
    # Written to a temporary folder, then renamed: a killed suite leaves no half cache.
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    try:
        digest = hashlib.sha256()
        for name, array in zip(_ARRAYS, parts):
            array = np.ascontiguousarray(array)
            digest.update(array.data)
            np.save(tmp / f"{name}.npy", array, allow_pickle=False)
        card = asdict(spec) | {"content_sha256": digest.hexdigest()}
        (tmp / "definition.json").write_text(json.dumps(card, indent=2, default=str))
        try:
            tmp.rename(target)
        except OSError:  # another suite cached it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def content_hash(directory: Path) -> str:
    """sha256 of the cached arrays' bytes (train, test, labels), recorded when cached."""
    return json.loads((directory / "definition.json").read_text())["content_sha256"]


def load_split(directory: Path) -> dict[str, np.ndarray]:
    """The four cached arrays of a materialised dataset (never unpickled)."""
    return {name: np.load(directory / f"{name}.npy", allow_pickle=False) for name in _ARRAYS}
