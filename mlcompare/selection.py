"""Which pairings a run uses, and with which parameters.

The catalog a run sees is the built-in one, plus installed plugins, plus the files given
with `--pairings`. An experiment's `pairings:` list then picks from it, each entry one of:

- a name: `kmeans`;
- a path to a pairing file, relative to the experiment: `my_pairings/ridge.yaml`;
- an inline pairing (a mapping in the pairing schema, with `name`, `task`, ...);
- a pairing with overrides: `{pairing: random_forest, params: {n_estimators: [100, 500]},
  implementations: {cuml: {params: {n_bins: 64}}}, max_samples: 100000}` (`pairing:` may
  also be a pairing file).

In overrides a list is a sweep: the grid of every combination becomes one case each (wrap
a list value in another list to pass it as one value). Shared sweeps apply to every
implementation and each point is compared against the baseline at the same point;
per-implementation sweeps give that implementation more cases against the same baseline.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from mlcompare import schema
from mlcompare.errors import InputError
from mlcompare.pairings import (Implementation, Pairing, add_pairing, load_catalog, load_pairing_file,
                                load_pairing_paths, parse_pairing)
from mlcompare.pairings.checks import check_implementation, check_pairing

Point = tuple[tuple[str, Any], ...]  # one point of a sweep: ((name, value), ...)

_OVERRIDE_KEYS = {"pairing", "params", "implementations", "max_samples"}


def build_catalog(allowed: tuple[str, ...], paths: Iterable[str | Path] = (),
                  plugins: bool = True) -> tuple[dict[str, Pairing], list[str]]:
    """The built-in catalog, installed plugins and `--pairings` files; and the names the files added."""
    catalog = load_catalog(allowed=allowed)
    if plugins:
        from mlcompare.plugins import discover

        for pairing in discover(allowed):
            add_pairing(catalog, pairing)
    added = []
    for pairing in load_pairing_paths(paths, allowed):
        add_pairing(catalog, pairing)
        added.append(pairing.name)
    return catalog, added


@dataclass(frozen=True)
class Selection:
    """One pairing as an experiment runs it: overrides applied, sweeps as grids."""

    pairing: Pairing
    shared_grid: tuple[Point, ...] = ((),)
    impl_grids: dict[str, tuple[Point, ...]] = field(default_factory=dict)
    max_samples: int | None = None

    def variants(self) -> list[tuple[Point, Pairing]]:
        """(shared point, the pairing with that point's params) for each shared point."""
        return [(point, replace(self.pairing, params={**self.pairing.params, **dict(point)}) if point
                 else self.pairing) for point in self.shared_grid]

    def implementation_variants(self, impl: Implementation) -> list[tuple[Point, Implementation]]:
        return [(point, replace(impl, params={**impl.params, **dict(point)}) if point else impl)
                for point in self.impl_grids.get(impl.name, ((),))]

    @property
    def swept(self) -> bool:
        return len(self.shared_grid) > 1 or any(len(g) > 1 for g in self.impl_grids.values())


def parse_entries(source: str, entries: Any, catalog: dict[str, Pairing], allowed: tuple[str, ...],
                  base_dir: Path) -> list[Selection]:
    """An experiment's `pairings:` list (validated; inline and file pairings join the catalog)."""
    if not isinstance(entries, list) or not entries:
        raise InputError(source, "pairings", f"expected a non-empty list of pairings, got {schema.type_name(entries)}")
    selections: list[Selection] = []
    for i, entry in enumerate(entries):
        at = f"pairings[{i}]"
        if isinstance(entry, str) and entry.endswith((".yaml", ".yml")):
            pairing = _load_file(source, at, entry, base_dir, allowed)
            add_pairing(catalog, pairing)
            selections.append(Selection(pairing))
        elif isinstance(entry, str):
            if entry not in catalog:
                raise InputError(source, at, f"unknown pairing {entry!r} (known: {', '.join(sorted(catalog))})")
            selections.append(Selection(catalog[entry]))
        elif isinstance(entry, dict) and "pairing" in entry:
            selections.append(_parse_override(source, at, entry, catalog, base_dir, allowed))
        elif isinstance(entry, dict):
            pairing = parse_pairing(entry, source, at=at, allowed=allowed)
            add_pairing(catalog, pairing)
            selections.append(Selection(pairing))
        else:
            raise InputError(source, at, f"expected a pairing name, a pairing file (.yaml), an inline pairing "
                             f"or {{pairing: NAME, params: ...}}, got {schema.type_name(entry)}")
    seen: dict[str, int] = {}
    for i, sel in enumerate(selections):
        if sel.pairing.name in seen:
            raise InputError(source, f"pairings[{i}]", f"pairing {sel.pairing.name!r} is already selected by "
                             f"pairings[{seen[sel.pairing.name]}]; sweep its params in one entry instead")
        seen[sel.pairing.name] = i
    return selections


def _load_file(source: str, at: str, entry: str, base_dir: Path, allowed: tuple[str, ...]) -> Pairing:
    path = Path(entry) if Path(entry).is_absolute() else base_dir / entry
    if not path.exists():
        raise InputError(source, at, f"no pairing file {entry!r} (paths are relative to the experiment file)")
    return load_pairing_file(path, allowed)


def _parse_override(source: str, at: str, entry: dict, catalog: dict[str, Pairing], base_dir: Path,
                    allowed: tuple[str, ...]) -> Selection:
    schema.check_keys(source, at, entry, _OVERRIDE_KEYS, {"pairing"})
    name = schema.expect_str(source, f"{at}.pairing", entry["pairing"])
    if name.endswith((".yaml", ".yml")):  # a pairing file, overridden
        pairing = _load_file(source, f"{at}.pairing", name, base_dir, allowed)
        add_pairing(catalog, pairing)
        name = pairing.name
    if name not in catalog:
        raise InputError(source, f"{at}.pairing", f"unknown pairing {name!r} (known: {', '.join(sorted(catalog))})")
    base = catalog[name]
    shared_fixed, shared_grid = _split_sweeps(source, f"{at}.params",
                                              schema.expect_mapping(source, f"{at}.params", entry.get("params") or {}))
    impls_data = schema.expect_mapping(source, f"{at}.implementations", entry.get("implementations") or {})
    impls = dict(base.implementations)
    impl_grids: dict[str, tuple[Point, ...]] = {}
    for impl_name, data in impls_data.items():
        field_ = f"{at}.implementations.{impl_name}"
        if impl_name not in impls:
            raise InputError(source, field_, f"{name} has no implementation {impl_name!r} "
                             f"(it has: {', '.join(base.implementations)})")
        data = schema.expect_mapping(source, field_, data)
        schema.check_keys(source, field_, data, {"params"})
        fixed, grid = _split_sweeps(source, f"{field_}.params",
                                    schema.expect_mapping(source, f"{field_}.params", data.get("params") or {}))
        if len(grid) > 1 and impl_name == base.baseline:
            raise InputError(source, f"{field_}.params", f"{impl_name} is {name}'s baseline: sweep a shared "
                             f"param (under {at}.params) so every implementation follows it")
        impls[impl_name] = replace(impls[impl_name], params={**impls[impl_name].params, **fixed})
        impl_grids[impl_name] = grid
    pairing = replace(base, params={**base.params, **shared_fixed}, implementations=impls)
    max_samples = None
    if "max_samples" in entry:
        max_samples = schema.expect_int(source, f"{at}.max_samples", entry["max_samples"], minimum=1)
    selection = Selection(pairing, shared_grid, impl_grids, max_samples)
    _check_override_params(source, at, base, selection, set(entry.get("params") or {}), impls_data)
    return selection


def _split_sweeps(source: str, field_: str, params: dict) -> tuple[dict, tuple[Point, ...]]:
    """Fixed values, and the grid of the swept ones (lists) in the order given."""
    fixed, axes = {}, []
    for key, value in params.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise InputError(source, f"{field_}.{key}", "parameter names must be Python identifiers")
        if isinstance(value, list):
            if not value:
                raise InputError(source, f"{field_}.{key}", "an empty sweep: give at least one value")
            if len(value) == 1:
                fixed[key] = value[0]
            else:
                axes.append([(key, v) for v in value])
        elif isinstance(value, dict):
            raise InputError(source, f"{field_}.{key}", "expected a value or a list of values to sweep, got a mapping")
        else:
            fixed[key] = value
    return fixed, tuple(tuple(p) for p in itertools.product(*axes)) if axes else ((),)


def _check_override_params(source: str, at: str, base: Pairing, selection: Selection, shared_keys: set[str],
                           impls_data: dict) -> None:
    """The overridden parameters must be accepted by each estimator they reach."""
    _, pairing = selection.variants()[0]
    for impl in pairing.implementations.values():
        _, impl = selection.implementation_variants(impl)[0]
        own = set((impls_data.get(impl.name) or {}).get("params") or {})
        origin: dict[str, str] = {k: f"{at}.implementations.{impl.name}.params.{k}" for k in own}
        for key in shared_keys:
            target = impl.rename.get(key, key)
            if target is not None and target not in origin:
                origin[target] = f"{at}.params.{key}"
        params = {k: v for k, v in pairing.estimator_params(impl).items() if k in origin}
        check_implementation(pairing, impl, params, source=source, field_of=origin.__getitem__)


def check_selected(selections: list[Selection]) -> None:
    """Import every selected estimator whose library is installed, check its params."""
    checked = set()
    for sel in selections:
        key = (sel.pairing.source, sel.pairing.at, sel.pairing.name)
        if key not in checked:
            checked.add(key)
            # overridden params were checked against the experiment file while parsing
            check_pairing(sel.pairing)


def point_label(point: Point) -> str:
    return ", ".join(f"{k}={v}" for k, v in point)
