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
- **Warm-ups for as long as the first call's after-effects last.** What a first call starts
  may outlast it (in a forked process, OpenBLAS's threads start at the first call that asks
  for them and spin for about 0.1 s: `timing.SETTLE_S`), and what it leaves may slow the next
  call (its large frees raise glibc's mmap threshold, and the second fit grows the heap anew).
  A case's first process takes its values past that window (those lasting under
  `timing.CALIBRATE_BELOW_S`; up to `timing.CALIBRATE_LONG_BELOW_S`, two past it, the one in it
  being the second fit, where its first fit was slower than that by more than
  `WARMUP_TOLERANCE`); where the values that started in it are slower than the later ones
  by more than `SETTLE_TOLERANCE`, the next processes keep their first call apart and warm
  up until the window is over. Where a call lasts CALIBRATE_BELOW_S or more, a process's
  figure is one value or two, and the one in the window is the second fit: slower by more
  than `SECOND_FIT_TOLERANCE`, the next processes warm up through it while they keep their
  first fit apart (a first fit that became a value left nothing for the second to pay).
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

from mlcompare.measure.timing import SETTLE_S, WARMUP_TOLERANCE, long_call
from mlcompare.records import CaseRecord

#: Values in the window after the first call slower than the later ones by more than this:
#: the next processes warm up through it. What it catches doubles those values here; a few
#: values of a steady call differ by a few per cent, and a window paid for nothing costs
#: SETTLE_S in every later process.
SETTLE_TOLERANCE = 0.10
#: The values compared with the later ones: the first few after the first fit.
SETTLE_FIRST_VALUES = 3
#: The second fit of a long call (`timing.CALIBRATE_BELOW_S` or more) slower than the later ones by
#: more than this: the next processes warm up through it. One value against the median of two
#: differs by up to 4 % here where nothing slows the second fit (1.03 and 1.04× in two cases of
#: quick.yaml, 0.84-1.02× in the rest); the slow second fit this is for read 1.07-1.17×.
SECOND_FIT_TOLERANCE = 0.05
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


def settle_ratio(record: CaseRecord) -> float | None:
    """A calibrating process's first fit values that started within SETTLE_S of its first fit's
    end (up to SETTLE_FIRST_VALUES: those a process's median is made of where its values are few,
    and the ones an after-effect that fades hits hardest; their mean, which one slow value moves),
    over the median of those that started after; None where it has not both."""
    values, offsets = record.get("fit_times") or [], record.get("fit_value_offsets_s") or []
    early = [v for v, at in zip(values, offsets) if 0 <= at < SETTLE_S][:SETTLE_FIRST_VALUES]
    late = [v for v, at in zip(values, offsets) if at >= SETTLE_S]
    if not early or not late:
        return None
    return statistics.fmean(early) / statistics.median(late)


@dataclass(frozen=True)
class WarmupPlan:
    """What a case's processes so far decided for the next ones."""

    fit: bool = True  # keep the fit's warm-up apart
    predict: bool = True
    note: str = ""
    settle: bool = False  # warm up until SETTLE_S after the first fit (implies its warm-up)
    calibrate: bool = True  # take values past SETTLE_S, to decide `settle` (or `settle_second`)
    # a long call's second fit found slow: warmed up through (as `settle` does) while the first
    # fit is kept apart; where the first fit became a value it left nothing to pay for
    settle_second: bool = False

    @property
    def warms_through(self) -> bool:
        """Whether the next processes warm up until SETTLE_S after their first fit."""
        return self.settle or (self.settle_second and self.fit)

    def spec(self) -> dict[str, Any]:
        return {"fit_warmup": self.fit or self.settle, "predict_warmup": self.predict,
                "fit_settle_s": SETTLE_S if self.warms_through else 0.0, "fit_calibrate": self.calibrate}


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
    settle, second, calibrate = _settling(processes, before, parts)
    if second and not keep["fit"] and (before is None or before.fit):
        parts.append(f"the second fit's warm-up dropped with the first's from process {len(processes) + 1} on")
    return WarmupPlan(keep["fit"], keep["predict"], "; ".join(parts), settle, calibrate, second)


