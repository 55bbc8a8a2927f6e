"""What other processes took of this case's CPUs while its timed calls ran.

A load average at a case's start says little: it lags by a minute, counts the suite's own
processes, and misses a neighbour that starts a second later (measured: LinearRegression
250k×50 at 868 ms while another program ran, tagged stable at a load of 1.41, against
116 ms on a quiet machine). This meter reads, around the block of timed calls, how busy the
CPUs this process may run on were (the kernel's per-CPU counters in /proc/stat) and how much
CPU time this process and its children used (their own counters); the difference is what
everyone else took. `cores` is that difference over the block's wall time: 0.5 means other
processes kept half a CPU busy on average while the case was timed.

The counters tick every 1/CLK_TCK s (10 ms), so a block shorter than MIN_BLOCK_S is not
judged (`note` says so).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil

#: Shorter blocks are not judged: a few ticks of 10 ms say nothing.
MIN_BLOCK_S = 0.2
#: /proc/stat's columns that are CPU time spent by someone (idle, iowait and steal are not;
#: guest time is already inside user).
_BUSY = (0, 1, 2, 5, 6)  # user nice system irq softirq


class OtherProcesses:
    """`start()` before the first timed call, `stop()` after the last (or `with`); then `cores`
    (or None) and `note`."""

    def __init__(self, stat: Path = Path("/proc/stat"), children: bool = False) -> None:
        self._stat = stat
        self._children = children
        self._cpus = _usable_cpus()
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.cores: float | None = None
        self.note = ""

    def __enter__(self) -> OtherProcesses:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> OtherProcesses:
        self._busy, self._own, self._start = self._busy_s(), self._own_s(), time.perf_counter()
        return self

    def stop(self) -> None:
        wall = time.perf_counter() - self._start
        busy, own = self._busy_s(), self._own_s()
        if self._busy is None or busy is None:
            self.note = f"not measured: {self._stat} has no per-CPU counters here"
        elif wall < MIN_BLOCK_S:
            self.note = f"not judged: the timed calls took {wall * 1e3:.0f} ms, under {MIN_BLOCK_S * 1e3:.0f} ms"
        else:
            self.cores = max(0.0, (busy - self._busy) - (own - self._own)) / wall

    def _busy_s(self) -> float | None:
        """CPU seconds spent on the usable CPUs by anyone, since boot."""
        try:
            lines = self._stat.read_text().splitlines()
        except OSError:
            return None
        total, seen = 0, 0
        for line in lines:
            name, *values = line.split()
            if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in self._cpus:
                total += sum(int(values[i]) for i in _BUSY if i < len(values))
                seen += 1
        return total / self._tick if seen else None

    def _own_s(self) -> float:
        """CPU seconds this process (every thread) and, with `children`, its live descendants used."""
        me = psutil.Process()
        times = me.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        if self._children:
            for child in me.children(recursive=True):
                try:
                    child_times = child.cpu_times()
                    total += child_times.user + child_times.system
                except psutil.Error:  # it ended between the listing and the reading
                    pass
        return total


def _usable_cpus() -> set[int]:
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))
