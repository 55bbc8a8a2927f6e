"""Where mlcompare's cache lies, and names from dataset cards that become paths: each must stay
inside the dataset cache.

A card is data, often written by someone else. The name it gives its download and the
archive member it reads are checked twice: while the card is validated (one line naming the
field) and again where the path is used, so that no name and no link can reach outside the
cache whatever called the code.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """mlcompare's folder in the user's cache: `$XDG_CACHE_HOME/mlcompare`, else `~/.cache/mlcompare`
    (the dataset cache's default home, and the SQLite store template's)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlcompare"


def file_name_problem(name: str) -> str | None:
    """Why `name` is not one plain file name inside the cache, in words; None when it is."""
    if name in ("", ".", "..") or any(ch in name for ch in "/\\\0") or name.startswith("~"):
        return f"{name!r} is not a plain file name (no folders, '..', '~' or '/'): it must stay inside the cache"
    return None


def member_problem(name: str) -> str | None:
    """Why `name` is not a relative path inside an archive, in words; None when it is."""
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith(("/", "\\", "~")) or ":" in parts[0] or ".." in parts or "\0" in name:
        return f"{name!r} is not a relative path inside the archive (no '..', drive or leading '/')"
    return None


def inside(folder: Path, name: str) -> Path | None:
    """`folder / name` when `name` is a plain file name and the path, links followed, stays in
    `folder`; None otherwise."""
    if file_name_problem(name):
        return None
    path = folder / name
    return path if path.resolve().parent == folder.resolve() else None
