"""A user's own table for `mlcompare advise`: read once, checked as a `{file: ...}` dataset is,
its task inferred from the target, and subsampled (stratified for classification) into the
files each step of the ladder trains on.

The checks are `mlcompare.data.tables`' own (`to_arrays`): the rows a step may use are the
rows it keeps, found by carrying a row number through it, so that a subsample never holds a
row the `nan:` rule would drop and a step's `n_samples` are the rows it trains and tests on.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mlcompare.data import tables
from mlcompare.data.tables import TableSource
from mlcompare.data.whole_file import written_whole
from mlcompare.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

#: A whole-number target with at most this many values is taken for classes when no task is given.
MAX_INTEGER_CLASSES = 20
#: More classes than this (or than half the rows) is an identifier, not a target.
MAX_CLASSES = 1000
#: Fewer usable rows than this cannot be split and measured at two sizes.
MIN_TABLE_ROWS = 100
#: The folder of the dataset cache that holds the ladder's subsamples.
SUBSAMPLE_FOLDER = "advise-subsamples"
_ROW_COLUMN = "__mlcompare_row__"


@dataclass
class OwnTable:
    """The table as the ladder uses it: the rows `to_arrays` keeps, the target as it codes it."""

    table: TableSource  # with its task set
    frame: pd.DataFrame  # the raw rows kept, in the file's order (index 0..rows-1)
    y: np.ndarray  # class codes (classification) or values, as `to_arrays` gives them
    task: str
    inferred: str  # why the task was inferred ("" when it was given)
    features: int
    raw_rows: int  # rows of the file, before the `nan:` rule

    @property
    def rows(self) -> int:
        return len(self.frame)

    @property
    def classes(self) -> int:
        return int(len(np.unique(self.y))) if self.task == "classification" else 0


def read_own_table(table: TableSource, task: str | None) -> OwnTable:
    """Read and check the table; infer the task from its target when `task` is None.

    Every mistake is an `InputError` from `table.source` naming the entry's field (`target`,
    `task`, `categorical`, `drop`, `nan`), as a `{file: ...}` dataset's would be.
    """
    frame = _read(table)
    if table.target not in frame.columns:
        tables.to_arrays(frame.head(0), table, "regression", "float64")  # its one-line error: no such column
    found, why = (task, "") if task else infer_task(frame[str(table.target)], table)
    check_task(frame[str(table.target)], found, table)
    table = replace(table, tasks=(found,))
    numbered = frame.copy()
    column = _ROW_COLUMN
    while column in numbered.columns:
        column += "_"
    numbered[column] = np.arange(len(frame), dtype=np.float64)
    X, y = tables.to_arrays(numbered, table, found, "float64")
    kept = X[:, -1].astype(np.int64)
    if len(kept) < MIN_TABLE_ROWS:
        raise InputError(table.source, "nan", f"{len(kept)} of its {len(frame)} rows are usable (the others "
                         f"have missing or infinite values): at least {MIN_TABLE_ROWS} are needed")
    if found == "classification" and len(np.unique(y)) < 2:
        raise InputError(table.source, "target", f"column {table.target!r} holds one class in the rows kept: "
                         "a classification target needs two or more")
    return OwnTable(table, frame.iloc[kept].reset_index(drop=True), y, found, why, X.shape[1] - 1, len(frame))


def _read(table: TableSource) -> pd.DataFrame:
    try:
        return tables.read_frame(table, Path(str(table.path)))
    except (OSError, ValueError, ImportError) as exc:  # a damaged or mislabelled file
        raise InputError(table.source, None, f"cannot be read as {table.fmt}: {type(exc).__name__}: {exc}") from None


def infer_task(target: pd.Series, table: TableSource) -> tuple[str, str]:
    """(classification or regression, why in words) from the target column's values."""
    import pandas as pd

    values = target.dropna()
    name, distinct = table.target, int(values.nunique())
    if distinct < 2:
        _no_task(table, f"column {name!r} holds {'no value' if values.empty else 'one value'} in every row: "
                 "a constant target fits no task")
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if numeric:
        whole = bool(np.all(np.mod(values.to_numpy(dtype=np.float64), 1) == 0))
        if whole and distinct <= MAX_INTEGER_CLASSES:
            return "classification", f"{name} holds {distinct} whole-number values, taken as classes"
        return "regression", f"{name} is numeric with {distinct} distinct values"
    if distinct > MAX_CLASSES or distinct > len(values) / 2:
        _no_task(table, f"column {name!r} holds text with {distinct} distinct values in {len(values)} rows: too "
                 "many to be classes, and text is no regression target (an identifier? --drop it)")
    return "classification", f"{name} holds {distinct} classes ({_kind(values)})"


