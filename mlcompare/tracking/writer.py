"""Writing a suite into the store: the parent run, one child run per case, the summary.

A suite is a parent run; each case is a child run nested under it. Under `mlflow run`
the parent is the run `mlflow run` created (found through MLFLOW_RUN_ID), otherwise the
suite creates and closes its own. The store is whatever MLflow resolves: the
MLFLOW_TRACKING_URI when set, else MLflow's own default (SQLite `mlflow.db` here). What is
shown of it (`tracking_uri`, the runs-page link) and every param and tag value logged has its
secrets masked (`mlcompare.redaction`).

After `write_behind`, child runs are written by a thread of their own while the suite
goes on (`behind`); every call that reads the store or closes the suite waits for it.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar
from urllib.parse import urlsplit

import mlflow
from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunTag
from mlflow.exceptions import MlflowException

from mlcompare.records import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG, StoredSuite, check_names
from mlcompare.redaction import carries_secret, redact
from mlcompare.tracking.client import open_client, paginate
from mlcompare.tracking.housekeeping import Housekeeping
from mlcompare.tracking.reader import load_suite
from mlcompare.tracking.sampler import SuiteSampler
from mlcompare.tracking.write_behind import Turn, WriteBehind

if TYPE_CHECKING:
    import pandas as pd

_MAX_PARAM_LEN = 6000
_MAX_RUN_NAME_LEN = 250  # the runs.name column
#: The experiment tag MLflow's UI keeps an experiment's kind in (its kind selector writes it),
#: and the value for classical model training (the other: genai_development).
EXPERIMENT_KIND_TAG, MODEL_TRAINING_KIND = "mlflow.experimentKind", "custom_model_development"
#: `MlflowException.error_code` when an experiment of that name exists already: the public
#: string MLflow's REST API documents, not its internal protobuf module.
RESOURCE_ALREADY_EXISTS = "RESOURCE_ALREADY_EXISTS"


class Recorder:
    """Writes one suite and its cases into the tracking store (`mlcompare.records.Recorder`).

    `nest_under`: the suite's parent run is created as a child of this run, in its MLflow
    experiment (`mlcompare advise` records each step of its ladder so), never the run
    `mlflow run` created.
    """

    #: The contract (`mlcompare.records`) the parent run's names are checked against.
    kind: ClassVar[str] = "suite"

    def __init__(self, experiment_name: str, nest_under: str | None = None) -> None:
        self.client = open_client()
        #: the store as it may be shown: its password and tokens masked
        self.tracking_uri = redact(mlflow.get_tracking_uri())
        self.nest_under = nest_under
        # set by `mlflow run`; a nested suite's parent is the run it is nested under instead
        self.outer_run_id = None if nest_under else os.environ.get("MLFLOW_RUN_ID")
        if nest_under:
            self.experiment_id = self.client.get_run(nest_under).info.experiment_id
        elif self.outer_run_id:
            self.experiment_id = self.client.get_run(self.outer_run_id).info.experiment_id
        elif os.environ.get("MLFLOW_EXPERIMENT_ID"):
            self.experiment_id = os.environ["MLFLOW_EXPERIMENT_ID"]
        else:
            self.experiment_id = self._experiment_named(os.environ.get("MLFLOW_EXPERIMENT_NAME") or experiment_name)
        self._mark_model_training()
        self.parent_id: str | None = None
        self._sampler: SuiteSampler | None = None  # system metrics on the parent, when asked for
        self._open: set[str] = set()  # child runs created and not yet terminated
        self._behind: WriteBehind | None = None  # the writer thread, after write_behind()

    def _experiment_named(self, name: str) -> str:
        found = self.client.get_experiment_by_name(name)
        if found:
            return found.experiment_id
        try:
            return self.client.create_experiment(name)
        except MlflowException as exc:  # another suite created it a moment ago
            if exc.error_code != RESOURCE_ALREADY_EXISTS:
                raise
            return self.client.get_experiment_by_name(name).experiment_id

    def _mark_model_training(self) -> None:
        """Tag the experiment as classical model training, unless someone gave it a kind already.

        MLflow 3.17's UI does not read the tag when it picks the view it opens (its GenAI /
        Model training switch decides, GenAI by default): `runs_page` links the runs table.

        On a tracking server the tag is written even when it is there (its own value again): the
        suite's first write, so that a user who may only read the experiment is refused here
        (`StoreRefused`, HTTP 403), before any run is created.
        """
        tags = self.client.get_experiment(self.experiment_id).tags
        if EXPERIMENT_KIND_TAG in tags and self.tracking_uri.startswith(("http://", "https://")):
            self.client.set_experiment_tag(self.experiment_id, EXPERIMENT_KIND_TAG, tags[EXPERIMENT_KIND_TAG])
        elif EXPERIMENT_KIND_TAG not in tags:
            try:
                self.client.set_experiment_tag(self.experiment_id, EXPERIMENT_KIND_TAG, MODEL_TRAINING_KIND)
            except MlflowException:
                # two suites starting at once into a new experiment both insert the tag; the store's
                # unique key refuses the second (seen on PostgreSQL behind `mlflow server`): fine
                # when the other one's tag is there now
                if EXPERIMENT_KIND_TAG not in self.client.get_experiment(self.experiment_id).tags:
                    raise

    def runs_page(self) -> str:
        """How to open this suite's runs table in the MLflow UI, in words (the link asks for the
        Model training view, which MLflow 3.17 does not open by default)."""
        fragment = f"#/experiments/{self.experiment_id}/runs?workflowType=machine_learning"
        uri = self.tracking_uri
        if uri.startswith(("http://", "https://")):  # the browser asks for the login itself
            parts = urlsplit(uri)
            bare = parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="").geturl()
            return f"{bare.rstrip('/')}/{fragment}"
        local = uri.startswith("sqlite:///") and Path(uri[len("sqlite:///"):]).resolve() == Path("mlflow.db").resolve()
        command = "mlflow ui" if local else f"mlflow ui --backend-store-uri {uri}"
        return f"`{command}`, then http://127.0.0.1:5000/{fragment}"

    def start_suite(self, run_name: str, params: dict[str, Any], tags: dict[str, str],
                    system_metrics: bool = False) -> str:
        if self.outer_run_id:
            self.parent_id = self.outer_run_id
            self.client.set_tag(self.parent_id, "mlflow.runName", _clip(run_name, _MAX_RUN_NAME_LEN))
            self._mask_launcher_tags()
        else:
            nested = {"mlflow.parentRunId": self.nest_under} if self.nest_under else None
            self.parent_id = self.client.create_run(self.experiment_id, run_name=_clip(run_name, _MAX_RUN_NAME_LEN),
                                                    tags=nested).info.run_id
        self._log(self.parent_id, params=params, tags=tags)
        if system_metrics:
            # MLflow's monitors (psutil; GPU through nvidia-ml-py when installed), one step every
            # two seconds and one at the end, however short the suite (see `sampler`)
            self._sampler = SuiteSampler(self.parent_id)
            self._sampler.start()
        return self.parent_id

    def _mask_launcher_tags(self) -> None:
        """`mlflow run` tags its run with the project's source and git remote (`mlflow.source.name`,
        `mlflow.source.git.repoURL`), a token in the remote's URL included: masked here, on the run
        the suite was given."""
        tags = self.client.get_run(self._parent()).data.tags
        masked = {k: redact(v) for k, v in tags.items() if carries_secret(v)}
        if masked:
            self._log(self._parent(), tags=masked)

    def write_behind(self, turn: Turn | None = None, hold: bool = False) -> None:
        """From now on `log_case` queues the run and returns at once; a thread writes the queue
        in order, each write inside `turn()`; with `hold`, a queued run waits for
        `release_queued` (see `behind`). Reading the store, `finish_suite` and `abort_suite`
        wait until every run is written."""
        if self._behind is None:
            self._behind = WriteBehind(turn, hold)

    def between_cases(self, work: Callable[[], object]) -> None:
        """Queue untimed work of the suite's own for the writer thread, which does it as it
        writes a run: after the next case's timed calls (see `behind`). Done here and now when
        runs are not written behind. Its errors are swallowed: such work is only ever ahead of
        time, and the suite does it again when it needs it."""

        def quietly() -> None:
            try:
                work()
            except Exception:  # noqa: BLE001 - see the docstring
                pass

        if self._behind is not None:
            self._behind.put(quietly)
        else:
            quietly()

    def release_queued(self, count: int | None = None) -> None:
        """Let the writer thread write the `count` oldest runs queued so far (None: all)."""
        if self._behind is not None:
            self._behind.release(count)

    def drain(self) -> None:
        """Wait until every queued run is written (raises the error of one that could not be)."""
        if self._behind is not None:
            self._behind.drain()

    def _stop_behind(self, raise_error: bool = True) -> None:
        if self._behind is not None:
            behind, self._behind = self._behind, None
            behind.drain(raise_error)
            behind.stop()

    def log_case(self, run_name: str, status: str, params: dict[str, Any], metrics: dict[str, float],
                 tags: dict[str, str], history: dict[str, list[float]] | None = None,
                 texts: dict[str, str] | None = None, dataset: dict[str, Any] | None = None) -> str | None:
        """One finished case as a child run: created, filled and closed in one go. Writing
        behind, it is queued and None is returned (the run id is not known yet)."""
        if self._behind is not None:
            self._behind.put(lambda: self._write_case(run_name, status, params, metrics, tags, history, texts,
                                                      dataset))
            return None
        return self._write_case(run_name, status, params, metrics, tags, history, texts, dataset)

    def _write_case(self, run_name: str, status: str, params: dict[str, Any], metrics: dict[str, float],
                    tags: dict[str, str], history: dict[str, list[float]] | None,
                    texts: dict[str, str] | None, dataset: dict[str, Any] | None) -> str:
        run = self.client.create_run(self.experiment_id, run_name=_clip(run_name, _MAX_RUN_NAME_LEN),
                                     tags={"mlflow.parentRunId": self.parent_id})
        run_id = run.info.run_id
        self._open.add(run_id)
        self._log(run_id, params=params, metrics=metrics, tags=tags, history=history)
        if dataset:
            self._log_dataset(run_id, _dataset_input(dataset))
        for name, text in (texts or {}).items():  # a worker's stderr, say: whatever it printed
            self.client.log_text(run_id, redact(text), name)
        self.client.set_terminated(run_id, status)
        self._open.discard(run_id)
        return run_id

    def _log_dataset(self, run_id: str, dataset: DatasetInput) -> None:
        """log_inputs, again when another suite registered the same dataset a moment before.

        The store adds the dataset to the experiment the first time it sees it; two suites
        doing so at once make one of them fail on the unique key. Its second try finds the
        dataset there and only links it to the run.
        """
        for attempt in range(3):
            try:
                self.client.log_inputs(run_id, datasets=[dataset])
                return
            except MlflowException as exc:
                text = str(exc).lower()
                if attempt == 2 or not ("duplicate key" in text or "unique constraint" in text):
                    raise
                time.sleep(0.2 + random.random() * 0.3)

    def housekeeping(self) -> Housekeeping:
        """This MLflow experiment's running suites and cases, to close those of dead suites."""
        return Housekeeping(self.client, [self.experiment_id])

    def load_suite(self) -> StoredSuite:
        """The suite as the store holds it now: what the report is built from."""
        self.drain()
        return load_suite(self.client, self.client.get_run(self.parent_id))

    def finished_cases(self, experiment_fingerprint: str) -> dict[str, dict[str, Any]]:
        """Case runs of this MLflow experiment that FINISHED under the given experiment
        fingerprint, by case fingerprint: their run id, metrics and tags."""
        self.drain()
        query = (f"tags.`{EXPERIMENT_FINGERPRINT_TAG}` = '{experiment_fingerprint}' "
                 f"and attributes.status = 'FINISHED'")
        found: dict[str, dict[str, Any]] = {}
        for run in paginate(self.client.search_runs, [self.experiment_id], filter_string=query):
            key = run.data.tags.get(CASE_FINGERPRINT_TAG)
            if key and key not in found:
                found[key] = {"run_id": run.info.run_id, "metrics": dict(run.data.metrics),
                              "tags": dict(run.data.tags)}
        return found

    def finish_suite(self, status: str, metrics: dict[str, float], tags: dict[str, str],
                     files: dict[str, str | bytes], tables: dict[str, pd.DataFrame] | None = None) -> None:
        """Attach the suite's summary; close the parent unless `mlflow run` owns it.

        `files` maps artifact paths (folders allowed, e.g. `plots/speedup.png`) to text or
        bytes; `tables` go through `log_table`, so the UI shows them as tables.
        """
        parent = self._parent()
        self._stop_behind()
        self._log(parent, metrics=metrics, tags=tags)
        _upload(self.client, parent, files)
        for name, table in (tables or {}).items():
            self.client.log_table(parent, _json_safe(table), name)
        self._stop_sampler()
        if not self.outer_run_id:
            self.client.set_terminated(parent, status)

    def _parent(self) -> str:
        if self.parent_id is None:
            raise RuntimeError("the suite's parent run is not started (start_suite first)")
        return self.parent_id

    def abort_suite(self, status: str = "KILLED", tags: dict[str, str] | None = None) -> None:
        """Close every run this suite left open, the parent too (even one `mlflow run` owns),
        so that nothing stays RUNNING; `tags` go on the parent first. Runs still queued are
        written first (a write that fails here does not stop the closing)."""
        self._stop_behind(raise_error=False)
        self._stop_sampler()
        for run_id in sorted(self._open):
            self.client.set_terminated(run_id, status)
            self._open.discard(run_id)
        if self.parent_id:
            if tags:
                self._log(self.parent_id, tags=tags)
            self.client.set_terminated(self.parent_id, status)

    def _stop_sampler(self) -> None:
        """Stop sampling system metrics; the last step (the suite's end) is logged first."""
        if self._sampler is not None:
            sampler, self._sampler = self._sampler, None
            sampler.finish()

    def _log(self, run_id: str, params: dict[str, Any] | None = None, metrics: dict[str, float] | None = None,
             tags: dict[str, str] | None = None, history: dict[str, list[float]] | None = None) -> None:
        """One `log_batch` call: MLflow splits it into batches within its own limits. Every name
        is one `mlcompare.records` declares (checked when `MLCOMPARE_CHECK_NAMES` is set)."""
        check_names(self.kind if run_id == self.parent_id else "case", params or {},
                    {**(metrics or {}), **(history or {})}, tags or {})
        now = int(time.time() * 1000)
        p = [Param(k, _clip(redact(str(v)))) for k, v in (params or {}).items()]
        t = [RunTag(k, _clip(redact(str(v)))) for k, v in (tags or {}).items()]
        m = [Metric(k, float(v), now, 0) for k, v in (metrics or {}).items() if v is not None]
        m += [Metric(k, float(v), now, step) for k, values in (history or {}).items()
              for step, v in enumerate(values)]
        if p or t or m:
            self.client.log_batch(run_id, metrics=m, params=p, tags=t)


