"""Datasets: generated once, split once, cached as Parquet and NumPy, identical bytes for every reader."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mlcompare.data import synthetic
from mlcompare.data.cache import (
    DatasetSpec,
    content_matches,
    definition,
    host_reader,
    human_count,
    load_split,
    materialise,
)


def test_materialise_caches_by_fingerprint(tmp_path):
    spec = DatasetSpec("classification", n_samples=400, n_features=6, seed=3)
    first = materialise(spec, tmp_path)
    stamp = (first / "train.parquet").stat().st_mtime_ns
    again = materialise(spec, tmp_path)
    assert again == first and (again / "train.parquet").stat().st_mtime_ns == stamp
    arrays = load_split(first)
    assert arrays["X_train"].shape == (300, 6) and arrays["X_test"].shape == (100, 6)
    assert arrays["X_train"].dtype == np.float32 and arrays["y_train"].dtype == np.int32
    assert arrays["X_train"].flags.c_contiguous
    # stratified: both classes in the same proportion in train and test
    assert abs(arrays["y_train"].mean() - arrays["y_test"].mean()) < 0.02
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no temporary leftovers
    meta = definition(first)
    assert (meta["n_train"], meta["n_test"], meta["n_features_actual"]) == (300, 100, 6)
    assert content_matches(first)


def test_a_changed_cache_file_is_detected(tmp_path):
    directory = materialise(DatasetSpec("regression", n_samples=300, n_features=3), tmp_path)
    table = pq.read_table(directory / "test.parquet")
    column = table.column("f0").to_numpy().copy()
    column[0] += 1.0
    pq.write_table(table.set_column(0, "f0", pa.array(column)), directory / "test.parquet")
    assert not content_matches(directory)


def test_both_copies_hold_the_same_bytes_and_a_changed_numpy_file_is_detected(tmp_path):
    directory = materialise(DatasetSpec("classification", n_samples=500, n_features=5, seed=2), tmp_path)
    assert host_reader(directory) == "numpy"
    from_numpy = load_split(directory)
    from_parquet = pq.read_table(directory / "train.parquet")
    np.testing.assert_array_equal(from_numpy["X_train"][:, 3], from_parquet.column("f3").to_numpy())
    np.testing.assert_array_equal(from_numpy["y_train"], from_parquet.column("target").to_numpy())
    # read into memory of its own, not mapped from the file (which a fit would then read page by page)
    for array in from_numpy.values():
        owner = array if array.base is None else array.base  # np.load reshapes the buffer it read
        assert type(array) is np.ndarray and type(owner) is np.ndarray and owner.flags.owndata
        assert array.flags.c_contiguous
    changed = from_numpy["X_test"].copy()
    changed[0, 0] += 1.0
    np.save(directory / "X_test.npy", changed)
    assert not content_matches(directory)


def test_an_entry_cached_with_parquet_alone_gets_its_numpy_files_once(tmp_path):
    """A cache made by an earlier release is read with pyarrow until the next suite's
    `materialise` adds the NumPy files (from the Parquet ones, checked against the hash)."""
    spec = DatasetSpec("regression", n_samples=400, n_features=3)
    directory = materialise(spec, tmp_path)
    expected = load_split(directory)
    for npy in directory.glob("*.npy"):
        npy.unlink()
    assert host_reader(directory) == "pyarrow"
    assert all(np.array_equal(load_split(directory)[k], v) for k, v in expected.items())
    assert materialise(spec, tmp_path) == directory and host_reader(directory) == "numpy"
    assert all(load_split(directory)[k].tobytes() == v.tobytes() for k, v in expected.items())
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith(".")) == []  # no temporary files
    assert content_matches(directory)


def test_a_numpy_file_holding_objects_is_refused_not_unpickled(tmp_path):
    directory = materialise(DatasetSpec("regression", n_samples=200, n_features=2), tmp_path)
    np.save(directory / "y_test.npy", np.array([{"a": 1}] * 50, dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="allow_pickle"):
        load_split(directory)


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
    assert definition(tmp_path / "a" / spec.fingerprint())["content_sha256"] == \
        definition(tmp_path / "b" / spec.fingerprint())["content_sha256"]


@pytest.mark.parametrize("generator", synthetic.GENERATORS)
def test_chunked_generation_stays_within_2_5_times_the_final_array(generator):
    n, d = 400_000, 20
    tracemalloc.start()
    X, y = synthetic.generate(generator, n, d, seed=0, dtype="float32", options={}, chunk_rows=50_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert X.shape == (n, d) and X.dtype == np.float32
    assert peak <= 2.5 * X.nbytes, f"peak {peak / 2**20:.0f} MiB for a {X.nbytes / 2**20:.0f} MiB array"
    # the chunks come from one model: the first and last chunk look alike
    assert abs(X[:50_000].std() - X[-50_000:].std()) < 0.05 * X.std()


def test_generated_data_is_learnable():
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.metrics import adjusted_rand_score

    X, y = synthetic.generate("classification", 3000, 10, 0, "float32", {})
    assert set(np.unique(y)) == {0, 1} and LogisticRegression().fit(X, y).score(X, y) > 0.7
    X, y = synthetic.generate("regression", 3000, 10, 0, "float32", {"noise": 1.0})
    assert LinearRegression().fit(X, y).score(X, y) > 0.99
    X, y = synthetic.generate("blobs", 3000, 10, 0, "float32", {"centers": 5})
    labels = KMeans(5, n_init=3, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, labels) > 0.9


@pytest.mark.parametrize("n,text", [(999, "999"), (1000, "1k"), (20000, "20k"), (2500000, "2.5M"),
                                    (1953125, "1.95M"), (5000000, "5M")])
def test_human_count(n, text):
    assert human_count(n) == text


def test_rows_filled_block_by_block_equal_the_columns_stacked():
    """The cache reader fills a row-major matrix a block of rows at a time: the same values
    as stacking the columns, for a row count that is not a multiple of the block and a
    single row."""
    from mlcompare.data.cache import _rows_from_columns

    rng = np.random.default_rng(0)
    for rows, features in ((10_001, 7), (1, 3), (70_000, 64)):
        columns = [rng.standard_normal(rows).astype(np.float32) for _ in range(features)]
        X = np.empty((rows, features), dtype=np.float32)
        _rows_from_columns(X, columns)
        assert np.array_equal(X, np.column_stack(columns))
