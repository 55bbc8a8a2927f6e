"""The pairing catalog: one YAML file per model family, loaded and validated here.

A pairing names a task, its quality metrics, the hyper-parameters every implementation
shares (under neutral names), and per implementation the estimator's import path, its
device, renames of shared parameters to the estimator's own names, extra parameters and
the differences in meaning that cannot be matched (written on each run).

Pairings come from this directory, from files the user names, from mappings inline in an
experiment, and from plugins (`mlcompare.plugins`); all go through `parse_pairing`. The
schema is documented in docs/pairings.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import Field, ValidationInfo, field_validator, model_validator

from mlcompare.config import fields
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.errors import InputError
from mlcompare.pairings import CATALOG_DIR
from mlcompare.pairings.imports import allowed_modules, import_path_problem
from mlcompare.pairings.quality import DEFAULT_TOLERANCE, TASK_METRICS

#: os.pathsep-separated folders of pairing files loaded after the built-in catalog (set by
#: the user, never by a file; the fault-injection tests use it).
PAIRING_DIRS_ENV = "MLCOMPARE_PAIRING_DIRS"

DEVICES = ("cpu", "gpu")

#: Zero-code-change accelerators: the unchanged estimator runs with the accelerator
#: installed in its worker process. name -> (library to probe, modules it can accelerate)
ACCELERATORS = {"cuml.accel": ("cuml", ("sklearn.", "umap.", "hdbscan."))}


@dataclass(frozen=True)
class Implementation:
    name: str
    estimator: str
    device: str
    rename: dict[str, str | None] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    differences: tuple[str, ...] = ()
    accelerator: str | None = None  # e.g. "cuml.accel"
    passthrough: tuple[str, ...] = ()  # params the estimator takes through **kwargs, unchecked
    distributed: str | None = None  # "dask": trains on a Dask cluster (mlcompare.distributed)
    host_input: bool = False  # a GPU estimator given numpy arrays: it copies them to the device itself

    @property
    def library(self) -> str:
        """The library that does the work: the accelerator when there is one, the library's
        engine when distributed ("xgboost.dask"), so that selecting "xgboost" selects the
        single-process implementations and "xgboost.dask" the distributed ones."""
        root = self.estimator.split(".", 1)[0]
        return self.accelerator or (f"{root}.{self.distributed}" if self.distributed else root)


@dataclass(frozen=True)
class EqualQuality:
    """How a pairing trades time for quality: the shared parameter that is the budget (trees,
    iterations) and the ladder of its values an equal-quality run measures; or, for an exact
    solver, why equal parameters already are equal quality (`exact`)."""

    budget: str = ""
    ladder: tuple[int | float, ...] = ()
    exact: str = ""


@dataclass(frozen=True)
class Pairing:
    name: str
    task: str
    metrics: tuple[str, ...]
    params: dict[str, Any]
    implementations: dict[str, Implementation]
    baseline: str
    description: str = ""
    source: str = ""
    parity_tolerance: float = 0.0  # for the main metric (the first listed)
    #: concept -> {implementation name or library: the key its fitted model reports it under}
    audit: dict[str, dict[str, str]] = field(default_factory=dict)
    equal_quality: EqualQuality | None = None  # the budget and its ladder (`equal_quality:` in the file)
    at: str = ""  # the field path of the pairing inside its source ("" for a whole file)
    plugin: str = ""  # entry-point name of the plugin that defines it, if any

    @property
    def main_metric(self) -> str:
        return self.metrics[0]

    def field(self, path: str) -> str:
        """A field of this pairing, as named in errors (prefixed when inline)."""
        return fields.join(self.at, path)

    def estimator_params(self, impl: Implementation) -> dict[str, Any]:
        """The keyword arguments the implementation's estimator is built with."""
        out: dict[str, Any] = {}
        for key, value in self.params.items():
            target = impl.rename.get(key, key)
            if target is not None:
                out[target] = value
        out.update(impl.params)
        return out

    def param_field(self, impl: Implementation, name: str) -> str:
        """Where an estimator keyword argument comes from: the impl's params or a shared one."""
        if name in impl.params:
            return self.field(f"implementations.{impl.name}.params.{name}")
        for key in self.params:
            if impl.rename.get(key, key) == name:
                renamed = key in impl.rename
                return self.field(f"implementations.{impl.name}.rename.{key}" if renamed else f"params.{key}")
        return self.field(f"implementations.{impl.name}")

    def audit_keys(self, impl: Implementation) -> dict[str, str]:
        """{concept: the key this implementation's fitted model reports it under}, for the
        concepts its `audit:` table names it in (by implementation name, else by library)."""
        root = impl.estimator.split(".", 1)[0]
        found = {concept: names.get(impl.name, names.get(root)) for concept, names in self.audit.items()}
        return {concept: key for concept, key in found.items() if key}

    def differences(self, impl: Implementation) -> list[str]:
        """What this implementation cannot match of the shared parameters, in words."""
        dropped = [f"{key}: {impl.library} has no such parameter, left at its own default"
                   for key, target in impl.rename.items() if target is None and key in self.params]
        return dropped + list(impl.differences)


