"""The comparison on the parent run and `mlcompare report`, both read from a real SQLite store."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest
from conftest import run_cli, write
from mlflow.tracking import MlflowClient

from mlcompare.cli import main

PLOTS = {"plots/speedup.png", "plots/time_vs_rows.png", "plots/quality_vs_time.png", "plots/cold_vs_warm.png",
         "plots/time_vs_workers.png", "plots/latency_vs_batch.png", "plots/time_vs_threads.png",
         "plots/quality_vs_time_curves.png"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def sweep_env(recorded_sweep, monkeypatch):
    """The shared store as this process's (and its children's) store, its folder as cwd."""
    env = {"MLFLOW_TRACKING_URI": recorded_sweep.uri, "MLCOMPARE_DATA_DIR": str(recorded_sweep.root / "data")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(recorded_sweep.root)
    return env


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """`mlcompare ARGS` in this process (a subprocess per call would pay for importing MLflow each time)."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _artifact(client: MlflowClient, run_id: str, path: str) -> bytes:
    with open(client.download_artifacts(run_id, path), "rb") as f:
        return f.read()


def _children(client: MlflowClient, recorded) -> list:
    return client.search_runs([recorded.experiment_id], f"tags.`mlflow.parentRunId` = '{recorded.parent_run_id}'")


def test_parent_run_carries_table_plots_and_description(recorded_sweep):
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    parent_id = recorded_sweep.parent_run_id
    names = {a.path for a in client.list_artifacts(parent_id)}
    names |= {a.path for a in client.list_artifacts(parent_id, "plots")}
    assert {"comparison.csv", "comparison.md", "comparison.html", "comparison_table.json", "experiment.yaml"} <= names
    assert PLOTS <= names
    for plot in PLOTS:
        assert _artifact(client, parent_id, plot).startswith(PNG_SIGNATURE)
    note = client.get_run(parent_id).data.tags["mlflow.note.content"]
    assert "**mlcompare suite `sweep`**" in note and "cases ran" in note
    assert "xgboost_cpu" in note and "| dataset |" in note  # best speed-ups and the table itself
    assert "no GPU" in note or "NVIDIA" in note or "GPU" in note  # the machine, in the headline


def test_table_has_a_row_per_pairing_dataset_size_and_the_stored_numbers(recorded_sweep):
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    rows = list(csv.DictReader(io.StringIO(_artifact(client, recorded_sweep.parent_run_id,
                                                     "comparison.csv").decode())))
    # no sweep: no sweep column, and a column group per plain implementation name
    assert list(rows[0])[:9] == ["suite", "suite_run_id", "host", "pairing", "dataset", "n_samples", "n_features",
                                 "main_metric", "sklearn.status"]
    assert not any("[" in column for column in rows[0])
    assert sorted((r["pairing"], int(r["n_samples"])) for r in rows) == [
        ("gradient_boosting", 200), ("gradient_boosting", 1000), ("linear_regression", 200),
        ("linear_regression", 1000)]
    for child in _children(client, recorded_sweep):
        p, m = child.data.params, child.data.metrics
        row = next(r for r in rows if r["pairing"] == p["pairing"] and r["n_samples"] == p["n_samples"])
        impl = p["implementation"]
        assert row[f"{impl}.status"] == child.data.tags["case_status"]
        if "fit_time_s" in m:
            assert float(row[f"{impl}.fit_time_s"]) == pytest.approx(m["fit_time_s"], rel=1e-12)
            assert float(row[f"{impl}.speedup_fit"]) == pytest.approx(m["speedup_fit"], rel=1e-12)
            main = {"gradient_boosting": "accuracy", "linear_regression": "r2"}[p["pairing"]]
            assert row["main_metric"] == main
            assert float(row[f"{impl}.quality"]) == pytest.approx(m[main], rel=1e-12)
            low, high = float(row[f"{impl}.fit_ci_low_s"]), float(row[f"{impl}.fit_ci_high_s"])
            assert low <= m["fit_time_s"] <= high  # the median lies inside its interval
        else:
            assert row[f"{impl}.note"] == child.data.tags.get("skip_reason", child.data.tags.get("error"))


def test_log_table_holds_the_same_table(recorded_sweep, sweep_env):  # load_table searches the env store
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    table = client.load_table(recorded_sweep.experiment_id, "comparison_table.json",
                              run_ids=[recorded_sweep.parent_run_id])
    rows = list(csv.DictReader(io.StringIO(_artifact(client, recorded_sweep.parent_run_id,
                                                     "comparison.csv").decode())))
    assert len(table) == len(rows)
    assert list(table.columns) == list(rows[0].keys())
    raw = json.loads(_artifact(client, recorded_sweep.parent_run_id, "comparison_table.json"))
    assert "NaN" not in json.dumps(raw)  # valid JSON for the UI: missing values are null


def test_report_command_rebuilds_the_parent_runs_table_from_the_store(recorded_sweep, sweep_env, capsys):
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    stored_csv = _artifact(client, recorded_sweep.parent_run_id, "comparison.csv").decode()
    stored_md = _artifact(client, recorded_sweep.parent_run_id, "comparison.md").decode()
    by_id = run_cli("report", "--run-id", recorded_sweep.parent_run_id, "--format", "csv", env=sweep_env)
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == stored_csv
    code, by_name, err = cli(capsys, "report", "--experiment", "sweep", "--format", "markdown")
    assert code == 0, err
    assert by_name == stored_md


