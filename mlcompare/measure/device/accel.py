"""cuML: its release, `cuml.accel` installed and profiled, and its device selection."""

from __future__ import annotations

from typing import Any

from mlcompare.measure.device.context import rmm_resource

#: cuML's first release with a `cuml.accel` that has its profiler (25.08) and takes
#: `disable_uvm` (25.02): without the profiler a CPU fallback cannot be told apart.
ACCEL_MIN_CUML = (25, 8)


def cuml_version() -> tuple[int, int] | None:
    """The installed cuML's (year, month) release, from its package metadata (no import)."""
    from importlib import metadata

    for dist in ("cuml-cu13", "cuml-cu12", "cuml"):
        try:
            text = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        year, month = text.split(".")[:2]
        return int(year), int(month)
    return None


def install_accelerator(name: str) -> str:
    """Install a zero-code-change accelerator in this process, before sklearn is imported;
    return how it was installed, in words (for `ran_on`).

    cuml.accel is installed on plain device memory (`disable_uvm=True`): by default it
    switches RMM to managed (unified) memory, which would compare it with `cuml` under
    another allocator, count only resident pages, and can hang a GPU when oversubscribed.
    A cuml.accel without its profiler is refused: its fallbacks to the CPU could not be seen.
    """
    if name != "cuml.accel":
        raise ValueError(f"unknown accelerator {name!r}")
    version = cuml_version()
    if version is not None and version < ACCEL_MIN_CUML:
        raise RuntimeError(f"cuML {version[0]}.{version[1]:02d} has no cuml.accel.profile (new in 25.08): a CPU "
                           "fallback could not be told from a GPU fit; install cuML 25.12 or newer")
    import cuml.accel

    if not hasattr(cuml.accel, "profile"):
        raise RuntimeError("this cuml.accel has no profiler: a CPU fallback could not be told from a GPU fit")
    cuml.accel.install(disable_uvm=True)
    return f"cuml.accel installed with disable_uvm=True; {rmm_resource()}"


def accel_profile() -> Any:
    """cuml.accel's profiler as a context manager (`install_accelerator` made sure it exists)."""
    import cuml.accel

    return cuml.accel.profile(quiet=True)


def accel_calls(report: Any, class_name: str, method: str = "fit") -> tuple[int, int, list[str]] | None:
    """(GPU calls, CPU calls, fallback reasons) of `class_name.method` in a cuml.accel profile."""
    calls = getattr(report, "method_calls", None)
    if calls is None:
        return None
    gpu = cpu = 0
    reasons: set[str] = set()
    for qualname, stats in calls.items():
        if qualname.split(".")[-2:] == [class_name, method]:
            gpu += stats.gpu_calls
            cpu += stats.cpu_calls
            reasons |= set(stats.fallback_reasons)
    return gpu, cpu, sorted(reasons)


def cuml_device_selection() -> str | None:
    """cuML's global device type where this cuML still has one ('cpu'/'host' means CPU),
    or None: cuML 25.08 removed CPU execution outside cuml.accel, and the setting with it."""
    try:
        import cuml

        return str(cuml.global_settings.device_type.name).lower()
    except Exception:  # noqa: BLE001 - no such setting: this cuML runs its estimators on the GPU only
        return None
