"""Energy of the warm fits: the unreadable path for real, the counter arithmetic on our own powercap tree.

The powercap tree of these tests is our own input, laid out as the kernel lays it out
(zone folders with `name`, `energy_uj`, `max_energy_range_uj`, `constraint_*_power_limit_uw`);
the code reads it exactly as it reads /sys/class/powercap.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mlcompare.measure import device, energy


def _zone(root: Path, folder: str, name: str, uj: int, range_uj: int, limit_uw: int | None = None) -> Path:
    path = root / folder
    path.mkdir(parents=True)
    (path / "name").write_text(name + "\n")
    (path / "energy_uj").write_text(f"{uj}\n")
    (path / "max_energy_range_uj").write_text(f"{range_uj}\n")
    if limit_uw is not None:
        (path / "constraint_0_power_limit_uw").write_text(f"{limit_uw}\n")
    return path


def _set(path: Path, uj: int) -> None:
    (path / "energy_uj").write_text(f"{uj}\n")


def _powercap_readable() -> bool:
    try:
        energy.rapl_zones()
        return True
    except energy.Unavailable:
        return False


@pytest.mark.skipif(_powercap_readable(), reason="this machine's RAPL counters are readable")
def test_no_rapl_here_means_no_metric_and_a_reason():
    with energy.meter(on_gpu=False) as meter:
        sum(range(1000))
    assert meter.metrics(3) == {}
    record = meter.record()
    assert set(record) == {"energy_unavailable"} and record["energy_unavailable"].startswith("RAPL: ")


@pytest.mark.skipif(bool(device.cuda_devices()[0]), reason="this machine has a CUDA device")
def test_no_nvml_here_means_no_metric_and_a_reason():
    with energy.meter(on_gpu=True) as meter:
        pass
    assert meter.metrics(3) == {}
    reason = meter.record()["energy_unavailable"]
    assert reason.startswith("NVML: ")
    # nvidia-ml-py is a dev dependency: its own error says the driver's library is missing
    assert "not installed" in reason or "NVML unavailable" in reason


def test_packages_and_dram_are_summed_with_one_wrap_corrected(tmp_path):
    top = 262_143_328_850  # a real package's max_energy_range_uj (about 262 kJ)
    package = _zone(tmp_path, "intel-rapl:0", "package-0", top - 100_000, top)
    dram = _zone(tmp_path, "intel-rapl:0:0", "dram", 50_000, 65_712_999_613)
    core = _zone(tmp_path, "intel-rapl:0:1", "core", 0, 1_000_000)  # inside the package: never added
    psys = _zone(tmp_path, "intel-rapl:1", "psys", 0, 1_000_000)  # the whole platform: never added
    _zone(tmp_path, "intel-rapl-mmio:0", "package-0", 0, 1_000_000)  # the same package again, another interface
    with energy.meter(False, root=tmp_path) as meter:
        _set(package, 100_000)  # wrapped: 100,000 uJ to the top, then 100,000 from 0
        _set(dram, 350_000)  # 300,000 uJ
        _set(core, 999_999)
        _set(psys, 999_999)
        time.sleep(0.01)
    # 0.5 J over 4 fits
    assert meter.metrics(4)["fit_energy_cpu_packages_dram_j"] == pytest.approx(0.5 / 4)
    assert 0 < meter.metrics(4)["fit_power_cpu_packages_dram_w"] < 0.5 / 0.01
    assert meter.record() == {"energy_source": "RAPL (powercap) package-0 + dram: the whole CPU sockets and their "
                                               "memory, every process included"}


def test_two_sockets_are_named_and_added(tmp_path):
    zones = [_zone(tmp_path, "intel-rapl:0", "package-0", 0, 10**9), _zone(tmp_path, "intel-rapl:1", "package-1",
                                                                           0, 10**9),
             _zone(tmp_path, "intel-rapl:0:0", "dram", 0, 10**9), _zone(tmp_path, "intel-rapl:1:0", "dram", 0, 10**9)]
    with energy.meter(False, root=tmp_path) as meter:
        for path in zones:
            _set(path, 1_000_000)
        time.sleep(0.01)
    assert meter.metrics(2)["fit_energy_cpu_packages_dram_j"] == pytest.approx(4.0 / 2)
    assert "package-0 + package-1 + 2× dram" in meter.record()["energy_source"]


def test_a_counter_that_did_not_move_measures_nothing(tmp_path):
    _zone(tmp_path, "intel-rapl:0", "package-0", 5, 10**12)
    with energy.meter(False, root=tmp_path) as meter:
        time.sleep(0.01)
    assert meter.metrics(1) == {}
    assert "did not move" in meter.record()["energy_unavailable"]


def test_a_block_long_enough_to_wrap_twice_is_refused(tmp_path):
    # 1,000 uJ of range at a 1 W limit: the counter can go round in 1 ms
    package = _zone(tmp_path, "intel-rapl:0", "package-0", 0, 1_000, limit_uw=1_000_000)
    with energy.meter(False, root=tmp_path) as meter:
        _set(package, 500)
        time.sleep(0.02)
    assert meter.metrics(1) == {}
    assert "wrap more than once" in meter.record()["energy_unavailable"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file: the permission check cannot fail")
def test_a_root_only_counter_is_said_and_nothing_partial_is_summed(tmp_path):
    _zone(tmp_path, "intel-rapl:0", "package-0", 0, 1_000_000)
    locked = _zone(tmp_path, "intel-rapl:0:0", "dram", 0, 1_000_000)
    (locked / "energy_uj").chmod(0)
    with pytest.raises(energy.Unavailable, match="readable by root only"):
        energy.rapl_zones(tmp_path)


def test_no_powercap_folder_and_no_zone_are_said(tmp_path):
    with pytest.raises(energy.Unavailable, match="no powercap interface"):
        energy.rapl_zones(tmp_path / "missing")
    _zone(tmp_path, "intel-rapl:0:1", "core", 0, 1_000)
    with pytest.raises(energy.Unavailable, match="no package or dram zone"):
        energy.rapl_zones(tmp_path)


def test_a_remote_cluster_cannot_be_measured_here():
    from mlcompare.measure.cluster import Cluster

    remote = Cluster(client=None, workers=["tcp://a:1"], kind="tcp://a:8786", threads_per_worker=1,
                     start_time_s=0.0, local=False)
    with energy.meter(False, remote) as meter:
        pass
    assert "other machines" in meter.record()["energy_unavailable"]


def test_nvml_is_read_before_and_after_the_block_on_every_gpu_of_the_case(monkeypatch):
    """Recording stand-ins of our own device helpers (the NVML calls themselves need a GPU):
    each GPU's counter is read once before the block and once after, millijoules become joules."""
    from mlcompare.measure.cluster import Cluster

    counters = {"gpu0": [1_000, 4_000], "gpu1": [50, 2_050]}  # mJ: before, after
    reads: list[str] = []

    def read(handle):
        reads.append(handle)
        return counters[handle][reads.count(handle) - 1]

    monkeypatch.setattr(device, "nvml_gpus", lambda count: [("gpu0", "A"), ("gpu1", "B")][:count])
    monkeypatch.setattr(device, "gpu_energy_mj", read)
    local_gpus = Cluster(client=None, workers=["w0", "w1"], kind="LocalCUDACluster", threads_per_worker=1,
                         start_time_s=0.0, local=True)
    with energy.meter(True, local_gpus) as meter:
        assert reads == ["gpu0", "gpu1"]
        time.sleep(energy.MIN_UPDATES * 0.1 + 0.01)  # three updates of the board's counter
    assert reads == ["gpu0", "gpu1", "gpu0", "gpu1"]
    assert meter.metrics(5)["fit_energy_gpu_board_j"] == pytest.approx((3.0 + 2.0) / 5)
    assert meter.record()["energy_source"].startswith("NVML total energy of GPU 0 (A), GPU 1 (B): the whole device")


