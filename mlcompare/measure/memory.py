"""Peak memory of a block of work: this process's resident memory (and the GPU's) while it runs."""

from __future__ import annotations

import threading

import psutil

from mlcompare.measure import device


class PeakMemory:
    """Peak growth of this process's resident memory (and of used GPU memory) in a block.

    A background thread samples every `interval_s`; growth is measured against the level
    when the block was entered, so it is what the block itself allocated. With `children`
    the resident memory of every descendant process counts too (a local Dask cluster's
    workers); listing them costs more, so those samples are ten times rarer.
    """

    def __init__(self, gpu: bool = False, interval_s: float = 0.005, children: bool = False) -> None:
        self.gpu = gpu
        self.children = children
        self.interval_s = interval_s * (10 if children else 1)
        self.host_mb = 0.0
        self.gpu_mb: float | None = None
        self.samples = 0  # taken so far (a sampler starved by a loaded machine takes few)
        self._process = psutil.Process()
        self._stop = threading.Event()

    def __enter__(self) -> "PeakMemory":
        self._host_start = self._host_peak = self._rss()
        if self.gpu:
            self._gpu_start = self._gpu_peak = device.gpu_memory_used()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._take()

    def _take(self) -> None:
        self.samples += 1
        self._host_peak = max(self._host_peak, self._rss())
        if self.gpu:
            self._gpu_peak = max(self._gpu_peak, device.gpu_memory_used())

    def _rss(self) -> int:
        total = self._process.memory_info().rss
        if self.children:
            for child in self._process.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:  # it ended between the listing and the reading
                    pass
        return total

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._take()
        self.host_mb = (self._host_peak - self._host_start) / 2**20
        if self.gpu:
            self.gpu_mb = (self._gpu_peak - self._gpu_start) / 2**20


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
