"""Real tabular data: shipped cards, scikit-learn's bundled datasets, the user's own files."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli, write

from mlcompare.config.cards import load_cards, parse_file_entry
from mlcompare.config.experiment import load_experiment
from mlcompare.data.cache import DatasetSpec, load_split, materialise
from mlcompare.data.tables import read_frame, to_arrays
from mlcompare.errors import InputError

CARDS = load_cards()


def test_the_shipped_cards():
    required = {"higgs", "covtype", "year_prediction_msd", "airline", "epsilon", "california_housing",
                "digits", "breast_cancer", "diabetes", "wine"}
    assert required <= set(CARDS)
    for card in CARDS.values():
        assert card.licence and card.rows and card.features and card.target
        assert bool(card.url) != bool(card.sklearn)
    assert CARDS["covtype"].sha256 == "614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771"
    assert CARDS["higgs"].sha256 is None  # unpublished: must be pinned on purpose


@pytest.mark.parametrize("name", ["digits", "breast_cancer", "diabetes", "wine", "iris"])
def test_bundled_datasets_work_offline(tmp_path, name):
    card = CARDS[name]
    spec = DatasetSpec(name, None, card.features, kind="card", table=card)
    arrays = load_split(materialise(spec, tmp_path))
    assert arrays["X_train"].shape[1] == card.features
    assert len(arrays["y_train"]) + len(arrays["y_test"]) == card.rows
    if card.tasks[0] == "classification":
        classes = np.unique(np.concatenate([arrays["y_train"], arrays["y_test"]]))
        assert classes.tolist() == list(range(len(classes)))  # codes 0..k-1


def _csv(tmp_path, rows=60):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"size": rng.normal(size=rows), "city": rng.choice(["a", "b", "c"], rows),
                          "price": rng.normal(size=rows) * 10})
    path = tmp_path / "houses.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_own_csv_with_a_categorical_column(tmp_path):
    path, frame = _csv(tmp_path)
    table = parse_file_entry({"file": str(path), "task": "regression", "target": "price",
                              "categorical": ["city"]}, "exp.yaml", "datasets[0]")
    X, y = to_arrays(read_frame(table, path), table, "regression", "float32")
    assert X.shape == (60, 2) and X.dtype == np.float32
    assert sorted(np.unique(X[:, 1])) == [0.0, 1.0, 2.0]
    np.testing.assert_allclose(y, frame["price"].to_numpy(), rtol=1e-6)


def test_own_parquet_file_in_an_experiment(workdir):
    _, frame = _csv(workdir, rows=200)
    frame["label"] = (frame["price"] > 0).astype(int)
    frame.drop(columns=["price"]).to_parquet(workdir / "mine.parquet")
    path = write(workdir / "e.yaml", """\
        name: mine
        repeats: 1
        rounds: 1
        datasets: [{file: mine.parquet, task: classification, target: label, categorical: [city]}]
        pairings: [random_forest]
        implementations: [sklearn]
    """)
    result = run_cli("run", str(path), cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "random_forest · sklearn · mine" in result.stderr
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    runs = client.search_runs([client.get_experiment_by_name("mine").experiment_id])
    child = next(r for r in runs if "mlflow.parentRunId" in r.data.tags)
    assert child.data.params["dataset"] == "mine" and child.data.params["dataset_kind"] == "file"
    assert child.data.params["n_samples"] == "200" and child.data.params["n_features"] == "2"
    assert child.data.metrics["load_time_s"] > 0
    (logged,) = child.inputs.dataset_inputs
    assert logged.dataset.source_type == "local" and str(workdir / "mine.parquet") in logged.dataset.source
    assert logged.dataset.digest == child.data.tags["dataset_sha256"][:16]


@pytest.mark.parametrize("change,field,message", [
    ({"target": "cost"}, "target", "column 'cost' is not in houses"),
    ({"categorical": []}, "categorical", "column 'city' of houses is not numeric"),
    ({"n_samples": 100}, "n_samples", "100 rows requested, houses has 60"),
])
def test_bad_own_files_are_one_line_errors_and_write_no_run(workdir, change, field, message):
    path, _ = _csv(workdir)
    entry = {"file": str(path), "task": "regression", "target": "price", "categorical": ["city"]} | change
    import yaml
    (workdir / "e.yaml").write_text(yaml.safe_dump({"name": "bad", "datasets": [entry],
                                                    "pairings": ["linear_regression"]}))
    result = run_cli("run", "e.yaml", cwd=workdir)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("mlcompare: error: ") and field in lines[-1] and message in lines[-1]
    assert "Traceback" not in result.stderr
    db = workdir / "mlflow.db"
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("select count(*) from runs").fetchone()[0] == 0


def test_missing_values_are_an_error_or_dropped_as_the_entry_says(tmp_path):
    path, frame = _csv(tmp_path)
    frame.loc[3, "size"] = np.nan
    frame.loc[7, "size"] = np.inf
    frame.to_csv(path, index=False)
    entry = {"file": str(path), "task": "regression", "target": "price", "categorical": ["city"]}
    table = parse_file_entry(entry, "e.yaml", "datasets[0]")
    with pytest.raises(InputError, match="2 rows with missing or infinite values"):
        to_arrays(read_frame(table, path), table, "regression", "float32")
    table = parse_file_entry(entry | {"nan": "drop"}, "e.yaml", "datasets[0]")
    X, y = to_arrays(read_frame(table, path), table, "regression", "float32")
    assert X.shape == (58, 2) and np.isfinite(X).all()


def test_experiment_entries_for_cards(workdir):
    path = write(workdir / "e.yaml", """\
        name: cards
        datasets: [{dataset: covtype, n_samples: [1000, 20000]}, {dataset: digits}]
        pairings: [random_forest, kmeans]
    """)
    exp = load_experiment(path)
    labels = sorted({c.dataset.label for c in exp.cases()})
    assert labels == ["covtype 1k×54", "covtype 20k×54", "digits 1.8k×64"]
    kmeans = {c.dataset.name for c in exp.cases() if c.pairing.name == "kmeans"}
    assert kmeans == {"digits"}  # digits' labels serve clustering too; covtype's card says classification only
    for body, field, message in [
        ("[{dataset: covtype, n_samples: 600000}]", "datasets[0].n_samples", "covtype has 581012"),
        ("[{dataset: nope}]", "datasets[0].dataset", "unknown dataset 'nope'"),
        ("[{dataset: digits, generator: blobs}]", "datasets[0]", "exactly one of"),
        ("[{file: missing.csv, task: regression, target: y}]", "datasets[0].file", "no such file"),
    ]:
        bad = write(workdir / "bad.yaml", f"name: bad\ndatasets: {body}\n")
        with pytest.raises(InputError) as err:
            load_experiment(bad)
        assert err.value.field == field and message in err.value.message