def _settling(processes: list[CaseRecord], before: WarmupPlan | None,
              parts: list[str]) -> tuple[bool, bool, bool]:
    """(settle, settle_second, calibrate) for the next processes, from the first process that
    calibrated (a decision taken stays); its sentence appended to `parts` once taken."""
    if before is not None and not before.calibrate:
        parts.extend(p for p in before.note.split("; ")
                     if p.startswith(("after the first fit:", "the second fit's warm-up dropped")))
        return before.settle, before.settle_second, False
    calibrated = [r for r in processes if r.get("fit_value_offsets_s")]
    if not calibrated:
        return False, False, True  # no process has calibrated yet (the first did not run fine)
    ratio = settle_ratio(calibrated[0])
    if ratio is None:
        parts.append(f"after the first fit: no values both within and after {SETTLE_S:g} s of it "
                     "(calls too long to tell, or a long call whose first fit was a value): no warm-up through it")
        return False, False, False
    long = _long_calls(calibrated[0])
    tolerance = SECOND_FIT_TOLERANCE if long else SETTLE_TOLERANCE
    slower = ratio > 1 + tolerance
    seen = f"after the first fit: the first values within {SETTLE_S:g} s of it {ratio:.2f}× the later ones"
    if slower and long:
        parts.append(f"{seen} (> {1 + tolerance:.2f}, the second fit of a long call): a warm-up through it "
                     f"while the first fit is one, from process {len(processes) + 1} on")
    elif slower:
        parts.append(f"{seen} (> {1 + tolerance:.2f}): warm-ups until {SETTLE_S:g} s after it "
                     f"from process {len(processes) + 1} on")
    else:
        parts.append(f"{seen} (≤ {1 + tolerance:.2f}): no warm-up through it")
    return slower and not long, slower and long, False


def _long_calls(record: CaseRecord) -> bool:
    """Whether a calibrating process's fit values last CALIBRATE_BELOW_S or more: then a process's
    figure is one value or two, and the value in the window after the first fit is the second fit."""
    values = record.get("fit_times") or []
    return bool(values) and long_call(values[0], record["metrics"].get("fit_loops", 1))


def drop_unsettled(record: CaseRecord) -> int:
    """In a calibrating process of a case found to need the window after its first fit warmed
    through (`WarmupPlan.settle`), the fit values taken in that window become warm-ups, as the
    later processes' are: every value of the case is then taken after it. How many were dropped."""
    values, offsets = record.get("fit_times") or [], record.get("fit_value_offsets_s") or []
    early = [i for i, at in enumerate(offsets) if 0 <= at < SETTLE_S]
    if not early or len(early) == len(values):
        return 0
    m = record["metrics"]
    dropped = sum(values[i] for i in early) * m.get("fit_loops", 1)
    record["fit_times"] = [v for i, v in enumerate(values) if i not in early]
    record["fit_value_offsets_s"] = [at for i, at in enumerate(offsets) if i not in early]
    m["fit_warmups"] = m.get("fit_warmups", 1) + len(early)
    record["reported_time_s"] = record.get("reported_time_s", dropped) - dropped
    return len(early)


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


def process_spec(plan: WarmupPlan | None, overhead_s: float, more_to_come: bool = True) -> dict[str, Any]:
    """The spec keys of a case's process: its warm-ups (none decided yet: both kept, and values
    past SETTLE_S where `more_to_come` processes could use what they show), the overhead its
    values are measured against, and whether it describes the case: only its first, the one
    with no plan yet, whose quality and settings the suite keeps (`rounds.pool_rounds`); the
    later ones would score, audit and list pools for nothing (about 15-25 ms a process)."""
    return {**(plan or WarmupPlan(calibrate=more_to_come)).spec(), "process_overhead_s": overhead_s,
            "describe": plan is None}
