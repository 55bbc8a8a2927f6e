"""Datasets: generated once, split once, identical bytes for every reader."""

from __future__ import annotations

import numpy as np
import pytest

from mlcompare.datasets import DatasetSpec, human_count, load_split, materialise


def test_materialise_caches_by_fingerprint(tmp_path):
    spec = DatasetSpec("classification", n_samples=400, n_features=6, seed=3)
    first = materialise(spec, tmp_path)
    stamp = (first / "X_train.npy").stat().st_mtime_ns
    again = materialise(spec, tmp_path)
    assert again == first and (again / "X_train.npy").stat().st_mtime_ns == stamp
    arrays = load_split(first)
    assert arrays["X_train"].shape == (300, 6) and arrays["X_test"].shape == (100, 6)
    assert arrays["X_train"].dtype == np.float32 and arrays["y_train"].dtype == np.int32
    # stratified: both classes in the same proportion in train and test
    assert abs(arrays["y_train"].mean() - arrays["y_test"].mean()) < 0.02
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temporary leftovers


def test_another_definition_is_another_dataset(tmp_path):
    base = DatasetSpec("regression", n_samples=200, n_features=4)
    variants = [DatasetSpec("regression", n_samples=200, n_features=4, seed=1),
                DatasetSpec("regression", n_samples=200, n_features=4, dtype="float64"),
                DatasetSpec("regression", n_samples=200, n_features=4, options={"noise": 0.0})]
    assert len({base.fingerprint(), *(v.fingerprint() for v in variants)}) == 4
    f64 = load_split(materialise(variants[1], tmp_path))
    f32 = load_split(materialise(base, tmp_path))
    assert f64["X_train"].dtype == np.float64 and f32["y_train"].dtype == np.float32
    np.testing.assert_allclose(f64["X_train"], f32["X_train"], rtol=1e-6)


def test_generation_is_reproducible(tmp_path):
    spec = DatasetSpec("blobs", n_samples=300, n_features=3, options={"centers": 3})
    a = load_split(materialise(spec, tmp_path / "a"))
    b = load_split(materialise(spec, tmp_path / "b"))
    for key in a:
        assert a[key].tobytes() == b[key].tobytes()


@pytest.mark.parametrize("n,text", [(999, "999"), (1000, "1k"), (20000, "20k"), (2500000, "2.5M"),
                                    (1953125, "1.95M"), (5000000, "5M")])
def test_human_count(n, text):
    assert human_count(n) == text
