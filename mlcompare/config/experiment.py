"""Experiment files: load, validate every field, expand into the list of cases to run.

Everything a suite will do is checked here, before the first run is written, so a bad
file costs one line of error and leaves the store untouched. `load_experiment` validates
a file with its schema (`mlcompare.config.experiment_schema.ExperimentModel`), then
resolves what the file names (pairings, dataset cards) into an `Experiment`, whose
`cases()` are what a suite runs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mlcompare.config import fields
from mlcompare.config.cards import FileEntry, load_cards
from mlcompare.config.experiment_schema import (
    DEFAULT_MIN_ROUNDS,
    DEFAULT_PRECISION,
    DEFAULT_ROUNDS,
    CardEntry,
    ExperimentModel,
    Precision,
    Repeats,
    Rounds,
    SyntheticEntry,
    Timeout,
)
from mlcompare.config.pairing import Implementation, Pairing
from mlcompare.config.selection import (
    Point,
    Selection,
    build_catalog,
    check_selected,
    parse_entries,
    point_label,
)
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.data.cache import DatasetSpec
from mlcompare.errors import InputError, InputErrors, raise_all
from mlcompare.pairings.imports import allowed_modules, grant_hint, is_module_name, ungranted


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
    rounds: int = DEFAULT_ROUNDS  # the most processes per case, spread over the suite: the unit of every interval
    min_rounds: int = DEFAULT_MIN_ROUNDS  # the fewest (capped at rounds), before a case may stop
    precision: float = DEFAULT_PRECISION  # stop once the fit interval's half-width is this share of the median
    cost_per_hour: dict[str, float] = field(default_factory=dict)  # device -> USD per hour of its machine
    predict_batch_sizes: list[int] = field(default_factory=list)  # predict latency by batch: rows per call
    predict_latency_budget_s: float = 1.0  # seconds of timed calls per batch size (at least MIN_CALLS)
    thread_sweep: tuple[int, ...] = ()  # `threads: [1, 2, 4]`: each CPU implementation at each count
    equal_quality: bool = False  # asked for, or some pairing climbs its budget's ladder (speed-ups at equal quality)

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


def load_experiment(path: str | Path, repeats: int | None = None,
                    implementations: list[str] | None = None,
                    catalog: dict[str, Pairing] | None = None,
                    timeout_s: float | None = None,
                    pairing_paths: list[str] | None = None,
                    allow_modules: list[str] | None = None, rounds: int | None = None,
                    precision: float | None = None) -> Experiment:
    """Read and validate an experiment file; CLI overrides are validated the same way.

    `pairing_paths` (`--pairings`) add pairing files to the catalog and to the selection;
    `allow_modules` (`--allow-module`) extend the import allow-list; `rounds` (`--rounds`)
    and `precision` (`--precision`) override the file's.
    """
    path = Path(path)
    source = str(path)
    data = load_yaml_mapping(path, source)
    # The modules the person running granted; a file's `allowed_modules:` only says what it needs.
    allowed = allowed_modules(allow_modules or [])
    cards = functools.cache(load_cards)
    mistakes = _ungranted_modules(data, source, allowed)
    try:
        model = fields.validate(ExperimentModel, data, source, context={"allowed": allowed, "cards": cards})
    except InputError as exc:
        mistakes += exc.errors if isinstance(exc, InputErrors) else [exc]
        model = None
    added: list[str] = []
    if catalog is None:
        catalog, added = build_catalog(allowed, pairing_paths or [])
    else:
        catalog = dict(catalog)
    # Names the catalog does not know are mistakes of the same pass as the schema's: every one at once.
    mistakes += [m for m in _unknown_names(data, source, catalog, implementations)
                 if all(str(m) != str(other) for other in mistakes)]
    raise_all(mistakes)
    assert model is not None  # the schema's errors were raised above

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
        raise_all([InputError(impl_source, f"{impl_field}[{i}]" if impl_field else None,
                              f"{iname!r} matches no implementation of the selected pairings "
                              f"(known: {', '.join(sorted(known))})")
                   for i, iname in enumerate(impl_names) if iname not in known])

    threads, thread_sweep = _threads(model, source)
    file_repeats = model.repeats if repeats is None else fields.validate(Repeats, repeats, "--repeats")
    timeout_s = model.timeout_s if timeout_s is None else fields.validate(Timeout, timeout_s, "--timeout")
    rounds = model.rounds if rounds is None else fields.validate(Rounds, rounds, "--rounds")
    precision = model.precision if precision is None else fields.validate(Precision, precision, "--precision")
    experiment = Experiment(name=model.name, source=source, sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                            repeats=file_repeats, timeout_s=timeout_s, min_time_s=model.min_time_s,
                            threads=threads, system_metrics=model.system_metrics, datasets=datasets,
                            pairings=pairings, implementations=impl_names, raw=data, selections=selections,
                            allowed_modules=allowed, dataset_entries=[i for i, _ in numbered], rounds=rounds,
                            min_rounds=model.min_rounds, precision=precision,
                            cost_per_hour=model.cost_per_hour.prices() if model.cost_per_hour else {},
                            predict_batch_sizes=list(model.predict_batch_sizes or []),
                            predict_latency_budget_s=model.predict_latency_budget_s,
                            thread_sweep=thread_sweep,
                            equal_quality=model.equal_quality or any(sel.ladder for sel in selections))
    if not experiment.cases():
        raise InputError(source, "implementations", "selects no case to run")
    _check_batch_sizes(experiment)
    return experiment


def _ungranted_modules(data: dict[str, Any], source: str, allowed: tuple[str, ...]) -> list[InputError]:
    """A file never widens its own allow-list: each module its `allowed_modules:` names must be
    granted by the person running it (`--allow-module`, the environment), or the file is refused."""
    listed = data.get("allowed_modules")
    if not isinstance(listed, list):
        return []  # not a list: the schema says so
    names = [(i, name) for i, name in enumerate(listed) if is_module_name(name)]
    refused = set(ungranted([name for _, name in names], allowed))
    return [InputError(source, f"allowed_modules[{i}]", f"{name!r} is not granted: a file cannot allow itself a "
                       f"module; {grant_hint(name)}") for i, name in names if name in refused]


def _unknown_names(data: dict[str, Any], source: str, catalog: dict[str, Pairing],
                   implementations: list[str] | None) -> list[InputError]:
    """Pairings and implementations the file (or --implementations) names and the catalog does not
    know, read from the file as it is, so that they are reported with the schema's mistakes.

    Implementations are checked here only when every selected pairing is a catalog name: those of
    pairing files and inline pairings are known once they are parsed (`load_experiment` checks them
    then)."""
    out: list[InputError] = []
    entries = data.get("pairings")
    selected: list[Pairing] | None = list(catalog.values()) if entries is None else []
    known_list = ", ".join(sorted(catalog))
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        name, at = entry, f"pairings[{i}]"
        if isinstance(entry, dict) and set(entry) & {"pairing"} and isinstance(entry.get("pairing"), str):
            name, at = entry["pairing"], f"pairings[{i}].pairing"
        if not isinstance(name, str) or name.endswith((".yaml", ".yml")):
            selected = None  # a file or an inline pairing: its implementations are known later
            continue
        if name in catalog:
            if selected is not None:
                selected.append(catalog[name])
        else:
            out.append(InputError(source, at, f"unknown pairing {name!r} (known: {known_list})"))
    names, where, field_ = data.get("implementations"), source, "implementations"
    if implementations is not None:
        names, where, field_ = implementations, "--implementations", ""
    if selected and isinstance(names, list):
        known = {n for p in selected for impl in p.implementations.values() for n in (impl.name, impl.library)}
        out += [InputError(where, f"{field_}[{i}]" if field_ else None, f"{name!r} matches no implementation of the "
                           f"selected pairings (known: {', '.join(sorted(known))})")
                for i, name in enumerate(names) if isinstance(name, str) and name not in known]
    return out


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
    known = [size for size in sizes if size is not None]
    if not experiment.predict_batch_sizes or len(known) < len(sizes):
        return
    largest = max(known)
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


def _dataset_specs(entry: SyntheticEntry | CardEntry | FileEntry, raw: dict, model: ExperimentModel, source: str,
                   cards: Any) -> list[DatasetSpec]:
    """The datasets of one validated entry: one per size (per size and feature count when synthetic)."""
    common = {"seed": model.seed if entry.seed is None else entry.seed, "test_size": entry.test_size,
              "dtype": entry.dtype or model.dtype}
    orders: list[str] = entry.order or model.order
    if isinstance(entry, SyntheticEntry):
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
