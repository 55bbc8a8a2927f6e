"""Experiment files: load, validate every field, expand into the list of cases to run.

Everything a suite will do is checked here, before the first run is written, so a bad
file costs one line of error and leaves the store untouched. `ExperimentModel` is the
file's schema (`mlcompare schema experiment`); `load_experiment` validates a file with it,
then resolves what the file names (pairings, dataset cards) into an `Experiment`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

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
from mlcompare.config.imports import allowed_modules, is_module_name
from mlcompare.config.pairing import Implementation, Pairing
from mlcompare.config.selection import (
    PairingEntries,
    Point,
    Selection,
    build_catalog,
    check_selected,
    parse_entries,
    point_label,
)
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.data.cache import GENERATORS, DatasetSpec
from mlcompare.errors import InputError

#: More warm fits than this is a typo, not a measurement (and would never finish).
MAX_REPEATS = 1000
Repeats = fields.Int(1, MAX_REPEATS)
#: Fresh processes per case: more is a typo (a suite of a hundred cases would run for days).
MAX_ROUNDS = 100
Rounds = fields.Int(1, MAX_ROUNDS)
#: The process is the unit of every interval and verdict (`mlcompare.suite.rounds`). Six a
#: side give the median's interval 96.9 % and the speed-up's 95.9 %; their smallest two-sided
#: p-value, 2/924 = 0.0022, lets `compare` call one changed case (fit and predict) among 46
#: timing tests at a false-discovery rate of 5 % (Benjamini–Hochberg's second threshold,
#: 2 × 0.05/46), and its one-sided gate (1/924) one among 46 as well. Seven would allow twice
#: as many tests, but the default run (`mlflow run .`) would no longer finish in 5 minutes on
#: a 2-core machine. One warm fit per process: the spread between processes is what decides
#: (0.11 in log time here against 0.07 inside one), and a second repeat costs as much as a
#: process's cold fit.
DEFAULT_ROUNDS = 6
DEFAULT_REPEATS = 1
Timeout = fields.Number(1)
#: Every generator's own options, by name (some generators share one).
OPTIONS = {name: option for g in GENERATORS.values() for name, option in g.options.items()}


@dataclass(frozen=True)
class Case:
    """One pairing × implementation × dataset (× sweep point): one child run."""

    pairing: Pairing
    implementation: Implementation
    dataset: DatasetSpec
    shared_point: Point = ()  # swept shared params at this case (the baseline follows them)
    impl_point: Point = ()  # swept params of this implementation only (and its swept thread count)
    threads: int | None = None  # a point of the experiment's thread sweep; None: the experiment's threads
    ladder_value: int | float | None = None  # the budget of an equal-quality case (None: not one)

    @property
    def is_baseline(self) -> bool:
        return self.implementation.name == self.pairing.baseline and self.threads is None

    @property
    def group(self) -> tuple[str, str, Point]:
        """Cases in one group are compared with each other (same model and shared params, same data)."""
        return self.pairing.name, self.dataset.fingerprint(), self.shared_point

    @property
    def sweep(self) -> dict[str, Any]:
        return dict(self.shared_point + self.impl_point)

    @property
    def name(self) -> str:
        label = point_label(self.shared_point + self.impl_point)
        name = f"{self.pairing.name} · {self.implementation.name} · {self.dataset.label}"
        return f"{name} · {label}" if label else name


@dataclass
class Experiment:
    name: str
    source: str
    sha256: str
    repeats: int
    timeout_s: float
    min_time_s: float
    threads: int | None  # None: every physical core; with a thread sweep, the baseline's
    system_metrics: bool
    datasets: list[DatasetSpec]
    pairings: list[Pairing]
    implementations: list[str] | None
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    selections: list[Selection] = field(default_factory=list)
    allowed_modules: tuple[str, ...] = ()  # module prefixes estimators may be imported from
    dataset_entries: list[int] = field(default_factory=list)  # per dataset: its entry in the file's `datasets`
    rounds: int = DEFAULT_ROUNDS  # fresh processes per case, spread over the suite: the unit of every interval
    cost_per_hour: dict[str, float] = field(default_factory=dict)  # device -> USD per hour of its machine
    predict_batch_sizes: list[int] = field(default_factory=list)  # predict latency by batch: rows per call
    predict_latency_budget_s: float = 1.0  # seconds of timed calls per batch size (at least MIN_CALLS)
    thread_sweep: tuple[int, ...] = ()  # `threads: [1, 2, 4]`: each CPU implementation at each count
    equal_quality: bool = False  # some pairing climbs its budget's ladder (speed-ups at equal quality)

    def __post_init__(self) -> None:
        # `pairings` is the source of truth (code may replace it): keep a selection (its
        # overrides and sweeps) only for the very pairing it was made for.
        by_name = {s.pairing.name: s for s in self.selections}
        self.selections = [by_name[p.name] if p.name in by_name and by_name[p.name].pairing is p else Selection(p)
                           for p in self.pairings]

    def cases(self) -> list[Case]:
        """Every case, pairing by pairing, dataset by dataset and sweep point by point, the baseline first."""
        out = []
        for sel in self.selections:
            for spec in self.datasets:
                if sel.pairing.task not in spec.tasks or not _within(spec, sel.max_samples):
                    continue
                for shared_point, pairing in sel.variants():
                    impls = [impl for impl in pairing.implementations.values() if self._selected(impl)]
                    impls.sort(key=lambda impl: impl.name != pairing.baseline)
                    for impl in impls:
                        for impl_point, variant in sel.implementation_variants(impl):
                            case = Case(pairing, variant, spec, shared_point, impl_point,
                                        ladder_value=sel.ladder_value(impl, impl_point))
                            out.extend(self._thread_points(case))
        return out

    def _thread_points(self, case: Case) -> list[Case]:
        """A CPU case at each count of the thread sweep, as a point of its own sweep; the
        baseline also once at the experiment's threads, the one every case is compared with."""
        impl = case.implementation
        if not self.thread_sweep or impl.device != "cpu" or impl.distributed:
            return [case]
        swept = [replace(case, impl_point=case.impl_point + (("threads", t),), threads=t) for t in self.thread_sweep]
        return [case, *swept] if case.is_baseline else swept

    def _selected(self, impl: Implementation) -> bool:
        return self.implementations is None or bool({impl.name, impl.library} & set(self.implementations))


