"""The ladder of `mlcompare advise`: subsamples of the user's table, geometric in rows, each step
an ordinary suite, grown only while the budget affords the next step.

Each step's cost is predicted from what the steps before it measured, read back from the
store, never assumed:

- per implementation, the time its process spends in the model's calls (`model_time_s` over
  `fit_processes`) at the next size, from the last two sizes' slope on log-log axes, taken as
  at least linear in the rows (every fit reads every row; below that slope, fixed costs of
  small data flatten the curve), and as growing with the rows to the power 1.5 while one size
  only is measured (between linear and quadratic: an O(n²) model's second step is then priced
  low by at most the ratio of the sizes to the power 0.5);
- the harness: per process, what a step's suite spent beside the model's calls (fork, data
  load, writing runs) over its processes; per step, what it spent outside its cases (the
  experiment file, the dataset, the host's fingerprint, the parent run), the larger of the
  last two steps each (the first left out once there are others: it alone pays one-time
  costs).

The next step runs the implementations whose predicted processes fit in what is left of
the budget less the reserve for the advice's own report (measured once, after the first
step) and a margin for predictions that fall short (`PLAN_MARGIN` of the budget); the most
expensive are left out first, and an implementation left out never comes back. Each case
gets a time limit of four times its predicted process, so that a wrong prediction costs a
bounded overrun and ends that implementation's ladder ("timed out").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from mlcompare.records import Status, StoredRun

#: Steps of the ladder from its smallest size to the table's (fewer when the table is small).
STEPS = 5
#: Smallest step: enough rows for a test split of about 60 rows.
MIN_ROWS = 250
#: The ladder's ratio between steps is at most this (a larger table starts higher) and at least
#: MIN_RATIO (a smaller table has fewer steps).
MAX_RATIO, MIN_RATIO = 3.0, 1.5
#: The exponent a step's cost is priced with while only one size is measured, and the least one.
PRIOR_EXPONENT, MIN_EXPONENT = 1.5, 1.0
#: The share of the budget the plan leaves free for a step that takes longer than predicted (on
#: a machine shared with other work the load changes between one step and the next).
PLAN_MARGIN = 0.05
#: A case's time limit: this many times its predicted process, and never less than MIN_TIMEOUT_S.
TIMEOUT_FACTOR, MIN_TIMEOUT_S = 4.0, 10.0


def ladder_sizes(rows: int, min_rows: int | None = None, steps: int = STEPS) -> list[int]:
    """Geometric sizes from the smallest step to `rows` (included), at most `steps` of them."""
    low = min(rows, max(min_rows or MIN_ROWS, math.ceil(rows / MAX_RATIO ** (steps - 1))))
    if low >= rows:
        return [rows]
    count = min(steps, 1 + int(math.log(rows / low) / math.log(MIN_RATIO)))
    if count < 2:
        return [rows]
    ratio = (rows / low) ** (1 / (count - 1))
    sizes = [int(round(low * ratio ** i)) for i in range(count - 1)] + [rows]
    return sorted(set(sizes))


@dataclass
class Unit:
    """One implementation of one pairing, along the ladder."""

    pairing: str
    implementation: str
    baseline: bool = False
    sizes: list[int] = field(default_factory=list)  # the steps it ran at
    work_s: list[float] = field(default_factory=list)  # per process: seconds in the model's calls
    processes: list[int] = field(default_factory=list)
    stopped: str = ""  # why it stops growing ("" while it grows)
    skipped: str = ""  # why it could not run here at all (its skip reason)

    @property
    def key(self) -> tuple[str, str]:
        return self.pairing, self.implementation

    def predicted_work(self, rows: int) -> float:
        """Seconds per process in the model's calls at `rows` (see the module's docstring)."""
        if not self.sizes:
            return math.nan
        if len(self.sizes) == 1:
            exponent = PRIOR_EXPONENT
        else:
            (n0, t0), (n1, t1) = list(zip(self.sizes, self.work_s))[-2:]
            exponent = math.log(max(t1, 1e-9) / max(t0, 1e-9)) / math.log(n1 / n0)
        return self.work_s[-1] * (rows / self.sizes[-1]) ** max(exponent, MIN_EXPONENT)


@dataclass
class Step:
    """One step as it ran: its size, suite, wall time and what the store says of its cases."""

    rows: int
    suite_run_id: str
    wall_s: float
    cases_wall_s: float  # the suite's own `suite_wall_time_s`: its cases, one process each round
    cases: list[StoredRun]

    @property
    def work_s(self) -> float:
        return sum(c.metrics.get("model_time_s", 0.0) for c in self.cases)

    @property
    def processes(self) -> int:
        return int(sum(c.metrics.get("fit_processes", 0.0) for c in self.cases))

    @property
    def per_process_s(self) -> float:
        """What the harness spent per process beside the model's calls."""
        return max(0.0, self.cases_wall_s - self.work_s) / self.processes if self.processes else 0.0

    @property
    def fixed_s(self) -> float:
        """What the step cost outside its cases."""
        return max(0.0, self.wall_s - self.cases_wall_s)


class RunStep(Protocol):
    def __call__(self, rows: int, implementations: dict[str, list[str]], timeout_s: float) -> Step: ...


