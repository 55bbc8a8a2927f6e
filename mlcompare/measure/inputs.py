"""A case's inputs: the cached dataset read, laid out, and put where the library computes.

The steps run in this order, so that each timer holds only what its name says:

1. GPU cases initialise the device first (`device.init_device`: imports of CuPy and cuDF,
   the CUDA context, the memory pool): `device_init_time_s`, before any timer;
2. the cached dataset is read into the implementation's memory as the feature matrices in
   the experiment's layout (`order`: C row-major, F column-major): `load_time_s`, the same
   work for every reader. CPU cases, accelerators and distributed cases read its NumPy
   files into host memory (`numpy`; an entry cached by a release that wrote Parquet alone is
   read with pyarrow, after the reader's one-time set-up, `cache.warm_reader`, untimed; a case
   forked from the warm server finds them read by the server, `held_dataset`, its time the
   server's read); GPU
   cases with device inputs read its Parquet files with cuDF straight into device memory
   when cuDF is installed (its frames turned into CuPy matrices in the layout inside the
   timer: cuDF hands out column-major ones), else on the host as above (the `reader`). A plugin's
   prepared arrays are laid out after its `prepare`, untimed (the read alone is timed);
3. GPU cases that read on the host copy the laid-out arrays to the device once:
   `transfer_time_s` (its inputs part). The fits receive exactly those device arrays.
   With cuDF the inputs reached the device inside `load_time_s`, and `transfer_time_s` is 0:
   `end_to_end_time_s` therefore adds the load as well, so that the copy to the device is in
   it on every path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mlcompare.data import cache as datasets
from mlcompare.measure import device, held_dataset, timing

#: What a GPU fit and predict need on the device (the test labels are scored on the host).
DEVICE_ARRAYS = ("X_train", "y_train", "X_test")


@dataclass
class Inputs:
    host: dict[str, np.ndarray]  # the four arrays in host memory, X in the requested layout
    data: dict[str, Any]  # what the timed fits and predicts receive
    load_s: float
    transfer_in_s: float
    reader: str  # what read the cache: "numpy" or "pyarrow" into host memory, "cudf" into device memory
    order: str
    device_init_s: float | None = None  # GPU cases only
    reader_note: str = ""  # why a GPU case with device inputs reads on the host
    # a forked case's read, done by its warm server (`held_dataset`): what it spent for this process,
    # and the part of `load_s` this process spent itself (the layout)
    read_by_server_s: float | None = None
    load_in_process_s: float | None = None


def load(directory: str | Path, order: str = "C", on_gpu: bool = False, device_input: bool = False,
         prepare: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
         reader: str | None = None, library: str = "", reader_note: str = "") -> Inputs:
    """Read a cached dataset for one case and lay it out; GPU inputs end up on the device.

    `prepare` is a plugin's data preparation (untimed, on the host, identical for every
    implementation): its arrays exist on the host only, so they reach the device by a copy.
    `reader` forces 'host' or 'cudf' for device inputs (the suite chooses once for its
    cases, bench/gpu_check.py tries both); else it is chosen here for `library`
    (`device.choose_reader`: cuDF for RAPIDS libraries only, and only when it imports).
    """
    directory = Path(directory)
    if not device_input or prepare is not None:
        reader, reader_note = "host", ""
    if reader is None:
        reader, reader_note = device.choose_reader(library)
    init_s = device.init_device(reader, library) if on_gpu else None
    data: dict[str, Any] | None = None
    by_server_s: float | None = None
    in_process_s: float | None = None
    if reader == "cudf":
        host = laid_out(datasets.load_split(directory), order)  # for scoring and the host-input fits: untimed
        # the read and the matrices in the layout, one timer (the frames' memory goes with the block)
        data, load_s = timing.timed(lambda: device.frames_to_arrays(
            device.read_split_device(directory, ("train", "test")), order, DEVICE_ARRAYS), True)
    else:
        reader = datasets.host_reader(directory)  # "numpy", or "pyarrow" for an entry with Parquet alone
        datasets.warm_reader()  # the reader's one-time set-up, untimed (already done in a forked case)
        held = held_dataset.held(directory)  # read by the warm server that forked this process

        def read() -> dict[str, np.ndarray]:
            return dict(held.arrays) if held is not None else datasets.load_split(directory)

        if prepare is None:
            host, load_s = timing.timed(lambda: laid_out(read(), order), False)
        else:
            host, load_s = timing.timed(read, False)
            host = laid_out(prepare(dict(host)), order)
        if held is not None:  # the read is the server's, timed as it would have been here
            in_process_s = load_s
            load_s += held.read_s
            by_server_s = held.read_s if held.read_now else 0.0
    transfer_s = 0.0
    if data is None and device_input:
        data, transfer_s = timing.timed(lambda: {k: device.to_device(host[k], order) for k in DEVICE_ARRAYS}, True)
    elif data is None:
        data = host
    check_layout(data, order)
    return Inputs(host=host, data=data, load_s=load_s, transfer_in_s=transfer_s, reader=reader, order=order,
                  device_init_s=init_s, reader_note=reader_note, read_by_server_s=by_server_s,
                  load_in_process_s=in_process_s)


def laid_out(arrays: dict[str, np.ndarray], order: str) -> dict[str, np.ndarray]:
    """The arrays with their feature matrices in `order` (the others as they are)."""
    return {k: device.in_layout(v, order) if k.startswith("X_") else v for k, v in arrays.items()}


def check_layout(arrays: dict[str, Any], order: str) -> None:
    """Raise when a feature matrix does not have the requested layout (a bug, never data)."""
    for name, array in arrays.items():
        if name.startswith("X_") and getattr(array, "ndim", 0) == 2 and order not in device.layout(array):
            raise RuntimeError(f"{name} has layout {device.layout(array)}, {order} was asked for")
