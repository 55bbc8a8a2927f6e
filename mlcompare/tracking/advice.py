"""The store side of `mlcompare advise`: its own run, the suites of its ladder nested under it,
and reading them back (its own steps, or a reference suite recorded elsewhere).

The advice is one run (`mlcompare.kind` advice); each step of its ladder is an ordinary suite
whose parent run is a child of the advice run, with one child run per case as always. Under
`mlflow run` the advice run is the run `mlflow run` created.
"""

from __future__ import annotations

from typing import Any

from mlcompare.records import StoredRun, StoredSuite
from mlcompare.tracking.client import open_client, paginate
from mlcompare.tracking.reader import _RUN_ID, SUITE_FILTER, SelectionError, find_suite, load_suite, plain_run
from mlcompare.tracking.writer import Recorder

ADVICE_KIND = "advice"


class AdviceRecorder(Recorder):
    """The advice's own run: started, finished and aborted as a suite's parent is, its names
    checked against the advice's contract (`mlcompare.records.ADVICE_NAMES`)."""

    kind = ADVICE_KIND

    def log(self, params: dict[str, Any] | None = None, metrics: dict[str, float] | None = None,
            tags: dict[str, str] | None = None) -> None:
        """More on the advice run while it runs (what its ladder did, before the report reads it back)."""
        self._log(self._parent(), params=params, metrics=metrics, tags=tags)


class StepRecorder(Recorder):
    """One step of the ladder: a suite nested under the advice run, in its MLflow experiment.

    It builds no report of its own (`load_suite` gives None to the suite): the advice reads
    every step back from the store and reports them together, which spares each step the
    seconds its plots would take out of the budget.
    """

    def __init__(self, experiment_name: str, advice_run_id: str) -> None:
        super().__init__(experiment_name, nest_under=advice_run_id)

    def load_suite(self) -> None:  # type: ignore[override]  # the Protocol allows None
        self.drain()
        return None


def step_suites(advice_run_id: str, client: Any = None) -> list[StoredSuite]:
    """The suites of an advice's ladder as the store holds them, oldest first."""
    client = client or open_client()
    advice = client.get_run(advice_run_id)
    runs = paginate(client.search_runs, [advice.info.experiment_id],
                    f"{SUITE_FILTER} and tags.`mlflow.parentRunId` = '{advice_run_id}'")
    ordered = sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id))
    return [load_suite(client, run) for run in ordered]


def advice_run(run_id: str) -> StoredRun:
    """An advice run as plain values (its metrics, params and tags)."""
    return plain_run(open_client().get_run(run_id))


def find_reference(ref: str, flag: str = "--reference") -> tuple[str, list[StoredSuite]]:
    """(what was found, in words; its suites) for `--reference`: an advice run id (its steps), or
    a suite as `mlcompare compare` names one (a parent run id, an experiment or suite name:
    its latest, NAME~N before it). A suite that is a step of an advice stands for the whole advice."""
    client = open_client()
    if _RUN_ID.match(ref):
        try:
            run = client.get_run(ref)
        except Exception:  # noqa: BLE001 - no such run: find_suite says so below
            run = None
        if run is not None and run.data.tags.get("mlcompare.kind") == ADVICE_KIND:
            return f"advice run {ref[:8]}", step_suites(ref, client)
    suite = find_suite(ref, flag)
    parent = suite.run.tags.get("mlflow.parentRunId")
    if parent:
        try:
            above = client.get_run(parent)
        except Exception:  # noqa: BLE001 - a parent that is gone: the suite alone
            above = None
        if above is not None and above.data.tags.get("mlcompare.kind") == ADVICE_KIND:
            return f"advice run {parent[:8]}", step_suites(parent, client)
    return f"suite run {suite.run.run_id[:8]}", [suite]


__all__ = ["ADVICE_KIND", "AdviceRecorder", "SelectionError", "StepRecorder", "advice_run", "find_reference",
           "step_suites"]
