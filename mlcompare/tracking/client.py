"""The MLflow client both sides of tracking use: retried while the store is locked, paginated,
secrets kept out of its errors.

Several suites may write to one store at once. SQLite answers "database is locked" when
another writer holds it for longer than its busy timeout: every call here is retried
then. Creating a new SQLite store is serialised between processes on this machine, as two
processes creating the same store's tables at once fail.

MLflow's errors name the URL they called, password included: every error
leaving this client has its URIs masked (`mlcompare.redaction`).
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
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from mlcompare.redaction import redact

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


def scrub(exc: BaseException) -> None:
    """Mask every URI of the exception's message, in place (its traceback is kept)."""
    if isinstance(exc, MlflowException):
        exc.message = redact(exc.message)
    exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)


class _Client:
    """An MlflowClient whose every method is retried while the store is locked, and whose
    errors name no secret."""

    def __init__(self, client: MlflowClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        return functools.partial(self._call, attr) if callable(attr) else attr

    def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return _retrying(method, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any error may name the URL it called
            scrub(exc)
            raise


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
    # MLflow prints "View run ... at: URL" to stdout when a run ends on a server, the URL with the
    # password of the URI in it; the suite says where its runs are itself, masked
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    with _store_creation_lock(uri):
        try:
            return _Client(_retrying(MlflowClient, uri))
        except Exception as exc:  # noqa: BLE001 - a database store's error may name its URI
            scrub(exc)
            raise


def paginate(search: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Any]:
    """Every item of an MLflow search (`search_runs`, `search_experiments`), page after page."""
    items, token = [], None
    while True:
        page = search(*args, max_results=1000, page_token=token, **kwargs)
        items.extend(page)
        token = page.token
        if not token:
            return items
