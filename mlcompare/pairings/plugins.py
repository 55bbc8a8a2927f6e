"""Python plugins: pairings that need code, through the entry-point group `mlcompare.pairings`.

This module finds and loads the entry points and registers their metrics; it sits below both
sides, because a case's process loads its plugin too (`hooks`). Turning a plugin's pairing into
a checked `Pairing` is the configuration's job (`mlcompare.config.plugins.discover`).

A plugin is an installed package whose entry point names a `PluginPairing` (or a plain
mapping, or a function returning either). The pairing itself is the same data as a YAML
pairing; the code is optional: `prepare` rewrites the data every implementation sees
(custom data preparation), `metrics` adds quality metrics. Estimators may come from the
plugin's own top-level package besides the allow-listed libraries: installing a package
is already trusting its code, which an experiment file is not.

Example, in the plugin's pyproject.toml:

    [project.entry-points."mlcompare.pairings"]
    ridge_log_target = "my_plugin:pairing"
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable

import numpy as np

from mlcompare.errors import InputError
from mlcompare.pairings import quality

GROUP = "mlcompare.pairings"

Split = dict[str, np.ndarray]  # X_train, X_test, y_train, y_test


@dataclass(frozen=True)
class PluginMetric:
    """A quality metric computed by plugin code: `fn(y_true, values) -> float`.

    `uses` chooses the values: "pred" (predictions or labels) or "proba" (class
    probabilities: the runner then calls predict_proba).
    """

    fn: Callable[[np.ndarray, np.ndarray], float]
    higher_is_better: bool = True
    uses: str = "pred"
    tolerance: float = 0.01
    relative: bool = False


@dataclass(frozen=True)
class PluginPairing:
    definition: dict[str, Any]  # the pairing, in the YAML schema (docs/pairings.md)
    prepare: Callable[[Split], Split] | None = None  # same arrays in, same keys out
    metrics: dict[str, PluginMetric] = field(default_factory=dict)
    allowed_modules: tuple[str, ...] = ()  # more modules its estimators may come from


def plugin_source(ep: metadata.EntryPoint) -> str:
    return f"plugin {ep.name} ({ep.value})"


def installed_entry_points() -> list[metadata.EntryPoint]:
    seen: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=GROUP):
        seen.setdefault(ep.name, ep)  # the first on sys.path wins, as for imports
    return sorted(seen.values(), key=lambda ep: ep.name)


def load_plugin(ep: metadata.EntryPoint) -> PluginPairing:
    source = plugin_source(ep)
    try:
        obj = ep.load()
    except Exception as exc:  # noqa: BLE001 - any failure of plugin code is reported as bad input
        raise InputError(source, None, f"cannot be loaded: {type(exc).__name__}: {exc}") from None
    if callable(obj) and not isinstance(obj, (PluginPairing, dict)):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001
            raise InputError(source, None, f"failed: {type(exc).__name__}: {exc}") from None
    if isinstance(obj, dict):
        obj = PluginPairing(definition=obj)
    if not isinstance(obj, PluginPairing):
        raise InputError(source, None, f"expected a mlcompare.plugins.PluginPairing or a mapping, "
                         f"got {type(obj).__name__}")
    for name, metric in obj.metrics.items():
        if not isinstance(metric, PluginMetric) or metric.uses not in ("pred", "proba"):
            raise InputError(source, f"metrics.{name}", "expected a PluginMetric using 'pred' or 'proba'")
        if name in _registered:  # loaded before in this process (suite and workers load on demand)
            if _registered[name] != metric:
                raise InputError(source, f"metrics.{name}", "another plugin defines a metric of this name")
            continue
        if name in quality.METRICS:
            raise InputError(source, f"metrics.{name}", "a built-in metric has this name")
        _register(name, metric)
    return obj


_registered: dict[str, PluginMetric] = {}


def _register(name: str, metric: PluginMetric) -> None:
    fn, uses = metric.fn, metric.uses
    quality.register_metric(name, quality.Metric(
        fn=lambda y, out: float(fn(y, out[uses])), higher_is_better=metric.higher_is_better,
        needs=frozenset({uses}), tolerance=metric.tolerance, relative=metric.relative))
    _registered[name] = metric


def plugin_modules(ep: metadata.EntryPoint, plugin: PluginPairing) -> list[str]:
    return [ep.value.split(":", 1)[0].split(".", 1)[0], *plugin.allowed_modules]


def allowed_for(name: str) -> list[str]:
    """The extra modules a plugin's estimators may be imported from (for the worker)."""
    ep = _find(name)
    return plugin_modules(ep, load_plugin(ep))


def hooks(name: str) -> PluginPairing:
    """The plugin by entry-point name, its metrics registered (called in the case's worker)."""
    return load_plugin(_find(name))


def _find(name: str) -> metadata.EntryPoint:
    for ep in installed_entry_points():
        if ep.name == name:
            return ep
    raise InputError(f"plugin {name}", None, f"no entry point {name!r} in group {GROUP!r} is installed")
