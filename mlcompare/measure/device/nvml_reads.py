"""NVML (nvidia-ml-py): the GPU's properties, state and energy counter; no CUDA context."""

from __future__ import annotations

import contextlib
import ctypes
import functools
from typing import Any

from mlcompare.measure.device.probe import _cuda_device, _cuda_driver, cuda_devices


@functools.lru_cache(maxsize=1)
def nvml() -> tuple[Any, str | None]:
    """The `pynvml` module, initialised once in this process, or (None, why not).

    NVML reads the driver's view of the GPUs (clocks, power, memory, energy) without a
    CUDA context, so the suite's own process may call it too.
    """
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML unavailable ({exc})"
    return pynvml, None


def nvml_handle(ordinal: int = 0) -> Any:
    """The NVML handle of this process's CUDA device `ordinal`, or None.

    Matched by PCI bus id, so it is the right GPU under CUDA_VISIBLE_DEVICES (NVML numbers
    every GPU of the machine; CUDA only the visible ones). A MIG instance maps to its GPU.
    """
    pynvml, _ = nvml()
    if pynvml is None:
        return None
    for lookup, key in ((pynvml.nvmlDeviceGetHandleByPciBusId, _pci_bus_id(ordinal)),
                        (pynvml.nvmlDeviceGetHandleByUUID, _uuid(ordinal))):
        if key is not None:
            try:
                return lookup(key)
            except pynvml.NVMLError:
                continue
    return None


def _pci_bus_id(ordinal: int) -> str | None:
    device, text = _cuda_device(ordinal), ctypes.create_string_buffer(64)
    if device is None or _cuda_driver().cuDeviceGetPCIBusId(text, 64, device) != 0:
        return None
    return text.value.decode()


def _uuid(ordinal: int) -> str | None:
    """The GPU's UUID as NVML writes it (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)."""
    device, raw = _cuda_device(ordinal), ctypes.create_string_buffer(16)
    if device is None or _cuda_driver().cuDeviceGetUuid(raw, device) != 0:
        return None
    h = raw.raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def gpu_properties() -> list[dict[str, str]]:
    """What a result depends on, per visible GPU: memory, compute capability, clocks, power
    limit, MIG and ECC mode (empty without NVML or a GPU). Each reading that fails is left out."""
    pynvml, _ = nvml()
    if pynvml is None:
        return []
    out = []
    for ordinal in range(len(cuda_devices()[0])):
        handle = nvml_handle(ordinal)
        if handle is None:
            continue
        sm, mem = pynvml.NVML_CLOCK_SM, pynvml.NVML_CLOCK_MEM
        readings = {
            "memory_mib": lambda h: str(pynvml.nvmlDeviceGetMemoryInfo(h).total // 2**20),
            "compute_capability": lambda h: "{}.{}".format(*pynvml.nvmlDeviceGetCudaComputeCapability(h)),
            "sm_clock_max_mhz": lambda h: str(pynvml.nvmlDeviceGetMaxClockInfo(h, sm)),
            "memory_clock_max_mhz": lambda h: str(pynvml.nvmlDeviceGetMaxClockInfo(h, mem)),
            "power_limit_w": lambda h: f"{pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000:.0f}",
            "mig": lambda h: _on_off(pynvml.nvmlDeviceGetMigMode(h)[0]),
            "ecc": lambda h: _on_off(pynvml.nvmlDeviceGetEccMode(h)[0]),
            "persistence": lambda h: _on_off(pynvml.nvmlDeviceGetPersistenceMode(h)),
        }
        gpu = {}
        for key, read in readings.items():
            with contextlib.suppress(pynvml.NVMLError):
                gpu[key] = read(handle)
        out.append(gpu)
    return out




#: NVML's reasons for clocks below their maximum, by bit (named once, shortest first).
_CLOCK_REASONS = (("gpu_idle", 0x1), ("applications_clocks", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
                  ("sync_boost", 0x10), ("sw_thermal", 0x20), ("hw_thermal", 0x40), ("hw_power_brake", 0x80),
                  ("display_clocks", 0x100))


def gpu_state(ordinal: int = 0) -> dict[str, Any] | None:
    """The GPU's SM clock (MHz) and why its clocks are held down now ('none' when they are not),
    or None without NVML. Read at a GPU case's start and end."""
    handle = nvml_handle(ordinal)
    if handle is None:
        return None
    pynvml, _ = nvml()
    state: dict[str, Any] = {}
    with contextlib.suppress(pynvml.NVMLError):
        state["sm_clock_mhz"] = float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM))
    reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) \
        or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons  # the older name
    with contextlib.suppress(pynvml.NVMLError):
        mask = int(reasons(handle))
        state["clock_reasons"] = ",".join(name for name, bit in _CLOCK_REASONS if mask & bit) or "none"
    return state


def _on_off(value: Any) -> str:
    return "on" if value else "off"


class NvmlUnavailable(RuntimeError):
    """NVML cannot answer on this machine (or for this GPU); the message says why."""


def nvml_gpus(count: int = 1) -> list[tuple[Any, str]]:
    """(NVML handle, name) of the first `count` CUDA devices this process computes on
    (matched by `nvml_handle`); raises `NvmlUnavailable` saying why not."""
    pynvml, why = nvml()
    if pynvml is None:
        raise NvmlUnavailable(why)
    out = []
    for ordinal in range(count):
        handle = nvml_handle(ordinal)
        if handle is None:
            raise NvmlUnavailable(f"NVML does not know CUDA device {ordinal} (no CUDA driver, or the device "
                                  "is not visible to this process)")
        name = pynvml.nvmlDeviceGetName(handle)
        out.append((handle, name.decode() if isinstance(name, bytes) else str(name)))
    return out


def gpu_energy_mj(handle: Any) -> int:
    """The GPU's total energy counter: millijoules since the driver loaded (NVML, Volta and newer)."""
    pynvml, why = nvml()
    if pynvml is None:
        raise NvmlUnavailable(why)
    try:
        return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))
    except pynvml.NVMLError as exc:
        raise NvmlUnavailable(f"this GPU has no total-energy counter: {exc}") from None
