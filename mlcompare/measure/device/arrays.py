"""Data on the device: read, copied and laid out (row-major C or column-major F)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlcompare.measure.device.sync import synchronize

#: The array layouts an experiment may ask for: row-major (C) or column-major (F).
ORDERS = ("C", "F")


def in_layout(array: Any, order: str) -> Any:
    """`array` (numpy or CuPy) row-major ('C') or column-major ('F'); a copy only when needed.

    1-D arrays are both at once and come back as they are.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    xp = np if isinstance(array, np.ndarray) else _cupy()
    return xp.ascontiguousarray(array) if order == "C" else xp.asfortranarray(array)


def layout(array: Any) -> str:
    """'C', 'F', 'C,F' (1-D or one column: both) or 'strided', read from the array's flags."""
    flags = array.flags
    both = [name for name, ok in (("C", flags.c_contiguous), ("F", flags.f_contiguous)) if ok]
    return ",".join(both) or "strided"


def to_device(array: np.ndarray, order: str = "C") -> Any:
    """Copy a host array into device memory (a CuPy array in `order`), waiting until it is there."""
    import cupy

    out = cupy.asarray(array, order=order)
    synchronize()
    return out


def to_host(array: Any) -> np.ndarray:
    """Bring any array-like (numpy, cupy, cudf, pandas) back to a numpy array."""
    if isinstance(array, np.ndarray):
        return array
    if type(array).__module__.startswith("cupy"):
        return array.get()
    if hasattr(array, "to_numpy"):  # cudf / pandas
        return np.asarray(array.to_numpy())
    return np.asarray(array)


def on_device(value: Any) -> bool:
    """Whether `value` lives in device memory (CuPy, cuDF, Numba: the CUDA array interface)."""
    return hasattr(value, "__cuda_array_interface__")


def read_split_device(directory: Any, parts: tuple[str, ...]) -> dict[str, Any]:
    """The cached split read by cuDF straight into device memory, as cuDF frames by split
    ('train', 'test'), waiting until the reads are done."""
    import cudf

    frames = {name: cudf.read_parquet(f"{directory}/{name}.parquet") for name in parts}
    synchronize()
    return frames


def frames_to_arrays(frames: dict[str, Any], order: str, wanted: tuple[str, ...]) -> dict[str, Any]:
    """CuPy arrays of cuDF frames, X in `order` (cuDF's `to_cupy` makes column-major
    matrices: converted here when C is asked for), for the names in `wanted` (X_train, ...)."""
    out = {}
    for name in wanted:
        kind, split = name.split("_", 1)
        frame = frames[split]
        if kind == "X":
            out[name] = in_layout(frame.drop(columns=["target"]).to_cupy(), order)
        else:
            out[name] = frame["target"].to_cupy()
    synchronize()
    return out


def _cupy() -> Any:
    import cupy

    return cupy


def warm_harness_kernels(dtypes: tuple[str, ...] = ("float32", "float64", "int64")) -> None:
    """Run once, on tiny arrays, every device operation the harness itself times (the copy
    to the device in either layout, the layout change, the copy back), so that CuPy compiles
    their kernels (NVRTC, seconds the first time) here and not in the first case's timers."""
    for dtype in dtypes:
        host = np.zeros((4, 3), dtype=dtype)
        for order in ORDERS:
            copy = to_device(host, order)
            for other in ORDERS:
                in_layout(copy, other)
            to_host(copy)
