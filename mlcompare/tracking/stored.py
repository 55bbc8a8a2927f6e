"""A suite as read back from the store: plain values, no MLflow objects.

The report works on these, so it never imports MLflow (only `tracking/` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
