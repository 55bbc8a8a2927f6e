"""Experiment files: load, validate every field, expand into the list of cases to run.

Everything a suite will do is checked here, before the first run is written, so a bad
file costs one line of error and leaves the store untouched.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlcompare import schema
from mlcompare.datasets import GENERATORS, DatasetSpec
from mlcompare.errors import InputError
from mlcompare.pairings import Implementation, Pairing, allowed_modules
from mlcompare.selection import Point, Selection, build_catalog, check_selected, parse_entries, point_label
from mlcompare.tables import TableSource, load_cards, parse_file_entry

DTYPES = ("float32", "float64")
#: numpy's legacy seeding (scikit-learn's random_state) takes 32-bit seeds only.
MAX_SEED = 2**32 - 1
#: More warm fits than this is a typo, not a measurement (and would never finish).
MAX_REPEATS = 1000
_TOP_KEYS = {"name", "description", "repeats", "min_time_s", "threads", "system_metrics", "dtype", "seed",
             "timeout_s", "datasets", "pairings", "implementations", "allowed_modules"}
_DATASET_KEYS = {"generator", "n_samples", "n_features", "seed", "test_size", "dtype"}
#: Generator-specific options: name -> (generators that take it, minimum value, integer?)
_GENERATOR_OPTIONS: dict[str, tuple[tuple[str, ...], float, bool]] = {
    "centers": (("blobs",), 1, True),
    "cluster_std": (("blobs",), 0.0, False),
    "n_informative": (("classification", "regression"), 1, True),
    "n_redundant": (("classification",), 0, True),
    "n_classes": (("classification",), 2, True),
    "class_sep": (("classification",), 0.0, False),
    "noise": (("regression",), 0.0, False),
}


@dataclass(frozen=True)
class Case:
    """One pairing × implementation × dataset (× sweep point): one child run."""

    pairing: Pairing
    implementation: Implementation
    dataset: DatasetSpec
    shared_point: Point = ()  # swept shared params at this case (the baseline follows them)
    impl_point: Point = ()  # swept params of this implementation only

    @property
    def is_baseline(self) -> bool:
        return self.implementation.name == self.pairing.baseline

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
        return f"{self.pairing.name} · {self.implementation.name} · {self.dataset.label}" + (f" · {label}" if label else "")


@dataclass
class Experiment:
    name: str
    source: str
    sha256: str
    repeats: int
    timeout_s: float
    min_time_s: float
    threads: int | None  # None: every physical core
    system_metrics: bool
    datasets: list[DatasetSpec]
    pairings: list[Pairing]
    implementations: list[str] | None
    raw: dict[str, Any] = field(repr=False, default_factory=dict)
    selections: list[Selection] = field(default_factory=list)
    allowed_modules: tuple[str, ...] = ()  # module prefixes estimators may be imported from

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
                        out.extend(Case(pairing, variant, spec, shared_point, impl_point)
                                   for impl_point, variant in sel.implementation_variants(impl))
        return out

    def _selected(self, impl: Implementation) -> bool:
        return self.implementations is None or bool({impl.name, impl.library} & set(self.implementations))


def load_experiment(path: str | Path, repeats: int | None = None,
                    implementations: list[str] | None = None,
                    catalog: dict[str, Pairing] | None = None,
                    timeout_s: float | None = None,
                    pairing_paths: list[str] | None = None,
                    allow_modules: list[str] | None = None) -> Experiment:
    """Read and validate an experiment file; CLI overrides are validated the same way.

    `pairing_paths` (`--pairings`) add pairing files to the catalog and to the selection;
    `allow_modules` (`--allow-module`) extend the import allow-list.
    """
    path = Path(path)
    source = str(path)
    data = schema.load_yaml_mapping(path, source)
    schema.check_keys(source, "", data, _TOP_KEYS, {"name", "datasets"})
    file_modules = data.get("allowed_modules") or []
    if not isinstance(file_modules, list):
        raise InputError(source, "allowed_modules", f"expected a list of module names, got {schema.type_name(file_modules)}")
    allowed_modules(file_modules, source=source, field_="allowed_modules")
    allowed = allowed_modules([*file_modules, *(allow_modules or [])])
    added: list[str] = []
    if catalog is None:
        catalog, added = build_catalog(allowed, pairing_paths or [])
    else:
        catalog = dict(catalog)

    name = schema.expect_name(source, "name", data["name"], limit=200)
    schema.expect_text(source, "description", data.get("description", ""))
    file_repeats = schema.expect_int(source, "repeats", data.get("repeats", 3), minimum=1, maximum=MAX_REPEATS)
    dtype = schema.expect_choice(source, "dtype", data.get("dtype", "float32"), list(DTYPES))
    seed = schema.expect_int(source, "seed", data.get("seed", 0), minimum=0, maximum=MAX_SEED)
    file_timeout_s = schema.expect_number(source, "timeout_s", data.get("timeout_s", 3600), low=1)
    min_time_s = schema.expect_number(source, "min_time_s", data.get("min_time_s", 0.0), low=0.0)
    threads = schema.expect_int(source, "threads", data["threads"]) if "threads" in data else None
    system_metrics = schema.expect_bool(source, "system_metrics", data.get("system_metrics", False))

    entries = data["datasets"]
    if not isinstance(entries, list) or not entries:
        raise InputError(source, "datasets", f"expected a non-empty list of datasets, got {schema.type_name(entries)}")
    cards = None if not any(isinstance(e, dict) and "dataset" in e for e in entries) else load_cards()
    datasets = [spec for i, entry in enumerate(entries)
                for spec in _parse_dataset(source, f"datasets[{i}]", entry, dtype, seed, cards)]

    listed = "pairings" in data
    if listed:
        selections = parse_entries(source, data["pairings"], catalog, allowed, path.parent)
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
    check_selected(selections)
    pairings = [sel.pairing for sel in selections]

    impl_source, impl_field = source, "implementations"
    if implementations is not None:
        impl_source, impl_field, impl_names = "--implementations", "", implementations
    elif "implementations" in data:
        impl_names = schema.expect_str_list(source, "implementations", data["implementations"])
    else:
        impl_names = None
    if impl_names is not None:
        known = {n for p in pairings for impl in p.implementations.values() for n in (impl.name, impl.library)}
        for i, iname in enumerate(impl_names):
            if iname not in known:
                raise InputError(impl_source, f"{impl_field}[{i}]" if impl_field else None,
                                 f"{iname!r} matches no implementation of the selected pairings "
                                 f"(known: {', '.join(sorted(known))})")

    if repeats is not None:
        file_repeats = schema.expect_int("--repeats", None, repeats, minimum=1, maximum=MAX_REPEATS)
    if timeout_s is not None:
        timeout_s = schema.expect_number("--timeout", None, timeout_s, low=1)
    experiment = Experiment(name=name, source=source, sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
                            repeats=file_repeats, timeout_s=file_timeout_s if timeout_s is None else timeout_s,
                            min_time_s=min_time_s, threads=threads, system_metrics=system_metrics,
                            datasets=datasets, pairings=pairings, implementations=impl_names, raw=data,
                            selections=selections, allowed_modules=allowed)
    if not experiment.cases():
        raise InputError(source, "implementations", "selects no case to run")
    return experiment


def _within(spec: DatasetSpec, max_samples: int | None) -> bool:
    """Whether a dataset is small enough for a pairing's `max_samples` (unknown sizes are)."""
    rows = spec.n_samples or (spec.table.rows if spec.table is not None else None)
    return max_samples is None or rows is None or rows <= max_samples


