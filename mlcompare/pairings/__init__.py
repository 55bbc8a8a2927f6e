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

import importlib
import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from mlcompare import schema
from mlcompare.errors import InputError
from mlcompare.quality import DEFAULT_TOLERANCE, TASK_METRICS

CATALOG_DIR = Path(__file__).parent

#: Estimators may only be imported from these modules (and their submodules): an
#: experiment or pairing file must never be a way to run arbitrary code. Users extend the
#: list with `allowed_modules:` in an experiment, `--allow-module`, or this variable.
DEFAULT_ALLOWED_MODULES = ("sklearn", "cuml", "xgboost", "lightgbm", "sklearnex", "umap")
ALLOWED_MODULES_ENV = "MLCOMPARE_ALLOWED_MODULES"
ALLOWED_MODULE_PREFIXES = tuple(f"{m}." for m in DEFAULT_ALLOWED_MODULES)
#: os.pathsep-separated folders of pairing files loaded after the built-in catalog (set by
#: the user, never by a file; the fault-injection tests use it).
PAIRING_DIRS_ENV = "MLCOMPARE_PAIRING_DIRS"

DEVICES = ("cpu", "gpu")

#: Zero-code-change accelerators: the unchanged estimator runs with the accelerator
#: installed in its worker process. name -> (library to probe, modules it can accelerate)
ACCELERATORS = {"cuml.accel": ("cuml", ("sklearn.", "umap.", "hdbscan."))}

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


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

    @property
    def library(self) -> str:
        """The library that does the work: the accelerator when there is one, the library's
        engine when distributed ("xgboost.dask"), so that selecting "xgboost" selects the
        single-process implementations and "xgboost.dask" the distributed ones."""
        root = self.estimator.split(".", 1)[0]
        return self.accelerator or (f"{root}.{self.distributed}" if self.distributed else root)


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
    at: str = ""  # the field path of the pairing inside its source ("" for a whole file)
    plugin: str = ""  # entry-point name of the plugin that defines it, if any

    @property
    def main_metric(self) -> str:
        return self.metrics[0]

    def field(self, path: str) -> str:
        """A field of this pairing, as named in errors (prefixed when inline)."""
        return schema.join(self.at, path)

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

    def differences(self, impl: Implementation) -> list[str]:
        """What this implementation cannot match of the shared parameters, in words."""
        dropped = [f"{key}: {impl.library} has no such parameter, left at its own default"
                   for key, target in impl.rename.items() if target is None and key in self.params]
        return dropped + list(impl.differences)


_PAIRING_KEYS = {"name", "task", "description", "metrics", "params", "implementations", "baseline",
                 "parity_tolerance"}
_IMPL_KEYS = {"estimator", "device", "rename", "params", "differences", "accelerator", "passthrough", "distributed"}
#: Engines a distributed implementation can train on.
DISTRIBUTED = ("dask",)


