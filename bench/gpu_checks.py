"""The checks of bench/gpu_check.py that only a GPU can answer, one function each.

Each check runs in a fresh Python process (`gpu_check.py --check NAME`), since what it
looks at (a CUDA context, RMM's memory resource, CUDA_VISIBLE_DEVICES) is fixed per process.
It returns a JSON-able dict: `status` ("pass", "fail" or "skip"), `detail` in words, and
the numbers it read. A check that needs a library the box lacks is skipped with the reason,
so the script runs with XGBoost and CuPy alone as well as with the full RAPIDS set.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mlcompare.measure import device  # noqa: E402

Result = dict[str, Any]
CHECKS: dict[str, tuple[str, Callable[[], Result]]] = {}


def check(name: str, what: str) -> Callable[[Callable[[], Result]], Callable[[], Result]]:
    def register(fn: Callable[[], Result]) -> Callable[[], Result]:
        CHECKS[name] = (what, fn)
        return fn
    return register


def _skip(why: str) -> Result:
    return {"status": "skip", "detail": why}


def _verdict(ok: bool, detail: str, **numbers: Any) -> Result:
    return {"status": "pass" if ok else "fail", "detail": detail, **numbers}


def _needs(*libraries: str) -> str | None:
    missing = [name for name in libraries if not device.library_installed(name)]
    gpus, why = device.cuda_devices()
    if why:
        return why
    return f"{', '.join(missing)} not installed" if missing else None


def _dataset(n: int, d: int, generator: str = "regression") -> Path:
    from mlcompare.data.cache import DatasetSpec, materialise

    root = Path(os.environ.get("MLCOMPARE_DATA_DIR", tempfile.gettempdir())) / "gpu-check"
    return materialise(DatasetSpec(generator, n, d), root)


@check("parent_context", "issue 15 item 10: validating every catalog estimator creates no CUDA context")
def parent_context() -> Result:
    if _needs():
        return _skip(_needs())
    from mlcompare.config.experiment import load_experiment
    from mlcompare.measure.capability import skip_reason

    before = device.primary_context_active()
    experiment = load_experiment(REPO / "experiments" / "catalog.yaml")  # checks every installed estimator
    for pairing in experiment.pairings:
        for impl in pairing.implementations.values():
            skip_reason(impl.library, impl.device, pairing.estimator_params(impl), impl.distributed)
    after = device.primary_context_active()
    cuml = device.library_installed("cuml")
    return _verdict(before is False and after is False,
                    f"CUDA context before validation: {before}, after: {after} (cuML installed: {cuml}); "
                    f"NVML sees this process use {device.process_gpu_memory()} bytes",
                    cuml_checked=cuml)


@check("layout", "issue 15 item 4, issue 14 item 6: device arrays have the requested layout, by each reader")
def layout() -> Result:
    if _needs("cupy"):
        return _skip(_needs("cupy"))
    from mlcompare.measure import inputs

    directory = _dataset(20_000, 16)
    readers = ["host"] + (["cudf"] if device.library_installed("cudf") else [])
    seen, ok = {}, True
    for reader in readers:
        for order in ("C", "F"):
            loaded = inputs.load(directory, order, on_gpu=True, device_input=True, reader=reader)
            X = loaded.data["X_train"]
            good = device.on_device(X) and device.layout(X) == order
            ok &= good
            seen[f"{reader}/{order}"] = f"{type(X).__module__}.{type(X).__name__} {device.layout(X)}"
    result = _verdict(ok, "; ".join(f"{k}: {v}" for k, v in seen.items()) +
                      ("" if "cudf" in readers else " (cuDF not installed: its reader not tried)"))
    if device.library_installed("cuml"):
        result["kmeans_fit_s"] = _kmeans_by_layout()
    return result


def _kmeans_by_layout() -> dict[str, float]:
    """cuML KMeans fit on the same data handed over row-major and column-major (median of 3)."""
    import cupy
    from cuml.cluster import KMeans

    X = cupy.random.default_rng(0).standard_normal((1_000_000, 64), dtype=cupy.float32)
    out = {}
    for order in ("C", "F"):
        data = device.in_layout(X, order)
        KMeans(n_clusters=8, n_init=1, max_iter=20, random_state=0).fit(data)  # warm-up
        times = []
        for _ in range(3):
            start = time.perf_counter()
            KMeans(n_clusters=8, n_init=1, max_iter=20, random_state=0).fit(data)
            device.synchronize()
            times.append(time.perf_counter() - start)
        out[order] = statistics.median(times)
    return out


@check("case_timers", "issue 14 item 7: device set up before the timers; the timed copy is what the fits use")
def case_timers() -> Result:
    if _needs("cupy", "xgboost"):
        return _skip(_needs("cupy", "xgboost"))
    import cupy
    import numpy as np

    from mlcompare.config.pairing import load_catalog
    from mlcompare.measure.case import run_case

    directory = _dataset(200_000, 32, "classification")
    pairing = load_catalog()["gradient_boosting"]
    impl = pairing.implementations["xgboost_gpu"]
    spec = {"estimator": impl.estimator, "library": impl.library, "device": "gpu",
            "params": pairing.estimator_params(impl), "task": pairing.task, "metrics": list(pairing.metrics),
            "repeats": 3, "order": "C", "dataset_dir": str(directory)}
    record = run_case(spec)
    m = record["metrics"]
    # an independent figure: the same three arrays copied again, timed here
    from mlcompare.data.cache import load_split

    host = load_split(directory)
    start = time.perf_counter()
    copies = [cupy.asarray(host[k]) for k in ("X_train", "y_train", "X_test")]
    cupy.cuda.Device().synchronize()
    again = time.perf_counter() - start
    del copies
    # read on the host the inputs are copied to the device in the transfer; with cuDF they arrive
    # in the load, and the transfer is 0 by design
    moved = (m["transfer_time_s"] > 0 if record["load_reader"] != "cudf"
             else m["transfer_time_s"] == 0 and m["load_time_s"] > 0)
    ok = (m["device_init_time_s"] > 0 and record["ran_on"].startswith("cuda") and moved
          and np.isfinite(m["accuracy"]))
    # numbers to read, not to judge here: the cold fit against the warm ones (no context in it
    # any more), and the timed transfer against the same copy timed again
    return _verdict(ok, f"ran_on {record['ran_on']}; reader {record['load_reader']}; "
                        f"memory {record.get('gpu_memory_method')}; clocks {record.get('gpu_clock_reasons')}; "
                        f"cold/warm fit {m['fit_cold_time_s'] / m['fit_time_s']:.1f}x",
                    metrics=m, copy_again_s=again)


@check("memory_meter", "issue 14 item 1 (device part): this process's own device memory, by each method")
def memory_meter() -> Result:
    if _needs("cupy"):
        return _skip(_needs("cupy"))
    import cupy

    device.init_device("host")
    size = 256 * 2**20
    out, ok = {}, True
    with device.gpu_memory_meter("xgboost") as memory:
        block = cupy.empty(size, dtype=cupy.uint8)
        block.fill(1)
        device.synchronize()
        del block
    out["xgboost"] = {"method": memory.method, "peak_mb": memory.peak_mb}
    ok &= memory.peak_mb is not None and 250 <= memory.peak_mb <= 300
    if device.library_installed("rmm"):
        import rmm

        with device.gpu_memory_meter("cuml") as memory:
            buffer = rmm.DeviceBuffer(size=size)
            del buffer
        out["cuml"] = {"method": memory.method, "peak_mb": memory.peak_mb}
        ok &= memory.method == "rmm_statistics" and 255 <= memory.peak_mb <= 260
    return _verdict(ok, f"{out} for a {size // 2**20} MiB allocation freed inside the block", readings=out)


@check("accel", "issue 15 items 2 and 5: cuml.accel with its profiler, on plain device memory")
def accel() -> Result:
    if _needs("cuml"):
        return _skip(_needs("cuml"))
    setup = device.install_accelerator("cuml.accel")  # raises without a profiler or on managed memory
    import numpy as np
    from sklearn.cluster import KMeans

    X = np.random.default_rng(0).standard_normal((100_000, 16)).astype(np.float32)
    with device.accel_profile() as report:
        KMeans(n_clusters=8, n_init=1, random_state=0).fit(X)
    calls = device.accel_calls(report, "KMeans", "fit")
    # what cuml.accel does when asked nothing: the reason it is installed with disable_uvm=True
    default = subprocess.run([sys.executable, "-c", "import cuml.accel, rmm; cuml.accel.install(); "
                              "mr = rmm.mr.get_current_device_resource(); "
                              "print(type(mr).__name__, type(getattr(mr, 'upstream_mr', None)).__name__)"],
                             capture_output=True, text=True, timeout=300)
    by_default = default.stdout.strip() or default.stderr[-300:]
    return _verdict(bool(calls and calls[0] >= 1 and calls[1] == 0),
                    f"{setup}; KMeans.fit (GPU calls, CPU calls, reasons) = {calls}; "
                    f"cuml.accel.install() without arguments leaves RMM on {by_default}")


@check("cuml_outputs", "issue 15 item 6: cuML's outputs for device inputs stay on the device")
def cuml_outputs() -> Result:
    if _needs("cuml", "cupy"):
        return _skip(_needs("cuml", "cupy"))
    import cupy
    from cuml.cluster import KMeans
    from cuml.linear_model import LinearRegression

    from mlcompare.measure.audit import output_evidence

    X = cupy.random.default_rng(0).standard_normal((50_000, 8), dtype=cupy.float32)
    y = X.sum(axis=1)
    spec = {"library": "cuml", "device": "gpu"}
    found = {}
    for model, args in ((KMeans(n_clusters=4, random_state=0), (X,)), (LinearRegression(), (X, y))):
        pred = model.fit(*args).predict(X)
        found[type(model).__name__] = output_evidence("cuda (fit)", spec, {"pred": pred}, device_input=True)
    selection = device.cuml_device_selection()
    return _verdict(all("device memory" in v for v in found.values()) and selection is None,
                    f"{found}; cuML device selection: {selection}")


@check("dask_cuda_devices", "issue 15 item 7: a LocalCUDACluster keeps the GPUs CUDA_VISIBLE_DEVICES names")
def dask_cuda_devices() -> Result:
    if _needs("dask_cuda", "distributed"):
        return _skip(_needs("dask_cuda", "distributed"))
    pynvml, why = device.nvml()
    if pynvml is None:
        return _skip(why)
    uuid = pynvml.nvmlDeviceGetUUID(device.nvml_handle(0))
    uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
    code = ("import os; from distributed import Client; from mlcompare.measure import device\n"
            "with device.local_cuda_cluster(n_workers=1, dashboard_address=None) as c, Client(c) as client:\n"
            "    print(list(client.run(lambda: os.environ['CUDA_VISIBLE_DEVICES']).values())[0])")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=uuid, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    seen = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:]
    return _verdict(seen.split(",")[0] == uuid, f"CUDA_VISIBLE_DEVICES={uuid}: the worker got {seen!r}")


@check("workers_listed", "issue 15 item 8: every GPU worker is used (needs 6 or more GPUs)")
def workers_listed() -> Result:
    if _needs("dask_cuda", "distributed"):
        return _skip(_needs("dask_cuda", "distributed"))
    gpus = len(device.cuda_devices()[0])
    if gpus < 6:
        return _skip(f"{gpus} GPU(s): distributed lists 5 workers unless asked, so 6 are needed to see it "
                     "(tests/measure/test_cluster.py covers it with CPU workers)")
    from mlcompare.measure import cluster

    with cluster.cluster({"n_workers": gpus}, on_gpu=True, threads=1) as made:
        return _verdict(len(made.workers) == gpus, f"{len(made.workers)} of {gpus} GPU workers used")


@check("nvml", "issue 15 item 12: the GPU's properties and state through NVML")
def nvml() -> Result:
    pynvml, why = device.nvml()
    if pynvml is None:
        return _skip(why)
    props, state = device.gpu_properties(), device.gpu_state()
    wanted = {"memory_mib", "compute_capability", "sm_clock_max_mhz", "power_limit_w", "mig", "ecc"}
    from mlcompare.suite import host

    tags = {k: v for k, v in host.fingerprint().items() if k.startswith(("host.gpu", "host.nvidia"))}
    return _verdict(bool(props) and wanted <= set(props[0]) and bool(state) and "sm_clock_mhz" in state,
                    f"{props}; now {state}", tags=tags)


def run(name: str) -> Result:
    what, fn = CHECKS[name]
    started = time.perf_counter()
    try:
        result = fn()
    except Exception as exc:  # noqa: BLE001 - a check that raises has failed, and says how
        result = {"status": "fail", "detail": f"{type(exc).__name__}: {exc}"}
    return {"check": name, "what": what, "seconds": round(time.perf_counter() - started, 2), **result}
