"""The timer: garbage collection off inside it, as timeit does; threads within a cgroup's quota."""

from __future__ import annotations

import gc
import time

from mlcompare.measure.threads import cgroup_cpu_limit, default_threads
from mlcompare.measure.timing import (
    CALIBRATE_BELOW_S,
    CALIBRATE_LONG_BELOW_S,
    LONG_CALIBRATION_VALUES,
    repeat,
    settle,
    timed,
)


def test_garbage_collection_is_off_inside_every_timed_call_and_back_on_after():
    seen = []
    assert gc.isenabled()
    timed(lambda: seen.append(gc.isenabled()), False)
    repeat(lambda: seen.append(gc.isenabled()), False, repeats=3, loops=1)
    assert seen == [False] * 4 and gc.isenabled()
    seen.clear()
    repeat(lambda: seen.append(gc.isenabled()), False, repeats=3)  # far too short: timed in loops
    assert len(seen) > 4 and not any(seen) and gc.isenabled()
    gc.disable()
    try:
        timed(lambda: None, False)
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_a_call_shorter_than_the_clock_holds_is_timed_in_a_calibrated_loop():
    """A 1 ms call: the first call chooses the loop (left out of the values; up to two more
    where a loaded machine makes it look 5 ms or longer), each value is the mean over its loop,
    never the loop's total."""
    from mlcompare.measure.timing import LOOP_VALUE_S, SHORT_CALL_S, loops_for

    calls = []
    found = repeat(lambda: (calls.append(1), time.sleep(0.001)), False, repeats=3)
    assert 1 < found.loops <= LOOP_VALUE_S / 0.001 + 1  # the loop reaches LOOP_VALUE_S of calls
    probes = len(calls) - 3 * found.loops  # seen under load: 143 calls, loops of 47, a 5.8 ms first call
    assert len(found.times) == 3 and 1 <= probes <= 3 and found.calls == 3 * found.loops
    assert found.calibration_s >= 0.001 * probes
    for value in found.times:  # one call's seconds: at least the sleep, far below the loop's total
        assert 0.001 <= value < LOOP_VALUE_S / 2
    assert loops_for(SHORT_CALL_S) == 1 and loops_for(SHORT_CALL_S / 10) == LOOP_VALUE_S / (SHORT_CALL_S / 10)


def test_a_long_enough_first_call_is_kept_as_the_first_value():
    calls = []
    found = repeat(lambda: (calls.append(1), time.sleep(0.06)), False, repeats=2)
    assert found.loops == 1 and len(calls) == 2 and found.calibration_s == 0.0


def test_one_slow_first_call_of_a_fast_function_does_not_have_it_timed_alone():
    """Seen on a real run: a 0.9 ms fit whose process's first warm call took 6.7 ms was timed
    alone. A first call under RECHECK_BELOW_S is checked against two more; the fastest decides."""
    from mlcompare.measure.timing import SHORT_CALL_S

    pauses = iter([0.008] + [0.0005] * 10_000)
    found = repeat(lambda: time.sleep(next(pauses)), False, repeats=1)
    assert found.loops > 1 and found.calibration_s >= 0.008  # the probes chose the loop, left out of the values
    assert all(value < SHORT_CALL_S for value in found.times)
    steady = repeat(lambda: time.sleep(0.008), False, repeats=1)  # really 8 ms: timed alone, the first a value
    assert steady.loops == 1 and len(steady.times) == 1 and steady.calibration_s >= 0.016


def test_calibrating_values_go_on_until_those_past_the_moment_asked_are_a_process_s_worth():
    """`calibrate_until`: values continue past `repeats` until those that start after it alone
    give `repeats` values adding up to `min_time_s` (what is left where the plan drops the
    earlier ones; each value's start recorded); a call lasting CALIBRATE_BELOW_S or more, after a
    first call slower than it by more than WARMUP_TOLERANCE, until LONG_CALIBRATION_VALUES started
    after it, and one lasting CALIBRATE_LONG_BELOW_S or more not at all."""
    until = time.perf_counter() + 0.1
    fits = repeat(lambda: time.sleep(0.02), False, repeats=1, loops=1, calibrate_until=until)
    assert len(fits.starts) == len(fits.times) >= 4
    assert fits.starts[-1] >= until > fits.starts[-2]
    assert fits.starts == sorted(fits.starts)
    until = time.perf_counter() + 0.1
    fits = repeat(lambda: time.sleep(0.02), False, repeats=3, loops=1, calibrate_until=until)
    assert [start >= until for start in fits.starts].count(True) == 3 and fits.starts[-4] < until
    until = time.perf_counter() + 0.1
    fits = repeat(lambda: time.sleep(0.02), False, repeats=2, min_time_s=0.15, loops=1, calibrate_until=until)
    late = [value for value, start in zip(fits.times, fits.starts) if start >= until]
    assert sum(late) >= 0.15 and sum(late[:-1]) < 0.15
    # a call of CALIBRATE_BELOW_S or more, after a first call that differed, calibrates by count:
    # LONG_CALIBRATION_VALUES past the moment
    until = time.perf_counter() + 0.1
    long = repeat(lambda: time.sleep(CALIBRATE_BELOW_S), False, repeats=1, loops=1, calibrate_until=until,
                  first_call_s=2 * CALIBRATE_BELOW_S)
    assert [start >= until for start in long.starts] == [False] + [True] * LONG_CALIBRATION_VALUES
    # after a first call like the values (or none given), not at all
    for first_call_s in (CALIBRATE_BELOW_S, None):
        alike = repeat(lambda: time.sleep(CALIBRATE_BELOW_S), False, repeats=1, loops=1,
                       calibrate_until=time.perf_counter() + 0.1, first_call_s=first_call_s)
        assert len(alike.times) == 1
    # and one of CALIBRATE_LONG_BELOW_S or more not at all
    longer = repeat(lambda: time.sleep(CALIBRATE_LONG_BELOW_S), False, repeats=1, loops=1,
                    calibrate_until=time.perf_counter() + 10, first_call_s=10.0)
    assert len(longer.times) == 1