def attach(run_id: str, files: dict[str, str | bytes], tags: dict[str, str] | None = None) -> None:
    """Add artifacts (and tags) to a finished run, e.g. a comparison on a suite's parent run."""
    client = open_client()
    _upload(client, run_id, files)
    if tags:
        check_names("suite", tags=tags)
        client.log_batch(run_id, tags=[RunTag(k, _clip(redact(str(v)))) for k, v in tags.items()])


def _upload(client: Any, run_id: str, files: dict[str, str | bytes]) -> None:
    """`files` maps artifact paths (folders allowed, e.g. `plots/speedup.png`) to text or bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in files.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
            folder = str(Path(name).parent)
            client.log_artifact(run_id, str(path), None if folder == "." else folder)


def _dataset_input(info: dict[str, Any]) -> DatasetInput:
    """The data a case used, as MLflow's dataset entity (shown in the run's Datasets panel)."""
    source = redact(str(info["source"]))  # a download URL may carry a token
    source_type = "http" if source.startswith("http") else "code" if source.startswith(("synthetic:", "sklearn.")) \
        else "local"
    schema = {"mlflow_colspec": [{"type": "float" if info["dtype"] == "float32" else "double",
                                  "name": f"f{i}"} for i in range(int(info["features"]))]}
    entity = Dataset(name=info["name"], digest=info["digest"], source_type=source_type,
                     source=json.dumps({"uri": source} if source_type != "code" else {"tags": {"generator": source}}),
                     schema=json.dumps(schema), profile=json.dumps({"num_rows": info["rows"],
                                                                    "num_features": info["features"]}))
    return DatasetInput(entity, tags=[InputTag("mlflow.data.context", "train+test")])


def _clip(value: Any, limit: int = _MAX_PARAM_LEN) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_safe(table: pd.DataFrame) -> pd.DataFrame:
    """NaN becomes null: MLflow writes tables as JSON, and NaN is not JSON."""
    return table.astype(object).where(table.notna(), None)
