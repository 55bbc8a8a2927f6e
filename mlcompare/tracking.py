"""The only module that talks to MLflow.

A suite is a parent run; each case is a child run nested under it. Under `mlflow run`
the parent is the run `mlflow run` created (found through MLFLOW_RUN_ID), otherwise the
suite creates and closes its own. The store is whatever MLflow resolves: the
MLFLOW_TRACKING_URI when set, else MLflow's own default (SQLite `mlflow.db` here).

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
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import mlflow
from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS, ErrorCode
from mlflow.tracking import MlflowClient

# Limits of one log_batch call in MLflow's REST API (the SQLite store takes the same).
_MAX_PARAMS, _MAX_TAGS, _MAX_METRICS = 100, 100, 1000
_MAX_PARAM_LEN = 6000
_MAX_RUN_NAME_LEN = 250  # the runs.name column

#: Tags that let `--resume` find what an earlier suite already finished.
EXPERIMENT_FINGERPRINT_TAG = "mlcompare.experiment_fingerprint"
CASE_FINGERPRINT_TAG = "mlcompare.case_fingerprint"

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


def open_client() -> Any:
    """A retrying client of the store MLflow resolves, created safely next to other suites."""
    uri = mlflow.get_tracking_uri()
    with _store_creation_lock(uri):
        return _Client(_retrying(MlflowClient, uri))


class Recorder:
    """Writes one suite and its cases into the tracking store."""

    def __init__(self, experiment_name: str) -> None:
        self.client = open_client()
        self.tracking_uri = mlflow.get_tracking_uri()
        self.outer_run_id = os.environ.get("MLFLOW_RUN_ID")  # set by `mlflow run`
        if self.outer_run_id:
            self.experiment_id = self.client.get_run(self.outer_run_id).info.experiment_id
        elif os.environ.get("MLFLOW_EXPERIMENT_ID"):
            self.experiment_id = os.environ["MLFLOW_EXPERIMENT_ID"]
        else:
            self.experiment_id = self._experiment_named(os.environ.get("MLFLOW_EXPERIMENT_NAME") or experiment_name)
        self.parent_id: str | None = None
        self._open: set[str] = set()  # child runs created and not yet terminated

    def _experiment_named(self, name: str) -> str:
        found = self.client.get_experiment_by_name(name)
        if found:
            return found.experiment_id
        try:
            return self.client.create_experiment(name)
        except MlflowException as exc:  # another suite created it a moment ago
            if exc.error_code != ErrorCode.Name(RESOURCE_ALREADY_EXISTS):
                raise
            return self.client.get_experiment_by_name(name).experiment_id

    def start_suite(self, run_name: str, params: dict[str, Any], tags: dict[str, str]) -> str:
        if self.outer_run_id:
            self.parent_id = self.outer_run_id
            self.client.set_tag(self.parent_id, "mlflow.runName", _clip(run_name, _MAX_RUN_NAME_LEN))
        else:
            self.parent_id = self.client.create_run(self.experiment_id,
                                                    run_name=_clip(run_name, _MAX_RUN_NAME_LEN)).info.run_id
        self._log(self.parent_id, params=params, tags=tags)
        return self.parent_id

    def log_case(self, run_name: str, status: str, params: dict[str, Any], metrics: dict[str, float],
                 tags: dict[str, str], history: dict[str, list[float]] | None = None,
                 texts: dict[str, str] | None = None) -> str:
        """One finished case as a child run: created, filled and closed in one go."""
        run = self.client.create_run(self.experiment_id, run_name=_clip(run_name, _MAX_RUN_NAME_LEN),
                                     tags={"mlflow.parentRunId": self.parent_id})
        run_id = run.info.run_id
        self._open.add(run_id)
        self._log(run_id, params=params, metrics=metrics, tags=tags, history=history)
        for name, text in (texts or {}).items():
            self.client.log_text(run_id, text, name)
        self.client.set_terminated(run_id, status)
        self._open.discard(run_id)
        return run_id

    def finished_cases(self, experiment_fingerprint: str) -> dict[str, dict[str, Any]]:
        """Case runs of this MLflow experiment that FINISHED under the given experiment
        fingerprint, by case fingerprint: their run id, metrics and tags."""
        query = (f"tags.`{EXPERIMENT_FINGERPRINT_TAG}` = '{experiment_fingerprint}' "
                 f"and attributes.status = 'FINISHED'")
        found: dict[str, dict[str, Any]] = {}
        token = None
        while True:
            page = self.client.search_runs([self.experiment_id], filter_string=query, max_results=1000,
                                           page_token=token)
            for run in page:
                key = run.data.tags.get(CASE_FINGERPRINT_TAG)
                if key and key not in found:
                    found[key] = {"run_id": run.info.run_id, "metrics": dict(run.data.metrics),
                                  "tags": dict(run.data.tags)}
            token = page.token
            if not token:
                return found

    def finish_suite(self, status: str, metrics: dict[str, float], tags: dict[str, str],
                     files: dict[str, str]) -> None:
        """Attach the suite's summary; close the parent unless `mlflow run` owns it."""
        self._log(self.parent_id, metrics=metrics, tags=tags)
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files.items():
                path = Path(tmp) / name
                path.write_text(text, encoding="utf-8")
                self.client.log_artifact(self.parent_id, str(path))
        if not self.outer_run_id:
            self.client.set_terminated(self.parent_id, status)

    def abort_suite(self, status: str = "KILLED", tags: dict[str, str] | None = None) -> None:
        """Close every run this suite left open, the parent too (even one `mlflow run` owns),
        so that nothing stays RUNNING; `tags` go on the parent first."""
        for run_id in sorted(self._open):
            self.client.set_terminated(run_id, status)
            self._open.discard(run_id)
        if self.parent_id:
            if tags:
                self._log(self.parent_id, tags=tags)
            self.client.set_terminated(self.parent_id, status)

    def _log(self, run_id: str, params: dict[str, Any] | None = None, metrics: dict[str, float] | None = None,
             tags: dict[str, str] | None = None, history: dict[str, list[float]] | None = None) -> None:
        now = int(time.time() * 1000)
        p = [Param(k, _clip(v)) for k, v in (params or {}).items()]
        t = [RunTag(k, _clip(v)) for k, v in (tags or {}).items()]
        m = [Metric(k, float(v), now, 0) for k, v in (metrics or {}).items() if v is not None]
        m += [Metric(k, float(v), now, step) for k, values in (history or {}).items()
              for step, v in enumerate(values)]
        while p or t or m:
            self.client.log_batch(run_id, metrics=m[:_MAX_METRICS], params=p[:_MAX_PARAMS], tags=t[:_MAX_TAGS])
            p, t, m = p[_MAX_PARAMS:], t[_MAX_TAGS:], m[_MAX_METRICS:]


def _clip(value: Any, limit: int = _MAX_PARAM_LEN) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
