"""The one call every device timer ends with: wait until the queued device work is done."""

from __future__ import annotations


def synchronize() -> None:
    """Wait for all queued device work, so a timer stopped next measures the real cost."""
    import cupy

    cupy.cuda.Device().synchronize()
