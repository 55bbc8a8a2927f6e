"""mlcompare: the same classical models on CPU and GPU, measured honestly, recorded in MLflow.

The public API is what a plugin needs (`PluginPairing`, `PluginMetric`); everything else
is reached through the command line. The names are imported on first use, so that
`import mlcompare` stays cheap in every case's process.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["PluginMetric", "PluginPairing", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("PluginMetric", "PluginPairing"):
        from mlcompare.pairings import plugins

        return getattr(plugins, name)
    raise AttributeError(f"module 'mlcompare' has no attribute {name!r}")
