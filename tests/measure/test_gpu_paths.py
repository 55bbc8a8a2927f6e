"""Where a GPU case calls the device layer, checked on the CPU.

mlcompare's own device functions (`mlcompare.measure.device`) are replaced by recording
stand-ins that keep the data on the host, and the estimator is a scikit-learn one that
records what it is handed. Nothing here is a GPU result: these tests check the order of
the calls, what each timer holds, and which arrays the fits receive. The same paths run
for real on a GPU box in bench/gpu_check.py.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from mlcompare.data.cache import DatasetSpec, materialise
from mlcompare.measure import device, timing
from mlcompare.measure.case import run_case

#: What the recording estimator saw: ("fit" | "predict", the X it was given).
SEEN: list[tuple[str, np.ndarray]] = []


class RecordingRegression(LinearRegression):
    """scikit-learn's LinearRegression, keeping every X it is given; each call lasts at least
    timing.RECHECK_BELOW_S, so that every call is timed alone (not in a loop, none rechecked) and counted here."""

    def fit(self, X, y):
        SEEN.append(("fit", X))
        time.sleep(timing.RECHECK_BELOW_S)
        return super().fit(X, y)

    def predict(self, X):
        SEEN.append(("predict", X))
        time.sleep(timing.RECHECK_BELOW_S)
        return super().predict(X)


def _spec(tmp_path, device_kind: str, order: str) -> dict:
    return {"estimator": f"{__name__}.RecordingRegression", "library": "recording", "device": device_kind,
            "params": {}, "task": "regression", "metrics": ["r2"], "repeats": 3, "order": order,
            "dataset_dir": str(materialise(DatasetSpec("regression", 300, 5), tmp_path)),
            "allowed_modules": [f"{__name__}."]}


@pytest.fixture
def recorded(monkeypatch):
    """Stand-ins for the device layer (and a recording wrapper of our timer): one event list."""
    events: list[tuple] = []
    moved: list[int] = []  # ids of the arrays the stand-in `to_device` handed out
    SEEN.clear()
    timed = timing.timed

    def recording_timed(fn, on_gpu):
        events.append(("timer", on_gpu))
        result, seconds = timed(fn, on_gpu)
        events.append(("end", on_gpu))
        return result, seconds

    def to_device(array, order="C"):
        out = np.array(array, order=order, copy=True)  # a new array, as a copy to the device is
        events.append(("to_device", id(out)))
        moved.append(id(out))
        return out

    @contextlib.contextmanager
    def gpu_memory_meter(library=""):
        events.append(("meter", library))
        yield device.GpuMemory(method="stand-in", peak_mb=1.0)

    monkeypatch.setattr(timing, "timed", recording_timed)
    monkeypatch.setattr(device, "choose_reader", lambda library="": ("host", "a stand-in's choice"))
    monkeypatch.setattr(device, "init_device",
                        lambda reader="host", library="": events.append(("init", reader)) or 0.25)
    monkeypatch.setattr(device, "synchronize", lambda: events.append(("sync",)))
    monkeypatch.setattr(device, "to_device", to_device)
    monkeypatch.setattr(device, "gpu_memory_meter", gpu_memory_meter)
    monkeypatch.setattr(device, "gpu_state", lambda ordinal=0: {"sm_clock_mhz": 1980.0, "clock_reasons": "none"})
    return events, moved


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_gpu_case_initialises_first_times_the_copy_it_trains_on_and_syncs_in_every_timer(
        tmp_path, recorded, order):
    events, moved = recorded
    record = run_case(_spec(tmp_path, "gpu", order))
    kinds = [e[0] for e in events]
    # the device is initialised before any timer starts, and its time is a metric of its own
    assert kinds.index("init") < kinds.index("timer")
    assert record["metrics"]["device_init_time_s"] == 0.25
    # every timer of a GPU case waits for the device as the last thing before it stops
    timers = [i for i, e in enumerate(events) if e == ("end", True)]
    assert len(timers) >= 12  # load, transfer, cold fit, 3 warm, 3 host-input fits, first predict, 3 warm predicts
    for end in timers:
        assert events[end - 1] == ("sync",), events[end - 3:end + 1]
    # the load (on the host) is a timer of its own; the next one holds the copy of
    # X_train, y_train and X_test to the device, and nothing else
    first = events.index(("timer", True))
    assert events[first - 2:first] == [("timer", False), ("end", False)]
    assert [e[0] for e in events[first + 1:first + 6]] == ["to_device"] * 3 + ["sync", "end"]
    assert record["metrics"]["transfer_time_s"] > 0
    # ... and the device-input fits receive exactly the arrays that copy made, in the layout asked for
    fits = [x for what, x in SEEN if what == "fit"]
    device_fits, host_fits = fits[:4], fits[4:]  # cold, 3 warm; then the 3 fits given numpy arrays
    assert len(host_fits) == 3
    assert all(id(x) in moved for x in device_fits), "a fit trained on something else than the timed copy"
    assert all(id(x) not in moved for x in host_fits)
    assert all(order in device.layout(x) for x in fits)
    predicts = [x for what, x in SEEN if what == "predict"]
    assert predicts and all(id(x) in moved and order in device.layout(x) for x in predicts)
    # what was measured, and how, is in the record
    assert record["load_reader"] == "numpy"
    assert ("meter", "recording") in events and record["gpu_memory_method"] == "stand-in"
    assert events[events.index(("meter", "recording")) + 1] == ("timer", True)  # it measures the cold fit
    assert record["metrics"]["fit_peak_gpu_memory_mb"] == 1.0
    assert record["metrics"]["gpu_sm_clock_start_mhz"] == 1980.0
    assert record["gpu_clock_reasons"] == "start: none; end: none"


def test_the_memory_set_up_by_init_device_is_on_the_case(tmp_path, recorded, monkeypatch):
    """`rmm_pool` on the case is what `init_device` set up (read after it, never before): a stand-in
    of our own memory_setup answers by whether the stand-in init_device has run."""
    events, _ = recorded

    def memory_setup():
        events.append(("memory_setup",))
        return {"rmm_pool": "pool (set up by init_device)" if ("init", "host") in events else "not set up"}

    monkeypatch.setattr(device, "memory_setup", memory_setup)
    record = run_case(_spec(tmp_path, "gpu", "C"))
    assert record["rmm_pool"] == "pool (set up by init_device)"
    assert events.index(("init", "host")) < events.index(("memory_setup",))


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_cpu_case_gets_the_requested_layout_without_touching_the_device(tmp_path, recorded, order):
    events, moved = recorded
    record = run_case(_spec(tmp_path, "cpu", order))
    assert not [e for e in events if e[0] in ("init", "sync", "to_device", "meter")]
    seen = [x for _, x in SEEN]
    assert len(seen) == 4 + 4  # cold, 3 warm fits; the first predict, 3 warm predicts
    assert all(order in device.layout(x) and x.ndim == 2 for x in seen)
    if order == "F":
        assert all(not x.flags.c_contiguous for x in seen)
    assert record["metrics"]["transfer_time_s"] == 0.0 and "device_init_time_s" not in record["metrics"]
    assert record["load_reader"] == "numpy"


def test_with_cudf_the_timed_load_is_the_read_and_the_layout_as_on_the_host(tmp_path, recorded, monkeypatch):
    """`load_time_s` holds the same work on every path: the read and the matrices in the case's
    layout (cuDF's frames turned into CuPy matrices, in F or C, inside the timer); and with no
    transfer (the read put the data on the device) the end-to-end time holds the load."""
    events, moved = recorded
    from mlcompare.data import cache

    def read_split_device(directory, parts):
        events.append(("read", tuple(parts)))
        return {"host": cache.load_split(directory)}  # stands for cuDF frames in device memory

    def frames_to_arrays(frames, order, wanted):
        events.append(("layout", order, tuple(wanted)))
        out = {name: np.array(frames["host"][name], order=order, copy=True) for name in wanted}
        moved.extend(id(a) for a in out.values())
        return out

    monkeypatch.setattr(device, "choose_reader", lambda library="": ("cudf", ""))
    monkeypatch.setattr(device, "read_split_device", read_split_device)
    monkeypatch.setattr(device, "frames_to_arrays", frames_to_arrays)
    record = run_case(_spec(tmp_path, "gpu", "F"))
    kinds = [e[0] for e in events]
    assert events[0] == ("init", "cudf")  # cuDF's import is in the initialisation, not in the load
    first = kinds.index("timer")
    assert events[first:first + 5] == [("timer", True), ("read", ("train", "test")),
                                       ("layout", "F", ("X_train", "y_train", "X_test")), ("sync",), ("end", True)]
    m = record["metrics"]
    assert m["transfer_time_s"] == 0.0 and m["load_time_s"] > 0
    assert m["end_to_end_time_s"] == pytest.approx(m["load_time_s"] + m["fit_time_s"] + m["predict_time_s"])
    assert "to_device" not in kinds  # the read put the data on the device: no copy of the inputs
    assert record["load_reader"] == "cudf"
    device_fits = [x for what, x in SEEN if what == "fit"][:4]  # cold and 3 warm; then the numpy-input fits
    assert all(id(x) in moved and x.flags.f_contiguous and not x.flags.c_contiguous for x in device_fits)


def test_a_gpu_case_gets_the_cpu_baseline_s_host_threads(tmp_path, recorded):
    """A GPU estimator with a host-thread parameter (here n_jobs, as XGBoost's) is given the
    experiment's thread count, as the CPU baseline is; the run says so."""
    from mlcompare.suite.caselog import _gpu_threads

    record = run_case(_spec(tmp_path, "gpu", "C") | {"threads": 2})
    assert record["effective_params"]["n_jobs"] == "2"
    assert _gpu_threads(record) == "host: 2"
    assert _gpu_threads({"effective_params": {"n_bins": "128"}}) == "library default"  # cuML: no such parameter


def _accel_report(predict_cpu_calls: int = 0):
    from types import SimpleNamespace

    def stats(gpu, cpu, reasons=()):
        return SimpleNamespace(gpu_calls=gpu, cpu_calls=cpu, fallback_reasons=set(reasons))

    return SimpleNamespace(method_calls={
        "RecordingRegression.fit": stats(4, 0),
        "RecordingRegression.predict": stats(4, predict_cpu_calls, ["a sparse batch"] if predict_cpu_calls else [])})


def _accelerated(tmp_path, recorded, monkeypatch, report):
    events, _ = recorded

    @contextlib.contextmanager
    def accel_profile():
        events.append(("profile starts",))
        yield report
        events.append(("profile ends",))

    monkeypatch.setattr(device, "accel_profile", accel_profile)
    return run_case(_spec(tmp_path, "gpu", "C") | {"accelerator": "cuml.accel"})


def test_cuml_accel_s_profile_spans_every_timed_call(tmp_path, recorded, monkeypatch):
    """The profiler (a recording stand-in of our own device function) starts before the cold
    fit's timer and ends after the last predict's: a CPU fallback in a warm fit or a predict is
    seen, not timed as GPU work."""
    events, _ = recorded
    record = _accelerated(tmp_path, recorded, monkeypatch, _accel_report())
    start, end = events.index(("profile starts",)), events.index(("profile ends",))
    timers = [i for i, e in enumerate(events) if e == ("timer", True)]
    assert start < timers[0] and end > max(i for i, e in enumerate(events) if e == ("end", True))
    assert "RecordingRegression.fit ×4, RecordingRegression.predict ×4 on the GPU" in record["ran_on"]


def test_a_cpu_fallback_in_a_timed_predict_fails_the_case(tmp_path, recorded, monkeypatch):
    from mlcompare.measure.audit import FallbackError

    with pytest.raises(FallbackError, match=r"RecordingRegression.predict on the CPU in 1 of 5 profiled calls "
                                            r"\(a sparse batch\)"):
        _accelerated(tmp_path, recorded, monkeypatch, _accel_report(predict_cpu_calls=1))