#: Engines a distributed implementation can train on.
DISTRIBUTED = ("dask",)
#: Pairing and implementation names: they become run names and --implementations words.
NAME_PATTERN = r"^[A-Za-z0-9_.-]+$"


def _sentences(value: Any) -> list[str]:
    value = value or []
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        fields.fail("expected a list of sentences")
    return value


def _param_names(value: Any) -> list[str]:
    value = value or []
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        fields.fail("expected a list of parameter names")
    return value


Device = fields.Choice(*DEVICES)
#: Checked by the pairing, which knows the shared params.
if TYPE_CHECKING:  # the validated value, for mypy, which cannot read the pydantic type built below
    Renames = dict[str, str | None]
else:
    Renames = fields.checked(dict[Any, Any], lambda v: fields.mapping(v or {}), additionalProperties={
        "anyOf": [{"type": "string", "pattern": f"^{fields.IDENTIFIER.pattern}$"}, {"type": "null"}]})
Sentences = fields.checked(list[str], _sentences)
ParamNames = fields.checked(list[str] | str, _param_names)
Accelerator = fields.nullable(fields.Choice(*sorted(ACCELERATORS)))
Engine = fields.nullable(fields.Choice(*DISTRIBUTED))


class ImplementationModel(fields.Strict):
    """One library's estimator for the pairing's model."""

    estimator: fields.NonEmptyStr = Field(description="import path of the estimator class, e.g. "
                                          "sklearn.linear_model.Ridge (only from allowed modules)")
    device: Device = Field(description="where the estimator computes")
    rename: Renames = Field(default_factory=dict, description="shared parameter -> this estimator's name for it "
                            "(null: it has no such parameter, left at its default and written as a difference)")
    params: fields.Params = Field(default_factory=dict, description="more keyword arguments of this estimator")
    differences: Sentences = Field(default_factory=list, description="differences in meaning that cannot be "
                                   "matched, in words (written on each run)")
    accelerator: Accelerator = Field(None, description="a zero-code-change accelerator the unchanged estimator "
                                     "runs under")
    passthrough: ParamNames = Field(default_factory=list, description="parameters the estimator takes through "
                                    "**kwargs (not checked against its signature)")
    distributed: Engine = Field(None, description="trains on a cluster of this engine")
    host_input: fields.Bool = Field(False, description="a gpu estimator that accepts only host (numpy) arrays "
                                    "and copies them to the device inside fit and predict (CatBoost)")

    @field_validator("estimator")
    @classmethod
    def _allowed_import(cls, value: str, info: ValidationInfo) -> str:
        context = info.context or {}
        problem = import_path_problem(value, context.get("allowed") or allowed_modules())
        if problem:
            fields.fail(problem)
        return value

    @model_validator(mode="after")
    def _engine_rules(self) -> ImplementationModel:
        if self.accelerator is not None:
            if self.device != "gpu":
                fields.fail(f"an implementation under {self.accelerator} runs on the gpu", ".device")
            modules = ACCELERATORS[self.accelerator][1]
            if not self.estimator.startswith(modules):
                fields.fail(f"{self.accelerator} accelerates only {', '.join(m.rstrip('.') for m in modules)} "
                            "estimators", ".estimator")
            if self.distributed is not None:
                fields.fail("an implementation is either distributed or accelerated, not both", ".distributed")
        if self.host_input and (self.device != "gpu" or self.accelerator or self.distributed):
            fields.fail("only a single-process gpu implementation takes host input instead of device arrays",
                        ".host_input")
        return self


def _audit_table(value: Any) -> dict:
    """concept -> {implementation or library name: the key the fitted model reports it under}."""
    value = fields.mapping(value or {})
    for concept, names in value.items():
        fields.within(f".{concept}", fields.identifier, concept)
        fields.within(f".{concept}", fields.mapping, names)
        for who, key in names.items():
            if not isinstance(who, str) or not re.match(NAME_PATTERN, who):
                fields.fail(f"{who!r}: an implementation or library name", f".{concept}.{who}")
            fields.within(f".{concept}.{who}", fields.identifier, key)
    return value


if TYPE_CHECKING:  # the validated value, for mypy, which cannot read the pydantic type built below
    AuditTable = dict[str, dict[str, str]]
else:
    AuditTable = fields.checked(dict[str, dict[str, str]], _audit_table)


