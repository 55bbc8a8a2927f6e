"""The only module that talks to MLflow.

A suite is a parent run; each case is a child run nested under it. Under `mlflow run`
the parent is the run `mlflow run` created (found through MLFLOW_RUN_ID), otherwise the
suite creates and closes its own. The store is whatever MLflow resolves: the
MLFLOW_TRACKING_URI when set, else MLflow's own default (SQLite `mlflow.db` here).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlflow
from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.tracking import MlflowClient

if TYPE_CHECKING:
    import pandas as pd

# Limits of one log_batch call in MLflow's REST API (the SQLite store takes the same).
_MAX_PARAMS, _MAX_TAGS, _MAX_METRICS = 100, 100, 1000
_MAX_PARAM_LEN = 6000


class Recorder:
    """Writes one suite and its cases into the tracking store."""

    def __init__(self, experiment_name: str) -> None:
        self.client = MlflowClient()
        self.tracking_uri = mlflow.get_tracking_uri()
        self.outer_run_id = os.environ.get("MLFLOW_RUN_ID")  # set by `mlflow run`
        if self.outer_run_id:
            self.experiment_id = self.client.get_run(self.outer_run_id).info.experiment_id
        elif os.environ.get("MLFLOW_EXPERIMENT_ID"):
            self.experiment_id = os.environ["MLFLOW_EXPERIMENT_ID"]
        else:
            name = os.environ.get("MLFLOW_EXPERIMENT_NAME") or experiment_name
            found = self.client.get_experiment_by_name(name)
            self.experiment_id = found.experiment_id if found else self.client.create_experiment(name)
        self.parent_id: str | None = None
        self._monitor = None

    def start_suite(self, run_name: str, params: dict[str, Any], tags: dict[str, str],
                    system_metrics: bool = False) -> str:
        if self.outer_run_id:
            self.parent_id = self.outer_run_id
            self.client.set_tag(self.parent_id, "mlflow.runName", run_name)
        else:
            self.parent_id = self.client.create_run(self.experiment_id, run_name=run_name).info.run_id
        self._log(self.parent_id, params=params, tags=tags)
        if system_metrics:
            # MLflow's own sampler (psutil; GPU through nvidia-ml-py when installed), on the suite run.
            from mlflow.system_metrics.system_metrics_monitor import SystemMetricsMonitor

            self._monitor = SystemMetricsMonitor(self.parent_id, sampling_interval=2,
                                                 tracking_uri=self.tracking_uri)
            self._monitor.start()
        return self.parent_id

    def log_case(self, run_name: str, status: str, params: dict[str, Any], metrics: dict[str, float],
                 tags: dict[str, str], history: dict[str, list[float]] | None = None,
                 texts: dict[str, str] | None = None, dataset: dict[str, Any] | None = None) -> str:
        """One finished case as a child run: created, filled and closed in one go."""
        run = self.client.create_run(self.experiment_id, run_name=run_name,
                                     tags={"mlflow.parentRunId": self.parent_id})
        run_id = run.info.run_id
        self._log(run_id, params=params, metrics=metrics, tags=tags, history=history)
        if dataset:
            self.client.log_inputs(run_id, datasets=[_dataset_input(dataset)])
        for name, text in (texts or {}).items():
            self.client.log_text(run_id, text, name)
        self.client.set_terminated(run_id, status)
        return run_id

    def load_suite(self) -> StoredSuite:
        """The suite as the store holds it now: what the report is built from."""
        return _load_suite(self.client, self.client.get_run(self.parent_id))

    def finish_suite(self, status: str, metrics: dict[str, float], tags: dict[str, str],
                     files: dict[str, str | bytes], tables: dict[str, pd.DataFrame] | None = None) -> None:
        """Attach the suite's summary; close the parent unless `mlflow run` owns it.

        `files` maps artifact paths (folders allowed, e.g. `plots/speedup.png`) to text or
        bytes; `tables` go through `log_table`, so the UI shows them as tables.
        """
        self._stop_monitor()
        self._log(self.parent_id, metrics=metrics, tags=tags)
        with tempfile.TemporaryDirectory() as tmp:
            for name, content in files.items():
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, bytes):
                    path.write_bytes(content)
                else:
                    path.write_text(content, encoding="utf-8")
                folder = str(Path(name).parent)
                self.client.log_artifact(self.parent_id, str(path), None if folder == "." else folder)
        for name, table in (tables or {}).items():
            self.client.log_table(self.parent_id, _json_safe(table), name)
        if not self.outer_run_id:
            self.client.set_terminated(self.parent_id, status)

    def abort_suite(self, status: str = "KILLED") -> None:
        self._stop_monitor()
        if self.parent_id and not self.outer_run_id:
            self.client.set_terminated(self.parent_id, status)

    def _stop_monitor(self) -> None:
        if self._monitor is not None:
            self._monitor.finish()
            self._monitor = None

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


def _dataset_input(info: dict[str, Any]) -> DatasetInput:
    """The data a case used, as MLflow's dataset entity (shown in the run's Datasets panel)."""
    source = str(info["source"])
    source_type = "http" if source.startswith("http") else "code" if source.startswith(("synthetic:", "sklearn.")) \
        else "local"
    schema = {"mlflow_colspec": [{"type": "float" if info["dtype"] == "float32" else "double",
                                  "name": f"f{i}"} for i in range(int(info["features"]))]}
    entity = Dataset(name=info["name"], digest=info["digest"], source_type=source_type,
                     source=json.dumps({"uri": source} if source_type != "code" else {"tags": {"generator": source}}),
                     schema=json.dumps(schema), profile=json.dumps({"num_rows": info["rows"],
                                                                    "num_features": info["features"]}))
    return DatasetInput(entity, tags=[InputTag("mlflow.data.context", "train+test")])


def _clip(value: Any) -> str:
    text = str(value)
    return text if len(text) <= _MAX_PARAM_LEN else text[: _MAX_PARAM_LEN - 3] + "..."


# --- reading suites back -------------------------------------------------------------

SUITE_FILTER = "tags.`mlcompare.kind` = 'suite'"
CASE_FILTER = "tags.`mlcompare.kind` = 'case'"
#: Metric histories fetched for each case that ran (one call per run and name).
HISTORIES = ("fit_time_repeat_s",)


@dataclass
class StoredRun:
    """One run as read from the store: plain values, no MLflow objects."""

    run_id: str
    name: str
    status: str
    start_time: int
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    history: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class StoredSuite:
    """A suite's parent run, its MLflow experiment and its case runs."""

    run: StoredRun
    experiment_name: str
    cases: list[StoredRun]


