"""What an earlier check found an estimator to accept, kept until the installed libraries change.

Checking an experiment imports every selected estimator's library to read which parameters
its class takes (`config.estimators`): for quick.yaml's seven estimators that is 3 CPU-seconds
here (scikit-learn with SciPy and pandas, then Dask for XGBoost's Dask classes), paid again by
every `run` and `validate` before the suite's first case, while the warm workers import the
same libraries on the same two cores. The classes do not change between two runs unless a
package is installed, upgraded or removed, so a class that passed is remembered with the
parameter names it accepts, under a fingerprint of the installed distributions.

Only what passed is kept: an estimator that cannot be imported, a class without `fit`, or a
parameter the remembered names lack is checked again by importing the class, so every error a
file gets comes from the class itself (and a stale entry can only let a file through to its
case, whose process imports the class and fails with the library's own words). A library that
is not installed in a `site-packages` folder (an editable install, a source tree on the path)
is never remembered: its code changes without a new distribution.

The fingerprint: the Python version and, for every `site-packages` (or `dist-packages`) folder
on `sys.path`, the name and modification time of each distribution's metadata folder, which
pip makes anew at each install. Reading and keeping it is best effort: a cache that cannot be
read or written only costs the imports.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

from mlcompare.data.paths import user_cache_dir
from mlcompare.data.whole_file import written_whole

_FOLDER = "estimator-checks"
_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _package_folders() -> list[Path]:
    return [Path(p) for p in sys.path if p and Path(p).name in ("site-packages", "dist-packages")]


def environment_fingerprint() -> str:
    """The Python version and the installed distributions (names and times of their metadata)."""
    digest = hashlib.sha256(sys.version.encode())
    for folder in _package_folders():
        digest.update(b"\0" + str(folder).encode())
        try:
            with os.scandir(folder) as entries:
                found = sorted((e.name, e.stat().st_mtime_ns) for e in entries if e.name.endswith(_METADATA_SUFFIXES))
        except OSError:
            continue
        for name, mtime in found:
            digest.update(f"\0{name}\0{mtime}".encode())
    return digest.hexdigest()[:32]


def installed_in_packages(library: str) -> bool:
    """Whether the library's top-level package lies in a `site-packages` folder (never imports it)."""
    try:
        spec = importlib.util.find_spec(library.split(".", 1)[0])
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    folders = list(spec.submodule_search_locations or [])
    where = spec.origin if spec.has_location and spec.origin else next(iter(folders), None)
    if not where:
        return False
    return any(part in ("site-packages", "dist-packages") for part in Path(where).parts[:-1])


class CheckCache:
    """The accepted parameters of the estimators that passed, for one environment."""

    def __init__(self, folder: Path | None = None, fingerprint: str | None = None) -> None:
        self._folder = folder
        self._fingerprint = fingerprint
        self._entries: dict[str, list[str]] | None = None

    @property
    def path(self) -> Path | None:
        try:
            folder = self._folder or user_cache_dir() / _FOLDER
        except RuntimeError:  # no home directory
            return None
        if self._fingerprint is None:
            self._fingerprint = environment_fingerprint()
        return folder / f"{self._fingerprint}.json"

    def _read(self) -> dict[str, list[str]]:
        if self._entries is None:
            self._entries = {}
            path = self.path
            try:
                found = json.loads(path.read_text()) if path is not None and path.is_file() else {}
            except (OSError, ValueError):
                found = {}
            if isinstance(found, dict):
                self._entries = {k: v for k, v in found.items()
                                 if isinstance(k, str) and isinstance(v, list) and all(isinstance(n, str) for n in v)}
        return self._entries

    def accepted(self, estimator: str) -> frozenset[str] | None:
        """The parameter names `estimator` accepted when it last passed here; None if unknown
        (or if its library is now found outside `site-packages`, e.g. a source tree on the path)."""
        names = self._read().get(estimator)
        if names is None or not installed_in_packages(estimator):
            return None
        return frozenset(names)

    def remember(self, estimator: str, accepted: frozenset[str]) -> None:
        """Keep what a class that passed accepts, where its library is a plain install."""
        if not installed_in_packages(estimator):
            return
        entries, names = self._read(), sorted(accepted)
        if entries.get(estimator) == names:
            return
        entries[estimator] = names
        path = self.path
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with written_whole(path, prefix=".checks-", suffix=".json") as temporary:
                temporary.write_text(json.dumps(entries, sort_keys=True))
        except OSError:
            pass
