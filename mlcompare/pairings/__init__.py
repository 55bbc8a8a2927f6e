"""The pairing catalog: one YAML file per model family, loaded and validated here.

A pairing names a task, its quality metrics, the hyper-parameters every implementation
shares (under neutral names), and per implementation the estimator's import path, its
device, renames of shared parameters to the estimator's own names, extra parameters and
the differences in meaning that cannot be matched (written on each run).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlcompare import schema
from mlcompare.errors import InputError
from mlcompare.quality import DEFAULT_TOLERANCE, TASK_METRICS

CATALOG_DIR = Path(__file__).parent

#: Estimators may only be imported from these module prefixes: an experiment or pairing
#: file must never be a way to run arbitrary code.
ALLOWED_MODULE_PREFIXES = ("sklearn.", "cuml.", "xgboost.", "lightgbm.", "sklearnex.", "umap.")

#: The environment (the user's, never a file's) may extend the allow-list and the catalog:
#: comma-separated module names, and os.pathsep-separated folders of pairing files.
ESTIMATOR_MODULES_ENV = "MLCOMPARE_ESTIMATOR_MODULES"
PAIRING_DIRS_ENV = "MLCOMPARE_PAIRING_DIRS"

_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")

DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class Implementation:
    name: str
    estimator: str
    device: str
    rename: dict[str, str | None] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    differences: tuple[str, ...] = ()

    @property
    def library(self) -> str:
        return self.estimator.split(".", 1)[0]


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

    @property
    def main_metric(self) -> str:
        return self.metrics[0]

    def estimator_params(self, impl: Implementation) -> dict[str, Any]:
        """The keyword arguments the implementation's estimator is built with."""
        out: dict[str, Any] = {}
        for key, value in self.params.items():
            target = impl.rename.get(key, key)
            if target is not None:
                out[target] = value
        out.update(impl.params)
        return out

    def differences(self, impl: Implementation) -> list[str]:
        """What this implementation cannot match of the shared parameters, in words."""
        dropped = [f"{key}: {impl.library} has no such parameter, left at its own default"
                   for key, target in impl.rename.items() if target is None and key in self.params]
        return dropped + list(impl.differences)


_PAIRING_KEYS = {"name", "task", "description", "metrics", "params", "implementations", "baseline",
                 "parity_tolerance"}
_IMPL_KEYS = {"estimator", "device", "rename", "params", "differences"}


def parse_pairing(data: dict, source: str) -> Pairing:
    """Validate one pairing mapping (from a catalog file or inline) into a Pairing."""
    schema.check_keys(source, "", data, _PAIRING_KEYS, {"name", "task", "implementations"})
    name = schema.expect_name(source, "name", data["name"])
    task = schema.expect_choice(source, "task", data["task"], sorted(TASK_METRICS))
    metrics = schema.expect_str_list(source, "metrics", data.get("metrics", list(TASK_METRICS[task])))
    for i, metric in enumerate(metrics):
        schema.expect_choice(source, f"metrics[{i}]", metric, list(TASK_METRICS[task]))
    shared = _parse_params(source, "params", data.get("params") or {})
    impls_data = schema.expect_mapping(source, "implementations", data["implementations"])
    if not impls_data:
        raise InputError(source, "implementations", "expected at least one implementation")
    impls = {schema.expect_name(source, f"implementations.{key}", str(key)):
             _parse_implementation(source, f"implementations.{key}", str(key), value, shared)
             for key, value in impls_data.items()}
    baseline = data.get("baseline", next(iter(impls)))
    schema.expect_choice(source, "baseline", baseline, list(impls))
    description = schema.expect_text(source, "description", data.get("description", ""))
    tolerance = schema.expect_number(source, "parity_tolerance",
                                     data.get("parity_tolerance", DEFAULT_TOLERANCE[metrics[0]]), low=0.0)
    return Pairing(name=name, task=task, metrics=tuple(metrics), params=dict(shared),
                   implementations=impls, baseline=baseline, description=description, source=source,
                   parity_tolerance=tolerance)


def _parse_implementation(source: str, field_: str, name: str, data: Any, shared: dict) -> Implementation:
    data = schema.expect_mapping(source, field_, data)
    schema.check_keys(source, field_, data, _IMPL_KEYS, {"estimator", "device"})
    estimator = schema.expect_str(source, f"{field_}.estimator", data["estimator"])
    if not _MODULE_NAME.fullmatch(estimator):
        raise InputError(source, f"{field_}.estimator", f"{estimator!r} is not a dotted import path "
                         "such as sklearn.cluster.KMeans")
    check_import_path(source, f"{field_}.estimator", estimator)
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
    return Implementation(name=name, estimator=estimator, device=device, rename=dict(rename),
                          params=dict(params), differences=tuple(differences))


def _parse_params(source: str, field_: str, value: Any) -> dict[str, Any]:
    """Estimator keyword arguments: identifier keys, values JSON can carry to the worker."""
    params = schema.expect_mapping(source, field_, value)
    for key in params:
        schema.expect_identifier(source, schema.join(field_, str(key)), key)
    return schema.expect_plain(source, field_, params)


def allowed_module_prefixes() -> tuple[str, ...]:
    """The built-in allow-list plus the modules named in $MLCOMPARE_ESTIMATOR_MODULES."""
    extra = []
    for name in os.environ.get(ESTIMATOR_MODULES_ENV, "").split(","):
        name = name.strip()
        if not name:
            continue
        if not _MODULE_NAME.fullmatch(name):
            raise InputError(ESTIMATOR_MODULES_ENV, None, f"{name!r} is not a module name")
        extra.append(name + ".")
    return ALLOWED_MODULE_PREFIXES + tuple(extra)


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


def check_import_path(source: str, field_: str, path: str, allowed: tuple[str, ...] | None = None) -> None:
    allowed = allowed_module_prefixes() if allowed is None else allowed
    if "." not in path or not path.startswith(allowed):
        raise InputError(source, field_, f"{path!r} is not under an allowed module "
                         f"({', '.join(p.rstrip('.') for p in allowed)})")


def import_estimator(path: str) -> type:
    """Import an estimator class by dotted path (callers check the allow-list first)."""
    module_name, _, class_name = path.rpartition(".")
    check_import_path("estimator", "import", path)
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def unknown_params(cls: type, params: dict[str, Any]) -> list[str]:
    """Parameter names the estimator's constructor does not accept (none if it takes **kwargs)."""
    sig = inspect.signature(cls.__init__)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return []
    return sorted(set(params) - set(sig.parameters))


def load_catalog(directory: Path | None = None) -> dict[str, Pairing]:
    """Every pairing file in the catalog folders (or in `directory` alone), keyed by pairing name."""
    catalog: dict[str, Pairing] = {}
    directories = catalog_dirs() if directory is None else [directory]
    for path in (p for d in directories for p in sorted(d.glob("*.yaml"))):
        source = str(path)
        pairing = parse_pairing(schema.load_yaml_mapping(path, source), source)
        if pairing.name in catalog:
            raise InputError(source, "name", f"pairing {pairing.name!r} is also defined in {catalog[pairing.name].source}")
        catalog[pairing.name] = pairing
    return catalog
