"""Whether a library is installed here, asked without importing it.

Both sides ask: the suite while it checks an experiment (an estimator of a library that is
not installed is skipped, not an error) and a case's process before it touches a library.
Whether an installed library also *loads* on this machine is the device layer's question
(`mlcompare.measure.device.probe.import_problem`).
"""

from __future__ import annotations

import importlib.util


def library_installed(library: str) -> bool:
    """Whether the library's top-level package is installed (never imports it)."""
    return importlib.util.find_spec(library.split(".", 1)[0]) is not None