def test_a_block_shorter_than_a_few_counter_updates_is_refused_with_the_reason(tmp_path):
    """A millisecond of fits against RAPL's millisecond updates (or NVML's tenth of a second):
    a counter read a tick apart measures its tick, so no figure, and the reason."""
    package = _zone(tmp_path, "intel-rapl:0", "package-0", 0, 10**12)
    with energy.meter(False, root=tmp_path) as meter:
        _set(package, 1_000_000)  # it moved, but within one update period
    assert meter.metrics(1) == {}
    assert "under 3 updates of the cpu_packages_dram counter (1 ms each)" in meter.record()["energy_unavailable"]


def test_the_two_counters_never_share_a_name(tmp_path, monkeypatch):
    """GPU board energy (NVML) and CPU package + DRAM energy (RAPL) are different things."""
    package = _zone(tmp_path, "intel-rapl:0", "package-0", 0, 10**12)
    with energy.meter(False, root=tmp_path) as cpu:
        _set(package, 2_000_000)
        time.sleep(0.01)
    monkeypatch.setattr(device, "nvml_gpus", lambda count: [("gpu0", "H200")])
    readings = iter([1_000, 3_000])
    monkeypatch.setattr(device, "gpu_energy_mj", lambda handle: next(readings))
    with energy.meter(True) as gpu:
        time.sleep(energy.MIN_UPDATES * 0.1 + 0.01)
    assert set(cpu.metrics(1)) == {"fit_energy_cpu_packages_dram_j", "fit_power_cpu_packages_dram_w"}
    assert set(gpu.metrics(1)) == {"fit_energy_gpu_board_j", "fit_power_gpu_board_w"}
