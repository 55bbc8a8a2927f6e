"""Real tabular data: dataset cards, local files, and turning a table into (X, y).

A card (one YAML file in `datasets/`) says where a dataset comes from (a URL with its
sha256, or a loader that ships inside scikit-learn), its format, task, target column,
preprocessing and licence. A user's own CSV or Parquet file is described the same way,
inline in the experiment. Both are validated before anything runs.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlcompare import schema
from mlcompare.errors import InputError

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


_CARD_KEYS = {"name", "task", "tasks", "description", "licence", "rows", "features", "source", "format",
              "target", "target_above", "categorical", "drop", "nan", "size_bytes"}
_SOURCE_KEYS = {"url", "sha256", "filename", "sklearn", "retries"}
_FORMAT_KEYS = {"type", "header", "columns", "member"}
FILE_KEYS = {"file", "task", "target", "target_above", "categorical", "drop", "nan", "format", "n_samples",
             "seed", "test_size", "dtype"}


def cards_dir() -> Path:
    """`datasets/` beside the package (a checkout), or $MLCOMPARE_CARDS_DIR."""
    env = os.environ.get("MLCOMPARE_CARDS_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "datasets"


def load_cards(directory: Path | None = None) -> dict[str, TableSource]:
    directory = directory or cards_dir()
    cards: dict[str, TableSource] = {}
    for path in sorted(directory.glob("*.yaml")):
        card = parse_card(schema.load_yaml_mapping(path), str(path))
        if card.name in cards:
            raise InputError(str(path), "name", f"dataset {card.name!r} is also defined in {cards[card.name].source}")
        cards[card.name] = card
    return cards


def parse_card(data: dict, source: str) -> TableSource:
    schema.check_keys(source, "", data, _CARD_KEYS, {"name", "task", "source", "target"})
    name = schema.expect_str(source, "name", data["name"])
    src = schema.expect_mapping(source, "source", data["source"])
    schema.check_keys(source, "source", src, _SOURCE_KEYS)
    if ("url" in src) == ("sklearn" in src):
        raise InputError(source, "source", "needs exactly one of url (a download) or sklearn (a bundled loader)")
    if "sklearn" in src:
        schema.expect_choice(source, "source.sklearn", src["sklearn"], list(SKLEARN_LOADERS))
    else:
        url = schema.expect_str(source, "source.url", src["url"])
        if not url.startswith(("http://", "https://")):
            raise InputError(source, "source.url", f"expected an http(s) URL, got {url!r}")
        if src.get("sha256") is not None:
            sha = schema.expect_str(source, "source.sha256", src["sha256"]).lower()
            if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
                raise InputError(source, "source.sha256", "expected 64 hexadecimal digits (or null: unpublished)")
    fmt = schema.expect_mapping(source, "format", data.get("format") or {})
    schema.check_keys(source, "format", fmt, _FORMAT_KEYS)
    table = _table_fields(data, source, fmt)
    rows = schema.expect_int(source, "rows", data["rows"]) if data.get("rows") is not None else None
    features = schema.expect_int(source, "features", data["features"]) if data.get("features") is not None else None
    return TableSource(
        name=name, source=source, url=src.get("url"), sha256=(src.get("sha256") or None),
        filename=src.get("filename") or (src["url"].rstrip("/").rsplit("/", 1)[-1] if "url" in src else None),
        sklearn=src.get("sklearn"), retries=schema.expect_int(source, "source.retries", src.get("retries", 2), 0),
        rows=rows, features=features, licence=str(data.get("licence", "")),
        description=str(data.get("description", "")), raw=data, **table)


def parse_file_entry(entry: dict, source: str, field_: str) -> TableSource:
    """A user's own CSV / Parquet file named in an experiment's `datasets:` list."""
    schema.check_keys(source, field_, entry, FILE_KEYS, {"file", "task", "target"})
    path = Path(schema.expect_str(source, f"{field_}.file", entry["file"])).expanduser()
    if not path.is_absolute():
        path = Path(source).resolve().parent / path
    if not path.is_file():
        raise InputError(source, f"{field_}.file", f"no such file: {path}")
    fmt = {"type": entry.get("format") or ("parquet" if path.suffix == ".parquet" else "csv")}
    table = _table_fields(entry, source, fmt, prefix=f"{field_}.")
    return TableSource(name=path.stem, source=source, path=str(path), raw=entry, **table)


def _table_fields(data: dict, source: str, fmt: dict, prefix: str = "") -> dict[str, Any]:
    tasks = [data["task"]] + [t for t in data.get("tasks", []) if t != data["task"]]
    for i, task in enumerate(tasks):
        schema.expect_choice(source, f"{prefix}task" if i == 0 else f"{prefix}tasks", task, list(TASKS))
    fmt_type = schema.expect_choice(source, f"{prefix}format.type" if not prefix else f"{prefix}format",
                                    fmt.get("type", "csv"), list(FORMATS))
    target = data["target"]
    if isinstance(target, bool) or not isinstance(target, (str, int)):
        raise InputError(source, f"{prefix}target", f"expected a column name or index, got {target!r}")
    columns = fmt.get("columns") or []
    if columns:
        schema.expect_str_list(source, f"{prefix}format.columns", columns)
    categorical = data.get("categorical") or []
    drop = data.get("drop") or []
    for key, value in (("categorical", categorical), ("drop", drop)):
        if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
            raise InputError(source, f"{prefix}{key}", "expected a list of column names")
    return {"tasks": tuple(tasks), "target": str(target), "fmt": fmt_type,
            "header": bool(fmt.get("header", fmt_type != "libsvm")), "columns": tuple(columns),
            "member": fmt.get("member"), "categorical": tuple(str(c) for c in categorical),
            "drop": tuple(str(c) for c in drop),
            "target_above": (schema.expect_number(source, f"{prefix}target_above", data["target_above"],
                                                  low=float("-inf")) if "target_above" in data else None),
            "nan": schema.expect_choice(source, f"{prefix}nan", data.get("nan", "error"), ["error", "drop"])}


def read_frame(table: TableSource, path: Path | None, nrows: int | None = None) -> pd.DataFrame:
    """The raw table as a DataFrame (first `nrows` rows where the format allows)."""
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
    if table.fmt == "parquet":
        frame = pd.read_parquet(path)
        return frame.head(nrows) if nrows else frame
    with _open_member(path, table.member) as handle:
        frame = pd.read_csv(handle, header=0 if table.header else None, nrows=nrows,
                            names=list(table.columns) or None,
                            compression="infer" if table.member is None else None)
    frame.columns = [str(c) for c in frame.columns]
    return frame


class _open_member:
    """A file, or one member of a zip / tar archive, opened for reading."""

    def __init__(self, path: Path, member: str | None) -> None:
        self.path, self.member, self._closers = path, member, []

    def __enter__(self):
        if self.member is None:
            return self.path
        if zipfile.is_zipfile(self.path):
            archive = zipfile.ZipFile(self.path)
            handle = archive.open(self.member)
        else:
            archive = tarfile.open(self.path)
            handle = archive.extractfile(self.member)
        self._closers = [handle, archive]
        return handle

    def __exit__(self, *exc: object) -> None:
        for closer in self._closers:
            closer.close()


def to_arrays(frame: pd.DataFrame, table: TableSource, task: str, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Features as a float array and the target (class codes 0..k-1 for classification)."""
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
        frame[column] = frame[column].astype("category").cat.codes.replace(-1, np.nan)
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
