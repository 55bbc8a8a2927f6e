"""MLCOMPARE_PAIRING_DIRS and MLCOMPARE_ALLOWED_MODULES extend the catalog and allow-list."""

from __future__ import annotations

import pytest
from conftest import FAULTS, write

from mlcompare.config.pairing import load_catalog
from mlcompare.errors import InputError
from mlcompare.pairings.imports import import_estimator


def test_without_the_environment_the_test_estimators_are_refused(monkeypatch):
    monkeypatch.delenv("MLCOMPARE_ALLOWED_MODULES", raising=False)
    monkeypatch.setenv("MLCOMPARE_PAIRING_DIRS", str(FAULTS / "pairings"))
    with pytest.raises(InputError) as err:
        load_catalog()
    assert err.value.field == "implementations.segfault.estimator"
    assert "not under an allowed module" in err.value.message


def test_the_environment_adds_a_pairing_and_its_module(monkeypatch):
    monkeypatch.setenv("MLCOMPARE_PAIRING_DIRS", str(FAULTS / "pairings"))
    monkeypatch.setenv("MLCOMPARE_ALLOWED_MODULES", "faulty_estimators, other.module")
    monkeypatch.syspath_prepend(str(FAULTS))
    catalog = load_catalog()
    assert "faults" in catalog and "kmeans" in catalog
    assert import_estimator("faulty_estimators.Gate").__name__ == "Gate"
    with pytest.raises(InputError):  # a prefix is a module, not the start of a name
        import_estimator("faulty_estimatorsX.Y")


@pytest.mark.parametrize("variable,value,message", [
    ("MLCOMPARE_ALLOWED_MODULES", "os;rm", "'os;rm' is not a module name (e.g. mypackage.models)"),
    ("MLCOMPARE_PAIRING_DIRS", "/no/such/folder", "'/no/such/folder' is not a folder"),
])
def test_a_bad_environment_is_a_one_line_error(monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    with pytest.raises(InputError) as err:
        load_catalog()
    assert str(err.value) == f"{variable}: {message}"


def test_a_pairing_defined_twice_is_refused(monkeypatch, tmp_path):
    write(tmp_path / "again.yaml", "name: kmeans\ntask: clustering\n"
          "implementations: {sklearn: {estimator: sklearn.cluster.KMeans, device: cpu}}\n")
    monkeypatch.setenv("MLCOMPARE_PAIRING_DIRS", str(tmp_path))
    with pytest.raises(InputError, match="pairing 'kmeans' is already defined in"):
        load_catalog()
