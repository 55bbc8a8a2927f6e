"""A RAPIDS install that is there but broken (a package of our own that fails on import, as a
cuDF with a missing library or a pinned dependency does): its import is tried once in a fresh
process, its cases are skipped with the reason, and the other GPU cases (XGBoost) go on as
before, reading on the host."""

from __future__ import annotations

import os

import pytest

from mlcompare.measure import device

BROKEN = 'raise ImportError("libcudf.so: cannot open shared object file (a broken install, for the test)")\n'


@pytest.fixture
def broken_rapids(tmp_path, monkeypatch):
    """cudf and cuml packages on the path (this process's and its children's) that fail on import."""
    for name in ("cudf", "cuml"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(BROKEN.replace("libcudf", f"lib{name}"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    device.import_problem.cache_clear()
    yield tmp_path
    device.import_problem.cache_clear()


def test_a_broken_cudf_is_found_in_a_fresh_process_and_said(broken_rapids):
    problem = device.import_problem("cudf")
    assert problem.startswith("cudf is installed but `import cudf` fails: ImportError: libcudf.so")
    reader, why = device.choose_reader("cuml")
    assert reader == "host" and why == f"{problem}: read on the host"
    assert device.skip_reason("cuml", "gpu").startswith("cuml is installed but `import cuml` fails: ImportError")


def test_the_xgboost_gpu_path_is_untouched_by_a_broken_cudf(broken_rapids, tmp_path):
    """XGBoost never reads through cuDF (its inputs would be allocated by RMM whenever cuDF is
    installed), so a broken one changes nothing: its skip reason here is only about the GPU, and
    the suite hands its case the host reader with the reason."""
    from mlcompare.config.experiment import Case, load_experiment
    from mlcompare.config.pairing import load_catalog
    from mlcompare.data.cache import DatasetSpec, materialise
    from mlcompare.suite.cases import case_spec

    reason = device.skip_reason("xgboost", "gpu") or ""
    assert "cudf" not in reason and "cuml" not in reason
    reader, why = device.choose_reader("xgboost")
    assert reader == "host" and "does not allocate through RMM" in why
    pairing = load_catalog()["gradient_boosting"]
    dataset = DatasetSpec("classification", 300, 4)
    case = Case(pairing, pairing.implementations["xgboost_gpu"], dataset)
    where = materialise(dataset, tmp_path / "data")
    (tmp_path / "e.yaml").write_text("name: e\ndatasets: [{generator: classification, n_samples: 300, "
                                      "n_features: 4}]\npairings: [gradient_boosting]\n")
    experiment = load_experiment(tmp_path / "e.yaml")
    _, spec = case_spec(case, experiment, 2, {dataset.fingerprint(): where}, tmp_path / "p.npy")
    assert spec["reader"] == "host" and "does not allocate through RMM" in spec["reader_note"]
