"""Datasets: what a suite trains on, prepared once, split once, cached as Parquet and NumPy.

Three kinds: synthetic (`generator:` blobs, classification, regression), a card
(`dataset:` a real dataset described in `datasets/`), and a user's own file (`file:`).
Each is materialised once per suite into `$MLCOMPARE_DATA_DIR/<fingerprint>/` as
train.parquet and test.parquet (columns f0..fN and target) and as the four arrays in
NumPy's own format (X_train.npy, y_train.npy, X_test.npy, y_test.npy: row-major, the bytes
the estimators receive), so every case, each in its own process, reads identical bytes:
on the CPU the NumPy files (a read with nothing to decode: 25 ms for the 500k×64 float32
regression dataset in a fresh process here, 0.16–0.48 s from its Parquet files), on the GPU
the Parquet files through cuDF straight into device memory. Both copies hash to the one
`content_sha256`. Nothing is ever pickled: the NumPy files are read with
`allow_pickle=False`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from mlcompare.data import synthetic
from mlcompare.data.paths import user_cache_dir
from mlcompare.data.tables import TableSource
from mlcompare.data.whole_file import written_whole
from mlcompare.errors import InputError

GENERATORS = synthetic.GENERATORS

#: Which pairing tasks a generator's data can serve.
GENERATOR_TASKS = {
    # Unsupervised tasks use the blobs: their labels score clusterings, and their cluster
    # structure is what decompositions and embeddings should keep.
    "blobs": ("clustering", "clustering_fit_predict", "decomposition", "embedding"),
    "classification": ("classification",),
    "regression": ("regression",),
}

#: Bump when the bytes a definition produces change.
_FORMAT_VERSION = 5
_SPLITS = ("train", "test")
_ARRAYS = ("X_train", "y_train", "X_test", "y_test")
_WRITE_ROWS = 262_144  # rows per Parquet row group (bounded memory while writing)


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset at one size: synthetic, a card, or a user's file."""

    name: str  # the generator, card or file name
    n_samples: int | None  # None: every row of a card or file
    n_features: int | None  # None: as the card or file has
    seed: int = 0
    test_size: float = 0.25
    dtype: str = "float32"
    options: dict[str, Any] = field(default_factory=dict)  # generator-specific knobs
    # the feature matrices' layout in memory, "C" (row-major) or "F" (column-major): applied
    # when a case loads the data, so both layouts share one cache entry
    order: str = "C"
    kind: str = "synthetic"  # synthetic | card | file
    table: TableSource | None = field(default=None, compare=False)

    @property
    def generator(self) -> str:
        return self.name

    @property
    def _table(self) -> TableSource:
        """The card or the file: every kind but synthetic has one."""
        return cast(TableSource, self.table)

    @property
    def tasks(self) -> tuple[str, ...]:
        return GENERATOR_TASKS[self.name] if self.kind == "synthetic" else self._table.tasks

    @property
    def label(self) -> str:
        layout = " F-order" if self.order != "C" else ""
        if self.kind == "synthetic":  # a synthetic dataset always has its size
            return f"{self.name} {human_count(cast(int, self.n_samples))}×{self.n_features}{layout}"
        table = self._table
        rows = human_count(self.n_samples or cast(int, table.rows)) if (self.n_samples or table.rows) else ""
        shape = f"{rows}×{table.features}" if rows and table.features else rows
        return f"{self.name} {shape}".strip() + layout

    def fingerprint(self) -> str:
        """What identifies the dataset as its cases see it: the definition of its bytes and,
        when not the default C, the layout (so a resumed suite never mixes layouts)."""
        return self._digest({"order": self.order} if self.order != "C" else {})

    def cache_key(self) -> str:
        """The key of its cached bytes, which do not depend on the layout."""
        return self._digest({})

    def _digest(self, extra: dict[str, Any]) -> str:
        definition = {k: v for k, v in asdict(self).items() if k not in ("table", "order")} | extra
        definition |= {"format": _FORMAT_VERSION, "chunk_rows": synthetic.CHUNK_ROWS}
        if self.table is not None:
            definition["table"] = {"raw": self.table.raw, "url": self.table.url, "sha256": self.table.sha256,
                                   "sklearn": self.table.sklearn}
            if self.table.path:
                stat = os.stat(self.table.path)
                definition["file"] = [self.table.path, stat.st_size, stat.st_mtime_ns]
        blob = json.dumps(definition, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def human_count(n: int) -> str:
    """10000 -> '10k', 2500000 -> '2.5M', 10**12 -> '1T' (for run names): SI prefixes up to P."""
    for div, suffix in ((10**15, "P"), (10**12, "T"), (10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= div:
            value = n / div
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.3g}{suffix}"
    return str(n)


def data_dir() -> Path:
    """Where datasets are cached: $MLCOMPARE_DATA_DIR, else the user's cache directory."""
    env = os.environ.get("MLCOMPARE_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return user_cache_dir() / "datasets"


def produce(spec: DatasetSpec, root: Path) -> tuple[np.ndarray, np.ndarray]:
    """The full (X, y) of a dataset, X in the requested dtype."""
    if spec.kind == "synthetic":
        # a synthetic dataset always has its size
        return synthetic.generate(spec.name, cast(int, spec.n_samples), cast(int, spec.n_features), spec.seed,
                                  spec.dtype, spec.options)
    from mlcompare.data import download, tables

    table = cast(TableSource, spec.table)  # every kind but synthetic has one
    path = None if table.sklearn else Path(table.path) if table.path else download.fetch(table, root)
    frame = tables.read_frame(table, path, nrows=spec.n_samples)
    if spec.n_samples and len(frame) < spec.n_samples:
        raise InputError(table.source, "n_samples", f"{spec.n_samples} rows requested, {table.name} has {len(frame)}")
    return tables.to_arrays(frame, table, table.tasks[0], spec.dtype)


def materialise(spec: DatasetSpec, root: Path | None = None) -> Path:
    """Produce, split and cache the dataset unless already cached; return its directory."""
    root = root or data_dir()
    target = root / spec.cache_key()
    if (target / "definition.json").exists():  # written last: the cache entry is whole
        if not has_numpy_copies(target):  # cached by a release that wrote Parquet alone
            add_numpy_copies(target)
        return target
    root.mkdir(parents=True, exist_ok=True)
    X, y = produce(spec, root)
    train, test = split_indices(y, spec)
    # Written to a temporary folder, then renamed: a killed suite leaves no half cache.
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
    try:
        digests = {}
        for name, rows in zip(_SPLITS, (train, test)):
            digests[f"X_{name}"], digests[f"y_{name}"] = _write_parquet(tmp / f"{name}.parquet", X, y, rows)
            _write_numpy(tmp, name, X, y, rows)
        card = {k: v for k, v in asdict(spec).items() if k not in ("table", "order")} | {
            "label": spec.label, "content_sha256": _combine(digests), "n_train": len(train),
            "n_test": len(test), "n_features_actual": X.shape[1], "source": describe_source(spec)}
        (tmp / "definition.json").write_text(json.dumps(card, indent=2, default=str))
        try:
            tmp.rename(target)
        except OSError:  # another suite cached it first
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def split_indices(y: np.ndarray, spec: DatasetSpec) -> tuple[np.ndarray, np.ndarray]:
    """Train/test row indices from the seed; stratified by label where every class can be."""
    from sklearn.model_selection import train_test_split

    rows = np.arange(len(y))
    stratify = None
    if y.dtype.kind in "iu":
        counts = np.bincount(y)
        if counts[counts > 0].min() >= 2:
            stratify = y
    train, test = train_test_split(rows, test_size=spec.test_size, random_state=spec.seed, stratify=stratify)
    return np.sort(train), np.sort(test)


def _write_parquet(path: Path, X: np.ndarray, y: np.ndarray, rows: np.ndarray) -> tuple[Any, Any]:
    """Write rows of (X, y) in row groups; return the running sha256 of X's and y's bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [f"f{i}" for i in range(X.shape[1])] + ["target"]
    x_digest, y_digest = hashlib.sha256(), hashlib.sha256()
    writer = None
    try:
        for start in range(0, len(rows), _WRITE_ROWS):
            part = rows[start:start + _WRITE_ROWS]
            Xp, yp = np.ascontiguousarray(X[part]), np.ascontiguousarray(y[part])
            x_digest.update(Xp.data)
            y_digest.update(yp.data)
            table = pa.Table.from_arrays([pa.array(Xp[:, i]) for i in range(Xp.shape[1])] + [pa.array(yp)],
                                         names=names)
            # Dictionary encoding only bloats continuous floats; plain pages + snappy.
            writer = writer or pq.ParquetWriter(path, table.schema, use_dictionary=False, compression="snappy")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    return x_digest, y_digest


def _write_numpy(folder: Path, split: str, X: np.ndarray, y: np.ndarray, rows: np.ndarray) -> None:
    """Write one split's rows of X and y as NumPy files, a row group at a time (bounded memory)."""
    for key, source in ((f"X_{split}", X), (f"y_{split}", y)):
        out = np.lib.format.open_memmap(folder / f"{key}.npy", mode="w+", dtype=source.dtype,
                                        shape=(len(rows), *source.shape[1:]))
        for start in range(0, len(rows), _WRITE_ROWS):
            out[start:start + _WRITE_ROWS] = source[rows[start:start + _WRITE_ROWS]]
        out.flush()
        del out


def has_numpy_copies(directory: Path) -> bool:
    """Whether the entry has all four NumPy files (each is renamed into place whole)."""
    return all((directory / f"{key}.npy").exists() for key in _ARRAYS)


def add_numpy_copies(directory: Path) -> None:
    """Write the NumPy files of an entry cached with Parquet alone, from its Parquet files,
    once their bytes match the entry's hash (a damaged entry is left for `datasets verify`
    to report, and read from Parquet as before)."""
    arrays = _load_parquet(directory)
    if _digest_arrays(arrays) != content_hash(directory):
        return
    for key, array in arrays.items():
        # whole or absent, also with two suites at once
        with written_whole(directory / f"{key}.npy", prefix=f".{key}-", suffix=".npy") as tmp, open(tmp, "wb") as out:
            np.lib.format.write_array(out, np.ascontiguousarray(array), allow_pickle=False)


def _digest_arrays(arrays: dict[str, np.ndarray]) -> str:
    return _combine({k: hashlib.sha256(np.ascontiguousarray(arrays[k]).data) for k in _ARRAYS})


def _combine(digests: dict[str, Any]) -> str:
    """One content hash from the four arrays' own (row-major bytes, in split order)."""
    return hashlib.sha256("".join(digests[k].hexdigest() for k in _ARRAYS).encode()).hexdigest()


def content_matches(directory: Path) -> bool:
    """Re-read a cached dataset, every copy of it (Parquet, and NumPy where written), and check
    each against the hash recorded when it was written."""
    expected = content_hash(directory)
    copies = [_load_parquet] + ([_load_numpy] if has_numpy_copies(directory) else [])
    return all(_digest_arrays(read(directory)) == expected for read in copies)


def describe_source(spec: DatasetSpec) -> str:
    if spec.kind == "synthetic":
        return f"synthetic:{spec.name}"
    table = cast(TableSource, spec.table)  # every kind but synthetic has one
    return table.url or table.path or f"sklearn.datasets.{table.sklearn}"


def definition(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "definition.json").read_text())


def content_hash(directory: Path) -> str:
    """sha256 of the cached arrays' bytes (train, then test), recorded when cached."""
    return definition(directory)["content_sha256"]


def host_reader(directory: Path) -> str:
    """What `load_split` reads the entry with: "numpy" (its NumPy files) or "pyarrow"."""
    return "numpy" if has_numpy_copies(directory) else "pyarrow"


def load_split(directory: Path) -> dict[str, np.ndarray]:
    """The four arrays of a materialised dataset, from its NumPy files where it has them, else
    from its Parquet files (never unpickled either way)."""
    return _load_numpy(directory) if has_numpy_copies(directory) else _load_parquet(directory)


def _load_numpy(directory: Path) -> dict[str, np.ndarray]:
    # read into memory, not mapped: a mapped file would be read page by page inside the fit
    return {key: np.load(directory / f"{key}.npy", allow_pickle=False) for key in _ARRAYS}


def _load_parquet(directory: Path) -> dict[str, np.ndarray]:
    import pyarrow.parquet as pq

    out = {}
    for name in _SPLITS:
        # Row group by row group into the final arrays: peak memory is the result plus one
        # group, not the result plus the whole Arrow table.
        parquet = pq.ParquetFile(directory / f"{name}.parquet")
        schema = parquet.schema_arrow
        features = [i for i, field_ in enumerate(schema) if field_.name != "target"]
        rows = parquet.metadata.num_rows
        X = np.empty((rows, len(features)), dtype=schema.field(features[0]).type.to_pandas_dtype())
        y = np.empty(rows, dtype=schema.field("target").type.to_pandas_dtype())
        start = 0
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group)
            stop = start + table.num_rows
            _rows_from_columns(X[start:stop], [table.column(i).to_numpy() for i in features])
            y[start:stop] = table.column("target").to_numpy()
            start = stop
        out[f"X_{name}"], out[f"y_{name}"] = X, y
    return out


def warm_reader() -> None:
    """Do the Parquet reader's one-time set-up (pyarrow's memory pool and thread pool, the
    Snappy codec) on a tiny table in memory, so that a timed read of a dataset holds that
    read alone, as the imports before it are not in it either. Measured here in processes
    forked from one that had imported pyarrow: their first read of a 375k×64 dataset took
    0.43–1.25 s, and 0.22–0.31 s when the parent had done this first."""
    global _reader_warm
    if _reader_warm:  # once a process (a forked case inherits its warm worker's)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"x": np.arange(1024, dtype=np.float64), "target": np.zeros(1024)})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, use_dictionary=False, compression="snappy")
    parquet = pq.ParquetFile(pa.BufferReader(sink.getvalue()))
    for group in range(parquet.num_row_groups):
        parquet.read_row_group(group).column(0).to_numpy()
    _reader_warm = True


_reader_warm = False


def _rows_from_columns(X: np.ndarray, columns: list[np.ndarray]) -> None:
    """Fill the row-major X from its columns, a block of rows at a time.

    Writing a whole column into a row-major matrix touches one element per row, a row's
    length apart: every write misses the cache. A block of rows that fits in the cache
    (about 1 MiB) takes every column's slice in turn and is written once: filling a
    375k×64 float32 matrix from its columns took 0.9 s the first way and 0.09 s this way
    here (the Parquet decoding is apart), the same bytes either way.
    """
    rows = max(256, (1 << 20) // max(1, X.shape[1] * X.itemsize))
    for start in range(0, X.shape[0], rows):
        block = X[start:start + rows]
        for j, column in enumerate(columns):
            block[:, j] = column[start:start + rows]


def cached_entries(root: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    root = root or data_dir()
    if not root.exists():
        return []
    return [(d, definition(d)) for d in sorted(root.iterdir()) if (d / "definition.json").exists()]
