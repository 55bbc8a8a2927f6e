"""A new SQLite store copied from a migrated template instead of migrated from nothing.

MLflow makes a new SQLite store by running every Alembic migration since its first schema:
1-3 s of CPU, on every first run and every fresh store (each test's, each bench run's). All
the stores one MLflow version makes hold the same tables, so the first one made here is
kept in the user's cache, emptied of the default experiment, and the next new store starts
as a copy of it: MLflow then finds its tables at the latest revision and adds the default
experiment itself, with this store's artifact location and time, as it does on a store it
migrated. A copy MLflow will not open (a template of another schema) is removed with the
template, and MLflow makes the store as before.

Only a plain `sqlite:///PATH` whose file does not exist yet is made this way; an existing
store, another database and a URI with options are MLflow's alone. The template holds no
run, no experiment and nothing of the environment. Keeping or reading it is best effort: a
cache that cannot be written only costs the migration.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from contextlib import closing, suppress
from pathlib import Path

from mlcompare.data.paths import user_cache_dir

#: What decides the schema MLflow migrates a SQLite store to: one template per combination.
_VERSIONED = ("mlflow", "sqlalchemy", "alembic")


def new_store_path(tracking_uri: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` store that does not exist yet; None otherwise."""
    if not tracking_uri.startswith("sqlite:///") or "?" in tracking_uri:
        return None
    path = Path(tracking_uri[len("sqlite:///"):])
    if not path.name or path.name == ":memory:" or path.exists():
        return None
    return path


def template_path() -> Path | None:
    """Where the template of this MLflow, SQLAlchemy, Alembic and SQLite lies, in the user's
    cache; None where a version or the cache cannot be told."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        stamp = "-".join(f"{name}{version(name)}" for name in _VERSIONED)
        cache = user_cache_dir()
    except (PackageNotFoundError, RuntimeError):  # RuntimeError: no home directory
        return None
    return cache / "store-templates" / f"{stamp}-sqlite{sqlite3.sqlite_version}.db"


def seed(path: Path) -> bool:
    """Copy the template to `path` (a store about to be made); False where there is none."""
    template = template_path()
    if template is None or not template.is_file():
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, path)
    except OSError:  # the store's folder, not the template: that stays
        with suppress(OSError):
            path.unlink(missing_ok=True)
        return False
    return True


def discard(path: Path) -> None:
    """Remove a seeded store that MLflow would not open, and the template it came from."""
    for stale in (path, template_path()):
        if stale is not None:
            with suppress(OSError):
                stale.unlink()


def keep(path: Path) -> None:
    """Keep the store MLflow has just made at `path` as the template, without its default
    experiment; nothing when it holds anything else (another process wrote to it already)."""
    template = template_path()
    if template is None or template.exists():
        return
    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=template.parent, suffix=".partial")
        os.close(handle)
        try:
            with closing(sqlite3.connect(path)) as made, closing(sqlite3.connect(partial)) as copy:
                made.backup(copy)
                empty = _only_the_default_experiment(copy)
                copy.execute("delete from experiment_tags where experiment_id = 0")
                copy.execute("delete from experiments where experiment_id = 0")
                copy.commit()
            if empty:
                os.replace(partial, template)  # whole or not at all, whoever else keeps one now
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    except (OSError, sqlite3.Error):
        pass


def _only_the_default_experiment(db: sqlite3.Connection) -> bool:
    runs = db.execute("select count(*) from runs").fetchone()[0]
    others = db.execute("select count(*) from experiments where experiment_id != 0").fetchone()[0]
    return runs == others == 0
