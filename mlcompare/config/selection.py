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
from typing import Annotated, Any, Iterable, cast

from pydantic import BeforeValidator, Discriminator, Field, Tag

from mlcompare.config import fields
from mlcompare.config.estimators import check_implementation, check_pairing
from mlcompare.config.pairing import (
    EqualQuality,
    Implementation,
    Pairing,
    PairingModel,
    add_pairing,
    ladder_values,
    load_catalog,
    load_pairing_file,
    load_pairing_paths,
)
from mlcompare.errors import InputError

Point = tuple[tuple[str, Any], ...]  # one point of a sweep: ((name, value), ...)


def build_catalog(allowed: tuple[str, ...], paths: Iterable[str | Path] = (),
                  plugins: bool = True) -> tuple[dict[str, Pairing], list[str]]:
    """The built-in catalog, installed plugins and `--pairings` files; and the names the files added."""
    catalog = load_catalog(allowed=allowed)
    if plugins:
        from mlcompare.config.plugins import discover

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
    #: the budget's values every implementation but the baseline runs at (equal quality; empty: off)
    ladder: tuple[int | float, ...] = ()

    def variants(self) -> list[tuple[Point, Pairing]]:
        """(shared point, the pairing with that point's params) for each shared point."""
        return [(point, replace(self.pairing, params={**self.pairing.params, **dict(point)}) if point
                 else self.pairing) for point in self.shared_grid]

    def implementation_variants(self, impl: Implementation) -> list[tuple[Point, Implementation]]:
        return [(point, replace(impl, params={**impl.params, **dict(point)}) if point else impl)
                for point in self._grid(impl)]

    def _grid(self, impl: Implementation) -> tuple[Point, ...]:
        """The implementation's own points: its sweep, times the equal-quality ladder of its
        budget (under its own name) unless it is the baseline; the reference budget (the
        pairing's own value) is the plain point, the case the equal-parameter table shows."""
        grid = self.impl_grids.get(impl.name, ((),))
        key = self.budget_key(impl)
        if key is None:
            return grid
        reference = self.pairing.params[self._budget]
        return tuple(point + (((key, value),) if value != reference else ())
                     for point in grid for value in self.ladder_with_reference())

    def budget_key(self, impl: Implementation) -> str | None:
        """This implementation's name for the budget when it climbs the ladder; None when it does not."""
        if not self.ladder or impl.name == self.pairing.baseline:
            return None
        budget = self._budget
        return impl.rename.get(budget, budget)

    def ladder_with_reference(self) -> tuple[int | float, ...]:
        """The ladder, the pairing's reference budget added where it is not on it already."""
        reference = self.pairing.params[self._budget]
        return tuple(sorted(set(self.ladder) | {reference}))

    def ladder_value(self, impl: Implementation, point: Point) -> int | float | None:
        """The budget a case of this selection runs at, when it is an equal-quality case."""
        if not self.ladder:
            return None
        budget = self._budget
        key = self.budget_key(impl)
        return dict(point).get(key, self.pairing.params[budget]) if key else self.pairing.params[budget]

    @property
    def _budget(self) -> str:
        """The pairing's budget parameter: a selection has a ladder only for a pairing with one
        (`mlcompare.config.experiment.load_experiment`, `_parse_override`)."""
        return cast(EqualQuality, self.pairing.equal_quality).budget

    @property
    def swept(self) -> bool:
        return len(self.shared_grid) > 1 or any(len(g) > 1 for g in self.impl_grids.values())


def _sweeps(value: Any) -> dict[str, Any]:
    """Parameters to override: a value each, or a list of values to sweep."""
    params = fields.mapping(value or {})
    for key, item in params.items():
        if not isinstance(key, str) or not key.isidentifier():
            fields.fail("parameter names must be Python identifiers", f".{key}")
        if isinstance(item, list) and not item:
            fields.fail("an empty sweep: give at least one value", f".{key}")
        if isinstance(item, dict):
            fields.fail("expected a value or a list of values to sweep, got a mapping", f".{key}")
    return params


Sweeps = fields.checked(dict[str, Any], _sweeps)


class ImplementationOverride(fields.Strict):
    """Overrides of one implementation's own parameters."""

    params: Sweeps = Field(default_factory=dict, description="its parameters: a value, or a list of values "
                           "to sweep (more cases of this implementation against the same baseline)")


class PairingOverride(fields.Strict):
    """A pairing run with other parameters than its file's, or on small datasets only."""

    pairing: fields.NonEmptyStr = Field(description="a pairing name, or a pairing file (.yaml)")
    params: Sweeps = Field(default_factory=dict, description="shared parameters: a value, or a list of values "
                           "to sweep (each point compared with the baseline at the same point); wrap a list value "
                           "in another list to pass it as one value")
    # each name is checked against the pairing's implementations before its value is validated
    implementations: fields.checked(dict[Any, Any], lambda v: fields.mapping(v or {}),
                                    additionalProperties=ImplementationOverride.model_json_schema()) = Field(
        default_factory=dict, description="implementation name -> overrides of its own parameters")
    max_samples: fields.Int(1) = fields.optional("run it only on datasets of at most this many rows")
    equal_quality: fields.checked(list[int | float], ladder_values) = fields.optional(
        "measure the speed-up at equal quality along this ladder of the pairing's budget (default: the "
        "pairing's own ladder, with the experiment's equal_quality: true)")


