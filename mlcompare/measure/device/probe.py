"""What this machine has: CUDA devices seen by the driver (through ctypes), driver versions,
and whether a GPU library imports here (tried once in a fresh process). Nothing here creates
a CUDA context."""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any

from mlcompare.pairings.libraries import library_installed


@functools.lru_cache(maxsize=1)
def cuda_devices() -> tuple[list[str], str | None]:
    """Names of the CUDA devices the driver sees, and why there are none when empty."""
    lib = _cuda_driver()
    if lib is None:
        return [], "no CUDA device (CUDA driver libcuda.so.1 not found)"
    if lib.cuInit(0) != 0:
        return [], "no CUDA device (the CUDA driver failed to initialise)"
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return [], "no CUDA device (the driver reports none)"
    names = []
    for ordinal in range(count.value):
        device, name = ctypes.c_int(0), ctypes.create_string_buffer(256)
        lib.cuDeviceGet(ctypes.byref(device), ordinal)
        lib.cuDeviceGetName(name, 256, device)
        names.append(name.value.decode(errors="replace"))
    return names, None


@functools.lru_cache(maxsize=1)
def _cuda_driver() -> Any:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


def _cuda_device(ordinal: int) -> Any:
    """CUDA's device handle for `ordinal` (counted among the devices this process may see)."""
    lib = _cuda_driver()
    if lib is None or cuda_devices()[1]:
        return None
    device = ctypes.c_int(0)
    return device if lib.cuDeviceGet(ctypes.byref(device), ordinal) == 0 else None


def primary_context_active(ordinal: int = 0) -> bool | None:
    """Whether this process holds a CUDA context on device `ordinal` (the primary context,
    which CuPy, cuML, XGBoost and every CUDA runtime user share), or None without a GPU.
    Asking creates none."""
    device, flags, active = _cuda_device(ordinal), ctypes.c_uint(0), ctypes.c_int(0)
    if device is None or _cuda_driver().cuDevicePrimaryCtxGetState(device, ctypes.byref(flags),
                                                                    ctypes.byref(active)) != 0:
        return None
    return bool(active.value)


#: Libraries whose import is tried in a fresh process before they are used: a broken RAPIDS
#: install (a library path, a pinned dependency) fails at import, and must not take the
#: other GPU cases down with it.
PROBED_IMPORTS = ("cuml", "cudf")
#: Seconds an import probe may take (RAPIDS imports take seconds; a hang is a failure).
IMPORT_PROBE_TIMEOUT_S = 120.0


@functools.lru_cache(maxsize=None)
def import_problem(module: str) -> str | None:
    """Why `import module` fails in a fresh Python here, in one line; None when it works.

    Asked once per process and module, in a child process with a time limit, so that a
    crash or a hang of the import is a reason, not the end of the suite.
    """
    import subprocess

    if not library_installed(module):
        return f"{module} not installed"
    try:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              timeout=IMPORT_PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{module} is installed but `import {module}` did not finish in {IMPORT_PROBE_TIMEOUT_S:.0f} s"
    if done.returncode == 0:
        return None
    last = next((line for line in reversed(done.stderr.strip().splitlines()) if line.strip()), "")
    return f"{module} is installed but `import {module}` fails: {last[:300] or f'exit {done.returncode}'}"


def skip_reason(library: str, device: str) -> str | None:
    """Why an implementation cannot run here, or None when it can.

    `library` may be an accelerator such as "cuml.accel": it needs cuML and a GPU. GPU
    implementations need CuPy (device arrays) and a CUDA device; cuDF is optional (without
    it the data is read on the host and copied to the device). cuML and cuDF must also
    import (tried in a fresh process: `import_problem`).
    """
    reasons = []
    root = library.split(".", 1)[0]
    if not library_installed(library):
        reasons.append(f"{root} not installed")
    elif root in PROBED_IMPORTS and (problem := import_problem(root)):
        reasons.append(problem)
    if device == "gpu":
        if not library_installed("cupy"):
            reasons.append("cupy not installed")
        _, why = cuda_devices()
        if why:
            reasons.append(why)
    return "; ".join(reasons) or None


@functools.lru_cache(maxsize=1)
def driver_versions() -> dict[str, str]:
    """The NVIDIA driver's version and the newest CUDA version it supports, when present."""
    out: dict[str, str] = {}
    lib = _cuda_driver()
    if lib is None:
        return out
    version = ctypes.c_int(0)
    if lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        out["cuda_driver_api"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    try:  # NVML's C library directly: the version is there even without nvidia-ml-py
        nvml_lib = ctypes.CDLL("libnvidia-ml.so.1")
        text = ctypes.create_string_buffer(96)
        if nvml_lib.nvmlInit_v2() == 0 and nvml_lib.nvmlSystemGetDriverVersion(text, 96) == 0:
            out["driver"] = text.value.decode(errors="replace")
    except OSError:
        pass
    return out
