"""Where a fit really ran, and with what: the fairness audit of one case.

A GPU implementation must show evidence that it trained on the GPU (XGBoost's booster
configuration, cuml.accel's profiler, cuML's own output); one that quietly fell back to
the CPU raises `FallbackError`, so its numbers never pass as GPU numbers. The estimator's
effective parameters and the library's version are read here too.
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any

from mlcompare.measure import device
from mlcompare.records import CaseSpec


class FallbackError(RuntimeError):
    """A GPU implementation trained on the CPU: its numbers must not pass as GPU numbers."""



def verify_device(model: Any, spec: CaseSpec, gpu_growth_mb: float | None = None,
                  accel_report: Any = None) -> str:
    """Where the model says it trained, in words; a GPU implementation that fell back raises."""
    wanted_gpu = spec["device"] == "gpu"
    if spec.get("accelerator") == "cuml.accel" and wanted_gpu:
        return _accel_evidence(accel_report, spec["estimator"].rsplit(".", 1)[1], gpu_growth_mb)
    library = spec["library"].split(".", 1)[0]  # "xgboost.dask" trains XGBoost boosters too
    if library == "xgboost":
        config = json.loads(model.get_booster().save_config())
        where = config["learner"]["generic_param"]["device"]
        if wanted_gpu and not where.startswith("cuda"):
            raise FallbackError(f"silent CPU fallback: XGBoost was asked for device=cuda "
                                f"but its booster trained on {where!r}")
        return f"{where} (XGBoost booster config)"
    if library == "catboost":
        return _catboost_evidence(model, wanted_gpu)
    if not wanted_gpu:
        return "cpu"
    evidence = [] if gpu_growth_mb is None else [f"device memory +{gpu_growth_mb:.1f} MB during fit"]
    if library == "cuml":
        where = device.cuml_device_type()
        if where == "cpu":
            raise FallbackError("silent CPU fallback: cuML's global device type is 'cpu'")
        evidence.append(f"cuML device_type={where or 'gpu-only build'}")
    return "cuda (" + "; ".join(evidence) + ")"


def _catboost_evidence(model: Any, wanted_gpu: bool) -> str:
    """CatBoost's resolved `task_type` after fit: what it trained with, not what it was asked for."""
    params = model.get_all_params()
    where = str(params.get("task_type", "unknown"))
    if wanted_gpu and where != "GPU":
        raise FallbackError(f"silent CPU fallback: CatBoost was asked for task_type=GPU but trained with "
                            f"task_type={where!r}")
    if not wanted_gpu and where != "CPU":
        raise FallbackError(f"a CPU implementation of CatBoost trained with task_type={where!r}")
    devices = f", devices={params['devices']}" if wanted_gpu and params.get("devices") else ""
    return f"{'cuda' if wanted_gpu else 'cpu'} (CatBoost task_type={where}{devices})"


def _accel_evidence(report: Any, class_name: str, gpu_growth_mb: float | None) -> str:
    """cuml.accel falls back to the CPU silently; its profiler says where fit really ran."""
    counts = device.accel_fit_calls(report, class_name)
    growth = "" if gpu_growth_mb is None else f"; device memory +{gpu_growth_mb:.1f} MB during fit"
    if counts is None:
        return f"cuda (cuml.accel installed; this cuML has no profiler to confirm{growth})"
    gpu_calls, cpu_calls, reasons = counts
    if cpu_calls or not gpu_calls:
        why = "; ".join(reasons) or "no GPU call was recorded"
        raise FallbackError(f"silent CPU fallback: cuml.accel ran {class_name}.fit on the CPU ({why})")
    return f"cuda (cuml.accel profiler: {class_name}.fit ran on the GPU{growth})"


def effective_params(model: Any) -> dict[str, str]:
    """The estimator's parameters as it holds them after fit, as strings."""
    try:
        params = model.get_params(deep=False)
    except Exception:  # noqa: BLE001 - an estimator without get_params: nothing to report
        return {}
    return {k: _short(v) for k, v in sorted(params.items()) if not callable(v)}


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 500 else text[:497] + "..."


def library_version(library: str) -> str:
    root = library.split(".", 1)[0]  # cuml.accel, cuml.dask, xgboost.dask: the library's own version
    dist = {"sklearn": "scikit-learn", "sklearnex": "scikit-learn-intelex", "umap": "umap-learn"}.get(root, root)
    for name in (dist, f"{dist}-cu13", f"{dist}-cu12"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


