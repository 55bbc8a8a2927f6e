"""Experiment files: valid ones expand into the right cases; bad ones fail in one line."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import REPO, run_cli, write

from mlcompare.config.experiment import load_experiment
from mlcompare.errors import InputError


def test_small_experiment_expands_into_every_case(small_experiment):
    exp = load_experiment(small_experiment)
    names = [(c.pairing.name, c.implementation.name, c.dataset.generator) for c in exp.cases()]
    assert names == [
        ("kmeans", "sklearn", "blobs"), ("kmeans", "cuml", "blobs"),
        ("random_forest", "sklearn", "classification"), ("random_forest", "cuml", "classification"),
        ("gradient_boosting", "sklearn", "classification"),
        ("gradient_boosting", "xgboost_cpu", "classification"),
        ("gradient_boosting", "xgboost_gpu", "classification"),
        ("linear_regression", "sklearn", "regression"), ("linear_regression", "cuml", "regression"),
    ]
    assert exp.repeats == 2 and exp.datasets[0].dtype == "float32"


def test_size_lists_expand_and_overrides_apply(workdir):
    path = write(workdir / "e.yaml", """\
        name: sweep
        datasets: [{generator: regression, n_samples: [100, 200], n_features: [3, 4]}]
        pairings: [linear_regression]
    """)
    exp = load_experiment(path, repeats=5, implementations=["sklearn"])
    assert exp.repeats == 5
    assert [(c.dataset.n_samples, c.dataset.n_features) for c in exp.cases()] == [
        (100, 3), (100, 4), (200, 3), (200, 4)]
    assert {c.implementation.name for c in exp.cases()} == {"sklearn"}


def test_order_is_c_by_default_set_per_dataset_and_swept_like_a_size(workdir):
    path = write(workdir / "e.yaml", """\
        name: layouts
        order: F
        datasets:
          - {generator: regression, n_samples: [100, 200], n_features: 3, order: [C, F]}
          - {generator: regression, n_samples: 300, n_features: 3}
          - {dataset: diabetes, order: C}
        pairings: [linear_regression]
    """)
    specs = load_experiment(path, implementations=["sklearn"]).datasets
    assert [(s.n_samples, s.order) for s in specs] == [(100, "C"), (100, "F"), (200, "C"), (200, "F"),
                                                       (300, "F"), (None, "C")]
    c, f = specs[0], specs[1]
    # the layout is applied when a case loads the data: one cached copy, two datasets as cases see them
    assert c.cache_key() == f.cache_key() == c.fingerprint() != f.fingerprint()
    assert c.label == "regression 100×3" and f.label == "regression 100×3 F-order"
    plain = write(workdir / "plain.yaml", "name: p\ndatasets: [{generator: blobs, n_samples: 100, n_features: 2}]\n")
    assert [s.order for s in load_experiment(plain).datasets] == ["C"]


def test_a_library_name_selects_all_its_implementations(small_experiment):
    exp = load_experiment(small_experiment, implementations=["xgboost"])
    assert [c.implementation.name for c in exp.cases()] == ["xgboost_rf_cpu", "xgboost_rf_gpu", "xgboost_cpu",
                                                            "xgboost_gpu"]  # its forests, then its boosting


def test_shipped_experiments_are_valid():
    for name in ("quick", "full", "tiny"):
        assert load_experiment(REPO / "experiments" / f"{name}.yaml").cases()


BAD_FILES = {
    "unknown pairing": ("pairings: [kmeans, nope]", "pairings[1]", "unknown pairing 'nope'"),
    "wrong type": ("repeats: three", "repeats", "expected an integer"),
    "missing field": ("datasets: [{generator: blobs, n_features: 3}]", "datasets[0].n_samples", "missing"),
    "bad generator": ("datasets: [{generator: moons, n_samples: 100, n_features: 2}]",
                      "datasets[0].generator", "expected one of"),
    "unknown key": ("repeat: 3", "repeat", "unknown key"),
    "unknown implementation": ("implementations: [sklearn, cumlx]", "implementations[1]", "'cumlx'"),
    "negative size": ("datasets: [{generator: blobs, n_samples: [100, -5], n_features: 2}]",
                      "datasets[0].n_samples[1]", "expected an integer >= 20"),
    "option of another generator": ("datasets: [{generator: blobs, n_samples: 100, n_features: 2, noise: 1}]",
                                    "datasets[0].noise", "not an option of the blobs generator"),
    "threads zero": ("threads: 0", "threads", "expected an integer >= 1"),
    "min_time negative": ("min_time_s: -1", "min_time_s", "expected a finite number >= 0"),
    "system_metrics not bool": ("system_metrics: yes please", "system_metrics", "expected true or false"),
    "bad order": ("datasets: [{generator: blobs, n_samples: 100, n_features: 2, order: K}]",
                  "datasets[0].order", "expected one of C, F, got 'K'"),
    "bad order in a sweep": ("datasets: [{generator: blobs, n_samples: 100, n_features: 2, order: [C, f]}]",
                             "datasets[0].order[1]", "expected one of C, F, got 'f'"),
    "order twice": ("order: [F, F]", "order", "lists 'F' twice"),
    "no data for a pairing": ("datasets: [{generator: blobs, n_samples: 100, n_features: 2}]\n"
                              "pairings: [linear_regression]", "pairings[0]", "task 'regression'"),
}


def _bad_file(workdir, body: str):
    base = {"name": "name: bad", "datasets": "datasets: [{generator: blobs, n_samples: 100, n_features: 2}]",
            "pairings": "pairings: [kmeans]"}
    for line in body.splitlines():
        base[line.split(":")[0]] = line
    return write(workdir / "bad.yaml", "\n".join(v for v in base.values()) + "\n")


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_experiment_names_file_and_field(workdir, case):
    body, field, message = BAD_FILES[case]
    path = _bad_file(workdir, body)
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert err.value.source == str(path)
    assert err.value.field == field
    assert message in err.value.message


@pytest.mark.parametrize("text,message", [
    (b"", "is empty"),
    (b"name: [unclosed\n", "not valid YAML at line 2"),
    (b"- just\n- a list\n", "expected a YAML mapping"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"key: value: other\n", "not valid YAML"),
])
def test_files_that_are_not_experiments(workdir, text, message):
    path = workdir / "x.yaml"
    path.write_bytes(text)
    with pytest.raises(InputError, match=message):
        load_experiment(path)


def test_yaml_tags_are_never_executed(workdir):
    path = write(workdir / "evil.yaml", "name: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(InputError, match="not valid YAML"):
        load_experiment(path)


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", ["unknown pairing", "wrong type", "missing field"])
def test_cli_rejects_bad_files_in_one_line_and_writes_no_run(workdir, command, case):
    body, field, _ = BAD_FILES[case]
    path = _bad_file(workdir, body)
    result = run_cli(command, str(path), cwd=workdir)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"mlcompare: error: {path}: {field}: ")
    db = workdir / "mlflow.db"
    if db.exists():  # nothing may have been written, not even an empty run
        with sqlite3.connect(db) as conn:
            assert conn.execute("select count(*) from runs").fetchone()[0] == 0


def test_cli_missing_file_and_bad_flags(workdir, small_experiment):
    missing = run_cli("validate", "nope.yaml", cwd=workdir)
    assert missing.returncode == 2 and "nope.yaml: no such file" in missing.stderr
    bad_repeats = run_cli("run", str(small_experiment), "--repeats", "0", cwd=workdir)
    assert bad_repeats.returncode == 2 and "--repeats" in bad_repeats.stderr
    bad_impl = run_cli("run", str(small_experiment), "--implementations", "sklearn,nope", cwd=workdir)
    assert bad_impl.returncode == 2
    assert bad_impl.stderr.strip() == ("mlcompare: error: --implementations: 'nope' matches no "
                                       "implementation of the selected pairings (known: catboost, catboost_cpu, "
                                       "catboost_gpu, cuml, cuml.accel, cuml.dask, cuml_accel, cuml_dask, lightgbm, "
                                       "sklearn, sklearnex, xgboost, xgboost.dask, xgboost_cpu, xgboost_dask_cpu, "
                                       "xgboost_dask_gpu, xgboost_gpu, xgboost_rf_cpu, xgboost_rf_gpu)")
    assert not (workdir / "mlflow.db").exists()


def test_cli_validate_reports_the_case_count(small_experiment, workdir):
    result = run_cli("validate", str(small_experiment), cwd=workdir)
    assert result.returncode == 0
    assert "ok: 9 cases" in result.stdout
    assert not (workdir / "mlflow.db").exists()
