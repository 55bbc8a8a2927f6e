"""Where a fit really ran, and with what: the fairness audit of one case.

A GPU implementation must show evidence that it trained on the GPU (XGBoost's booster
configuration, cuml.accel's profiler, cuML's outputs in device memory); one that quietly
fell back to the CPU raises `FallbackError`, so its numbers never pass as GPU numbers. The estimator's
effective parameters and the library's version are read here too.
"""

from __future__ import annotations

import functools
import inspect
import json
from importlib import metadata
from typing import Any

from mlcompare.measure import device
from mlcompare.records import CaseSpec


class FallbackError(RuntimeError):
    """A GPU implementation trained on the CPU: its numbers must not pass as GPU numbers."""



def verify_device(model: Any, spec: CaseSpec, gpu_growth_mb: float | None = None,
                  accel_report: Any = None, accel_calls: tuple[str, ...] = ("fit",)) -> str:
    """Where the model says it trained, in words; a GPU implementation that fell back raises.
    Under cuml.accel, every method in `accel_calls` (fit, and predict or transform) must have
    run on the GPU in every call the profile holds (it spans every timed call)."""
    wanted_gpu = spec["device"] == "gpu"
    if spec.get("accelerator") == "cuml.accel" and wanted_gpu:
        evidence = _accel_evidence(accel_report, spec["estimator"].rsplit(".", 1)[1], gpu_growth_mb, accel_calls)
        setup = spec.get("accelerator_setup")
        return f"{evidence[:-1]}; {setup})" if setup else evidence
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
    checked = [] if gpu_growth_mb is None else [f"device memory +{gpu_growth_mb:.1f} MB during fit"]
    if library == "cuml":
        where = device.cuml_device_selection()
        if where in ("cpu", "host"):
            raise FallbackError(f"silent CPU fallback: cuML's global device type is {where!r}")
        checked.append(f"cuML device type {where}" if where else "this cuML has no CPU mode (removed in 25.08)")
    return "cuda (" + ("; ".join(checked) or "nothing checked") + ")"


#: The output that shows where a model computed, by the task's output kind.
_MAIN_OUTPUT = ("pred", "transformed", "embedding")


def output_evidence(ran_on: str, spec: CaseSpec, raw: dict[str, Any], device_input: bool) -> str:
    """Add where a cuML model's outputs live to `ran_on`; raise when a model given device
    arrays answered with host arrays (its work was done on the host, or copied there)."""
    if not device_input or spec["library"].split(".", 1)[0] != "cuml":
        return ran_on
    name = next((k for k in _MAIN_OUTPUT if raw.get(k) is not None), None)
    if name is None:
        return ran_on
    value = raw[name]
    kind = f"{type(value).__module__.split('.', 1)[0]}.{type(value).__name__}"
    if not device.on_device(value):
        raise FallbackError(f"silent CPU fallback: cuML was given device arrays but returned its {name} "
                            f"as {kind}, in host memory")
    where = f"{name} in device memory ({kind})"
    return f"{ran_on[:-1]}; {where})" if ran_on.endswith(")") else f"{ran_on} ({where})"


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


def _accel_evidence(report: Any, class_name: str, gpu_growth_mb: float | None,
                    methods: tuple[str, ...] = ("fit",)) -> str:
    """cuml.accel falls back to the CPU silently; its profiler says where each call really ran."""
    growth = "" if gpu_growth_mb is None else f"; device memory +{gpu_growth_mb:.1f} MB during fit"
    ran = []
    for method in methods:
        counts = device.accel_calls(report, class_name, method)
        if counts is None:  # install_accelerator refuses a cuml.accel without a profiler; never trusted here
            raise FallbackError(f"cuml.accel gave no profile of {class_name}.{method}: where it ran cannot be shown")
        gpu_calls, cpu_calls, reasons = counts
        if cpu_calls or not gpu_calls:
            why = "; ".join(reasons) or "no GPU call was recorded"
            raise FallbackError(f"silent CPU fallback: cuml.accel ran {class_name}.{method} on the CPU in "
                                f"{cpu_calls} of {gpu_calls + cpu_calls} profiled calls ({why})")
        ran.append(f"{class_name}.{method} ×{gpu_calls}")
    return f"cuda (cuml.accel profiler, every timed call: {', '.join(ran)} on the GPU{growth})"


def effective_params(model: Any) -> dict[str, str]:
    """The estimator's parameters as it holds them after fit, as strings.

    Where a library leaves a parameter unset (`None`: "use my default"), the value it
    actually trained with is filled in from the library's own record: XGBoost's booster
    configuration (learning_rate, max_bin, n_jobs, ... as the booster saved them).
    """
    try:
        params = model.get_params(deep=False)
    except Exception:  # noqa: BLE001 - an estimator without get_params: nothing to report
        return {}
    trained = _booster_config(model)
    out = {}
    for key, value in sorted(params.items()):
        if callable(value):
            continue
        if value is None and key in trained:
            value = trained[key]
        out[key] = _short(value)
    return out


