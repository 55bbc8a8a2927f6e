"""Reading stored runs into the case table: main metric, interval of the median, host labels."""

from __future__ import annotations

import pandas as pd

from mlcompare.records import StoredRun, StoredSuite
from mlcompare.report import results


def test_main_metric_prefers_the_runs_own_tag_then_the_catalog():
    assert results.main_metric("kmeans", {"main_metric": "inertia"}, {}) == "inertia"
    assert results.main_metric("kmeans", {}, {"inertia": 1.0, "adjusted_rand": 0.5}) == "adjusted_rand"
    assert results.main_metric("not_in_catalog", {}, {"rmse": 1.0, "r2": 0.5}) == "r2"


def test_host_label_tells_machines_apart():
    laptop = {"host.cpu_model": "AMD EPYC", "host.cpu_physical_cores": "2", "host.ram_gb": "23.5",
              "host.gpu": "none: no CUDA device"}
    box = {"host.cpu_model": "Intel Xeon", "host.cpu_physical_cores": "16", "host.ram_gb": "128.0",
           "host.gpu": "NVIDIA H200"}
    assert results.host_label(laptop) == "AMD EPYC · 2 cores · 23.5 GB · no GPU"
    assert results.host_label(box) == "Intel Xeon · 16 cores · 128.0 GB · NVIDIA H200"


def _stored(params: dict[str, str]) -> StoredSuite:
    run = StoredRun(run_id="c" * 32, name="case", status="FINISHED", start_time=0,
                    params={"pairing": "ridge", "implementation": "sklearn", **params},
                    metrics={"fit_time_s": 1.0}, tags={"case_status": "ok", "baseline": "sklearn"})
    parent = StoredRun(run_id="p" * 32, name="suite · s", status="FINISHED", start_time=0, params={"suite_name": "s"})
    return StoredSuite(parent, "s", [run])


def test_runs_without_sweep_or_dask_params_read_as_empty():
    """A store written before these params existed (or a case without a sweep) reads the same."""
    row = results.case_frame([_stored({})]).iloc[0]
    assert (row["sweep"], row["sweep_shared"], row["sweep_own"], row["dask_cluster"]) == ("", "", "", "")
    assert row["impl_label"] == "sklearn"
    assert row["dask_workers"] is pd.NA and row["dask_threads_per_worker"] is pd.NA


def test_sweep_and_dask_params_become_columns():
    frame = results.case_frame([_stored({"sweep": "alpha=1, n_workers=4", "sweep_shared": "alpha=1",
                                         "sweep_own": "n_workers=4", "dask_workers": "4",
                                         "dask_threads_per_worker": "2", "dask_cluster": "tcp://10.0.0.1:8786"})])
    row = frame.iloc[0]
    assert row["impl_label"] == "sklearn [n_workers=4]"
    assert (row["sweep_shared"], row["sweep_own"]) == ("alpha=1", "n_workers=4")
    assert str(frame["dask_workers"].dtype) == "Int64" and row["dask_workers"] == 4
    assert row["dask_threads_per_worker"] == 2 and row["dask_cluster"] == "tcp://10.0.0.1:8786"