def check_task(target: pd.Series, task: str, table: TableSource) -> None:
    """A target the given task cannot learn is bad input, said in one line."""
    import pandas as pd

    values = target.dropna()
    if task == "regression":
        numbers = pd.to_numeric(values, errors="coerce")
        bad = values[numbers.isna()]
        if len(bad) > len(values) / 2:  # a few stray cells are the `nan:` rule's to drop or refuse
            _no_task(table, f"column {table.target!r} holds {_kind(values)} (e.g. {bad.iloc[0]!r}), not numbers: "
                     "it fits no regression (--task classification?)", "task")
        if numbers.nunique() < 2:
            _no_task(table, f"column {table.target!r} is constant: a constant target fits no task")
    elif task == "classification":
        distinct = int(values.nunique())
        if distinct < 2:
            _no_task(table, f"column {table.target!r} holds one class: a classification target needs two or more")
        if distinct > MAX_CLASSES or distinct > len(values) / 2:
            _no_task(table, f"column {table.target!r} holds {distinct} distinct values in {len(values)} rows: too "
                     "many to be classes (--task regression?)", "task")


def _no_task(table: TableSource, message: str, field: str = "target") -> None:
    raise InputError(table.source, field, message)


def _kind(values: pd.Series) -> str:
    import pandas as pd

    return "booleans" if pd.api.types.is_bool_dtype(values) else "text"


def subsample_rows(y: np.ndarray, n: int, stratified: bool, seed: int = 0) -> np.ndarray:
    """`n` row numbers of the table, sorted: a random sample, stratified by class (each class its
    share, by largest remainder, and at least two rows where it has them), so every step sees
    the classes in the table's proportions. The same seed draws nested samples."""
    total = len(y)
    if n >= total:
        return np.arange(total)
    rng = np.random.default_rng(seed)
    if not stratified:
        return np.sort(rng.permutation(total)[:n])
    classes, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes)
    exact = n * counts / total
    quota = np.floor(exact).astype(np.int64)
    for i in np.argsort(-(exact - quota), kind="stable")[: n - int(quota.sum())]:
        quota[i] += 1
    quota = np.maximum(quota, np.minimum(counts, 2))
    while quota.sum() > n:  # the rare classes' two rows come out of the largest
        quota[int(np.argmax(quota))] -= 1
    picked = [np.flatnonzero(codes == c)[rng.permutation(counts[c])[: quota[c]]] for c in range(len(classes))]
    return np.sort(np.concatenate(picked))


def subsample_file(own: OwnTable, n: int, seed: int = 0, root: Path | None = None) -> Path:
    """The Parquet file of `n` rows of the table for one step (written once, then reused), in
    the dataset cache; named after the table, so every step's dataset has the table's name."""
    from mlcompare.data.cache import data_dir

    folder = (root or data_dir()) / SUBSAMPLE_FOLDER / table_key(own.table, seed) / str(n)
    path = folder / f"{Path(str(own.table.path)).stem}.parquet"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    rows = subsample_rows(own.y, n, own.task == "classification", seed)
    part = own.frame.iloc[rows]
    with written_whole(path, prefix=".subsample-", suffix=".parquet") as tmp:
        part.to_parquet(tmp, index=False)
    return path


def table_key(table: TableSource, seed: int) -> str:
    """What a table's subsamples depend on: the file (path, size, time) and how it is read."""
    stat = os.stat(str(table.path))
    definition = {"file": [str(table.path), stat.st_size, stat.st_mtime_ns], "target": table.target,
                  "tasks": table.tasks, "categorical": table.categorical, "drop": table.drop, "nan": table.nan,
                  "seed": seed, "format": 1}
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()[:16]
