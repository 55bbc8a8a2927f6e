"""`order: [C, F]`: a layout sweep, end to end, into a real SQLite store."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import run_cli, write
from mlflow.tracking import MlflowClient


def test_a_layout_sweep_logs_the_order_and_compares_each_layout_with_its_own_baseline(workdir):
    write(workdir / "layouts.yaml", """\
        name: layouts
        repeats: 2
        rounds: 1
        datasets: [{generator: regression, n_samples: 2000, n_features: 8, order: [C, F]}]
        pairings: [linear_regression]
        implementations: [sklearn, sklearnex]
    """)
    result = run_cli("run", "layouts.yaml", cwd=workdir)
    assert result.returncode == 0, result.stderr
    client = MlflowClient()
    experiment = client.get_experiment_by_name("layouts")
    runs = client.search_runs([experiment.experiment_id], "tags.`mlcompare.kind` = 'case'")
    by = {(r.data.params["implementation"], r.data.params["order"]): r for r in runs}
    assert set(by) == {(i, o) for i in ("sklearn", "sklearnex") for o in ("C", "F")}
    for (impl, order), run in by.items():
        assert run.data.tags["case_status"] == "ok" and run.data.tags["load_reader"] == "numpy"
        assert ("F-order" in run.info.run_name) == (order == "F")
        # each layout is compared with the baseline in the same layout, never the other one
        baseline = by["sklearn", order].data.metrics["fit_time_s"]
        assert run.data.metrics["speedup_fit"] == pytest.approx(baseline / run.data.metrics["fit_time_s"])
    # one cache entry serves both layouts; the cases tell the two apart
    assert len({r.data.tags["dataset_fingerprint"] for r in runs}) == 2
    assert len(list((workdir / "data").glob("*/definition.json"))) == 1
    report = run_cli("report", "--experiment", "layouts", "--format", "csv", cwd=workdir)
    assert report.returncode == 0, report.stderr
    rows = list(csv.DictReader(io.StringIO(report.stdout)))
    assert sorted(r["dataset"] for r in rows) == ["regression", "regression F-order"]
