"""Dataset cards (`datasets/*.yaml`) and a user's own data files, validated into `TableSource`s.

A card says where a dataset comes from (a URL with its sha256, or a loader that ships
inside scikit-learn), its format, task, target column, preprocessing and licence. A
user's own CSV or Parquet file is described the same way, inline in an experiment's
`datasets:` list. Both are checked here before anything runs; reading the table is
`mlcompare.data.tables`' job.
"""

from __future__ import annotations

import os
import string
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, cast

from pydantic import Field, ValidationInfo, field_validator

from mlcompare.config import fields
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.data.paths import file_name_problem, member_problem
from mlcompare.data.tables import FORMATS, SKLEARN_LOADERS, TASKS, TableSource
from mlcompare.errors import InputError

DTYPES = ("float32", "float64")
#: Memory layouts of the feature matrices: row-major (C) or column-major (F, Fortran's).
ORDERS = ("C", "F")
#: numpy's legacy seeding (scikit-learn's random_state) takes 32-bit seeds only.
MAX_SEED = 2**32 - 1

Dtype = fields.Choice(*DTYPES)


def _orders(value: Any) -> list[str]:
    values = value if isinstance(value, list) else [value]
    if not values:
        fields.fail("expected C, F or a list of them, got an empty list")
    for i, item in enumerate(values):
        fields.within(f"[{i}]" if isinstance(value, list) else "", lambda v: fields.choice(v, ORDERS), item)
    twice = [v for i, v in enumerate(values) if v in values[:i]]
    if twice:
        fields.fail(f"lists {twice[0]!r} twice")
    return list(values)


#: The layout of the feature matrices every implementation is handed, C or F; a list is a
#: sweep (each layout a case of its own).
Order = fields.checked(Annotated[list[Literal[ORDERS]], fields.SchemaKeywords((("minItems", 1),))]
                       | Literal[ORDERS], _orders)
Seed = fields.Int(0, MAX_SEED)
#: Rows of a dataset to use: one size or a list of sizes (each a case).
Rows = fields.IntOrList(20)