def allowed_modules(extra: Iterable[str] = (), source: str = "--allow-module", field_: str | None = None,
                    environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The allow-list as prefixes ("sklearn."): the defaults, $MLCOMPARE_ALLOWED_MODULES, extra."""
    env = os.environ if environ is None else environ
    from_env = [m.strip() for m in env.get(ALLOWED_MODULES_ENV, "").split(",") if m.strip()]
    for name in from_env:
        if not _MODULE_NAME.match(name):
            raise InputError(ALLOWED_MODULES_ENV, None, f"{name!r} is not a module name (e.g. mypackage.models)")
    extra = list(extra)
    for i, name in enumerate(extra):
        if not isinstance(name, str) or not _MODULE_NAME.match(name):
            where = f"{field_}[{i}]" if field_ else None
            raise InputError(source, where, f"{name!r} is not a module name (e.g. mypackage.models)")
    names = dict.fromkeys([*DEFAULT_ALLOWED_MODULES, *from_env, *extra])
    return tuple(f"{n}." for n in names)


def check_import_path(source: str, field_: str, path: str, allowed: tuple[str, ...] | None = None) -> None:
    allowed = allowed_modules() if allowed is None else allowed
    if "." not in path or not _MODULE_NAME.match(path) or not path.startswith(allowed):
        raise InputError(source, field_, f"{path!r} is not under an allowed module "
                         f"({', '.join(p.rstrip('.') for p in allowed)}); add yours with allowed_modules: "
                         f"in the experiment or --allow-module")


def parse_pairing(data: Any, source: str, at: str = "", allowed: tuple[str, ...] | None = None,
                  extra_metrics: Iterable[str] = (), plugin: str = "") -> Pairing:
    """Validate one pairing mapping (from a catalog file, a user file, inline or a plugin)."""
    allowed = allowed_modules() if allowed is None else allowed
    f = lambda path: schema.join(at, path)  # noqa: E731 - a field inside this pairing
    data = schema.expect_mapping(source, at or None, data)
    schema.check_keys(source, at, data, _PAIRING_KEYS, {"name", "task", "implementations"})
    name = schema.expect_name(source, f("name"), data["name"])
    if not re.match(r"^[A-Za-z0-9_.-]+$", name):
        raise InputError(source, f("name"), f"{name!r}: use letters, digits, '_', '-' or '.'")
    task = schema.expect_choice(source, f("task"), data["task"], sorted(TASK_METRICS))
    known_metrics = list(TASK_METRICS[task]) + list(extra_metrics)
    metrics = schema.expect_str_list(source, f("metrics"), data.get("metrics", list(TASK_METRICS[task])))
    for i, metric in enumerate(metrics):
        schema.expect_choice(source, f(f"metrics[{i}]"), metric, known_metrics)
    shared = _parse_params(source, f("params"), data.get("params") or {})
    impls_data = schema.expect_mapping(source, f("implementations"), data["implementations"])
    if not impls_data:
        raise InputError(source, f("implementations"), "expected at least one implementation")
    for key in impls_data:
        if not isinstance(key, str) or not re.match(r"^[A-Za-z0-9_.-]+$", key):
            raise InputError(source, f(f"implementations.{key}"),
                             f"implementation name {key!r}: use letters, digits, '_', '-' or '.'")
    impls = {key: _parse_implementation(source, f(f"implementations.{key}"), key, value, shared, allowed)
             for key, value in impls_data.items()}
    baseline = data.get("baseline", next(iter(impls)))
    schema.expect_choice(source, f("baseline"), baseline, list(impls))
    tolerance = schema.expect_number(source, f("parity_tolerance"),
                                     data.get("parity_tolerance", DEFAULT_TOLERANCE.get(metrics[0], 0.01)), low=0.0)
    description = schema.expect_text(source, f("description"), data.get("description", ""))
    return Pairing(name=name, task=task, metrics=tuple(metrics), params=dict(shared),
                   implementations=impls, baseline=baseline, description=description, source=source,
                   parity_tolerance=tolerance, at=at, plugin=plugin)


def _parse_params(source: str, field_: str, value: Any) -> dict[str, Any]:
    """Estimator keyword arguments: identifier keys, values JSON can carry to the worker."""
    params = schema.expect_mapping(source, field_, value)
    for key in params:
        schema.expect_identifier(source, schema.join(field_, str(key)), key)
    return schema.expect_plain(source, field_, params)


def _parse_implementation(source: str, field_: str, name: str, data: Any, shared: dict,
                          allowed: tuple[str, ...]) -> Implementation:
    data = schema.expect_mapping(source, field_, data)
    schema.check_keys(source, field_, data, _IMPL_KEYS, {"estimator", "device"})
    estimator = schema.expect_str(source, f"{field_}.estimator", data["estimator"])
    check_import_path(source, f"{field_}.estimator", estimator, allowed)
    device = schema.expect_choice(source, f"{field_}.device", data["device"], list(DEVICES))
    rename = schema.expect_mapping(source, f"{field_}.rename", data.get("rename") or {})
    for key, target in rename.items():
        if key not in shared:
            raise InputError(source, f"{field_}.rename.{key}", "renames a parameter that is not in the shared params")
        if target is not None:
            schema.expect_identifier(source, f"{field_}.rename.{key}", target)
    params = _parse_params(source, f"{field_}.params", data.get("params") or {})
    differences = data.get("differences") or []
    if not isinstance(differences, list) or not all(isinstance(d, str) for d in differences):
        raise InputError(source, f"{field_}.differences", "expected a list of sentences")
    accelerator = data.get("accelerator")
    if accelerator is not None:
        schema.expect_choice(source, f"{field_}.accelerator", accelerator, sorted(ACCELERATORS))
        if device != "gpu":
            raise InputError(source, f"{field_}.device", f"an implementation under {accelerator} runs on the gpu")
        if not estimator.startswith(ACCELERATORS[accelerator][1]):
            raise InputError(source, f"{field_}.estimator", f"{accelerator} accelerates only "
                             f"{', '.join(m.rstrip('.') for m in ACCELERATORS[accelerator][1])} estimators")
    distributed = data.get("distributed")
    if distributed is not None:
        schema.expect_choice(source, f"{field_}.distributed", distributed, list(DISTRIBUTED))
        if accelerator is not None:
            raise InputError(source, f"{field_}.distributed", "an implementation is either distributed or "
                             "accelerated, not both")
    passthrough = data.get("passthrough") or []
    if isinstance(passthrough, str):
        passthrough = [passthrough]
    if not isinstance(passthrough, list) or not all(isinstance(p, str) for p in passthrough):
        raise InputError(source, f"{field_}.passthrough", "expected a list of parameter names")
    return Implementation(name=name, estimator=estimator, device=device, rename=dict(rename),
                          params=dict(params), differences=tuple(differences), accelerator=accelerator,
                          passthrough=tuple(passthrough), distributed=distributed)


def import_estimator(path: str, allowed: tuple[str, ...] | None = None) -> type:
    """Import an estimator class by dotted path, refusing anything off the allow-list."""
    check_import_path("estimator", "import", path, allowed_modules() if allowed is None else allowed)
    module_name, _, class_name = path.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def unknown_params(cls: type, params: dict[str, Any]) -> list[str]:
    """Parameter names the estimator does not accept.

    Checked against the constructor's signature and the `get_params()` of a default
    instance, so estimators that forward **kwargs (XGBoost's) are checked too.
    """
    return sorted(set(params) - accepted_params(cls))


def accepted_params(cls: type) -> set[str]:
    """Constructor parameters, also of estimators that forward **kwargs (XGBoost's do)."""
    sig = inspect.signature(cls.__init__)
    names = {n for n, p in sig.parameters.items()
             if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL) and n != "self"}
    if hasattr(cls, "get_params"):
        try:
            names |= set(cls().get_params(deep=False))
        except Exception:  # a constructor that needs arguments: the signature is all we know
            pass
    return names


def load_pairing_file(path: Path, allowed: tuple[str, ...] | None = None, source: str | None = None) -> Pairing:
    """One pairing file (a YAML mapping)."""
    source = source or str(path)
    return parse_pairing(schema.load_yaml_mapping(path, source), source, allowed=allowed)


def load_pairing_paths(paths: Iterable[str | Path], allowed: tuple[str, ...] | None = None,
                       source: str = "--pairings") -> list[Pairing]:
    """Pairing files, or directories of them (every *.yaml / *.yml inside), in order."""
    out = []
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