def test_report_formats(recorded_sweep, sweep_env, tmp_path, capsys):
    code, table, err = cli(capsys, "report", "--experiment", "sweep")
    assert code == 0, err
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    for child in _children(client, recorded_sweep):
        if "fit_time_s" in child.data.metrics:
            assert f"{child.data.metrics['fit_time_s']:.3g}" in table
    for word in ("gradient_boosting", "linear_regression", "xgboost_cpu", "speed-up", "accuracy", "r2", "host:"):
        assert word in table

    out = tmp_path / "report.html"
    code, _, err = cli(capsys, "report", "--experiment", "sweep", "--format", "html", "--output", str(out))
    assert code == 0 and f"written to {out}" in err
    page = out.read_text()
    assert page.startswith("<!doctype html>") and page.count("data:image/png;base64,") == len(PLOTS)
    assert "src='http" not in page and 'src="http' not in page and "<link" not in page  # self-contained


def test_break_even_metric_agrees_with_the_measured_speed_ups(recorded_sweep):
    """On real timings either answer is possible; the metric must match the curves it came from."""
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    metrics = client.get_run(recorded_sweep.parent_run_id).data.metrics
    speedups = {int(c.data.params["training_rows"]): c.data.metrics["speedup_fit"]
                for c in _children(client, recorded_sweep)
                if c.data.params["implementation"] == "xgboost_cpu" and "speedup_fit" in c.data.metrics}
    assert set(speedups) == {150, 750}  # the training rows of 200 and 1000 (a quarter is held out)
    name = "break_even_rows.gradient_boosting.xgboost_cpu"
    crosses = speedups[150] < 1 <= speedups[750]
    assert (name in metrics) == crosses
    if crosses:
        assert 150 <= metrics[name] <= 750
        expected = math.exp(math.log(150) + math.log(5) * math.log(speedups[150]) /
                            (math.log(speedups[150]) - math.log(speedups[750])))
        assert metrics[name] == pytest.approx(round(expected))
    assert not any(k.startswith("break_even_rows.linear_regression") for k in metrics)  # nothing to compare


def test_report_shows_several_suites_with_their_hardware(recorded_sweep, sweep_env, capsys):
    root = recorded_sweep.root
    write(root / "other.yaml", """\
        name: other
        repeats: 2
        rounds: 1
        datasets: [{generator: regression, n_samples: 200, n_features: 4}]
        pairings: [linear_regression]
        implementations: [sklearn]
    """)
    # In a fresh process: this one's MLflow caches the store with the artifact root of the
    # directory it was first opened from (the repository), and runs must not land there.
    second = run_cli("run", "other.yaml", "--quiet", cwd=root, env=sweep_env)
    assert second.returncode == 0, second.stderr
    code, both, err = cli(capsys, "report", "--experiment", "sweep", "--experiment", "other", "--format", "markdown")
    assert code == 0, err
    assert "#1 sweep (" in both and "#2 other (" in both
    assert both.count("host: ") == 2 and both.count("versions: ") == 2
    code, everything, _ = cli(capsys, "report", "--format", "csv")
    suites = {r["suite"] for r in csv.DictReader(io.StringIO(everything))}
    assert {"sweep", "other"} <= suites


def test_report_selection_errors_are_one_line_and_exit_2(recorded_sweep, sweep_env, tmp_path, capsys, monkeypatch):
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    child = _children(client, recorded_sweep)[0].info.run_id
    for args, expected in [
        (("--experiment", "nope"), "mlcompare: error: --experiment: no MLflow experiment and no suite named 'nope'"),
        (("--run-id", "0" * 32), "mlcompare: error: --run-id: no run"),
        (("--run-id", child),
         f"is not an mlcompare suite run (it is a case of suite run {recorded_sweep.parent_run_id})"),
    ]:
        code, _, err = cli(capsys, "report", *args)
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and expected in err, err
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'empty.db'}")
    code, _, err = cli(capsys, "report")
    assert code == 2 and "no mlcompare suite runs" in err


def test_implementations_skipped_in_every_row_collapse_into_one_line(recorded_sweep, sweep_env, capsys):
    """No GPU here: cuml and xgboost_gpu never ran, so no table has a column group for them, only
    one line under it saying why; the CSV keeps every implementation's columns."""
    client = MlflowClient(tracking_uri=recorded_sweep.uri)
    skipped = {c.data.params["implementation"]: c.data.tags["skip_reason"] for c in _children(client, recorded_sweep)
               if c.data.tags["case_status"] == "skipped"}
    if not skipped:
        pytest.skip("every implementation ran on this machine (it has a GPU)")
    md = _artifact(client, recorded_sweep.parent_run_id, "comparison.md").decode()
    page = _artifact(client, recorded_sweep.parent_run_id, "comparison.html").decode()
    code, text, err = cli(capsys, "report", "--experiment", "sweep")
    assert code == 0, err
    for pairing, absent in (("gradient_boosting", "xgboost_gpu"), ("linear_regression", "cuml")):
        section = md.split(f"## {pairing}")[1].split("\n## ")[0]
        header = section.strip().splitlines()[0]
        assert "sklearn fit s" in header
        lines = [line for line in section.splitlines() if line.startswith("- skipped everywhere")]
        assert len(lines) == 1
        assert absent not in header  # no empty column group
        assert lines[0] == f"- skipped everywhere (no column): {absent} — {skipped[absent]}"
        assert "skipped everywhere (no column)" in text
    tables = re.findall(r"<table.*?</table>", page, flags=re.DOTALL)
    assert len(tables) == 2 and not [t for t in tables if "xgboost_gpu" in t or ">cuml<" in t]
    assert page.count("skipped everywhere (no column): ") == 2
    csv_header = _artifact(client, recorded_sweep.parent_run_id, "comparison.csv").decode().splitlines()[0]
    assert "cuml.status" in csv_header
