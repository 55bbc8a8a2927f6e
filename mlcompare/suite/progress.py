"""What a suite shows on the terminal while it runs.

On a terminal (stderr is a TTY): a live progress bar with the current case, the elapsed
time and an estimate of what is left (from the pace of the cases so far), finished cases
scrolling above it, and a summary table at the end. Not on a terminal (CI logs, pipes,
`mlflow run` capturing output): one plain line per case, nothing redrawn. `--quiet`:
nothing at all.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, AbstractSet, Any, Protocol, TextIO

from mlcompare.records import CaseRecord, Status

if TYPE_CHECKING:
    from rich.console import JustifyMethod


class SuiteProgress(Protocol):
    """Hooks the suite calls around each case."""

    def case_started(self, index: int, total: int, name: str) -> None: ...

    def case_finished(self, index: int, total: int, name: str, record: CaseRecord) -> None: ...

    def run_finished(self, done: int, total: int) -> None:
        """With several rounds: `done` of the suite's `total` case processes have ended (a case is
        finished only once it has all its processes, so the bar follows the processes instead)."""


class LiveProgress:
    """rich's progress bar on a terminal; use as a context manager around the suite."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = Console(file=stream or sys.stderr, highlight=False)
        self._bar = Progress(SpinnerColumn(), MofNCompleteColumn(), BarColumn(bar_width=24),
                             TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("· left ~"),
                             TimeRemainingColumn(), TextColumn("{task.description}"),
                             console=self.console, transient=True)
        self._task: Any = None
        self._by_runs = False  # the bar counts case processes (rounds), not finished cases
        self.records: list[tuple[str, CaseRecord]] = []

    def __enter__(self) -> "LiveProgress":
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def say(self, line: str) -> None:
        """A log line above the bar."""
        self.console.print(line, markup=False)

    def case_started(self, index: int, total: int, name: str) -> None:
        self._bar.update(self._bar_task(name, total), description=name)

    def case_finished(self, index: int, total: int, name: str, record: CaseRecord) -> None:
        """`index`: how many cases have finished (a spread suite finishes them out of order)."""
        self.records.append((name, record))
        if not self._by_runs:
            self._bar.update(self._bar_task(name, total), completed=index)

    def run_finished(self, done: int, total: int) -> None:
        self._by_runs = True
        self._bar.update(self._bar_task("", total), completed=done, total=total)

    def _bar_task(self, name: str, total: int) -> Any:
        """The bar, made by the first case that starts or ends (a reused or skipped one may end first)."""
        if self._task is None:
            self._task = self._bar.add_task(name, total=total)
        return self._task

    def summary(self, skipped_everywhere: AbstractSet[str] = frozenset()) -> None:
        """The table of every case, printed once the bar is gone; the implementations skipped
        in every case were said once before the cases and have no rows."""
        shown = [(name, r) for name, r in self.records if not collapsed(r, skipped_everywhere)]
        self.console.print(summary_table(shown))
        if len(shown) < len(self.records):
            self.console.print(f"(not in the table: {', '.join(sorted(skipped_everywhere))}, "
                               "skipped in every case; see the lines above it)", markup=False)


def collapsed(record: CaseRecord, skipped_everywhere: AbstractSet[str]) -> bool:
    """A skip said once for its implementation, not once per case (its run is in the store all the same)."""
    return (record.get("status") == Status.SKIPPED and "reused_from" not in record
            and record.get("implementation") in skipped_everywhere)


def summary_table(records: list[tuple[str, CaseRecord]]) -> Any:
    """A rich table: one row per case with its status, fit time, speed-up and main metric."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title="mlcompare suite", box=box.SIMPLE_HEAD, title_justify="left")
    justify: JustifyMethod
    for heading, justify in (("case", "left"), ("status", "left"), ("fit s", "right"), ("speed-up", "right"),
                             ("quality", "right"), ("note", "left")):
        table.add_column(heading, justify=justify, overflow="fold")
    styles = {Status.OK: "green", Status.SKIPPED: "yellow", Status.FAILED: "bold red", Status.KILLED: "bold red"}
    for name, record in records:
        status = record.get("status", "?")
        metrics = record.get("metrics", {})
        main = record.get("main_metric")
        fit = metrics.get("fit_time_s")
        speed = metrics.get("speedup_fit")
        quality = f"{main} {metrics[main]:.4g}" if main in metrics else ""
        note = record.get("skip_reason") or record.get("error") or record.get("parity") or ""
        table.add_row(Text(name), Text(status, style=styles.get(status, "")), "" if fit is None else f"{fit:.3g}",
                      "" if speed is None else f"{speed:.3g}×", Text(quality), Text(str(note)))
    return table