def ladder_values(value: Any) -> list[float]:
    """A ladder of budgets: two or more distinct positive numbers, in increasing order."""
    if not isinstance(value, list) or len(value) < 2:
        fields.fail(f"expected a list of two or more budgets, got {fields.short_repr(value)}")
    for i, item in enumerate(value):
        fields.within(f"[{i}]", lambda v: fields.number(v, 1e-12), item)
    if sorted(set(value)) != list(value):
        fields.fail("expected distinct budgets in increasing order")
    return value


class EqualQualityModel(fields.Strict):
    """The budget that trades time for quality, and its default ladder; or `exact`."""

    budget: fields.Name(100) = fields.optional("the shared parameter that buys quality with time "
                                               "(n_estimators, max_iter)")
    ladder: fields.checked(list[int | float], ladder_values) = fields.optional(
        "the budget's values an equal-quality run measures, increasing")
    exact: fields.Text = fields.optional("for an exact solver: why equal parameters are equal quality")

    @classmethod
    def check_keys_together(cls, data: dict) -> None:
        if ("exact" in data) == ("budget" in data or "ladder" in data):
            fields.fail("needs either budget and ladder (a budget that buys quality with time) or exact (why "
                        "equal parameters are equal quality)")
        if ("budget" in data) != ("ladder" in data):
            fields.fail("needs both budget and ladder")


def _implementations(value: Any) -> dict:
    value = fields.mapping(value)
    if not value:
        fields.fail("expected at least one implementation")
    for key in value:
        if not isinstance(key, str) or not re.match(NAME_PATTERN, key):
            fields.fail(f"implementation name {key!r}: use letters, digits, '_', '-' or '.'", f".{key}")
    return value


def _pairing_name(value: Any) -> str:
    name = fields.printable_name(value)
    if not re.match(NAME_PATTERN, name):
        fields.fail(f"{name!r}: use letters, digits, '_', '-' or '.'")
    return name


PairingName = fields.checked(str, _pairing_name, maxLength=100, pattern=NAME_PATTERN)
Task = fields.Choice(*sorted(TASK_METRICS))
if TYPE_CHECKING:  # the validated value, for mypy, which cannot read the pydantic type built below
    Implementations = dict[str, ImplementationModel]
else:
    Implementations = fields.checked(dict[str, ImplementationModel], _implementations, minProperties=1,
                                     propertyNames={"pattern": NAME_PATTERN})


