"""Energy of the warm fits, where the machine can measure it; never an estimate.

GPU cases read NVML's total-energy counter of the GPUs they compute on (through
`device`, the only module that talks to NVML); CPU cases read the kernel's RAPL counters
(powercap) of every CPU package and its memory. The counters are read just before the
first warm fit and just after the last one, so `fit_energy_j` is the energy of that block
divided by the number of fits. Neither counter is per process: NVML counts the whole GPU
(its idle power and any other process on it included), RAPL the whole CPU sockets and
their memory (every process on them, the harness's own short gaps between fits too).

The two cover different hardware, so they never share a name: `fit_energy_gpu_board_j`
(NVML: the GPU board, its memory included, not the host CPU that feeds it) and
`fit_energy_cpu_packages_dram_j` (RAPL: the CPU packages and their DRAM), each with its
`fit_power_..._w`. A column that put one beside the other would favour the GPU side, whose
host CPU is not counted.

Where no counter can be read (no NVIDIA driver, no RAPL, counters readable by root only),
or the block is shorter than MIN_UPDATES of the counter's update period (a counter read
a tick apart measures its tick, not the fits), nothing is logged as a metric and
`energy_unavailable` says why (raise `min_time_s` to lengthen the block).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mlcompare.measure import device

#: The kernel's powercap interface; every RAPL zone, sub-zones included, is linked here.
POWERCAP = Path("/sys/class/powercap")
#: The zones summed: each CPU package (cores, caches, uncore) and DRAM. `core` and `uncore`
#: lie inside their package and `psys` (the whole platform) overlaps both: never added.
_SUMMED = re.compile(r"^(package-\d+|dram)$")
#: A block is measured only if it lasts at least this many of its counter's update periods.
MIN_UPDATES = 3
#: A zone's power when it publishes no limit to bound it by: more than any CPU package
#: draws. Used only to decide whether a counter could have wrapped twice in one block.
_ASSUMED_MAX_ZONE_W = 1000.0


class Unavailable(Exception):
    """No counter can measure this case's energy; the message says why."""


@dataclass(frozen=True)
class Zone:
    """One RAPL zone: where its counter is, what it is called, when it wraps."""

    path: Path
    name: str
    range_uj: int  # the counter wraps to 0 after this many microjoules
    max_power_w: float  # the highest power limit it publishes (or the assumed bound)

    def read_uj(self) -> int:
        return int((self.path / "energy_uj").read_text())

    @property
    def wrap_s(self) -> float:
        """The shortest time in which the counter can go once round its range."""
        return self.range_uj / 1e6 / self.max_power_w


def rapl_zones(root: Path = POWERCAP) -> list[Zone]:
    """The package and DRAM zones under `root`, each of them readable; raises `Unavailable`."""
    if not root.is_dir():
        raise Unavailable(f"RAPL: no powercap interface ({root} does not exist)")
    zones, unreadable = [], []
    for path in sorted(root.glob("intel-rapl:*")):
        try:
            name = (path / "name").read_text().strip()
        except OSError:
            continue
        if not _SUMMED.match(name):
            continue
        try:
            zone = Zone(path, name, int((path / "max_energy_range_uj").read_text()), _max_power_w(path))
            zone.read_uj()
        except PermissionError:
            unreadable.append(f"{path.name} ({name})")
            continue
        except (OSError, ValueError) as exc:
            raise Unavailable(f"RAPL: {path.name} ({name}) cannot be read: {exc}") from None
        if zone.range_uj <= 0:
            raise Unavailable(f"RAPL: {path.name} ({name}) publishes no counter range")
        zones.append(zone)
    if unreadable:  # a partial sum would pass for the whole: nothing rather than that
        raise Unavailable(f"RAPL: energy_uj of {', '.join(unreadable)} is readable by root only (kernels patched "
                          "for CVE-2020-8694 restrict it); run as root or make it readable")
    if not zones:
        raise Unavailable(f"RAPL: no package or dram zone under {root}")
    return zones


def _max_power_w(path: Path) -> float:
    limits = []
    for limit in path.glob("constraint_*_power_limit_uw"):
        try:
            limits.append(int(limit.read_text()) / 1e6)
        except (OSError, ValueError):
            continue
    return max([w for w in limits if w > 0], default=_ASSUMED_MAX_ZONE_W)


def rapl_joules(zones: list[Zone], start: list[int], end: list[int]) -> float:
    """Joules between two readings of the zones, each counter corrected for one wrap."""
    return sum((b - a) % zone.range_uj for zone, a, b in zip(zones, start, end)) / 1e6


