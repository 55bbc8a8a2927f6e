"""Peak host memory of one fit, measured so that the figure does not depend on what ran before.

The fit measured is the cold fit: the first fit of the case's fresh process. A later fit
in the same process would be served partly from heap pages that earlier fits freed but the
allocator kept resident (glibc keeps freed memory and raises its mmap threshold after
large frees), so its resident-size growth reads about 0 whatever it allocated.

How: the kernel's high-water mark of this process's resident memory (`VmHWM`) is reset
to the current size just before the fit (`/proc/self/clear_refs`, value 5, Linux ≥ 4.0)
and read just after; the figure is that peak minus the resident size before the fit, less
what the file-backed part of it grew by (`RssFile`): the pages of library code and data
the fit touched for the first time are the libraries', not the fit's, and a process forked
from a warm one touches many more of them than a fresh one (its parent's page tables for
them are not copied: measured for KMeans 20k×10, 6.0 MB forked against 2.9 MB fresh,
before this correction). The pages touched after the peak are left out as well, so the
figure can be a little short of the fit's own peak, more so forked (LinearRegression 30k×32:
7.75 MB forked against 8.25 MB fresh). No thread samples anything while the timed cold fit runs, and no
allocation is missed between samples. Where the reset is not allowed (not Linux, a
restricted /proc), a sampling thread does it instead (`method` says which), sampling the
anonymous and shared memory only: it can miss short peaks and takes a little CPU from the
fit.

The reset also clears the process's lifetime peak, which `peak_rss_mb` reports: the peak
before the reset is read first and kept, so that figure stays the whole process's.

A local Dask cluster's workers are other processes: their resident memory is added by
sampling them (`children`), as their own high-water marks cannot be reset from here.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psutil

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_bytes(key: str) -> int | None:
    """A `kB` line of /proc/self/status (VmRSS, VmHWM) in bytes, or None where there is none."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


#: This process's resident high-water mark as it was before the last reset (bytes): the reset
#: clears the kernel's lifetime peak too, which `peak_rss_mb` reports.
_peak_before_reset = 0


def reset_high_water_mark() -> bool:
    """Set this process's resident high-water mark to its current size (keeping the peak it
    had for `peak_rss_mb`); False where not allowed."""
    global _peak_before_reset
    _peak_before_reset = max(_peak_before_reset, _status_bytes("VmHWM") or 0)
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return _status_bytes("VmHWM") is not None


def _file_bytes() -> int:
    """The file-backed part of this process's resident memory (library code and data, mapped files)."""
    return _status_bytes("RssFile") or 0


#: `FitMemory.method` where nothing runs beside the block (the kernel's mark is reset and read).
HIGH_WATER_MARK = "high-water mark"


def nothing_beside(children: bool = False) -> bool:
    """Whether `FitMemory(children)` will measure without a sampling thread beside the block
    (which takes CPU from it: a fit measured so is no timed value)."""
    return not children and _CLEAR_REFS.exists() and reset_high_water_mark()


class FitMemory:
    """Peak growth of this process's resident memory over a block (see the module's docstring).

    `host_mb` after the block; `method` is HIGH_WATER_MARK or "sampled".
    """

    def __init__(self, children: bool = False) -> None:
        self.children = children
        self.host_mb = 0.0
        self.method = ""
        self._sampler: _Sampler | None = None

    def __enter__(self) -> FitMemory:
        if not self.children and reset_high_water_mark():
            self.method = HIGH_WATER_MARK
            self._start = _status_bytes("VmRSS")
            self._file_start = _file_bytes()
        else:
            self.method = "sampled"
            self._sampler = _Sampler(children=self.children).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sampler is not None:
            self.host_mb = self._sampler.stop() / 2**20
        else:
            file_growth = max(0, _file_bytes() - self._file_start)  # the libraries' pages, first touched
            self.host_mb = max(0, (_status_bytes("VmHWM") or 0) - (self._start or 0) - file_growth) / 2**20


class _Sampler:
    """Peak growth of resident memory (this process, and its descendants with `children`),
    sampled by a thread every `interval_s` (ten times rarer with children: listing them costs more)."""

    def __init__(self, children: bool, interval_s: float = 0.005) -> None:
        self.children = children
        self.interval_s = interval_s * (10 if children else 1)
        self.samples = 0
        self._process = psutil.Process()
        self._stop = threading.Event()

    def start(self) -> _Sampler:
        self._start = self._peak = self._rss()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._take()

    def _take(self) -> None:
        self.samples += 1
        self._peak = max(self._peak, self._rss())

    def _rss(self) -> int:
        """This process's anonymous and shared resident memory (its file-backed pages are the
        libraries'), and its descendants' whole resident memory with `children`."""
        own = (_status_bytes("RssAnon") or 0) + (_status_bytes("RssShmem") or 0)
        total = own or self._process.memory_info().rss  # where /proc has no breakdown: all of it
        if self.children:
            for child in self._process.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:  # it ended between the listing and the reading
                    pass
        return total

    def stop(self) -> int:
        """Stop sampling; the peak growth in bytes."""
        self._stop.set()
        self._thread.join()
        self._take()
        return self._peak - self._start


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, across any high-water-mark reset (Linux's
    ru_maxrss is in KiB; the reset lowers it, so the peak kept before the reset counts too)."""
    import resource

    now = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, _status_bytes("VmHWM") or 0)
    return max(now, _peak_before_reset) / 2**20
