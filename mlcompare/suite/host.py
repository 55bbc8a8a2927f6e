"""Hardware and software fingerprint, logged as tags so runs from different machines
can be told apart side by side."""

from __future__ import annotations

import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path

import psutil

from mlcompare import __version__
from mlcompare.measure import device

#: Distributions that decide numbers without being one of mlcompare's own requirements: the
#: RMM under cuML and cuDF, and XGBoost's CUDA-only builds (another name for `xgboost`).
_INDIRECT = ("rmm-cu12", "rmm-cu13", "xgboost-cu12", "xgboost-cu13")
_REPO = Path(__file__).resolve().parents[2]


def packages() -> list[str]:
    """Every distribution a number may depend on (the `version.*` tags): mlcompare's own
    requirements, those of every extra but `dev` (the test tools), read from its installed
    metadata, or from the checkout's pyproject.toml and requirements.txt when it runs from a
    checkout that is not installed (bench/gpu_check.py on a GPU box); and `_INDIRECT`."""
    try:
        requirements = metadata.requires("mlcompare") or []
    except metadata.PackageNotFoundError:
        requirements = _checkout_requirements()
    names = [re.split(r"[\s<>=!~;\[(]", r.strip(), maxsplit=1)[0] for r in requirements
             if not re.search(r"""extra\s*==\s*["']dev["']""", r)]
    return list(dict.fromkeys(n for n in [*names, *_INDIRECT] if n and n != "mlcompare"))


def _checkout_requirements() -> list[str]:
    import tomllib

    try:
        project = tomllib.loads((_REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        lines = (_REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, KeyError, ValueError):
        return []
    extras = [r for name, listed in project.get("optional-dependencies", {}).items() if name != "dev" for r in listed]
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")] + extras


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo (read in microseconds; py-cpuinfo takes 1.7 s
    here and says less: "AMD EPYC"); elsewhere what `platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def fingerprint() -> dict[str, str]:
    gpus, why = device.cuda_devices()
    tags = {
        "host.cpu_model": cpu_model(),
        "host.cpu_physical_cores": str(psutil.cpu_count(logical=False) or "unknown"),
        "host.cpu_logical_cores": str(psutil.cpu_count(logical=True) or "unknown"),
        "host.cpus_usable": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "unknown"),
        "host.ram_gb": f"{psutil.virtual_memory().total / 2**30:.1f}",
        "host.os": f"{platform.system()} {platform.release()}",
        "host.python": platform.python_version(),
        "host.gpu": ", ".join(gpus) if gpus else f"none: {why}",
        "host.gpu_count": str(len(gpus)),
        "version.mlcompare": __version__,
        **{f"host.nvidia_{k}": v for k, v in device.driver_versions().items()},
        **gpu_tags(),
        **git_state(),
    }
    for package in packages():
        try:
            tags[f"version.{package}"] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return tags


def gpu_tags() -> dict[str, str]:
    """The GPUs' properties through NVML (nvidia-ml-py): `host.gpu_<property>`, one value
    per GPU joined by ', ' as in `host.gpu`; `host.gpu_nvml` says why there are none."""
    gpus = device.gpu_properties()
    if not gpus:
        _, why = device.nvml()
        return {"host.gpu_nvml": why} if why and device.cuda_devices()[0] else {}
    keys = dict.fromkeys(k for gpu in gpus for k in gpu)
    return {f"host.gpu_{k}": ", ".join(gpu.get(k, "?") for gpu in gpus) for k in keys}


def git_state() -> dict[str, str]:
    """The commit mlcompare's own code came from, and whether its tree had local changes."""
    root = _REPO
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10)
        if commit.returncode != 0:
            return {}
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return {"mlcompare.git_commit": commit.stdout.strip(),
            "mlcompare.git_dirty": str(bool(status.stdout.strip())).lower()}


class LoadMeter:
    """The machine's load when each case starts: the 1-minute load average, and the share of
    CPU time the hypervisor stole since the previous reading (/proc/stat's steal column;
    absent where /proc/stat cannot be read)."""

    def __init__(self, stat: Path = Path("/proc/stat")) -> None:
        self._stat = stat
        self._last = self._ticks()

    def _ticks(self) -> tuple[int, int] | None:
        """(steal, total) jiffies of all CPUs, or None."""
        try:
            fields = self._stat.read_text().splitlines()[0].split()
        except (OSError, IndexError):
            return None
        if fields[0] != "cpu" or len(fields) < 9:
            return None
        values = [int(v) for v in fields[1:]]
        return values[7], sum(values[:8])  # user nice system idle iowait irq softirq steal (guest is in user)

    def reading(self) -> dict[str, float]:
        """`load_avg_1m_at_start` and, where readable, `cpu_steal_pct_at_start` (since the last reading)."""
        out = {"load_avg_1m_at_start": os.getloadavg()[0]}
        now = self._ticks()
        if now is not None and self._last is not None:  # no tick since the last reading: nothing stolen
            elapsed = now[1] - self._last[1]
            out["cpu_steal_pct_at_start"] = 100.0 * (now[0] - self._last[0]) / elapsed if elapsed > 0 else 0.0
        self._last = now
        return out


def usable_cpus() -> int:
    """Logical CPUs this process may run on (what a load average is compared with)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