class SelectionError(LookupError):
    """Asked for an experiment or run the store does not have (the message says which)."""

    def __init__(self, flag: str, message: str) -> None:
        self.flag = flag
        super().__init__(message)


def store_uri() -> str:
    return mlflow.get_tracking_uri()


def find_suites(experiments: list[str] | None = None, run_ids: list[str] | None = None) -> list[StoredSuite]:
    """Suites from the store, oldest first.

    `experiments` are MLflow experiment names, or suite names (the `suite_name` param: under
    `mlflow run` a suite lands in whatever experiment the launcher chose). `run_ids` are
    parent runs. Neither: every suite in the store.
    """
    client = MlflowClient()
    parents: dict[str, Any] = {}
    for name in experiments or []:
        found = client.get_experiment_by_name(name)
        if found is not None:
            runs = _search(client, [found.experiment_id], SUITE_FILTER)
        else:
            by_suite_name = f"{SUITE_FILTER} and params.suite_name = '{_quote(name)}'"
            runs = _search(client, _all_experiment_ids(client), by_suite_name)
        if not runs and found is None:
            raise SelectionError("--experiment", f"no MLflow experiment and no suite named {name!r} in {store_uri()}")
        parents.update((r.info.run_id, r) for r in runs)
    for run_id in run_ids or []:
        try:
            run = client.get_run(run_id)
        except mlflow.exceptions.MlflowException:
            raise SelectionError("--run-id", f"no run {run_id!r} in {store_uri()}") from None
        if run.data.tags.get("mlcompare.kind") != "suite":
            parent = run.data.tags.get("mlflow.parentRunId")
            hint = f" (it is a case of suite run {parent})" if parent else ""
            raise SelectionError("--run-id", f"run {run_id} is not an mlcompare suite run{hint}")
        parents[run_id] = run
    if not experiments and not run_ids:
        parents = {r.info.run_id: r for r in _search(client, _all_experiment_ids(client), SUITE_FILTER)}
    ordered = sorted(parents.values(), key=lambda r: (r.info.start_time or 0, r.info.run_id))
    return [_load_suite(client, run) for run in ordered]


def _load_suite(client: MlflowClient, parent: Any) -> StoredSuite:
    children = _search(client, [parent.info.experiment_id],
                       f"tags.`mlflow.parentRunId` = '{parent.info.run_id}' and {CASE_FILTER}")
    cases = []
    for run in sorted(children, key=lambda r: (r.info.start_time or 0, r.info.run_id)):
        stored = _plain(run)
        if stored.tags.get("case_status") == "ok":
            for key in HISTORIES:
                if key in stored.metrics:
                    points = client.get_metric_history(run.info.run_id, key)
                    stored.history[key] = [p.value for p in sorted(points, key=lambda p: p.step)]
        cases.append(stored)
    experiment = client.get_experiment(parent.info.experiment_id)
    return StoredSuite(run=_plain(parent), experiment_name=experiment.name, cases=cases)


def _plain(run: Any) -> StoredRun:
    return StoredRun(run_id=run.info.run_id, name=run.info.run_name or run.info.run_id,
                     status=run.info.status, start_time=run.info.start_time or 0,
                     params=dict(run.data.params), metrics=dict(run.data.metrics), tags=dict(run.data.tags))


def _search(client: MlflowClient, experiment_ids: list[str], filter_string: str) -> list[Any]:
    runs, token = [], None
    while True:
        page = client.search_runs(experiment_ids, filter_string, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _all_experiment_ids(client: MlflowClient) -> list[str]:
    ids, token = [], None
    while True:
        page = client.search_experiments(max_results=1000, page_token=token)
        ids.extend(e.experiment_id for e in page)
        token = page.token
        if not token:
            return ids


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _json_safe(table: pd.DataFrame) -> pd.DataFrame:
    """NaN becomes null: MLflow writes tables as JSON, and NaN is not JSON."""
    return table.astype(object).where(table.notna(), None)
