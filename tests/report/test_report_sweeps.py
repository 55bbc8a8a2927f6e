"""Sweeps and distributed cases in the comparison, read back from real SQLite stores.

A shared sweep point is a row of its own (the baseline follows it), an implementation's
own sweep point a column group of its own; cases that logged `dask_workers` get the
time-vs-workers plot and a speed-up line.
"""

from __future__ import annotations

import csv
import io
import statistics

import pytest
from conftest import _OUTER_RUN_VARS, run_cli, write
from mlflow.tracking import MlflowClient

from mlcompare import report
from mlcompare.report import plots, results
from mlcompare.tracking.writer import Recorder

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

SWEPT_EXPERIMENT = """\
    name: swept
    repeats: 3
    rounds: 1
    timeout_s: 300
    datasets:
      - {generator: classification, n_samples: 400, n_features: 5}
    pairings:
      - pairing: gradient_boosting
        params: {max_depth: [2, 3], n_estimators: 10}
        implementations: {xgboost_cpu: {params: {min_child_weight: [1, 5]}}}
    implementations: [sklearn, xgboost_cpu, lightgbm]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A real suite with a shared sweep (max_depth) and xgboost_cpu's own (min_child_weight)."""
    root = tmp_path_factory.mktemp("swept")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    write(root / "swept.yaml", SWEPT_EXPERIMENT)
    result = run_cli("run", "swept.yaml", "--quiet", cwd=root,
                     env={"MLFLOW_TRACKING_URI": uri, "MLCOMPARE_DATA_DIR": str(root / "data")})
    assert result.returncode == 0, result.stderr
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("swept")
    parent = client.search_runs([experiment.experiment_id], "tags.`mlcompare.kind` = 'suite'")[0]
    children = client.search_runs([experiment.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'")
    return client, parent.info.run_id, children


def _artifact(client: MlflowClient, run_id: str, path: str) -> bytes:
    with open(client.download_artifacts(run_id, path), "rb") as f:
        return f.read()


def test_a_row_per_shared_point_and_a_column_group_per_own_point(swept):
    client, parent_id, children = swept
    text = _artifact(client, parent_id, "comparison.csv").decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(r["sweep_shared"] for r in rows) == ["max_depth=2", "max_depth=3"]
    header = next(csv.reader(io.StringIO(text)))
    groups = list(dict.fromkeys(c.rsplit(".", 1)[0] for c in header if c.endswith(".fit_time_s")))
    assert groups == ["sklearn", "xgboost_cpu [min_child_weight=1]", "xgboost_cpu [min_child_weight=5]", "lightgbm"]
    assert len(children) == 8
    for child in children:
        p, m = child.data.params, child.data.metrics
        row = next(r for r in rows if r["sweep_shared"] == p["sweep_shared"])
        column = results.impl_label(p["implementation"], p.get("sweep_own", ""))
        assert float(row[f"{column}.fit_time_s"]) == pytest.approx(m["fit_time_s"], rel=1e-12)
        assert float(row[f"{column}.speedup_fit"]) == pytest.approx(m["speedup_fit"], rel=1e-12)
        assert float(row[f"{column}.quality"]) == pytest.approx(m["accuracy"], rel=1e-12)


def test_the_markdown_and_the_description_tell_the_points_apart(swept):
    client, parent_id, children = swept
    markdown = _artifact(client, parent_id, "comparison.md").decode()
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert "| xgboost_cpu [min_child_weight=5] fit s |" in table[0]
    assert [line.split(" | ")[0] for line in table[1:]] == [
        "| classification 400×5 · max_depth=2", "| classification 400×5 · max_depth=3"]
    # each cell holds its own case's number: the own points differ in their stored fit times
    own = {c.data.params["sweep"]: c.data.metrics["fit_time_s"] for c in children
           if c.data.params["implementation"] == "xgboost_cpu"}
    for point, fit in own.items():
        shared, own_point = point.split(", ")
        row = next(line for line in table if f"· {shared} |" in line)
        headers = table[0].split(" | ")
        cell = row.split(" | ")[headers.index(f"xgboost_cpu [{own_point}] fit s")]
        assert cell.startswith(f"{fit:.3g}")
    note = client.get_run(parent_id).data.tags["mlflow.note.content"]
    assert "on classification ×5 · max_depth=" in note  # every size on its line: the speed-up at 300 training rows
    assert "gradient_boosting · xgboost_cpu [min_child_weight=" in note


def test_a_suite_without_distributed_cases_still_gets_the_workers_plot(swept):
    client, parent_id, _ = swept
    names = {a.path for a in client.list_artifacts(parent_id, "plots")}
    assert "plots/time_vs_workers.png" in names
    png = _artifact(client, parent_id, "plots/time_vs_workers.png")
    assert png.startswith(PNG_SIGNATURE)
    assert png == plots.time_vs_workers(results.case_frame([]))  # the "nothing to show" rendering


# --- distributed cases, written through the recorder ---------------------------------

#: fit-time repeats per shared point and Dask workers; None: the case failed.
DASK_FITS = {"max_depth=4": {1: [4.0, 4.2, 4.4], 2: [2.0, 2.1, 2.3], 4: [1.0, 1.05, 1.2]},
             "max_depth=8": {1: [8.0, 8.4, 8.8], 2: [4.0, 4.2, 4.5], 4: None}}
BASELINE_FITS = {"max_depth=4": [3.0, 3.1, 3.3], "max_depth=8": [6.0, 6.2, 6.6]}
DATA = {"dataset": "classification", "n_samples": "10000", "n_features": "8", "pairing": "gradient_boosting"}
CASE_TAGS = {"mlcompare.kind": "case", "baseline": "sklearn", "main_metric": "accuracy"}


def _log_case(recorder: Recorder, impl: str, shared: str, fits: list[float] | None, base: list[float],
              workers: int | None = None) -> None:
    params = {**DATA, "implementation": impl, "library": impl.split("_")[0], "device": "cpu",
              "sweep_shared": shared, "sweep.max_depth": shared.split("=")[1]}
    own = f"n_workers={workers}" if workers else ""
    params["sweep"] = f"{shared}, {own}" if own else shared
    if workers:
        params |= {"sweep_own": own, "sweep.n_workers": workers, "dask_workers": workers,
                   "dask_threads_per_worker": 1, "dask_cluster": "LocalCluster"}
    if fits is None:
        recorder.log_case(f"{impl} {params['sweep']}", "FAILED", params, {},
                          CASE_TAGS | {"case_status": "failed", "error": "KilledWorker: out of memory"})
        return
    fit = statistics.median(fits)
    metrics = {"fit_time_s": fit, "fit_time_min_s": min(fits), "accuracy": 0.9,
               "speedup_fit": statistics.median(base) / fit}
    recorder.log_case(f"{impl} {params['sweep']}", "FINISHED", params, metrics, CASE_TAGS | {"case_status": "ok"},
                      history={"fit_time_repeat_s": fits, "fit_time_process_s": fits})  # one fit per process


@pytest.fixture(scope="module")
def distributed(tmp_path_factory):
    """A suite of sklearn against a Dask implementation on 1, 2 and 4 workers at two shared
    points, plus an undistributed pairing, in its own store; its report attached as
    `run_suite` attaches it. Returns the store's client, the parent run id and the suite."""
    root = tmp_path_factory.mktemp("workers")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    with pytest.MonkeyPatch.context() as patch:  # the recorder writes to the store MLflow resolves
        patch.chdir(root)
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        for var in _OUTER_RUN_VARS:
            patch.delenv(var, raising=False)
        recorder, suite = _record_distributed_suite()
    return MlflowClient(tracking_uri=uri), recorder.parent_id, suite


def _record_distributed_suite():
    recorder = Recorder("workers")
    recorder.start_suite("suite · workers", {"suite_name": "workers", "suite_repeats": 3}, {"mlcompare.kind": "suite"})
    for shared, by_workers in DASK_FITS.items():
        _log_case(recorder, "sklearn", shared, BASELINE_FITS[shared], BASELINE_FITS[shared])
        for workers, fits in by_workers.items():
            _log_case(recorder, "xgboost_dask_cpu", shared, fits, BASELINE_FITS[shared], workers)
    recorder.log_case("ridge sklearn", "FINISHED",
                      {**DATA, "pairing": "ridge", "implementation": "sklearn", "library": "sklearn", "device": "cpu"},
                      {"fit_time_s": 0.5, "r2": 0.8}, {**CASE_TAGS, "main_metric": "r2", "case_status": "ok"})
    suite = recorder.load_suite()
    summary = report.suite_report(suite)
    recorder.finish_suite("FINISHED", summary.metrics, {"mlflow.note.content": summary.description},
                          summary.files, summary.tables)
    return recorder, suite


def test_the_case_frame_reads_workers_and_sweep_params(distributed):
    _, _, suite = distributed
    cases = results.case_frame([suite])
    assert str(cases["dask_workers"].dtype) == "Int64"
    dask = cases[cases["implementation"] == "xgboost_dask_cpu"]
    assert sorted(dask["dask_workers"].tolist()) == [1, 1, 2, 2, 4, 4]
    assert cases.loc[cases["implementation"] == "sklearn", "dask_workers"].isna().all()
    assert set(dask["dask_cluster"]) == {"LocalCluster"}
    assert cases.loc[cases["pairing"] == "ridge", ["sweep", "sweep_shared", "sweep_own"]].eq("").all(axis=None)


def test_the_table_keeps_every_worker_count_apart(distributed):
    _, _, suite = distributed
    table = report.compare([suite]).table
    boosting = table[table["pairing"] == "gradient_boosting"]
    assert boosting["sweep_shared"].tolist() == ["max_depth=4", "max_depth=8"]
    for shared, by_workers in DASK_FITS.items():
        row = boosting[boosting["sweep_shared"] == shared].iloc[0]
        assert row["sklearn.fit_time_s"] == statistics.median(BASELINE_FITS[shared])
        for workers, fits in by_workers.items():
            column = f"xgboost_dask_cpu [n_workers={workers}]"
            if fits is None:
                assert row[f"{column}.status"] == "failed"
            else:
                assert row[f"{column}.fit_time_s"] == statistics.median(fits)
                assert row[f"{column}.fit_ci_low_s"] == min(fits) and row[f"{column}.fit_ci_high_s"] == max(fits)
    assert table.loc[table["pairing"] == "ridge", "sweep_shared"].tolist() == [""]


def test_workers_plot_has_a_panel_per_distributed_group_and_the_parent_carries_it(distributed):
    client, parent_id, suite = distributed
    cases = results.case_frame([suite])
    panels = plots.worker_panels(cases)
    assert [title for title, _ in panels] == ["gradient_boosting · classification 10k×8 · max_depth=4",
                                              "gradient_boosting · classification 10k×8 · max_depth=8"]
    first = panels[0][1]
    assert sorted(first["dask_workers"].dropna().tolist()) == [1, 2, 4]
    assert first.loc[first["dask_workers"].isna(), "implementation"].tolist() == ["sklearn"]  # the dashed reference
    assert sorted(panels[1][1]["dask_workers"].dropna().tolist()) == [1, 2]  # the failed case is not drawn
    stored = client.download_artifacts(parent_id, "plots/time_vs_workers.png")
    with open(stored, "rb") as f:
        png = f.read()
    assert png.startswith(PNG_SIGNATURE)
    assert png != plots.time_vs_workers(results.case_frame([]))


def test_the_report_says_the_speed_up_from_fewest_to_most_workers(distributed):
    client, parent_id, suite = distributed
    note = client.get_run(parent_id).data.tags["mlflow.note.content"]
    assert ("- workers: gradient_boosting · xgboost_dask_cpu on classification 10k×8 · max_depth=4: "
            "fit 4.2 s on 1 worker, 1.05 s on 4 (4.00× the speed)") in note
    assert "max_depth=8: fit 8.4 s on 1 worker, 4.2 s on 2 (2.00× the speed)" in note
    markdown = report.to_markdown(report.compare([suite]))
    assert "- xgboost_dask_cpu failed: KilledWorker: out of memory (at max_depth=8, n_workers=4)" in markdown
    assert "| classification 10k×8 · max_depth=8 |" in markdown
