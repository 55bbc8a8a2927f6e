"""Finding runs left RUNNING by a suite that no longer exists, and closing them.

A SIGKILLed suite (the out-of-memory killer, a lost node) cannot close its runs. These are
the store operations `mlcompare.suite.dead_suites` needs to find and close them: whether a suite
is still alive is decided there, from the host and process recorded on its parent run.
"""

from __future__ import annotations

from typing import Any

from mlcompare.records import StoredRun
from mlcompare.tracking.client import open_client, paginate
from mlcompare.tracking.reader import SUITE_FILTER, plain_run

#: The tag that says why a run was closed as KILLED after its suite died.
KILLED_REASON_TAG = "killed_reason"


class Housekeeping:
    """Running suites and cases of some MLflow experiments (every one when none is named)."""

    def __init__(self, client: Any = None, experiment_ids: list[str] | None = None,
                 experiment_names: list[str] | None = None) -> None:
        self.client = client or open_client()
        ids = list(experiment_ids or [])
        for name in experiment_names or []:
            found = self.client.get_experiment_by_name(name)
            if found is not None:
                ids.append(found.experiment_id)
        if not ids and not experiment_names:
            ids = [e.experiment_id for e in paginate(self.client.search_experiments)]
        self.experiment_ids = ids

    def running_suites(self) -> list[StoredRun]:
        return self._running(SUITE_FILTER)

    def running_children(self, parent_run_id: str) -> list[StoredRun]:
        return self._running(f"tags.`mlflow.parentRunId` = '{parent_run_id}'")

    def running_cases(self) -> list[StoredRun]:
        return self._running("tags.`mlcompare.kind` = 'case'")

    def status(self, run_id: str) -> str:
        return self.client.get_run(run_id).info.status

    def close_killed(self, run_id: str, reason: str) -> None:
        """Tag why, then mark the run KILLED (the tag first: a run is never closed without it)."""
        self.client.set_tag(run_id, KILLED_REASON_TAG, reason)
        self.client.set_terminated(run_id, "KILLED")

    def _running(self, filter_string: str) -> list[StoredRun]:
        if not self.experiment_ids:
            return []
        runs = paginate(self.client.search_runs, self.experiment_ids,
                        f"{filter_string} and attributes.status = 'RUNNING'")
        return [plain_run(run) for run in runs]