def _booster_config(model: Any) -> dict[str, Any]:
    """An XGBoost model's saved configuration, flattened to {leaf name: value} (first wins)."""
    booster = getattr(model, "get_booster", None)
    if booster is None:
        return {}
    try:
        config = json.loads(booster().save_config())
    except Exception:  # noqa: BLE001 - not fitted, or not an XGBoost booster after all
        return {}
    flat: dict[str, Any] = {}

    def walk(node: Any) -> None:
        for key, value in node.items():
            if isinstance(value, dict):
                walk(value)
            else:
                flat.setdefault(key, value)

    walk(config)
    return flat


def library_view(model: Any) -> dict[str, str]:
    """The fitted model's parameters as its library reports them, defaults included, as strings:
    what the fairness audit compares (never only what mlcompare passed).

    XGBoost: the booster's saved configuration (`lambda`, `min_child_weight`, `eta`, `max_bin`,
    ...); LightGBM: the resolved parameters written with the booster (`lambda_l2`,
    `min_data_in_leaf`, ...); CatBoost: `get_all_params()` (`l2_leaf_reg`, `border_count`,
    ...); anything else (scikit-learn, scikit-learn-intelex, cuML): `get_params()`, which
    holds every constructor default.
    """
    view: dict[str, Any] = {}
    try:
        view.update(model.get_params(deep=False))
    except Exception:  # noqa: BLE001 - an estimator without get_params: the library's record alone
        pass
    booster = getattr(model, "booster_", None)
    if booster is not None and hasattr(booster, "model_to_string"):  # LightGBM
        view.update(_lightgbm_parameters(booster.model_to_string()))
    if hasattr(model, "get_all_params"):  # CatBoost
        try:
            view.update(model.get_all_params())
        except Exception:  # noqa: BLE001 - not fitted: nothing resolved to read
            pass
    view.update(_booster_config(model))  # XGBoost: what the booster trained with
    return {key: _short(value) for key, value in view.items() if not callable(value)}


def _lightgbm_parameters(text: str) -> dict[str, str]:
    """The `parameters:` section LightGBM writes after a model's trees: `[name: value]` lines."""
    out: dict[str, str] = {}
    if "\nparameters:\n" not in text:
        return out
    for line in text.split("\nparameters:\n", 1)[1].splitlines():
        if line.startswith("end of parameters"):
            break
        if line.startswith("[") and line.endswith("]") and ": " in line:
            key, value = line[1:-1].split(": ", 1)
            out[key] = value
    return out


def audited(model: Any, keys: dict[str, str]) -> dict[str, str]:
    """The pairing's audited concepts (`audit:` in its file) as this fitted model reports them:
    {concept: value}, "not reported" where the library's view has no such key."""
    view = library_view(model)
    return {concept: view.get(key, "not reported") for concept, key in keys.items()}


def fitted_counts(model: Any) -> dict[str, float]:
    """What the fit actually did, as metrics: `fit_iterations` (`n_iter_`, the largest when per
    class) and `fit_trees` (trees built), where the estimator says; compared across
    implementations in the fairness audit."""
    out: dict[str, float] = {}
    n_iter = getattr(model, "n_iter_", None)
    if n_iter is not None:
        try:
            out["fit_iterations"] = float(max(n_iter) if hasattr(n_iter, "__len__") else n_iter)
        except (TypeError, ValueError):
            pass
    trees = _trees_built(model)
    if trees is None and getattr(model, "tree_count_", None) is not None:  # CatBoost
        trees = int(model.tree_count_)
    if trees is not None:
        out["fit_trees"] = float(trees)
    return out


def _trees_built(model: Any) -> int | None:
    config = _booster_config(model)
    if "num_trees" in config:  # XGBoost: every tree of every round and class
        return int(config["num_trees"])
    booster = getattr(model, "booster_", None)
    if booster is not None and hasattr(booster, "num_trees"):  # LightGBM
        return int(booster.num_trees())
    per_iteration = getattr(model, "n_trees_per_iteration_", None)
    if per_iteration is not None and getattr(model, "n_iter_", None) is not None:  # HistGradientBoosting
        return int(model.n_iter_) * int(per_iteration)
    if isinstance(inspect.getattr_static(model, "estimators_", None), property):
        # computed on demand (scikit-learn-intelex builds scikit-learn trees from its own model,
        # 65 ms for 100 trees): the forest built the trees it was asked for
        count = getattr(model, "n_estimators", None)
        return int(count) if isinstance(count, int) else None
    try:
        estimators = getattr(model, "estimators_", None)
    except Exception:  # noqa: BLE001 - a property that cannot be computed on this estimator
        return None
    if isinstance(estimators, list):  # forests
        return len(estimators)
    return None


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 500 else text[:497] + "..."


@functools.lru_cache(maxsize=None)
def library_version(library: str) -> str:
    root = library.split(".", 1)[0]  # cuml.accel, cuml.dask, xgboost.dask: the library's own version
    dist = {"sklearn": "scikit-learn", "sklearnex": "scikit-learn-intelex", "umap": "umap-learn"}.get(root, root)
    for name in (dist, f"{dist}-cu13", f"{dist}-cu12"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