def _generators_for(task: str) -> str:
    from mlcompare.datasets import GENERATOR_TASKS

    generators = [g for g, tasks in GENERATOR_TASKS.items() if task in tasks]
    return ", ".join(generators + [f"or a {task} dataset card or file"])


def _parse_dataset(source: str, field_: str, entry: Any, dtype: str, seed: int,
                   cards: dict[str, TableSource] | None) -> list[DatasetSpec]:
    entry = schema.expect_mapping(source, field_, entry)
    kinds = [k for k in ("generator", "dataset", "file") if k in entry]
    if len(kinds) != 1:
        raise InputError(source, field_, "needs exactly one of generator (synthetic), dataset (a card "
                         "in datasets/) or file (your own CSV / Parquet)")
    test_size = schema.expect_number(source, f"{field_}.test_size", entry.get("test_size", 0.25), 0.05, 0.95)
    spec_dtype = schema.expect_choice(source, f"{field_}.dtype", entry.get("dtype", dtype), list(DTYPES))
    spec_seed = schema.expect_int(source, f"{field_}.seed", entry.get("seed", seed), minimum=0, maximum=MAX_SEED)
    common = {"seed": spec_seed, "test_size": test_size, "dtype": spec_dtype}
    if kinds[0] == "generator":
        return _parse_synthetic(source, field_, entry, common)
    if kinds[0] == "file":
        table = parse_file_entry(entry, source, field_)
    else:
        schema.check_keys(source, field_, entry, {"dataset", "n_samples", "seed", "test_size", "dtype"})
        cards = load_cards() if cards is None else cards
        name = schema.expect_str(source, f"{field_}.dataset", entry["dataset"])
        if name not in cards:
            raise InputError(source, f"{field_}.dataset", f"unknown dataset {name!r} (cards: {', '.join(sorted(cards))})")
        table = cards[name]
    rows = [None]
    if entry.get("n_samples") is not None:
        rows = schema.expect_int_or_list(source, f"{field_}.n_samples", entry["n_samples"], minimum=20)
        for i, n in enumerate(rows):
            if table.rows and n > table.rows:
                raise InputError(source, f"{field_}.n_samples", f"{n} rows requested, {table.name} has {table.rows}")
    kind = "file" if kinds[0] == "file" else "card"
    return [DatasetSpec(name=table.name, n_samples=n, n_features=table.features, kind=kind, table=table, **common)
            for n in rows]


