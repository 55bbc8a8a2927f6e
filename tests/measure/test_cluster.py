"""The Dask cluster of a distributed case: which workers it sees, and how results come back."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster  # noqa: E402

from mlcompare.measure import cluster  # noqa: E402


def test_every_worker_is_listed_not_only_the_first_five():
    with LocalCluster(n_workers=7, threads_per_worker=1, processes=False, dashboard_address=None,
                      silence_logs=logging.ERROR) as local, Client(local) as client:
        assert len(cluster.scheduler_workers(client)) == 7 == len(local.workers)
        # distributed 2025.4 to 2026.7 list 5 unless asked for all: whatever this one does, ours sees 7
        assert len(client.scheduler_info(n_workers=5)["workers"]) == 5


def test_a_local_cluster_takes_its_workers_from_the_complete_list(monkeypatch):
    calls = []
    complete = cluster.scheduler_workers

    def recording(client):
        calls.append(client)
        return complete(client)

    monkeypatch.setattr(cluster, "scheduler_workers", recording)
    with cluster.cluster({"n_workers": 1}, on_gpu=False, threads=1) as made:
        assert len(calls) == 1 and made.workers == sorted(complete(made.client))
        assert len(made.workers) == 1 and made.kind == "LocalCluster"


def test_collect_computes_dask_collections_and_leaves_everything_else():
    import dask.dataframe as dd

    frame = pd.DataFrame({"a": np.arange(6.0)})
    lazy = dd.from_pandas(frame, npartitions=2)
    pd.testing.assert_frame_equal(cluster.collect(lazy), frame)
    pd.testing.assert_series_equal(cluster.collect(lazy["a"] * 2), frame["a"] * 2)
    array = np.arange(3)
    assert cluster.collect(array) is array

    class HasDaskAttribute:  # not a Dask collection, whatever its attributes say
        dask = "graph"

        def compute(self):
            raise AssertionError("computed something that is no Dask collection")

    thing = HasDaskAttribute()
    assert cluster.collect(thing) is thing