class PairingModel(fields.Strict):
    """A pairing: one model family, its shared hyper-parameters, and each library's estimator for it."""

    name: PairingName = Field(description="the pairing's name (letters, digits, '_', '-', '.')")
    task: Task = Field(description="what the estimators are asked to do")
    metrics: fields.Names = fields.optional("quality metrics of the task, the main one first "
                                            "(default: every metric of the task)")
    params: fields.Params = Field(default_factory=dict, description="hyper-parameters every implementation "
                                  "shares, under neutral names")
    implementations: Implementations = Field(description="implementation name -> its estimator")
    baseline: str = fields.optional("the implementation the others are compared with (default: the first)")
    parity_tolerance: fields.Number(0.0) = fields.optional("how far the main metric may fall behind the "
                                                           "baseline's and still be ok (default: the metric's own)")
    description: fields.Text = Field("", description="what the pairing compares, in words")
    equal_quality: EqualQualityModel = fields.optional(
        "the budget that trades time for quality and its ladder, for speed-ups at equal quality; or exact")
    audit: AuditTable = Field(default_factory=dict, description="the defaults that decide the work and the "
                              "model, compared as each fitted model reports them: concept -> {implementation "
                              "or library: its key}, e.g. l2: {sklearn: l2_regularization, xgboost: lambda}")

    @field_validator("metrics")
    @classmethod
    def _task_metrics(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if "task" in info.data:
            known = (*TASK_METRICS[info.data["task"]], *(info.context or {}).get("extra_metrics", ()))
            for i, metric in enumerate(value):
                fields.within(f"[{i}]", lambda m: fields.choice(m, known), metric)
        return value

    @field_validator("implementations")
    @classmethod
    def _renames(cls, value: dict[str, ImplementationModel], info: ValidationInfo) -> dict:
        """Each rename: a shared parameter -> the estimator's own name for it, or null."""
        if "params" not in info.data:  # the params are wrong, and that is the error
            return value
        for name, impl in value.items():
            for key, target in impl.rename.items():
                if key not in info.data["params"]:
                    fields.fail("renames a parameter that is not in the shared params", f".{name}.rename.{key}")
                if target is not None:
                    fields.within(f".{name}.rename.{key}", fields.identifier, target)
        return value

    @field_validator("equal_quality")
    @classmethod
    def _budget_is_shared(cls, value: EqualQualityModel | None, info: ValidationInfo) -> Any:
        """The budget is one of the shared params: every implementation gets it, under its own name."""
        if value is not None and value.budget and "params" in info.data and value.budget not in info.data["params"]:
            fields.fail(f"{value.budget!r} is not one of the shared params "
                        f"({', '.join(info.data['params']) or 'none'})", ".budget")
        return value

    @field_validator("baseline", mode="before")
    @classmethod
    def _known_baseline(cls, value: Any, info: ValidationInfo) -> Any:
        if "implementations" in info.data:
            fields.choice(value, tuple(info.data["implementations"]))
        return value

    def to_pairing(self, source: str, at: str = "", plugin: str = "") -> Pairing:
        """The runtime pairing, defaults filled in."""
        metrics = tuple(self.metrics or TASK_METRICS[self.task])
        impls = {name: Implementation(
            name=name, estimator=impl.estimator, device=impl.device, rename=dict(impl.rename),
            params=dict(impl.params), differences=tuple(impl.differences), accelerator=impl.accelerator,
            passthrough=tuple(impl.passthrough), distributed=impl.distributed, host_input=impl.host_input)
            for name, impl in self.implementations.items()}
        tolerance = self.parity_tolerance
        return Pairing(name=self.name, task=self.task, metrics=metrics, params=dict(self.params),
                       implementations=impls, baseline=self.baseline or next(iter(impls)),
                       description=self.description, source=source, at=at, plugin=plugin,
                       audit={concept: dict(names) for concept, names in self.audit.items()},
                       equal_quality=None if self.equal_quality is None else EqualQuality(
                           self.equal_quality.budget or "", tuple(self.equal_quality.ladder or ()),
                           self.equal_quality.exact or ""),
                       parity_tolerance=DEFAULT_TOLERANCE.get(metrics[0], 0.01) if tolerance is None else tolerance)


def parse_pairing(data: Any, source: str, at: str = "", allowed: tuple[str, ...] | None = None,
                  extra_metrics: Iterable[str] = (), plugin: str = "") -> Pairing:
    """Validate one pairing mapping (from a catalog file, a user file, inline or a plugin)."""
    allowed = allowed_modules() if allowed is None else allowed
    context = {"allowed": allowed, "extra_metrics": tuple(extra_metrics)}
    return fields.validate(PairingModel, data, source, at, context).to_pairing(source, at, plugin)


def load_pairing_file(path: Path, allowed: tuple[str, ...] | None = None, source: str | None = None) -> Pairing:
    """One pairing file (a YAML mapping)."""
    source = source or str(path)
    return parse_pairing(load_yaml_mapping(path, source), source, allowed=allowed)


def load_pairing_paths(paths: Iterable[str | Path], allowed: tuple[str, ...] | None = None,
                       source: str = "--pairings") -> list[Pairing]:
    """Pairing files, or directories of them (every *.yaml / *.yml inside), in order."""
    out: list[Pairing] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
            if not files:
                raise InputError(source, None, f"{path}: no *.yaml pairing files in this directory")
            out.extend(load_pairing_file(p, allowed) for p in files)
        else:
            out.append(load_pairing_file(path, allowed))
    return out


def catalog_dirs() -> list[Path]:
    """The built-in catalog, then every folder named in $MLCOMPARE_PAIRING_DIRS."""
    dirs = [CATALOG_DIR]
    for entry in os.environ.get(PAIRING_DIRS_ENV, "").split(os.pathsep):
        if not entry.strip():
            continue
        path = Path(entry).expanduser()
        if not path.is_dir():
            raise InputError(PAIRING_DIRS_ENV, None, f"{entry!r} is not a folder")
        dirs.append(path)
    return dirs


def load_catalog(directory: Path | None = None, allowed: tuple[str, ...] | None = None) -> dict[str, Pairing]:
    """Every pairing file in the catalog folders (or in `directory` alone), keyed by pairing name."""
    catalog: dict[str, Pairing] = {}
    directories = catalog_dirs() if directory is None else [directory]
    for path in (p for d in directories for p in sorted(d.glob("*.yaml"))):
        add_pairing(catalog, load_pairing_file(path, allowed))
    return catalog


def add_pairing(catalog: dict[str, Pairing], pairing: Pairing) -> None:
    """Add a pairing to a catalog; a second pairing of the same name is an error naming both."""
    if pairing.name in catalog:
        other = catalog[pairing.name]
        where = f"{other.source}" + (f" ({other.at})" if other.at else "")
        raise InputError(pairing.source, pairing.field("name"),
                         f"pairing {pairing.name!r} is already defined in {where}; give this one another name")
    catalog[pairing.name] = pairing
