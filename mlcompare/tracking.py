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
from pathlib import Path
from typing import Any

import mlflow
from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.tracking import MlflowClient

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

    def finish_suite(self, status: str, metrics: dict[str, float], tags: dict[str, str],
                     files: dict[str, str]) -> None:
        """Attach the suite's summary; close the parent unless `mlflow run` owns it."""
        self._stop_monitor()
        self._log(self.parent_id, metrics=metrics, tags=tags)
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files.items():
                path = Path(tmp) / name
                path.write_text(text, encoding="utf-8")
                self.client.log_artifact(self.parent_id, str(path))
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
