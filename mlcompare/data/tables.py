"""Real tabular data: where a table's bytes are (`TableSource`), and turning a table into (X, y).

A `TableSource` comes from a dataset card (one YAML file in `datasets/`) or from a user's
own CSV or Parquet file named in an experiment; both are read and validated by
`mlcompare.config.cards` before anything runs.
"""

from __future__ import annotations

import stat
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, cast

import numpy as np

from mlcompare.data import paths
from mlcompare.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

TASKS = ("classification", "regression", "clustering")
FORMATS = ("csv", "parquet", "libsvm")
#: Datasets that ship inside scikit-learn: no download, no network.
SKLEARN_LOADERS = ("load_digits", "load_breast_cancer", "load_diabetes", "load_wine", "load_iris")


@dataclass(frozen=True)
class TableSource:
    """Where a table's bytes are and how to turn them into features and a target."""

    name: str
    source: str  # the card or experiment file that described it (for errors)
    tasks: tuple[str, ...]
    target: str | None
    url: str | None = None
    sha256: str | None = None
    filename: str | None = None
    path: str | None = None  # a local file
    sklearn: str | None = None
    fmt: str = "csv"
    header: bool = True
    columns: tuple[str, ...] = ()
    member: str | None = None  # a file inside a .zip / .tar.* archive
    categorical: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    nan: str = "error"
    target_above: float | None = None  # binarise a numeric target: 1 where it exceeds this
    rows: int | None = None
    features: int | None = None
    licence: str = ""
    description: str = ""
    retries: int = 2
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, hash=False)


def read_frame(table: TableSource, path: Path | None, nrows: int | None = None) -> pd.DataFrame:
    """The raw table as a DataFrame (first `nrows` rows where the format allows)."""
    import pandas as pd

    if table.sklearn:
        from sklearn import datasets as skd

        bunch = getattr(skd, table.sklearn)(as_frame=True)
        return bunch.frame
    if table.fmt == "libsvm":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path))
        frame = pd.DataFrame(X[:nrows].toarray() if nrows else X.toarray())
        frame.columns = [str(c) for c in frame.columns]
        frame["target"] = y[:nrows] if nrows else y
        return frame
    path = cast(Path, path)  # None only for a scikit-learn loader
    if table.fmt == "parquet":
        frame = pd.read_parquet(path)
        return frame.head(nrows) if nrows else frame
    with _open_member(path, table.member, table) as handle:
        frame = pd.read_csv(handle, header=0 if table.header else None, nrows=nrows,
                            names=list(table.columns) or None,
                            compression="infer" if table.member is None else None)
    frame.columns = [str(c) for c in frame.columns]
    return frame


class _open_member:
    """A file, or one member of a zip / tar archive, opened for reading.

    The archive is never extracted: the one member is read from it. Only a regular file is
    read; a link (which could name a file outside the archive), a folder or a device is
    refused, and so is a name that is not a relative path inside the archive.
    """

    def __init__(self, path: Path, member: str | None, table: TableSource | None = None) -> None:
        self.path, self.member, self.table = path, member, table
        self._closers: list[Any] = []

    def __enter__(self):
        if self.member is None:
            return self.path
        self._refuse(paths.member_problem(self.member))
        if zipfile.is_zipfile(self.path):
            archive = zipfile.ZipFile(self.path)
            self._closers = [archive]
            info = self._find(archive.getinfo, archive.namelist)
            self._refuse(None if not stat.S_ISLNK(info.external_attr >> 16) and not info.is_dir() else
                         f"{self.member!r} in {self.path.name} is a link or a folder, not a file: refused")
            handle = archive.open(info)
        else:
            archive = tarfile.open(self.path)
            self._closers = [archive]
            member = self._find(archive.getmember, archive.getnames)
            self._refuse(None if member.isfile() else
                         f"{self.member!r} in {self.path.name} is a link or a folder, not a file: refused")
            handle = archive.extractfile(member)
        self._closers.insert(0, handle)
        return handle

    def _find(self, get: Callable[[str], Any], names: Callable[[], list[str]]) -> Any:
        try:
            return get(cast(str, self.member))
        except KeyError:
            listed = names()
            shown = ", ".join(listed[:8]) + (" ..." if len(listed) > 8 else "")
            self._fail(f"{self.path.name} has no member {self.member!r} (members: {shown})")

    def _refuse(self, problem: str | None) -> None:
        if problem:
            self._fail(problem)

    def _fail(self, problem: str) -> NoReturn:
        self.__exit__()
        source = self.table.source if self.table is not None else str(self.path)
        raise InputError(source, "format.member", problem)

    def __exit__(self, *exc: object) -> None:
        for closer in self._closers:
            closer.close()
        self._closers = []


def to_arrays(frame: pd.DataFrame, table: TableSource, task: str, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Features as a float array and the target (class codes 0..k-1 for classification)."""
    import pandas as pd

    target = table.target if table.target in frame.columns else None
    if target is None:
        shown = ", ".join(list(frame.columns[:12])) + (" ..." if len(frame.columns) > 12 else "")
        raise InputError(table.source, "target", f"column {table.target!r} is not in {table.name} (columns: {shown})")
    missing = [c for c in (*table.categorical, *table.drop) if c not in frame.columns]
    if missing:
        raise InputError(table.source, "categorical" if missing[0] in table.categorical else "drop",
                         f"column {missing[0]!r} is not in {table.name}")
    frame = frame.drop(columns=list(table.drop))
    for column in table.categorical:  # ordinal codes: the same integers on every implementation
        # pandas-stubs allow only int replacements on the int codes; NaN (the missing value) makes them float
        frame[column] = frame[column].astype("category").cat.codes.replace(-1, np.nan)  # type: ignore[arg-type]
    features = frame.drop(columns=[target])
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise InputError(table.source, "categorical", f"column {non_numeric[0]!r} of {table.name} is not "
                         "numeric: list it under categorical (or drop)")
    X = features.to_numpy(dtype=np.float64)
    y_raw = frame[target]
    bad = ~np.isfinite(X).all(axis=1) | y_raw.isna().to_numpy()
    if task == "regression":
        bad |= ~np.isfinite(pd.to_numeric(y_raw, errors="coerce").to_numpy(dtype=np.float64))
    if bad.any():
        if table.nan == "error":
            raise InputError(table.source, "nan", f"{table.name} has {int(bad.sum())} rows with missing or "
                             "infinite values (set nan: drop to drop them)")
        X, y_raw = X[~bad], y_raw[~bad]
    if table.target_above is not None:
        y = (pd.to_numeric(y_raw).to_numpy() > table.target_above).astype(np.int32)
    elif task == "regression":
        y = y_raw.astype(np.float64).to_numpy().astype(dtype)
    else:
        y = np.unique(y_raw.to_numpy(), return_inverse=True)[1].astype(np.int32)
    return X.astype(dtype), y
