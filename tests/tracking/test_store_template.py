"""A new SQLite store copied from the migrated template: the same store MLflow makes by
migrating, its own default experiment, and MLflow's way back whenever the template fails.
Real MLflow stores, real SQLite files."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from mlcompare.tracking import store_template
from mlcompare.tracking.client import open_client


@contextmanager
def migrations_seen():
    """The times MLflow said it migrated a new store (its own log line, read, not replaced)."""
    seen: list[str] = []

    class Recording(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "Creating initial MLflow database tables" in record.getMessage():
                seen.append(record.getMessage())

    logger, handler = logging.getLogger("mlflow.store.db.utils"), Recording()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _schema(path: Path) -> dict:
    with closing(sqlite3.connect(path)) as db:
        return {"tables": sorted(db.execute("select type, name, sql from sqlite_master").fetchall(), key=str),
                "revision": db.execute("select version_num from alembic_version").fetchall(),
                "pragmas": [db.execute(f"pragma {p}").fetchone() for p in ("page_size", "user_version", "encoding")]}


def _names(path: Path) -> dict:
    """What two migrated stores share: the tables and indexes by name, and the schema's revision."""
    schema = _schema(path)
    return {"tables": sorted((kind, name) for kind, name, _ in schema["tables"]), "revision": schema["revision"]}


def _experiments(path: Path) -> list[tuple]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute("select experiment_id, name, artifact_location, lifecycle_stage from experiments "
                          "order by experiment_id").fetchall()


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """A user's cache with no template in it yet."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def test_a_new_store_is_a_copy_of_the_template_the_first_one_left_and_holds_what_mlflow_makes(
        tmp_path, own_cache, monkeypatch):
    first, second = tmp_path / "first" / "mlflow.db", tmp_path / "second" / "mlflow.db"
    for folder in ("here", "there"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / "here")
    with migrations_seen() as migrated:
        open_client(f"sqlite:///{first}")
    assert len(migrated) == 1 and store_template.template_path().is_file()
    assert str(store_template.template_path()).startswith(str(own_cache))
    assert _experiments(store_template.template_path()) == []  # the default experiment is each store's own

    monkeypatch.chdir(tmp_path / "there")
    with migrations_seen() as migrated:
        client = open_client(f"sqlite:///{second}")
    assert migrated == []  # copied, not migrated
    assert _schema(second) == _schema(first)
    # MLflow made the default experiment of each, where it puts artifacts from where it was made
    assert _experiments(first) == [(0, "Default", str(tmp_path / "here" / "mlruns" / "0"), "active")]
    assert _experiments(second) == [(0, "Default", str(tmp_path / "there" / "mlruns" / "0"), "active")]
    experiment = client.create_experiment("written")
    run = client.create_run(experiment)
    client.set_terminated(run.info.run_id, "FINISHED")
    with closing(sqlite3.connect(second)) as db:
        assert db.execute("select status from runs").fetchall() == [("FINISHED",)]
    assert _experiments(store_template.template_path()) == []  # the template is never written to


@pytest.mark.parametrize("fault", ["not a database", "another schema revision"])
def test_a_template_mlflow_will_not_open_is_dropped_and_the_store_made_as_before(tmp_path, own_cache, fault):
    made = tmp_path / "made" / "mlflow.db"
    open_client(f"sqlite:///{made}")  # keeps a template
    template = store_template.template_path()
    if fault == "not a database":
        template.write_bytes(b"not SQLite" * 100)
    else:
        with closing(sqlite3.connect(template)) as db:
            db.execute("update alembic_version set version_num = '0123456789ab'")
            db.commit()
    store = tmp_path / "new" / "mlflow.db"
    with migrations_seen() as migrated:
        client = open_client(f"sqlite:///{store}")
    assert len(migrated) == 1  # MLflow made it
    experiment = client.create_experiment("lands in the file")
    assert [name for _, name, _, _ in _experiments(store)] == ["Default", "lands in the file"], experiment
    # the bad one replaced by the store MLflow made (two migrations may list a table's constraints
    # in another order: the names and the revision are what they share)
    assert _names(template) == _names(made) and _experiments(template) == []


def test_an_existing_store_and_other_uris_are_mlflow_s_alone(tmp_path, own_cache):
    existing = tmp_path / "mlflow.db"
    open_client(f"sqlite:///{existing}")
    before = existing.read_bytes()
    shutil.copyfile(store_template.template_path(), tmp_path / "template-before.db")
    assert store_template.new_store_path(f"sqlite:///{existing}") is None
    open_client(f"sqlite:///{existing}")
    assert existing.read_bytes() == before
    for uri in (f"sqlite:///{tmp_path / 'other.db'}?timeout=30", "sqlite://", "sqlite:///:memory:",
                "postgresql://user:secret@host/db", "http://127.0.0.1:5000", str(tmp_path / "mlruns")):
        assert store_template.new_store_path(uri) is None, uri
    assert store_template.new_store_path(f"sqlite:///{tmp_path / 'new.db'}") == tmp_path / "new.db"


def test_a_cache_that_cannot_be_written_costs_only_the_migration(tmp_path, monkeypatch):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    for name in ("one", "two"):
        store = tmp_path / name / "mlflow.db"
        with migrations_seen() as migrated:
            open_client(f"sqlite:///{store}").create_experiment(name)
        assert len(migrated) == 1 and [n for _, n, _, _ in _experiments(store)] == ["Default", name]
    assert blocked.read_text() == ""