# -- the file's schema ----------------------------------------------------------------------

class _Synthetic(DataEntry):
    """Synthetic data drawn by a generator, at one or more sizes (each a case)."""

    generator: fields.Choice(*GENERATORS) = Field(description="; ".join(
        f"{g.name}: {g.description}" for g in GENERATORS.values()))
    n_samples: Rows = Field(description="rows: a number, or a list of numbers (each a case)")
    n_features: fields.IntOrList(1) = Field(description="features: a number, or a list of numbers (each a case)")

    @classmethod
    def allowed_keys(cls, data: dict) -> list[str]:
        """The entry's keys and, once the generator is known, only the options it takes."""
        generator = GENERATORS.get(data.get("generator")) if isinstance(data.get("generator"), str) else None
        if generator is None:
            return list(cls.model_fields)
        return [key for key in cls.model_fields if key not in OPTIONS or key in generator.options]

    @field_validator("n_features", mode="before")
    @classmethod
    def _enough_features(cls, value: Any, info: ValidationInfo) -> Any:
        generator = GENERATORS.get(info.data.get("generator"))
        return value if generator is None else fields.int_or_list(value, generator.min_features)

    @field_validator(*OPTIONS, mode="before", check_fields=False)
    @classmethod
    def _option(cls, value: Any, info: ValidationInfo) -> Any:
        generator = GENERATORS.get(info.data.get("generator"))
        if generator is None:  # the generator is wrong, and that is the error
            return value
        option = generator.options.get(info.field_name)
        if option is None:
            takes = ", ".join(sorted(generator.options)) or "none"
            fields.fail(f"not an option of the {generator.name} generator (its options: {takes})")
        return fields.integer(value, option.minimum) if option.integer else fields.number(value, option.minimum)

    @model_validator(mode="after")
    def _options_fit(self) -> _Synthetic:
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


