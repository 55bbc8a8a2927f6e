"""Plugin pairings, validated like YAML pairings (the entry points: `mlcompare.pairings.plugins`)."""

from __future__ import annotations

from mlcompare.config.pairing import Pairing, parse_pairing
from mlcompare.pairings.imports import allowed_modules
from mlcompare.pairings.plugins import installed_entry_points, load_plugin, plugin_modules, plugin_source


def discover(allowed: tuple[str, ...] | None = None) -> list[Pairing]:
    """Every installed plugin's pairing, validated like a YAML pairing."""
    pairings = []
    for ep in installed_entry_points():
        plugin = load_plugin(ep)
        own = allowed_modules(plugin_modules(ep, plugin), source=plugin_source(ep), field_="allowed_modules")
        pairings.append(parse_pairing(plugin.definition, plugin_source(ep), allowed=tuple(dict.fromkeys(
            [*(allowed or ()), *own])), extra_metrics=list(plugin.metrics), plugin=ep.name))
    return pairings
