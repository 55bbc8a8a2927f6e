"""How much of each case's time goes to the values it reports: warm-ups, values, processes.

pyperf calibrates its warm-ups and loops and asv samples until a time budget; both keep the
process as the statistical unit. mlcompare does the same, per case, inside the suite:

- **Warm-ups only where the first call differs.** A case's first process always times its
  first fit (and first predict) apart from the values that follow. Once the first calls of
  its processes so far are no slower than their values (the median of their ratios within
  `WARMUP_TOLERANCE` of 1), the next processes make their first call their first value
  instead of spending it apart; until then every process keeps its warm-up, and adds to the
  evidence. The decision is on the run (`fit_warmups`, `predict_warmups`,
  the `warmup_plan` tag).
- **Several values where a call is short, one where it is long.** Each process keeps taking
  fit values until they add up to `timing.VALUES_OVER_FIXED` times what it spends around its
  model calls (`process_overhead_s`, measured here: a process's wall less its model calls).
  The per-process median stays the unit.
- **Processes until the interval is as narrow as asked** (`measure.stopping.Stopping`): at
  least `min_rounds`, at most `rounds`; after each round from `min_rounds` on, a case whose
  fit-time interval's half-width is at most `precision` × its median stops, and so does one
  that no count up to `rounds` could narrow; its intervals state the level the rule really
  has (`measure.stopping.rule_levels`).
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


def first_call_ratio(record: CaseRecord, call: str) -> float | None:
    """A process's first call over the median of the values after it, where that process spent its
    first call apart and timed its values alone (None otherwise: loop means of short calls always
    differ from one call timed alone, and there the first call only ever chose the loop's length)."""
    m = record["metrics"]
    values = (record.get("fit_times") if call == "fit" else record.get("predict_times")) or []
    cold = m.get(f"{call}_cold_time_s")
    if cold is None or not values or m.get(f"{call}_loops", 1) > 1 or m.get(f"{call}_warmups", 1) == 0:
        return None
    return cold / statistics.median(values)


@dataclass(frozen=True)
class WarmupPlan:
    """What a case's processes so far decided for the next ones."""

    fit: bool = True  # keep the fit's warm-up apart
    predict: bool = True
    note: str = ""

    def spec(self) -> dict[str, bool]:
        return {"fit_warmup": self.fit, "predict_warmup": self.predict}


def warmup_plan(processes: list[CaseRecord], before: WarmupPlan | None = None) -> WarmupPlan:
    """The warm-ups of a case's next processes, from those it ran so far (each that kept a warm-up
    apart compared its first call with its values): a call's warm-up is dropped once the median
    of those first-call ratios is within WARMUP_TOLERANCE of 1, and stays dropped."""
    parts, keep = [], {}
    for call in ("fit", "predict"):
        if before is not None and not getattr(before, call):
            keep[call] = False
            parts.append(next(p for p in before.note.split("; ") if p.startswith(f"{call}:")))
            continue
        ratios = [r for r in (first_call_ratio(record, call) for record in processes) if r is not None]
        if not ratios:
            keep[call] = True
            parts.append(f"{call}: timed in loops (or no values), the first call apart")
            continue
        ratio = statistics.median(ratios)
        keep[call] = ratio > 1 + WARMUP_TOLERANCE
        seen = f"{call}: first call {ratio:.2f}× the next ones' median over {len(ratios)} process" + \
            ("es" if len(ratios) > 1 else "")
        if keep[call]:
            parts.append(f"{seen} (> {1 + WARMUP_TOLERANCE:.2f}): a warm-up in every process")
        else:
            parts.append(f"{seen} (≤ {1 + WARMUP_TOLERANCE:.2f}): the first value from process {len(processes) + 1} on")
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