SyntheticEntry = create_model("SyntheticEntry", __base__=_Synthetic, __doc__=_Synthetic.__doc__,
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

    # first: the estimators of inline pairings are checked against it
    allowed_modules: fields.checked(list[str], _module_names) = Field(
        default_factory=list, description="more modules estimators may be imported from (besides sklearn, "
        "cuml, xgboost, lightgbm, catboost, sklearnex, umap)")
    name: fields.Name(200) = Field(description="the MLflow experiment the suite is recorded in")
    description: fields.Text = Field("", description="what the experiment is for, in words")
    repeats: Repeats = Field(DEFAULT_REPEATS, description="timed warm fits per process (after its cold one); "
                             "each process's median of them is one value of the case")
    rounds: Rounds = Field(DEFAULT_ROUNDS, description="fresh processes each case runs in, spread over the suite "
                           "in shuffled order: every interval and verdict is taken over them (one process: no "
                           "level)")
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


def load_experiment(path: str | Path, repeats: int | None = None,
                    implementations: list[str] | None = None,
                    catalog: dict[str, Pairing] | None = None,
                    timeout_s: float | None = None,
                    pairing_paths: list[str] | None = None,
                    allow_modules: list[str] | None = None, rounds: int | None = None) -> Experiment:
    """Read and validate an experiment file; CLI overrides are validated the same way.

    `pairing_paths` (`--pairings`) add pairing files to the catalog and to the selection;
    `allow_modules` (`--allow-module`) extend the import allow-list; `rounds` (`--rounds`)
    overrides the file's.
    """
    path = Path(path)
    source = str(path)
    data = load_yaml_mapping(path, source)
    # The file's modules as far as they are names: a wrong one is the model's first error.
    listed_modules = data.get("allowed_modules")
    file_modules = [m for m in listed_modules if is_module_name(m)] if isinstance(listed_modules, list) else []
    allowed = allowed_modules([*file_modules, *(allow_modules or [])])
    cards = functools.cache(load_cards)
    model = fields.validate(ExperimentModel, data, source, context={"allowed": allowed, "cards": cards})
    added: list[str] = []
    if catalog is None:
        catalog, added = build_catalog(allowed, pairing_paths or [])
    else:
        catalog = dict(catalog)

    numbered = [(i, spec) for i, (entry, raw) in enumerate(zip(model.datasets, data["datasets"]))
                for spec in _dataset_specs(entry, raw, model, source, cards)]
    datasets = [spec for _, spec in numbered]
    listed = model.pairings is not None
    if listed:
        selections = parse_entries(source, model.pairings, catalog, allowed, path.parent)
    else:  # every pairing a dataset of this file can serve
        selections = [Selection(p) for p in catalog.values()
                      if p.name not in added and any(p.task in spec.tasks for spec in datasets)]
    chosen = {sel.pairing.name for sel in selections}
    extra = [Selection(catalog[name]) for name in added if name not in chosen]
    for i, sel in enumerate(selections + extra):
        from_flag = i >= len(selections)
        src, field_ = ("--pairings", None) if from_flag else (source, f"pairings[{i}]" if listed else "datasets")
        fits = [spec for spec in datasets if sel.pairing.task in spec.tasks]
        if not fits:
            raise InputError(src, field_, f"no dataset in {source} serves {sel.pairing.name}'s task "
                             f"{sel.pairing.task!r} (generators: {_generators_for(sel.pairing.task)})")
        if not any(_within(spec, sel.max_samples) for spec in fits):
            raise InputError(source, f"{field_}.max_samples", f"no {sel.pairing.task} dataset in this file has at "
                             f"most {sel.max_samples} rows")
    selections += extra
    if model.equal_quality:  # every pairing with a budget climbs its own ladder (an entry's ladder stays)
        selections = [dataclasses.replace(sel, ladder=sel.pairing.equal_quality.ladder)
                      if not sel.ladder and sel.pairing.equal_quality and sel.pairing.equal_quality.budget else sel
                      for sel in selections]
    check_selected(selections)
    pairings = [sel.pairing for sel in selections]

    impl_source, impl_field, impl_names = source, "implementations", model.implementations
    if implementations is not None:
        impl_source, impl_field, impl_names = "--implementations", "", implementations
    if impl_names is not None:
        known = {n for p in pairings for impl in p.implementations.values() for n in (impl.name, impl.library)}
        for i, iname in enumerate(impl_names):
            if iname not in known:
                raise InputError(impl_source, f"{impl_field}[{i}]" if impl_field else None,
                                 f"{iname!r} matches no implementation of the selected pairings "
                                 f"(known: {', '.join(sorted(known))})")

    threads, thread_sweep = _threads(model, source)
    file_repeats = model.repeats if repeats is None else fields.validate(Repeats, repeats, "--repeats")
    timeout_s = model.timeout_s if timeout_s is None else fields.validate(Timeout, timeout_s, "--timeout")
    rounds = model.rounds if rounds is None else fields.validate(Rounds, rounds, "--rounds")
    experiment = Experiment(name=model.name, source=source, sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                            repeats=file_repeats, timeout_s=timeout_s, min_time_s=model.min_time_s,
                            threads=threads, system_metrics=model.system_metrics, datasets=datasets,
                            pairings=pairings, implementations=impl_names, raw=data, selections=selections,
                            allowed_modules=allowed, dataset_entries=[i for i, _ in numbered], rounds=rounds,
                            cost_per_hour=model.cost_per_hour.prices() if model.cost_per_hour else {},
                            predict_batch_sizes=list(model.predict_batch_sizes or []),
                            predict_latency_budget_s=model.predict_latency_budget_s,
                            thread_sweep=thread_sweep,
                            equal_quality=any(sel.ladder for sel in selections))
    if not experiment.cases():
        raise InputError(source, "implementations", "selects no case to run")
    _check_batch_sizes(experiment)
    return experiment


def expected_test_rows(spec: DatasetSpec) -> int | None:
    """Rows of a dataset's test split, where its size is known before it is made (scikit-learn's
    train_test_split rounds the test share up)."""
    rows = spec.n_samples or (spec.table.rows if spec.table is not None else None)
    return math.ceil(spec.test_size * rows) if rows else None


def _check_batch_sizes(experiment: Experiment) -> None:
    """A batch size no test split of the file can fill is a mistake: it would measure nothing.

    Sizes larger than some (not all) test splits are left out of those cases only, which say so.
    """
    sizes = [expected_test_rows(case.dataset) for case in experiment.cases()]
    if not experiment.predict_batch_sizes or None in sizes:
        return
    largest = max(sizes)
    for i, batch in enumerate(experiment.predict_batch_sizes):
        if batch > largest:
            raise InputError(experiment.source, f"predict_batch_sizes[{i}]", f"{batch} rows per call, but the "
                             f"largest test split of this experiment has {largest} rows")


def _threads(model: ExperimentModel, source: str) -> tuple[int | None, tuple[int, ...]]:
    """(the threads of every CPU case, or of the baseline under a sweep; the sweep's counts)."""
    counts = model.threads or []
    if len(counts) != len(set(counts)):
        raise InputError(source, "threads", f"a thread count is listed twice: {counts}")
    if len(counts) > 1:
        return model.baseline_threads, tuple(counts)
    if model.baseline_threads is not None:
        raise InputError(source, "baseline_threads", "only with a list of threads (a thread sweep); "
                         "otherwise every CPU case runs with `threads`")
    return (counts[0] if counts else None), ()


def _dataset_specs(entry: DataEntry, raw: dict, model: ExperimentModel, source: str, cards: Any) -> list[DatasetSpec]:
    """The datasets of one validated entry: one per size (per size and feature count when synthetic)."""
    common = {"seed": model.seed if entry.seed is None else entry.seed, "test_size": entry.test_size,
              "dtype": entry.dtype or model.dtype}
    orders = entry.order or model.order
    if isinstance(entry, _Synthetic):
        return [DatasetSpec(name=entry.generator, n_samples=n, n_features=d, options=entry.options(), order=o,
                            **common)
                for n, d, o in itertools.product(entry.n_samples, entry.n_features, orders)]
    if isinstance(entry, FileEntry):
        table, kind = entry.to_table(source, raw), "file"
    else:
        table, kind = cards()[entry.dataset], "card"
    return [DatasetSpec(name=table.name, n_samples=n, n_features=table.features, kind=kind, table=table, order=o,
                        **common)
            for n, o in itertools.product(entry.n_samples or [None], orders)]


def _within(spec: DatasetSpec, max_samples: int | None) -> bool:
    """Whether a dataset is small enough for a pairing's `max_samples` (unknown sizes are)."""
    rows = spec.n_samples or (spec.table.rows if spec.table is not None else None)
    return max_samples is None or rows is None or rows <= max_samples


def _generators_for(task: str) -> str:
    from mlcompare.data.cache import GENERATOR_TASKS

    generators = [g for g, tasks in GENERATOR_TASKS.items() if task in tasks]
    return ", ".join(generators + [f"or a {task} dataset card or file"])
