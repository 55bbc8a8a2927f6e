"""The MLflow client both sides of tracking use: retried while the store is locked, paginated.

Several suites may write to one store at once. SQLite answers "database is locked" when
another writer holds it for longer than its busy timeout: every call here is retried
then. Creating a new SQLite store is serialised between processes on this machine, as two
processes creating the same store's tables at once fail.
"""

from __future__ import annotations

import fcntl
import functools
import os
import random
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import mlflow
from mlflow.tracking import MlflowClient

_LOCKED = ("database is locked", "database table is locked")
_RETRY_FOR_S = 300.0

T = TypeVar("T")


def _retrying(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call, and call again with growing random pauses while the store reports a lock."""
    deadline = time.monotonic() + _RETRY_FOR_S
    pause = 0.05
    while True:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # MLflow wraps SQLAlchemy's OperationalError in several ways
            if not any(text in str(exc) for text in _LOCKED) or time.monotonic() > deadline:
                raise
        time.sleep(pause * random.uniform(0.5, 1.5))
        pause = min(pause * 2, 2.0)


class _Client:
    """An MlflowClient whose every method is retried while the store is locked."""

    def __init__(self, client: MlflowClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        return functools.partial(_retrying, attr) if callable(attr) else attr


@contextmanager
def _store_creation_lock(tracking_uri: str) -> Iterator[None]:
    """For a SQLite store, hold an OS lock on the folder of its file while it is opened.

    The lock is on the folder, not the database file: SQLite's own locks on the file must
    not be touched, and no lock file is left behind.
    """
    if not tracking_uri.startswith("sqlite:///"):
        yield
        return
    folder = os.path.dirname(os.path.abspath(tracking_uri[len("sqlite:///"):].split("?", 1)[0]))
    os.makedirs(folder, exist_ok=True)
    handle = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def open_client(tracking_uri: str | None = None) -> Any:
    """A retrying client of the store MLflow resolves, created safely next to other suites."""
    uri = tracking_uri or mlflow.get_tracking_uri()
    with _store_creation_lock(uri):
        return _Client(_retrying(MlflowClient, uri))


def paginate(search: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Any]:
    """Every item of an MLflow search (`search_runs`, `search_experiments`), page after page."""
    items, token = [], None
    while True:
        page = search(*args, max_results=1000, page_token=token, **kwargs)
        items.extend(page)
        token = page.token
        if not token:
            return items
