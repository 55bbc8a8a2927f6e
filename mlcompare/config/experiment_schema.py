"""The experiment file's schema: every field, its type, bounds and description.

`ExperimentModel` is what `mlcompare schema experiment` prints and what `load_experiment`
(`mlcompare.config.experiment`) validates a file with, before it resolves what the file names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, cast

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from mlcompare.config import fields
from mlcompare.config.cards import DataEntry, Dtype, FileEntry, Order, Rows, Seed, load_cards
from mlcompare.config.selection import (
    PairingEntries,
)
from mlcompare.data.cache import GENERATORS
from mlcompare.data.synthetic import Generator
from mlcompare.pairings.imports import is_module_name

#: More warm fits than this is a typo, not a measurement (and would never finish).
MAX_REPEATS = 1000
Repeats = fields.Int(1, MAX_REPEATS)
#: Fresh processes per case: more is a typo (a suite of a hundred cases would run for days).
MAX_ROUNDS = 100
Rounds = fields.Int(1, MAX_ROUNDS)
#: The process is the unit of every interval and verdict (`mlcompare.suite.rounds`), and how
#: many a case gets is `measure.stopping.Stopping`'s: at least DEFAULT_MIN_ROUNDS, then, while
#: its fit-time interval is wider than DEFAULT_PRECISION of its median and a count up to
#: `rounds` could narrow it, more. Six a side is the fewest at which `compare` can still call
#: one changed case (fit and predict) among 46 timing tests: their smallest two-sided p-value,
#: 2/924, clears Benjamini–Hochberg's second threshold 2 × 0.05/46 (five a side, 2/252: among
#: 12 only). The default maximum is six as well: the median's interval is the range of up to
#: eight processes, which more of them can only widen, so a seventh and an eighth (the
#: defaults before) bought nothing; from nine on it drops the extreme process on each side,
#: and a `rounds` of 9 or more lets the precision take a wide case that far. At six the levels
#: are exact: 96.9 % for a median's interval and 95.9 % for a speed-up's (`measure.stats`).
#: 10 %: the half-width a quiet machine's processes reach in six (their spread is 2-5 % there).
#: Figures (levels, wall, A/A and A/B): docs/measurement.md, bench/README.md.
DEFAULT_ROUNDS = 6
DEFAULT_MIN_ROUNDS = 6
DEFAULT_PRECISION = 0.1
Precision = fields.Number(0.0, 1.0)
DEFAULT_REPEATS = 1
Timeout = fields.Number(1)
#: Every generator's own options, by name (some generators share one).
OPTIONS = {name: option for g in GENERATORS.values() for name, option in g.options.items()}


def _generator(name: Any) -> Generator | None:
    """The generator called `name`; None for anything else (a wrong generator is its own field's error)."""
    return GENERATORS.get(name) if isinstance(name, str) else None


class SyntheticEntry(DataEntry):
    """Synthetic data drawn by a generator, at one or more sizes (each a case)."""

    generator: fields.Choice(*GENERATORS) = Field(description="; ".join(
        f"{g.name}: {g.description}" for g in GENERATORS.values()))
    n_samples: Rows = Field(description="rows: a number, or a list of numbers (each a case)")
    n_features: fields.IntOrList(1) = Field(description="features: a number, or a list of numbers (each a case)")

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """The entry's keys and, once the generator is known, only the options it takes."""
        generator = _generator(data.get("generator"))
        if generator is None:
            return list(cls.model_fields)
        return [key for key in cls.model_fields if key not in OPTIONS or key in generator.options]

    @field_validator("n_features", mode="before")
    @classmethod
    def _enough_features(cls, value: Any, info: ValidationInfo) -> Any:
        generator = _generator(info.data.get("generator"))
        return value if generator is None else fields.int_or_list(value, generator.min_features)

    @field_validator(*OPTIONS, mode="before", check_fields=False)
    @classmethod
    def _option(cls, value: Any, info: ValidationInfo) -> Any:
        generator = _generator(info.data.get("generator"))
        if generator is None:  # the generator is wrong, and that is the error
            return value
        option = generator.options.get(cast(str, info.field_name))  # always set in a field validator
        if option is None:
            takes = ", ".join(sorted(generator.options)) or "none"
            fields.fail(f"not an option of the {generator.name} generator (its options: {takes})")
        return fields.integer(value, int(option.minimum)) if option.integer else fields.number(value, option.minimum)

    @model_validator(mode="after")
    def _options_fit(self) -> SyntheticEntry:
        for d in self.n_features:
            problem = GENERATORS[self.generator].check(d, self.options())
            if problem:
                fields.fail(problem, ".n_informative")
        return self

    def options(self) -> dict[str, Any]:
        """The generator options the entry sets."""
        return {name: getattr(self, name) for name in OPTIONS if name in self.model_fields_set}


def _option_field(name: str) -> tuple[Any, Any]:
    option = OPTIONS[name]
    used_by = ", ".join(g.name for g in GENERATORS.values() if name in g.options)
    kind = fields.Int(int(option.minimum)) if option.integer else fields.Number(option.minimum)
    return kind, fields.optional(f"{option.description} ({used_by})")


if not TYPE_CHECKING:  # every generator's options as fields; mypy keeps the class above, of which this is a subclass
    SyntheticEntry = create_model("SyntheticEntry", __base__=SyntheticEntry, __doc__=SyntheticEntry.__doc__,
                                  **{name: _option_field(name) for name in OPTIONS})


class CardEntry(DataEntry):
    """A dataset card of datasets/ (`mlcompare datasets list`)."""

    dataset: fields.NonEmptyStr = Field(description="the card's name")
    n_samples: fields.nullable(Rows) = fields.optional("rows: a number, or a list of numbers (each a case); "
                                                       "default: every row")

    @field_validator("dataset")
    @classmethod
    def _known(cls, name: str, info: ValidationInfo) -> str:
        cards = _cards(info)
        if name not in cards:
            fields.fail(f"unknown dataset {name!r} (cards: {', '.join(sorted(cards))})")
        return name

    @model_validator(mode="after")
    def _not_too_many_rows(self, info: ValidationInfo) -> CardEntry:
        table = _cards(info)[self.dataset]
        for n in self.n_samples or ():
            if table.rows and n > table.rows:
                fields.fail(f"{n} rows requested, {table.name} has {table.rows}", ".n_samples")
        return self


def _cards(info: ValidationInfo) -> dict:
    """The dataset cards, loaded once per validation (context "cards": a function returning them)."""
    return (info.context or {}).get("cards", load_cards)()


_KINDS = ("generator", "dataset", "file")


def _dataset_entry(value: Any) -> dict:
    value = fields.mapping(value)
    if sum(kind in value for kind in _KINDS) != 1:
        fields.fail("needs exactly one of generator (synthetic), dataset (a card in datasets/) or file "
                    "(your own CSV / Parquet)")
    return value


DatasetEntry = Annotated[
    Annotated[SyntheticEntry, Tag("generator")] | Annotated[CardEntry, Tag("dataset")]
    | Annotated[FileEntry, Tag("file")],
    Discriminator(lambda entry: next(kind for kind in _KINDS if kind in entry)), fields.UNTAGGED,
    BeforeValidator(_dataset_entry)]


def _dataset_list(value: Any) -> list:
    if not isinstance(value, list) or not value:
        fields.fail(f"expected a non-empty list of datasets, got {fields.type_name(value)}")
    return value


def _module_names(value: Any) -> list[str]:
    value = value or []
    if not isinstance(value, list):
        fields.fail(f"expected a list of module names, got {fields.type_name(value)}")
    for i, name in enumerate(value):
        if not is_module_name(name):
            fields.fail(f"{name!r} is not a module name (e.g. mypackage.models)", f"[{i}]")
    return value


class CostPerHour(fields.Strict):
    """What an hour of each kind of machine costs, in US dollars (a cloud price list's on-demand rate)."""

    cpu: fields.Positive = fields.optional("the CPU machine's price per hour: CPU cases")
    gpu: fields.Positive = fields.optional("the GPU machine's price per hour, the whole box "
                                                            "(its CPUs, memory and GPUs): GPU cases")

    @classmethod
    def check_keys_together(cls, data: dict) -> None:
        if not data:
            fields.fail("name the price of cpu, gpu or both, e.g. {cpu: 0.192, gpu: 3.67}")

    def prices(self) -> dict[str, float]:
        return {device: price for device, price in (("cpu", self.cpu), ("gpu", self.gpu)) if price is not None}


def _batch_sizes(value: Any) -> list[int]:
    sizes = fields.int_or_list(value, 1)
    if len(set(sizes)) != len(sizes):
        fields.fail("lists a batch size twice")
    return sizes


BatchSizes = fields.checked(list[int], _batch_sizes, minItems=1, uniqueItems=True)


class ExperimentModel(fields.Strict):
    """An mlcompare experiment: datasets, the pairings run on them, and how to measure."""

    allowed_modules: fields.checked(list[str], _module_names) = Field(
        default_factory=list, description="the modules besides sklearn, cuml, xgboost, lightgbm, catboost, "
        "sklearnex and umap that this experiment's estimators come from; a file cannot grant them: each must be "
        "granted by whoever runs it (--allow-module, MLCOMPARE_ALLOWED_MODULES), or the file is refused")
    name: fields.Name(200) = Field(description="the MLflow experiment the suite is recorded in")
    description: fields.Text = Field("", description="what the experiment is for, in words")
    repeats: Repeats = Field(DEFAULT_REPEATS, description="timed warm fits per process (after its cold one); "
                             "each process's median of them is one value of the case")
    rounds: Rounds = Field(DEFAULT_ROUNDS, description="the most fresh processes a case runs in, spread over the "
                           "suite in shuffled order: every interval and verdict is taken over them (one process: no "
                           "level)")
    min_rounds: Rounds = Field(DEFAULT_MIN_ROUNDS, description="the fewest processes a case runs in before it may "
                               "stop (capped at rounds)")
    precision: Precision = Field(DEFAULT_PRECISION, description="stop a case, after min_rounds "
                                               "processes, once its fit-time interval's half-width is at most this "
                                               "fraction of its median (0: every case runs `rounds` processes)")
    dtype: Dtype = Field("float32", description="float type of the data (each dataset may set its own)")
    order: Order = Field("C", description="layout of the feature matrices every implementation is handed, CPU "
                         "and GPU alike: C (row-major) or F (column-major); a list is a sweep (each dataset may set "
                         "its own)")
    seed: Seed = Field(0, description="seed of the data and the estimators (each dataset may set its own)")
    timeout_s: Timeout = Field(3600.0, description="seconds a case may take before it is stopped")
    min_time_s: fields.Number(0.0) = Field(0.0, description="keep timing warm fits until they add up to at "
                                           "least this many seconds")
    threads: fields.IntOrList(1) = fields.optional("CPU threads each case may use (default: every physical core); "
                                                   "a list sweeps the CPU implementations over these counts")
    baseline_threads: fields.Int(1) = fields.optional("with a list of threads: the baseline's threads, the run "
                                                      "every case is compared with (default: every physical core)")
    system_metrics: fields.Bool = Field(False, description="record MLflow system metrics (CPU, memory, GPU)")
    equal_quality: fields.Bool = Field(False, description="also measure every pairing with a budget (trees, "
                                       "iterations) along its ladder, for its speed-up at equal quality")
    datasets: fields.checked(list[DatasetEntry], _dataset_list, minItems=1) = Field(
        description="synthetic data ({generator: ...}), dataset cards ({dataset: ...}) or your own files "
        "({file: ...})")
    pairings: PairingEntries = fields.optional("the pairings to run: names, pairing files, inline pairings or "
                                               "{pairing: NAME, params: ...} (default: every pairing a dataset "
                                               "serves)")
    implementations: fields.Names = fields.optional("run only these implementations (names, or libraries "
                                                    "such as xgboost)")
    cost_per_hour: CostPerHour = fields.optional("US dollars per hour of the machine each device's cases run on "
                                                 "(gpu: the whole GPU box): gives every case its fit cost")
    predict_batch_sizes: BatchSizes = fields.optional("rows per predict call at which to time predict latency "
                                                      "(warm calls from the test split), e.g. [1, 100, 10000]")
    predict_latency_budget_s: fields.Number(0.01) = Field(1.0, description="seconds of timed predict calls per "
                                                          "batch size (at least 5 calls, at most 10000)")
