"""The machine fingerprint logged on every run."""

from __future__ import annotations

import subprocess

import psutil
from conftest import REPO

from mlcompare.suite import host as sysinfo


def test_fingerprint_describes_this_machine():
    tags = sysinfo.fingerprint()
    assert tags["host.cpu_logical_cores"] == str(psutil.cpu_count(logical=True))
    assert tags["host.cpu_physical_cores"] == str(psutil.cpu_count(logical=False))
    assert float(tags["host.ram_gb"]) > 0.5
    assert tags["host.cpu_model"]
    assert tags["host.gpu_count"] == str(len(sysinfo.device.cuda_devices()[0]))
    for package in ("mlflow", "scikit-learn", "numpy", "xgboost"):
        assert tags[f"version.{package}"]
    assert tags["version.mlcompare"]


def test_git_commit_and_dirty_state_are_those_of_the_checkout():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    if head.returncode != 0:
        assert sysinfo.git_state() == {}
        return
    state = sysinfo.git_state()
    assert state["mlcompare.git_commit"] == head.stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout.strip()
    assert state["mlcompare.git_dirty"] == ("true" if dirty else "false")


def test_fingerprint_names_every_package_a_number_depends_on():
    from importlib import metadata

    tags = sysinfo.fingerprint()
    for package in ("pandas", "pyarrow", "threadpoolctl", "lightgbm", "scikit-learn-intelex"):
        try:
            installed = metadata.version(package)
        except metadata.PackageNotFoundError:
            assert f"version.{package}" not in tags
        else:
            assert tags[f"version.{package}"] == installed
    if not sysinfo.device.cuda_devices()[0]:  # no GPU: no GPU properties, and no complaint about NVML
        assert not [k for k in tags if k.startswith("host.gpu_") and k != "host.gpu_count"]