def _parse_synthetic(source: str, field_: str, entry: dict, common: dict[str, Any]) -> list[DatasetSpec]:
    schema.check_keys(source, field_, entry, _DATASET_KEYS | set(_GENERATOR_OPTIONS),
                      {"generator", "n_samples", "n_features"})
    generator = schema.expect_choice(source, f"{field_}.generator", entry["generator"], list(GENERATORS))
    rows = schema.expect_int_or_list(source, f"{field_}.n_samples", entry["n_samples"], minimum=20)
    cols = schema.expect_int_or_list(source, f"{field_}.n_features", entry["n_features"],
                                     minimum=2 if generator == "classification" else 1)
    options = {}
    for key, (generators, low, integer) in _GENERATOR_OPTIONS.items():
        if key not in entry:
            continue
        if generator not in generators:
            raise InputError(source, f"{field_}.{key}", f"not an option of the {generator} generator")
        check = schema.expect_int if integer else schema.expect_number
        options[key] = check(source, f"{field_}.{key}", entry[key], low)
    for d in cols:
        informative = options.get("n_informative", max(2, d // 2) if generator == "classification" else 1)
        if informative + options.get("n_redundant", 0) > d:
            raise InputError(source, f"{field_}.n_informative",
                             f"informative plus redundant features exceed n_features {d}")
        # 2**informative < 2*n_classes, without computing a power of a huge exponent
        if generator == "classification" and informative < (2 * options.get("n_classes", 2) - 1).bit_length():
            raise InputError(source, f"{field_}.n_informative", "too few informative features for "
                             "n_classes (needs 2**n_informative >= 2 * n_classes)")
    return [DatasetSpec(name=generator, n_samples=n, n_features=d, options=options, **common)
            for n, d in itertools.product(rows, cols)]