def test_settling_warms_up_until_the_window_after_the_first_call_is_over():
    calls = []
    first_ended = time.perf_counter()
    done = settle(lambda: (calls.append(time.perf_counter()), time.sleep(0.02)), False, first_ended, 0.1)
    assert done.calls == len(calls) >= 3
    assert calls[-1] - first_ended < 0.1 <= time.perf_counter() - first_ended  # the last started inside
    assert done.seconds >= 0.02 * done.calls  # each call's own sleep, at least
    assert settle(lambda: calls.append(0), False, first_ended, 0.0).calls == 0  # no window: none


def test_a_failing_call_turns_the_collector_back_on():
    try:
        timed(lambda: 1 / 0, False)
    except ZeroDivisionError:
        pass
    assert gc.isenabled()


def test_cgroup_quotas_cap_the_default_threads(tmp_path):
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("150000 100000\n")  # 1.5 CPUs' worth of time
    assert cgroup_cpu_limit(v2) == 1.5
    assert default_threads(v2) == min(2, default_threads(tmp_path / "none"))
    (v2 / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_limit(v2) is None
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_limit(v1) == 1.0 and default_threads(v1) == 1
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cgroup_cpu_limit(v1) is None


def _recording_timer(monkeypatch) -> list[str]:
    """Our timer wrapped by a recording stand-in: the list it writes "timer starts" / "timer ends" to."""
    from mlcompare.measure import timing

    calls: list[str] = []
    timed = timing.timed

    def recording_timed(fn, sync):
        calls.append("timer starts")
        try:
            return timed(fn, sync)
        finally:
            calls.append("timer ends")

    monkeypatch.setattr(timing, "timed", recording_timed)
    return calls


def test_the_readers_set_up_comes_before_the_timed_read(tmp_path, monkeypatch):
    """load_time_s holds the dataset's read, not pyarrow's one-time set-up: the warm-up runs
    first, outside the timer (recording stand-ins for our own reader functions)."""
    from mlcompare.data import cache
    from mlcompare.measure import inputs

    directory = cache.materialise(cache.DatasetSpec("regression", 300, 4), tmp_path)
    calls = _recording_timer(monkeypatch)
    warm, read = cache.warm_reader, cache.load_split
    monkeypatch.setattr(cache, "warm_reader", lambda: (calls.append("warm-up"), warm())[1])
    monkeypatch.setattr(cache, "load_split", lambda d: (calls.append("read"), read(d))[1])
    loaded = inputs.load(directory)
    assert calls == ["warm-up", "timer starts", "read", "timer ends"]
    assert loaded.host["X_train"].shape[1] == 4 and loaded.reader == "numpy"


def test_the_pyarrow_load_holds_the_layout_as_the_cudf_one_does(tmp_path, monkeypatch):
    """load_time_s is the read and the feature matrices in the case's layout, on the host as
    on the device: the layout is made inside the load's timer (recording stand-ins of our own)."""
    from mlcompare.data import cache
    from mlcompare.measure import device, inputs

    directory = cache.materialise(cache.DatasetSpec("regression", 300, 4), tmp_path)
    calls = _recording_timer(monkeypatch)
    in_layout = device.in_layout
    monkeypatch.setattr(device, "in_layout", lambda array, order: (calls.append(f"layout {order}"),
                                                                   in_layout(array, order))[1])
    loaded = inputs.load(directory, order="F")
    assert calls == ["timer starts", "layout F", "layout F", "timer ends"]  # X_train and X_test, timed
    assert loaded.host["X_train"].flags.f_contiguous


def _topology(root, cores: dict[int, tuple[int, int]]):
    for cpu, (package, core) in cores.items():
        folder = root / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "physical_package_id").write_text(f"{package}\n")
        (folder / "core_id").write_text(f"{core}\n")
    return root


def test_physical_cores_are_counted_under_the_affinity_mask(tmp_path):
    """Two cores with two hyper-threads each (CPUs 0/2 and 1/3): all four CPUs are 2 cores, one
    thread of each core is 2 cores still, both threads of one core are 1."""
    from mlcompare.measure.threads import physical_cores

    topology = _topology(tmp_path, {0: (0, 0), 1: (0, 1), 2: (0, 0), 3: (0, 1)})
    assert physical_cores([0, 1, 2, 3], topology) == 2
    assert physical_cores([0, 1], topology) == 2
    assert physical_cores([0, 2], topology) == 1
    two_sockets = _topology(tmp_path / "two", {0: (0, 0), 1: (1, 0)})  # core 0 of each socket
    assert physical_cores([0, 1], two_sockets) == 2


def test_a_cpu_limit_on_a_parent_group_binds_its_children(tmp_path):
    """cgroup v2: the process's own group is unlimited, its parent allows one CPU."""
    proc = tmp_path / "cgroup"
    proc.write_text("0::/jobs/mine\n")
    (tmp_path / "fs" / "jobs" / "mine").mkdir(parents=True)
    (tmp_path / "fs" / "jobs" / "mine" / "cpu.max").write_text("max 100000\n")
    (tmp_path / "fs" / "jobs" / "cpu.max").write_text("100000 100000\n")
    assert cgroup_cpu_limit(tmp_path / "fs", proc) == 1.0
    (tmp_path / "fs" / "jobs" / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_limit(tmp_path / "fs", proc) is None