def _entry_kind(value: Any) -> str:
    if isinstance(value, str):
        return "name"
    return "override" if "pairing" in value else "inline"


def _entry(value: Any) -> Any:
    if not isinstance(value, (str, dict)):
        fields.fail("expected a pairing name, a pairing file (.yaml), an inline pairing or {pairing: NAME, "
                    f"params: ...}}, got {fields.type_name(value)}")
    return value


#: One entry of an experiment's `pairings:` list.
PairingEntry = Annotated[
    Annotated[str, Tag("name"), Field(description="a pairing name, or a pairing file (.yaml) relative to the "
                                                  "experiment")]
    | Annotated[PairingOverride, Tag("override")] | Annotated[PairingModel, Tag("inline")],
    Discriminator(_entry_kind), fields.UNTAGGED, BeforeValidator(_entry)]


def _entry_list(value: Any) -> list:
    if not isinstance(value, list) or not value:
        fields.fail(f"expected a non-empty list of pairings, got {fields.type_name(value)}")
    return value


PairingEntries = fields.checked(list[PairingEntry], _entry_list, minItems=1)


def parse_entries(source: str, entries: list[str | PairingOverride | PairingModel], catalog: dict[str, Pairing],
                  allowed: tuple[str, ...], base_dir: Path) -> list[Selection]:
    """An experiment's `pairings:` list, validated (`PairingEntries`), against the catalog; inline and
    file pairings join the catalog."""
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
        elif isinstance(entry, PairingOverride):
            selections.append(_parse_override(source, at, entry, catalog, base_dir, allowed))
        else:
            pairing = entry.to_pairing(source, at)
            add_pairing(catalog, pairing)
            selections.append(Selection(pairing))
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


def _parse_override(source: str, at: str, entry: PairingOverride, catalog: dict[str, Pairing], base_dir: Path,
                    allowed: tuple[str, ...]) -> Selection:
    name = entry.pairing
    if name.endswith((".yaml", ".yml")):  # a pairing file, overridden
        pairing = _load_file(source, f"{at}.pairing", name, base_dir, allowed)
        add_pairing(catalog, pairing)
        name = pairing.name
    if name not in catalog:
        raise InputError(source, f"{at}.pairing", f"unknown pairing {name!r} (known: {', '.join(sorted(catalog))})")
    base = catalog[name]
    shared_fixed, shared_grid = _split_sweeps(entry.params)
    impls = dict(base.implementations)
    impl_grids: dict[str, tuple[Point, ...]] = {}
    own: dict[str, dict[str, Any]] = {}
    for impl_name, data in entry.implementations.items():
        field_ = f"{at}.implementations.{impl_name}"
        if impl_name not in impls:
            raise InputError(source, field_, f"{name} has no implementation {impl_name!r} "
                             f"(it has: {', '.join(base.implementations)})")
        own[impl_name] = fields.validate(ImplementationOverride, data, source, field_).params
        fixed, grid = _split_sweeps(own[impl_name])
        if len(grid) > 1 and impl_name == base.baseline:
            raise InputError(source, f"{field_}.params", f"{impl_name} is {name}'s baseline: sweep a shared "
                             f"param (under {at}.params) so every implementation follows it")
        impls[impl_name] = replace(impls[impl_name], params={**impls[impl_name].params, **fixed})
        impl_grids[impl_name] = grid
    pairing = replace(base, params={**base.params, **shared_fixed}, implementations=impls)
    ladder = ()
    if entry.equal_quality is not None:
        if pairing.equal_quality is None or not pairing.equal_quality.budget:
            why = f": {pairing.equal_quality.exact}" if pairing.equal_quality else ""
            raise InputError(source, f"{at}.equal_quality", f"{name} has no budget to climb (no equal_quality "
                             f"budget in its pairing file){why}")
        ladder = tuple(entry.equal_quality)
    selection = Selection(pairing, shared_grid, impl_grids, entry.max_samples, ladder)
    _check_override_params(source, at, selection, set(entry.params), own)
    return selection


def _split_sweeps(params: dict[str, Any]) -> tuple[dict, tuple[Point, ...]]:
    """Fixed values, and the grid of the swept ones (lists of two or more) in the order given."""
    fixed, axes = {}, []
    for key, value in params.items():
        if isinstance(value, list) and len(value) > 1:
            axes.append([(key, v) for v in value])
        else:
            fixed[key] = value[0] if isinstance(value, list) else value
    return fixed, tuple(tuple(p) for p in itertools.product(*axes)) if axes else ((),)


def _check_override_params(source: str, at: str, selection: Selection, shared_keys: set[str],
                           impl_params: dict[str, dict[str, Any]]) -> None:
    """The overridden parameters must be accepted by each estimator they reach."""
    _, pairing = selection.variants()[0]
    for impl in pairing.implementations.values():
        _, impl = selection.implementation_variants(impl)[0]
        own = set(impl_params.get(impl.name, {}))
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
