"""The MLflow client both sides of tracking use: retried while the store is locked, paginated,
refusals made one line, secrets kept out of its errors.

Several suites may write to one store at once. SQLite answers "database is locked" when
another writer holds it for longer than its busy timeout: every call here is retried
then. Creating a new SQLite store is serialised between processes on this machine, as two
processes creating the same store's tables at once fail; a new one starts as a copy of a
migrated template where this machine has one (`store_template`).

A tracking server that refuses the login (HTTP 401) or the permission (HTTP 403) makes the
call raise `StoreRefused`, an input error: one line naming the server, what it refused and
what to set. MLflow's errors name the URL they called, password included: every error
leaving this client has its URIs masked (`mlcompare.redaction`).
"""

from __future__ import annotations

import fcntl
import functools
import os
import random
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import mlflow
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from mlcompare.errors import InputError
from mlcompare.redaction import redact
from mlcompare.tracking import store_template

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


class StoreRefused(InputError):
    """The tracking server refused the login (401) or the permission (403): bad input, one line
    naming the server (masked), what was refused and what to set; the CLI exits 2."""


#: `MlflowException.error_code` of a refused login and of a refused permission, as MLflow's
#: REST API documents them (HTTP 401 and 403).
UNAUTHENTICATED, PERMISSION_DENIED = "UNAUTHENTICATED", "PERMISSION_DENIED"
#: What a client call asks of the server, in words ({} is its first argument).
_WHAT = {"get_experiment_by_name": "reading experiment {!r}", "get_experiment": "reading experiment {}",
         "search_experiments": "listing the experiments", "create_experiment": "creating experiment {!r}",
         "set_experiment_tag": "writing to experiment {}", "search_runs": "searching the runs of experiment {}",
         "create_run": "creating a run in experiment {}", "get_run": "reading run {}",
         "get_metric_history": "reading the metrics of run {}"}
_WRITES = ("create", "set", "log", "delete", "update")


def _login_user(tracking_uri: str) -> str | None:
    """The user name the request was sent with: the URI's user-info wins (requests puts it in the
    Authorization header over MLflow's), else MLFLOW_TRACKING_USERNAME."""
    from urllib.parse import unquote, urlsplit

    try:
        user = urlsplit(tracking_uri).username
    except ValueError:
        user = None
    return unquote(user) if user else os.environ.get("MLFLOW_TRACKING_USERNAME") or None


def _what(client: MlflowClient, name: str, args: tuple[Any, ...]) -> str:
    """The refused call in words: `creating a run in experiment 'tiny' (id 3)`."""
    subject: Any = args[0] if args else ""
    if isinstance(subject, (list, tuple)):
        subject = ", ".join(map(str, subject))
    if name in ("create_run", "set_experiment_tag", "get_experiment", "search_runs") and str(subject).isdigit():
        try:  # the name the user knows it by; the server may refuse this too
            subject = f"{client.get_experiment(str(subject)).name!r} (id {subject})"
        except Exception:  # noqa: BLE001 - the id is said then
            pass
    if name in _WHAT:
        return _WHAT[name].format(subject)
    return f"{name} ({subject})" if subject != "" else name


def refusal(exc: MlflowException, tracking_uri: str, client: MlflowClient, name: str,
            args: tuple[Any, ...]) -> StoreRefused | None:
    """The one-line error for a refused login or permission, or None for any other error."""
    code = getattr(exc, "error_code", None)
    if code not in (UNAUTHENTICATED, PERMISSION_DENIED):
        return None
    server, user, what = redact(tracking_uri), _login_user(tracking_uri), _what(client, name, args)
    if code == UNAUTHENTICATED:
        who = f"the login of user {user!r}" if user else "a request without a login"
        return StoreRefused(server, None, f"the tracking server refused {who} (HTTP 401) while {what}: set "
                            "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to an account of this server")
    need = "EDIT" if name.startswith(_WRITES) else "READ"
    who = f"user {user!r}" if user else "this request (no login)"
    return StoreRefused(server, None, f"the tracking server refused {who} permission (HTTP 403) for {what}: "
                        f"it needs {need} permission on the experiment; ask an admin of the server to grant it, or "
                        "set MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD to a user who has it")


def scrub(exc: BaseException) -> None:
    """Mask every URI of the exception's message, in place (its traceback is kept)."""
    if isinstance(exc, MlflowException):
        exc.message = redact(exc.message)
    exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)


class _Client:
    """An MlflowClient whose every method is retried while the store is locked, whose refusals
    are `StoreRefused` and whose errors name no secret."""

    def __init__(self, client: MlflowClient, tracking_uri: str) -> None:
        self._client = client
        self._tracking_uri = tracking_uri

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        return functools.partial(self._call, name, attr) if callable(attr) else attr

    def _call(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return _retrying(method, *args, **kwargs)
        except MlflowException as exc:
            refused = refusal(exc, self._tracking_uri, self._client, name, args)
            if refused is not None:
                raise refused from None
            scrub(exc)
            raise
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
            return _Client(_made(uri), uri)
        except Exception as exc:  # noqa: BLE001 - a database store's error may name its URI
            scrub(exc)
            raise


def _made(uri: str) -> MlflowClient:
    """MLflow's client of the store; a new SQLite store copied from the template where there is
    one, and kept as the template where there is none (`store_template`)."""
    new = store_template.new_store_path(uri)
    if new is not None and store_template.seed(new):
        try:
            return _retrying(MlflowClient, uri)
        except Exception:  # noqa: BLE001 - a template MLflow will not open: it makes the store itself
            _forget_engine(new)
            store_template.discard(new)
    client = _retrying(MlflowClient, uri)
    if new is not None:
        store_template.keep(new)
    return client


def _forget_engine(path: Path) -> None:
    """Close the connections MLflow keeps to the SQLite file at `path` (its engines are cached
    per URI): a store made again at that path must not reach the removed file through them."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    engines = getattr(SqlAlchemyStore, "_engine_map", {})
    for uri, engine in list(engines.items()):
        database = getattr(engine.url, "database", None)
        if database and os.path.abspath(database) == os.path.abspath(path):
            engines.pop(uri, None)
            engine.dispose()


def paginate(search: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Any]:
    """Every item of an MLflow search (`search_runs`, `search_experiments`), page after page."""
    items, token = [], None
    while True:
        page = search(*args, max_results=1000, page_token=token, **kwargs)
        items.extend(page)
        token = page.token
        if not token:
            return items
