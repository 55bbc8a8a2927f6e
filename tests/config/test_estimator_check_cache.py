"""What an earlier check found an estimator to accept, remembered until the installed packages change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env, write

from mlcompare.config import estimators
from mlcompare.config.estimator_check_cache import CheckCache, environment_fingerprint, installed_in_packages
from mlcompare.config.experiment import load_experiment
from mlcompare.errors import InputError

LIBRARIES = ("sklearn", "xgboost", "scipy", "pandas")
CHECK = f"""
import json, sys
from mlcompare.config.experiment import load_experiment
load_experiment(sys.argv[1])
print(json.dumps(sorted(m for m in {LIBRARIES!r} if m in sys.modules)))
"""


def _check_in_a_fresh_process(path: Path, cache: Path) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-c", CHECK, str(path)], env=cli_env({"XDG_CACHE_HOME": str(cache)}),
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout, done.stderr


def test_a_second_check_imports_no_estimator_library_and_a_wrong_parameter_is_still_refused(tmp_path):
    cache = tmp_path / "cache"
    good = write(tmp_path / "good.yaml", """\
        name: e
        datasets: [{generator: regression, n_samples: 200, n_features: 4}]
        pairings: [{pairing: gradient_boosting_regressor, params: {learning_rate: 0.2}}]
        implementations: [sklearn, xgboost_cpu]
        """)
    first = _check_in_a_fresh_process(good, cache)
    assert first[0] == 0, first[2]
    assert {"sklearn", "xgboost"} <= set(json.loads(first[1]))  # the classes were read
    remembered = json.loads(next((cache / "mlcompare" / "estimator-checks").glob("*.json")).read_text())
    assert "learning_rate" in remembered["sklearn.ensemble.HistGradientBoostingRegressor"]
    assert "learning_rate" in remembered["xgboost.XGBRegressor"]

    second = _check_in_a_fresh_process(good, cache)
    assert second[0] == 0, second[2]
    assert json.loads(second[1]) == []  # nothing of the estimators' libraries imported

    # a name the remembered ones lack: the class itself is read, and the error is the class's
    bad = write(tmp_path / "bad.yaml", good.read_text().replace("learning_rate: 0.2", "learning_rat: 0.2"))
    refused = _check_in_a_fresh_process(bad, cache)
    assert refused[0] != 0
    assert "does not accept the parameter 'learning_rat'; did you mean 'learning_rate'?" in refused[2]
    assert "sklearn.ensemble.HistGradientBoostingRegressor" in refused[2]


def test_a_remembered_list_that_lacks_a_parameter_is_read_again_from_the_class(workdir, monkeypatch):
    cache = CheckCache(folder=workdir / "checks", fingerprint="f")
    monkeypatch.setattr(estimators, "_REMEMBERED", cache)
    cache.remember("sklearn.linear_model.Ridge", frozenset({"alpha"}))  # stale: Ridge takes solver too
    path = write(workdir / "e.yaml", """\
        name: e
        datasets: [{generator: regression, n_samples: 200, n_features: 4}]
        pairings: [{pairing: ridge, implementations: {sklearn: {params: {solver: svd}}}}]
        implementations: [sklearn]
        """)
    load_experiment(path)  # passes: the class takes `solver`
    assert {"alpha", "solver", "fit_intercept"} <= cache.accepted("sklearn.linear_model.Ridge")
    reread = CheckCache(folder=workdir / "checks", fingerprint="f")
    assert "solver" in reread.accepted("sklearn.linear_model.Ridge")  # and kept so


def test_what_failed_is_never_remembered(workdir, monkeypatch):
    cache = CheckCache(folder=workdir / "checks", fingerprint="f")
    monkeypatch.setattr(estimators, "_REMEMBERED", cache)
    path = write(workdir / "e.yaml", """\
        name: e
        datasets: [{generator: regression, n_samples: 200, n_features: 4}]
        pairings: [{pairing: ridge, params: {alfa: 1.0}}]
        implementations: [sklearn]
        """)
    for _ in range(2):  # the second check still reads the class, and still refuses the file
        with pytest.raises(InputError, match="did you mean 'alpha'"):
            load_experiment(path)
    assert "alfa" not in cache.accepted("sklearn.linear_model.Ridge")


def test_a_package_installed_upgraded_or_removed_gives_another_fingerprint(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "thing").mkdir(parents=True)
    (site / "thing-1.0.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    before = environment_fingerprint()
    assert environment_fingerprint() == before
    (site / "thing-1.0.dist-info").rename(site / "thing-1.1.dist-info")  # upgraded
    upgraded = environment_fingerprint()
    (site / "other-2.0.dist-info").mkdir()  # installed
    installed = environment_fingerprint()
    (site / "thing-1.1.dist-info").rmdir()  # removed
    removed = environment_fingerprint()
    assert len({before, upgraded, installed, removed}) == 4
    (site / "thing").mkdir(exist_ok=True)
    (site / "notes.txt").write_text("not a distribution")
    assert environment_fingerprint() == removed  # other files do not count


def test_a_library_outside_site_packages_is_never_remembered(workdir, monkeypatch):
    assert installed_in_packages("sklearn.linear_model.Ridge")
    source = workdir / "src" / "mylib"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("class Model:\n    def __init__(self, depth=1): pass\n"
                                        "    def fit(self, X, y): return self\n")
    monkeypatch.syspath_prepend(str(workdir / "src"))
    assert not installed_in_packages("mylib.Model")
    cache = CheckCache(folder=workdir / "checks", fingerprint="f")
    cache.remember("mylib.Model", frozenset({"depth"}))
    assert cache.accepted("mylib.Model") is None
    assert not (workdir / "checks").exists()


def test_an_unreadable_or_foreign_file_is_ignored_and_replaced(workdir):
    folder = workdir / "checks"
    folder.mkdir()
    (folder / "f.json").write_text('{"sklearn.linear_model.Ridge": ["alpha"')  # cut short
    cache = CheckCache(folder=folder, fingerprint="f")
    assert cache.accepted("sklearn.linear_model.Ridge") is None
    cache.remember("sklearn.linear_model.Ridge", frozenset({"alpha", "solver"}))
    assert json.loads((folder / "f.json").read_text()) == {"sklearn.linear_model.Ridge": ["alpha", "solver"]}
    (folder / "f.json").write_text('{"sklearn.linear_model.Ridge": "alpha", "x": [1]}')  # not lists of names
    assert CheckCache(folder=folder, fingerprint="f").accepted("sklearn.linear_model.Ridge") is None
    assert [p.name for p in folder.iterdir()] == ["f.json"]  # no temporary file left


def test_the_cache_lies_in_the_user_s_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = CheckCache().path
    assert path is not None and path.parent == tmp_path / "mlcompare" / "estimator-checks"
    assert path.name == f"{environment_fingerprint()}.json"
    assert os.path.commonpath([path, tmp_path]) == str(tmp_path)