class _Rapl:
    kind = "cpu_packages_dram"
    update_period_s = 0.001  # Intel documents an update about every millisecond

    def __init__(self, root: Path) -> None:
        self.zones = rapl_zones(root)
        counts: dict[str, int] = {}
        for zone in self.zones:
            counts[zone.name] = counts.get(zone.name, 0) + 1
        summed = " + ".join(f"{counts[name]}× {name}" if counts[name] > 1 else name
                            for name in sorted(counts, key=lambda name: (name == "dram", name)))
        self.source = f"RAPL (powercap) {summed}: the whole CPU sockets and their memory, every process included"

    def read(self) -> list[int]:
        return [zone.read_uj() for zone in self.zones]

    def joules(self, start: list[int], end: list[int], seconds: float) -> float:
        shortest = min(self.zones, key=lambda zone: zone.wrap_s)
        if seconds >= shortest.wrap_s:
            raise Unavailable(f"RAPL: the warm fits took {seconds:.0f} s, long enough for {shortest.name}'s counter "
                              f"(range {shortest.range_uj / 1e6:.0f} J) to wrap more than once")
        return rapl_joules(self.zones, start, end)


class _Nvml:
    kind = "gpu_board"
    #: Assumed, not yet measured here (no GPU has run): NVIDIA's boards refresh their power
    #: readings tens of times a second; 0.1 s keeps a block of three updates on the safe side.
    update_period_s = 0.1

    def __init__(self, gpus: int) -> None:
        try:
            found = device.nvml_gpus(gpus)
        except device.NvmlUnavailable as exc:
            raise Unavailable(f"NVML: {exc}") from None
        self.handles = [handle for handle, _ in found]
        names = ", ".join(f"GPU {i} ({name})" for i, (_, name) in enumerate(found))
        self.source = f"NVML total energy of {names}: the whole device, idle power and other processes included"

    def read(self) -> list[int]:
        try:
            return [device.gpu_energy_mj(handle) for handle in self.handles]
        except device.NvmlUnavailable as exc:
            raise Unavailable(f"NVML: {exc}") from None

    def joules(self, start: list[int], end: list[int], seconds: float) -> float:
        return sum(b - a for a, b in zip(start, end)) / 1e3


class Meter:
    """Counters read around a block of fits (`with meter(...) as m:`); then `metrics(fits)` and
    `record()` say what was measured, or why nothing was."""

    def __init__(self, open_counter: Callable[[], Any]) -> None:
        self._open = open_counter
        self._counter: Any = None
        self._start: list[int] = []
        self._joules: float | None = None
        self._seconds = 0.0
        self.unavailable = ""

    def __enter__(self) -> Meter:
        try:
            self._counter = self._open()
            self._start = self._counter.read()
        except Unavailable as exc:
            self.unavailable = str(exc)
        self._started = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self._seconds = time.perf_counter() - self._started
        if self.unavailable or exc[0] is not None:
            return
        shortest = MIN_UPDATES * self._counter.update_period_s
        if self._seconds < shortest:
            self.unavailable = (f"the warm fits took {self._seconds * 1e3:.1f} ms, under {MIN_UPDATES} updates of the "
                                f"{self._counter.kind} counter ({self._counter.update_period_s * 1e3:g} ms each): not "
                                "measured; raise min_time_s to lengthen the block")
            return
        try:
            end = self._counter.read()
            joules = self._counter.joules(self._start, end, self._seconds)
        except Unavailable as problem:
            self.unavailable = str(problem)
            return
        except OSError as problem:
            self.unavailable = f"the counter could not be read again: {problem}"
            return
        if joules <= 0:  # a counter that did not move measured nothing: no zero passed off as a result
            self.unavailable = (f"the counter did not move during the {self._seconds * 1e3:.1f} ms of warm fits "
                                "(shorter than its update interval): run more repeats or min_time_s")
            return
        self._joules = joules

    def metrics(self, fits: int) -> dict[str, float]:
        """`fit_energy_<kind>_j` (joules per warm fit) and `fit_power_<kind>_w` (mean watts over
        the block), `kind` naming what the counter covers: `gpu_board` or `cpu_packages_dram`."""
        if self._joules is None or fits < 1:
            return {}
        kind = self._counter.kind
        return {f"fit_energy_{kind}_j": self._joules / fits, f"fit_power_{kind}_w": self._joules / self._seconds}

    def record(self) -> dict[str, str]:
        """The tag that says what was summed, or why there is no energy."""
        if self._joules is not None:
            return {"energy_source": self._counter.source}
        return {"energy_unavailable": self.unavailable or "not measured"}


def meter(on_gpu: bool, cluster: Any = None, root: Path = POWERCAP) -> Meter:
    """The energy meter of one case: NVML for GPU cases, RAPL under `root` for CPU ones.

    `cluster` (a distributed case's `measure.cluster.Cluster`): a local one is measured on this
    machine (its GPU workers' GPUs summed), one on other machines cannot be.
    """
    def open_counter() -> Any:
        if cluster is not None and not cluster.local:
            raise Unavailable("the Dask workers run on other machines, whose counters this process cannot read")
        if on_gpu:
            return _Nvml(len(cluster.workers) if cluster is not None else 1)
        return _Rapl(root)

    return Meter(open_counter)
