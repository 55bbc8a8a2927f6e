"""Reading suites back from the store, for `mlcompare report` and the suite's own summary."""

from __future__ import annotations

import re
from typing import Any

import mlflow

from mlcompare.records import Status, StoredRun, StoredSuite
from mlcompare.redaction import redact
from mlcompare.tracking.client import open_client, paginate

SUITE_FILTER = "tags.`mlcompare.kind` = 'suite'"
CASE_FILTER = "tags.`mlcompare.kind` = 'case'"
#: Metric histories fetched for each case that ran (one call per run and name); absent
#: ones (older runs) are skipped.
HISTORIES = ("fit_time_repeat_s", "predict_time_repeat_s",
             # one value per process: what intervals and `compare`'s verdicts are computed from
             "fit_time_process_s", "predict_time_process_s", "end_to_end_time_process_s")
#: A run id as MLflow makes them (32 hex digits).
_RUN_ID = re.compile(r"^[0-9a-f]{32}$")


class SelectionError(LookupError):
    """Asked for an experiment or run the store does not have (the message says which)."""

    def __init__(self, flag: str, message: str) -> None:
        self.flag = flag
        super().__init__(message)


def store_uri() -> str:
    """The store MLflow resolves, as it may be shown (its password and tokens masked)."""
    return redact(mlflow.get_tracking_uri())


def find_suites(experiments: list[str] | None = None, run_ids: list[str] | None = None) -> list[StoredSuite]:
    """Suites from the store, oldest first.

    `experiments` are MLflow experiment names, or suite names (the `suite_name` param: under
    `mlflow run` a suite lands in whatever experiment the launcher chose). `run_ids` are
    parent runs. Neither: every suite in the store.
    """
    client = open_client()
    parents: dict[str, Any] = {}
    for name in experiments or []:
        found = client.get_experiment_by_name(name)
        if found is not None:
            runs = _runs(client, [found.experiment_id], SUITE_FILTER)
        else:
            by_suite_name = f"{SUITE_FILTER} and params.suite_name = '{_quote(name)}'"
            runs = _runs(client, _all_experiment_ids(client), by_suite_name)
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
        parents = {r.info.run_id: r for r in _runs(client, _all_experiment_ids(client), SUITE_FILTER)}
    ordered = sorted(parents.values(), key=lambda r: (r.info.start_time or 0, r.info.run_id))
    return [load_suite(client, run) for run in ordered]


def find_suite(ref: str, flag: str) -> StoredSuite:
    """One suite: a parent run id, or an MLflow experiment or suite name meaning its latest
    suite that is not still running; `NAME~N` is the one N before the latest (git's notation).

    `flag` names the argument in errors (`A`, `--compare-to`).
    """
    client = open_client()
    if _RUN_ID.match(ref):
        try:
            run = client.get_run(ref)
        except mlflow.exceptions.MlflowException:
            run = None
        if run is not None:
            if run.data.tags.get("mlcompare.kind") != "suite":
                parent = run.data.tags.get("mlflow.parentRunId")
                hint = f" (it is a case of suite run {parent})" if parent else ""
                raise SelectionError(flag, f"run {ref} is not an mlcompare suite run{hint}")
            return load_suite(client, run)
    name, back = ref, 0
    if "~" in ref:
        name, _, steps = ref.rpartition("~")
        if not steps.isdigit():
            raise SelectionError(flag, f"{ref!r}: after '~' comes how many suites back, e.g. {name}~1")
        back = int(steps)
    found = client.get_experiment_by_name(name)
    if found is not None:
        runs = _runs(client, [found.experiment_id], SUITE_FILTER)
    else:
        runs = _runs(client, _all_experiment_ids(client), f"{SUITE_FILTER} and params.suite_name = '{_quote(name)}'")
    done = sorted((r for r in runs if r.info.status != "RUNNING"),
                  key=lambda r: (r.info.start_time or 0, r.info.run_id), reverse=True)
    if not done:
        what = "no finished suite in experiment" if found is not None else "no run id, MLflow experiment or suite"
        raise SelectionError(flag, f"{what} {name!r} in {store_uri()}")
    if back >= len(done):
        raise SelectionError(flag, f"{ref!r}: {name!r} has {len(done)} finished suite(s), so ~{len(done) - 1} "
                                   "is the oldest")
    return load_suite(client, done[back])


def load_suite(client: Any, parent: Any) -> StoredSuite:
    """A suite's parent run (an MLflow Run), its experiment's name and its case runs, as plain values."""
    children = _runs(client, [parent.info.experiment_id],
                       f"tags.`mlflow.parentRunId` = '{parent.info.run_id}' and {CASE_FILTER}")
    cases = []
    for run in sorted(children, key=_in_the_file_s_order):
        stored = plain_run(run)
        if stored.tags.get("case_status") == Status.OK:
            for key in HISTORIES:
                if key in stored.metrics:
                    points = client.get_metric_history(run.info.run_id, key)
                    stored.history[key] = [p.value for p in sorted(points, key=lambda p: p.step)]
        cases.append(stored)
    experiment = client.get_experiment(parent.info.experiment_id)
    return StoredSuite(run=plain_run(parent), experiment_name=experiment.name, cases=cases)


def _in_the_file_s_order(run: Any) -> tuple[int, int, str]:
    """A case run's place: its case number in the experiment (runs are written as their cases
    end, in no fixed order), then when it was written (runs logged before the number was)."""
    number = run.data.params.get("case_number", "0")
    return int(number) if number.isdigit() else 0, run.info.start_time or 0, run.info.run_id


def plain_run(run: Any) -> StoredRun:
    return StoredRun(run_id=run.info.run_id, name=run.info.run_name or run.info.run_id,
                     status=run.info.status, start_time=run.info.start_time or 0,
                     params=dict(run.data.params), metrics=dict(run.data.metrics), tags=dict(run.data.tags))


def _runs(client: Any, experiment_ids: list[str], filter_string: str) -> list[Any]:
    return paginate(client.search_runs, experiment_ids, filter_string)


def _all_experiment_ids(client: Any) -> list[str]:
    return [e.experiment_id for e in paginate(client.search_experiments)]


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")