def _target(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        fields.fail(f"expected a column name or index, got {value!r}")
    return value


def _columns(value: Any) -> list[str | int]:
    value = value or []
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        fields.fail("expected a list of column names")
    return value


Task = Annotated[fields.Choice(*TASKS), Field(description="the task its target serves")]
Target = Annotated[fields.checked(str | int, _target),
                   Field(description="the target column: its name, or its index in a file without a header")]
if TYPE_CHECKING:  # the validated value, for mypy, which cannot read the pydantic type built below
    Columns = list[str | int]
else:
    Columns = fields.checked(list[str | int], _columns)
TargetAbove = fields.Number(float("-inf"))
_TARGET_ABOVE = "binarise a numeric target: 1 where it exceeds this value, else 0"
Nan = Annotated[fields.Choice("error", "drop"), Field(description="rows with missing or infinite values: an "
                                                                  "error, or dropped")]


class DataEntry(fields.Strict):
    """What every dataset entry of an experiment may set besides its data."""

    test_size: fields.Number(0.05, 0.95) = Field(0.25, description="the fraction of rows held out for scoring")
    dtype: Dtype = fields.optional("float type of the features (default: the experiment's dtype)")
    order: Order = fields.optional("layout of the feature matrices handed to every implementation: C (row-major) "
                                   "or F (column-major), or a list of both (a case each); default: the "
                                   "experiment's order")
    seed: Seed = fields.optional("seed of the data and the split (default: the experiment's seed)")


class FileEntry(DataEntry):
    """A user's own CSV or Parquet file."""

    file: fields.NonEmptyStr = Field(description="the file, relative to the experiment file")
    task: Task
    format: fields.checked(Literal[FORMATS] | None, lambda v: fields.choice(v, FORMATS) if v else None) = \
        fields.optional("csv, parquet or libsvm (default: from the file name)")
    target: Target
    categorical: Columns = Field(default_factory=list, description="columns to encode as category codes")
    drop: Columns = Field(default_factory=list, description="columns to leave out")
    target_above: TargetAbove = fields.optional(_TARGET_ABOVE)
    nan: Nan = "error"
    n_samples: fields.nullable(Rows) = fields.optional(
        "rows to use: a number or a list of numbers, each a case (default: every row)")

    @field_validator("file")
    @classmethod
    def _exists(cls, value: str, info: ValidationInfo) -> str:
        """The file's absolute path; relative paths start at the experiment file's folder."""
        try:
            path = Path(value).expanduser()
        except RuntimeError:  # "~someone" with no such user: a name like any other
            path = Path(value)
        if not path.is_absolute():
            # `fields.validate`, the only way in, always passes a context with the source
            path = Path(cast(dict[str, Any], info.context)["source"]).resolve().parent / path
        if not path.is_file():
            fields.fail(f"no such file: {path}")
        return str(path)

    def to_table(self, source: str, raw: dict) -> TableSource:
        path = Path(self.file)
        fmt = self.format or ("parquet" if path.suffix == ".parquet" else "csv")
        return TableSource(name=path.stem, source=source, path=str(path), tasks=(self.task,), target=str(self.target),
                           fmt=fmt, header=fmt != "libsvm", categorical=tuple(str(c) for c in self.categorical),
                           drop=tuple(str(c) for c in self.drop), target_above=self.target_above, nan=self.nan,
                           raw=raw)


def _http_url(value: Any) -> str:
    url = fields.non_empty_str(value)
    if not url.startswith(("http://", "https://")):
        fields.fail(f"expected an http(s) URL, got {url!r}")
    return url


def _sha256(value: Any) -> str:
    sha = fields.non_empty_str(value).lower()
    if len(sha) != 64 or any(c not in string.hexdigits for c in sha):
        fields.fail("expected 64 hexadecimal digits (or null: unpublished)")
    return value


def _name_checked_by(problem_of: Callable[[str], str | None]) -> Callable[[Any], str]:
    """A validator of a name that becomes a path (`mlcompare.data.paths`): refused with its problem."""
    def check(value: Any) -> str:
        name = fields.non_empty_str(value)
        problem = problem_of(name)
        if problem:
            fields.fail(problem)
        return name
    return check


class CardSource(fields.Strict):
    """Where a card's bytes come from: a download, or a loader bundled with scikit-learn."""

    url: fields.checked(str, _http_url, format="uri") = fields.optional("the file to download (http or https)")
    sha256: fields.nullable(fields.checked(str, _sha256, pattern="^[0-9a-fA-F]{64}$")) = fields.optional(
        "the download's published sha256 (null: unpublished, pin it with `mlcompare datasets fetch --pin`)")
    filename: fields.nullable(fields.checked(str, _name_checked_by(file_name_problem), minLength=1)) = fields.optional(
        "the cached file's name, a plain file name inside the cache (default: the URL's last part)")
    sklearn: fields.Choice(*SKLEARN_LOADERS) = fields.optional("a dataset bundled with scikit-learn")
    retries: fields.Int(0) = Field(2, description="download attempts after the first")

    @classmethod
    def check_keys_together(cls, data: dict) -> None:
        if ("url" in data) == ("sklearn" in data):
            fields.fail("needs exactly one of url (a download) or sklearn (a bundled loader)")
        if isinstance(data.get("url"), str) and not data.get("filename"):
            name = url_file_name(data["url"])
            if file_name_problem(name):
                fields.fail(f"its last part {name!r} is not a plain file name inside the cache: set source.filename",
                            ".url")

    def file_name(self) -> str | None:
        """The download's name in the cache: `filename`, else the URL's last part."""
        return self.filename or (url_file_name(self.url) if self.url else None)


def url_file_name(url: str) -> str:
    """A URL's last part, the cached file's name when a card gives none."""
    return url.rstrip("/").rsplit("/", 1)[-1]


class CardFormat(fields.Strict):
    """How the downloaded file is laid out."""

    type: fields.Choice(*FORMATS) = Field(default="csv", description="the file format")
    header: fields.Bool = fields.optional("whether the first line names the columns (default: true, "
                                          "false for libsvm)")
    columns: fields.checked(list[str] | str, lambda v: fields.names(v) if v else []) = Field(
        default_factory=list, description="column names, for a file without a header")
    member: fields.nullable(fields.checked(str, _name_checked_by(member_problem), minLength=1)) = fields.optional(
        "the file inside a .zip or .tar archive (a relative path; read from the archive, never extracted)")


def _tasks(value: Any) -> list[str]:
    if not isinstance(value, list):
        fields.fail(f"expected a list of tasks, got {fields.type_name(value)}")
    for task in value:
        fields.choice(task, TASKS)
    return value


class Card(fields.Strict):
    """A dataset card: one real dataset, where it comes from and how to read it."""

    name: fields.NonEmptyStr = Field(description="the name experiments use (datasets: [{dataset: NAME}])")
    source: CardSource = Field(description="where its bytes come from: url (with sha256) or sklearn")
    format: fields.checked(CardFormat, lambda v: v or {}) = Field(default_factory=CardFormat,
                                                                   description="how the file is laid out")
    task: Task
    tasks: fields.checked(list[Literal[TASKS]], _tasks) = Field(
        default_factory=list, description="more tasks its target serves (e.g. clustering for class labels)")
    target: Target
    categorical: Columns = Field(default_factory=list, description="columns to encode as category codes")
    drop: Columns = Field(default_factory=list, description="columns to leave out")
    target_above: TargetAbove = fields.optional(_TARGET_ABOVE)
    nan: Nan = "error"
    rows: fields.nullable(fields.Int(1)) = fields.optional("number of rows of the full table")
    features: fields.nullable(fields.Int(1)) = fields.optional("number of feature columns after preprocessing")
    licence: fields.Text = Field("", description="the dataset's licence and where it was published")
    description: fields.Text = Field("", description="what the data is, in a sentence")
    size_bytes: fields.nullable(fields.Int(0)) = fields.optional("size of the download, for information")

    def to_table(self, source: str, raw: dict) -> TableSource:
        src, fmt = self.source, self.format
        tasks = (self.task, *(t for t in self.tasks if t != self.task))
        return TableSource(
            name=self.name, source=source, tasks=tasks, target=str(self.target), url=src.url,
            sha256=src.sha256 or None, sklearn=src.sklearn, retries=src.retries,
            filename=src.file_name(),
            fmt=fmt.type, header=fmt.type != "libsvm" if fmt.header is None else fmt.header,
            columns=tuple(fmt.columns), member=fmt.member, categorical=tuple(str(c) for c in self.categorical),
            drop=tuple(str(c) for c in self.drop), target_above=self.target_above, nan=self.nan, rows=self.rows,
            features=self.features, licence=self.licence, description=self.description, raw=raw)


def cards_dir() -> Path:
    """`datasets/` beside the package (a checkout), or $MLCOMPARE_CARDS_DIR."""
    env = os.environ.get("MLCOMPARE_CARDS_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "datasets"


def load_cards(directory: Path | None = None) -> dict[str, TableSource]:
    directory = directory or cards_dir()
    cards: dict[str, TableSource] = {}
    for path in sorted(directory.glob("*.yaml")):
        card = parse_card(load_yaml_mapping(path), str(path))
        if card.name in cards:
            raise InputError(str(path), "name", f"dataset {card.name!r} is also defined in {cards[card.name].source}")
        cards[card.name] = card
    return cards


def parse_card(data: dict, source: str) -> TableSource:
    return fields.validate(Card, data, source).to_table(source, raw=data)


def parse_file_entry(entry: dict, source: str, field_: str) -> TableSource:
    """A user's own CSV / Parquet file named in an experiment's `datasets:` list."""
    return fields.validate(FileEntry, entry, source, at=field_).to_table(source, raw=entry)
