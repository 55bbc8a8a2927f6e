"""mlcompare: the same classical models on CPU and GPU, measured honestly, recorded in MLflow.

The public API is what a plugin needs (`PluginPairing`, `PluginMetric`); everything else
is reached through the command line. The names are imported on first use, so that
`import mlcompare` stays cheap in every case's process.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["PluginMetric", "PluginPairing", "__version__"]


@functools.cache
def version() -> str:
    """The installed distribution's version (`importlib.metadata`): pyproject.toml is the only
    place it is written. A source tree used without installing it (on `PYTHONPATH`, as on a
    GPU lease) reads that file instead; anything else says "unknown"."""
    import re
    from importlib import metadata
    from pathlib import Path

    try:
        return metadata.version("mlcompare")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.M) if pyproject.is_file() else None
        return found.group(1) if found else "unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return version()
    if name in ("PluginMetric", "PluginPairing"):
        from mlcompare.pairings import plugins

        return getattr(plugins, name)
    raise AttributeError(f"module 'mlcompare' has no attribute {name!r}")
