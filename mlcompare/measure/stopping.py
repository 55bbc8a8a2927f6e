"""When a case has enough processes (`Stopping`), and the level its intervals then really have.

An interval over a fixed number of processes covers the true value with the probability
`measure.stats` states. A case that stops once its interval is narrow is not a fixed number
of processes: the runs that stop early are those whose first processes happened to agree,
and they cover less often than their count's level says (simulated here: at five processes
as low as 0.87 where the processes' spread is close to the precision asked), while the runs
that went on cover more often. What a reader of one run needs is the share of runs of the
same case that cover, whatever its noise: that is computed here, by simulation, for the rule
as the experiment sets it, and no interval of such a case states more.

The simulation draws each process's value from a normal law and from a Student t law with
three degrees of freedom (processes that now and then stray far: the machine's hiccups) on
the log scale, at spreads from a twentieth to ten times the precision, runs the rule on each
run, and takes the lowest share of covering intervals over all of them: for the median's
interval, and for the speed-up's between two cases that each stopped by the rule. It is
seeded, so the same rule always gets the same level, and it takes about a second.

A case also stops where more processes could not narrow its interval. The median's interval
over n processes is [x(k), x(n+1-k)], and k grows with n only now and then (1 up to eight
processes, 2 from nine to eleven, 3 from twelve): over more values the same order statistics
can only move apart. So a case whose interval is still too wide stops at once unless a count
up to its maximum has a deeper k; between six and eight processes, the defaults' range before
this rule, every process after the sixth was spent for nothing (and a rule that always stops
at its minimum is a fixed number of processes, with the exact levels of that count).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mlcompare.measure import stats
from mlcompare.measure.stats import median_interval

RUNS = 4000  # simulated runs per law and spread
SPREADS = tuple(np.geomspace(0.05, 10.0, 12))  # the processes' spread (log scale), in precisions
LAWS = ("normal", "t3")


@dataclass(frozen=True)
class Stopping:
    """When a case has enough processes: `min_rounds` at least, `rounds` at most, and in between
    once its fit-time interval's half-width is at most `precision` × the median (0: never
    early)."""

    min_rounds: int
    rounds: int
    precision: float

    def done(self, process_times: list[float]) -> str | None:
        """Why a case with these per-process fit times needs no more processes; None while it does."""
        n = len(process_times)
        found = median_interval(process_times)
        width = _half_width(process_times)
        if n >= self.rounds:
            asked = f", asked ±{self.precision:.1%}" if self.precision and n > self.min_rounds else ""
            said = f": fit interval ±{width:.1%}" if found else ""
            return f"{n} processes, the most{said}{asked}" if self.rounds > self.min_rounds else \
                f"{n} processes{said}"
        if n < self.min_rounds or not self.precision or found is None:
            return None
        if width <= self.precision:
            return f"stopped at {n} processes: fit interval ±{width:.1%} ≤ ±{self.precision:.1%} asked"
        if not can_narrow(n, self.rounds):
            return (f"stopped at {n} processes: fit interval ±{width:.1%}, wider than ±{self.precision:.1%} "
                    f"asked, and no count up to {self.rounds} narrows it")
        return None


def can_narrow(n: int, rounds: int) -> bool:
    """Whether some count of processes after n, up to `rounds`, takes the median's interval between
    deeper order statistics than n does (the only way more processes can narrow it)."""
    k = stats._median_rank(n, stats.CONFIDENCE)[0]
    return any(stats._median_rank(m, stats.CONFIDENCE)[0] > k for m in range(n + 1, rounds + 1))


def _half_width(process_times: list[float]) -> float:
    """The fit-time interval's half-width as a fraction of the median (inf below two processes)."""
    found = median_interval(process_times)
    if found is None:
        return float("inf")
    return (found.high - found.low) / 2 / statistics.median(process_times)


def cap_levels(metrics: dict[str, float], rule: Stopping) -> None:
    """No interval of a case stopped by `rule` states more than the rule delivers: the median
    intervals (`*_time_ci_level`) at most its median level, the speed-ups' (`speedup_*_ci_level`)
    at most its speed-up level."""
    median_level, ratio_level = rule_levels(rule.min_rounds, rule.rounds, rule.precision)
    for name in metrics:
        if name.endswith("_ci_level"):
            cap = ratio_level if name.startswith("speedup_") else median_level
            metrics[name] = min(metrics[name], cap)


@lru_cache(maxsize=32)
def rule_levels(min_rounds: int, rounds: int, precision: float) -> tuple[float, float]:
    """(the median interval's level, the speed-up interval's level) of a case that stopped by
    the rule: the lowest share of covering intervals over every simulated law and spread."""
    if rounds <= min_rounds or not precision or not can_narrow(min_rounds, rounds):
        return 1.0, 1.0  # a fixed number of processes: the levels `measure.stats` states are exact
    rng = np.random.default_rng(20261203)
    worst_median, worst_ratio = 1.0, 1.0
    for law in LAWS:
        for spread in SPREADS:
            scale = spread * precision
            draws = rng.standard_t(3, (RUNS, rounds)) if law == "t3" else rng.standard_normal((RUNS, rounds))
            values = np.exp(scale * draws)  # the true median is 1 (the laws are symmetric)
            counts = _stop_counts(values, min_rounds, rounds, precision)
            covered = [_median_covers(values[i, :n]) for i, n in enumerate(counts)]
            worst_median = min(worst_median, float(np.mean(covered)))
            half = RUNS // 2  # pairs of runs: the speed-up of one case over another, both stopped
            ratio = [_ratio_covers(values[i, :counts[i]], values[half + i, :counts[half + i]]) for i in range(half)]
            worst_ratio = min(worst_ratio, float(np.mean(ratio)))
    return worst_median, worst_ratio


def _stop_counts(values: np.ndarray, min_rounds: int, rounds: int, precision: float) -> np.ndarray:
    """How many processes each run had when the rule stopped it."""
    counts = np.full(len(values), rounds)
    going = np.ones(len(values), dtype=bool)
    for n in range(min_rounds, rounds):
        if not can_narrow(n, rounds):
            counts[going] = n
            break
        k, _ = stats._median_rank(n, stats.CONFIDENCE)
        ordered = np.sort(values[:, :n], axis=1)
        median = np.median(ordered, axis=1)
        narrow = (ordered[:, n - k] - ordered[:, k - 1]) / 2 <= precision * median
        stop = going & narrow
        counts[stop] = n
        going &= ~stop
    return counts


def _median_covers(values: np.ndarray) -> bool:
    found = stats.median_interval(list(values))
    return found is not None and found.low <= 1.0 <= found.high


def _ratio_covers(a: np.ndarray, b: np.ndarray) -> bool:
    found = stats.ratio_interval(list(a), list(b))
    return found is not None and found.low <= 1.0 <= found.high
