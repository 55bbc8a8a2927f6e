"""How much of each case's time goes to the values it reports: warm-ups, values, processes.

pyperf calibrates its warm-ups and loops and asv samples until a time budget; both keep the
process as the statistical unit. mlcompare does the same, per case, inside the suite:

- **Warm-ups only where the first call differs.** A case's first process always times its
  first fit (and first predict) apart from the values that follow. If that first call is no
  slower than the values (within `WARMUP_TOLERANCE` of their median), the later processes
  make their first call their first value instead of spending it apart; otherwise every
  process keeps its warm-up. The decision is on the run (`fit_warmups`, `predict_warmups`,
  the `warmup_plan` tag).
- **Several values where a call is short, one where it is long.** Each process keeps taking
  values until they add up to `timing.VALUES_OVER_FIXED` times what it spends around them
  (`process_overhead_s`, measured here: a process's wall less its model calls; plus a kept
  warm-up). The per-process median stays the unit.
- **Processes until the interval is as narrow as asked** (`measure.stopping.Stopping`): at
  least `min_rounds`, at most `rounds`; after each round from `min_rounds` on, a case whose
  fit-time interval's half-width is at most `precision` × its median stops, and its intervals
  state the level the rule really has (`measure.stopping.rule_levels`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from mlcompare.records import CaseRecord

#: A first call within this fraction of the next calls' median is no warm-up: it is a value.
#: Above it the first call differs (JIT, caches, thread pools, first-touch pages) and every
#: process spends it apart. An undetected difference below it biases a one-value process by
#: at most this much, less than the processes of this machine differ between themselves.
WARMUP_TOLERANCE = 0.03
#: A process's cost around its model calls before any was measured (fork, data read, scoring,
#: end: about 0.15 s for a forked case here).
DEFAULT_OVERHEAD_S = 0.15


def first_call_differs(first_s: float, values: list[float], loops: int) -> bool:
    """Whether a first call (seconds) is slower than the values that followed it by more than
    WARMUP_TOLERANCE. Values that are means of loops (short calls) always differ from one call
    timed alone: there the first call only ever chose the loop's length, and is kept apart."""
    if not values or loops > 1:
        return True
    return first_s > (1 + WARMUP_TOLERANCE) * statistics.median(values)


@dataclass(frozen=True)
class WarmupPlan:
    """What a case's first process decided for the others."""

    fit: bool = True  # keep the fit's warm-up apart
    predict: bool = True
    note: str = ""

    def spec(self) -> dict[str, bool]:
        return {"fit_warmup": self.fit, "predict_warmup": self.predict}


def warmup_plan(first: CaseRecord) -> WarmupPlan:
    """The warm-ups of a case's later processes, from its first process's record."""
    m = first["metrics"]
    parts, keep = [], {}
    for call, values, cold in (("fit", first.get("fit_times") or [], m.get("fit_cold_time_s")),
                               ("predict", first.get("predict_times") or [], m.get("predict_cold_time_s"))):
        if cold is None or not values:
            keep[call] = True
            continue
        loops = int(m.get(f"{call}_loops", 1))
        keep[call] = first_call_differs(cold, values, loops)
        ratio = cold / statistics.median(values) if loops == 1 else None
        if loops > 1:
            parts.append(f"{call}: timed in loops, the first call apart")
        elif keep[call]:
            parts.append(f"{call}: first call {ratio:.2f}× the next ones' median (> {1 + WARMUP_TOLERANCE:.2f}): "
                         "a warm-up in every process")
        else:
            parts.append(f"{call}: first call {ratio:.2f}× the next ones' median (≤ {1 + WARMUP_TOLERANCE:.2f}): "
                         "the first value from process 2 on")
    return WarmupPlan(keep["fit"], keep["predict"], "; ".join(parts))


@dataclass
class Overheads:
    """What processes spend outside their model calls, by kind (forked, fresh), as measured so far."""

    by_kind: dict[str, list[float]] = field(default_factory=dict)

    def add(self, record: CaseRecord) -> float | None:
        """Note one finished process; its overhead in seconds (None: not measured)."""
        wall, model = record.get("process_wall_s"), record.get("model_time_s")
        if wall is None or model is None:
            return None
        overhead = max(0.0, wall - model)
        self.by_kind.setdefault(record.get("process", "fresh"), []).append(overhead)
        return overhead

    def typical(self, kind: str) -> float:
        """The median so far of processes of this kind (DEFAULT_OVERHEAD_S before any)."""
        seen = self.by_kind.get(kind)
        return statistics.median(seen) if seen else DEFAULT_OVERHEAD_S


def process_spec(plan: WarmupPlan | None, overhead_s: float) -> dict[str, Any]:
    """The spec keys of a case's process: its warm-ups (none decided yet: both kept) and the
    overhead its values are measured against."""
    return {**(plan or WarmupPlan()).spec(), "process_overhead_s": overhead_s}