@dataclass
class Ladder:
    """What the ladder did: its steps, each implementation's sizes and why it stopped."""

    planned: list[int]
    units: list[Unit]
    steps: list[Step] = field(default_factory=list)
    reserve_s: float = 0.0
    not_afforded: list[str] = field(default_factory=list)  # in words: sizes and implementations left out
    predicted_s: list[float | None] = field(default_factory=list)  # each step's predicted cost (None: the first)

    def _recent(self) -> list[Step]:
        """The last two steps, the first left out once there are others: it alone pays the
        one-time costs (the warm worker's imports, the report's)."""
        return (self.steps[1:] or self.steps)[-2:]

    def per_process_s(self) -> float:
        return max((s.per_process_s for s in self._recent()), default=0.0)

    def fixed_s(self) -> float:
        return max((s.fixed_s for s in self._recent()), default=0.0)

    def predicted(self, unit: Unit, rows: int) -> float:
        """Seconds `unit`'s processes at `rows` would take, the harness's share included."""
        processes = unit.processes[-1] if unit.processes else 1
        return processes * (unit.predicted_work(rows) + self.per_process_s())


def run_ladder(units: list[Unit], sizes: list[int], deadline: float, run_step: RunStep,
               reserve: Callable[[Ladder], float], say: Callable[[str], None] = lambda line: None,
               clock: Callable[[], float] = time.time, margin_s: float = 0.0) -> Ladder:
    """Climb the ladder until every implementation reached the top or could not afford its next
    step; `deadline` is the clock's time the whole advice must end by, `reserve(ladder)` the
    seconds its report will take (asked once, after the first step), `margin_s` seconds kept
    free for predictions that fall short (a shared machine's noise)."""
    ladder = Ladder(list(sizes), units)
    for number, rows in enumerate(sizes, 1):
        growing = [u for u in units if not u.stopped]
        if not growing:
            break
        left = deadline - margin_s - clock() - ladder.reserve_s
        cost: float | None = None
        if ladder.steps:
            growing = _affordable(ladder, growing, rows, left)
            if not growing:
                break
            cost = ladder.fixed_s() + sum(ladder.predicted(u, rows) for u in growing)
            longest = max(ladder.predicted(u, rows) / max(1, u.processes[-1] if u.processes else 1) for u in growing)
            timeout = min(max(left, MIN_TIMEOUT_S), max(MIN_TIMEOUT_S, TIMEOUT_FACTOR * longest))
        else:
            timeout = max(MIN_TIMEOUT_S, left / 2)
        chosen: dict[str, list[str]] = {}
        for u in growing:
            chosen.setdefault(u.pairing, []).append(u.implementation)
        say(f"mlcompare: advise: step {number}/{len(sizes)}, {rows} rows: {sum(map(len, chosen.values()))} "
            f"implementations of {len(chosen)} pairings, {max(0.0, left):.0f} s of the budget left"
            + (f", predicted to take {cost:.0f} s" if cost is not None else ""))
        step = run_step(rows, chosen, timeout)
        ladder.steps.append(step)
        ladder.predicted_s.append(cost)
        _update(growing, step)
        if len(ladder.steps) == 1:
            ladder.reserve_s = reserve(ladder)
    for u in units:
        if not u.stopped and u.sizes and u.sizes[-1] < sizes[-1]:
            u.stopped = "the ladder ended"
    return ladder


def _affordable(ladder: Ladder, growing: list[Unit], rows: int, left: float) -> list[Unit]:
    """The units whose next step fits in `left` seconds, the most expensive left out first."""
    chosen = list(growing)
    while chosen:
        cost = ladder.fixed_s() + sum(ladder.predicted(u, rows) for u in chosen)
        if cost <= left:
            return chosen
        dearest = max(chosen, key=lambda u: ladder.predicted(u, rows))
        alone = ladder.fixed_s() + ladder.predicted(dearest, rows)
        dearest.stopped = (f"not afforded: {rows} rows would take about {alone:.0f} s (predicted), "
                           f"{max(0.0, left):.0f} s of the budget were left")
        ladder.not_afforded.append(f"{dearest.pairing} · {dearest.implementation}: {dearest.stopped}")
        chosen.remove(dearest)
    return chosen


def _update(growing: list[Unit], step: Step) -> None:
    """Each unit's measurement at this step, or why it stops here."""
    by_key = {(c.params.get("pairing"), c.params.get("implementation")): c for c in step.cases}
    for unit in growing:
        case = by_key.get(unit.key)
        if case is None:
            unit.stopped = f"no run at {step.rows} rows"
            continue
        status = case.tags.get("case_status")
        if status == Status.OK:
            processes = int(case.metrics.get("fit_processes", 1)) or 1
            unit.sizes.append(step.rows)
            unit.work_s.append(case.metrics.get("model_time_s", 0.0) / processes)
            unit.processes.append(processes)
        elif status == Status.SKIPPED:
            unit.skipped = case.tags.get("skip_reason", "skipped")
            unit.stopped = f"not measured: {unit.skipped}"
        else:
            why = case.tags.get("error") or case.tags.get("failure_reason") or status or "failed"
            unit.stopped = f"failed at {step.rows} rows: {why}"
