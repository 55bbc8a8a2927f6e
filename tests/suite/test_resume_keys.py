"""Experiment and case fingerprints: what makes `--resume` reuse a case, and what does not."""

from __future__ import annotations

from conftest import write

from mlcompare.config.experiment import load_experiment
from mlcompare.suite.resume import case_fingerprint, experiment_fingerprint

HOST = {"host.cpu_model": "Some CPU", "host.gpu": "none: no driver", "host.gpu_count": "0"}
TEXT = """\
name: keys
repeats: 2
rounds: 1
datasets: [{generator: regression, n_samples: [100, 200], n_features: 3}]
pairings: [linear_regression]
implementations: [sklearn, cuml]
"""


def _keys(experiment, host=HOST) -> dict:
    fp = experiment_fingerprint(experiment, host)
    return {(c.implementation.name, c.dataset.n_samples): case_fingerprint(c, fp) for c in experiment.cases()}


def test_the_same_file_on_the_same_machine_gives_the_same_keys(workdir):
    path = write(workdir / "k.yaml", TEXT)
    keys = _keys(load_experiment(path))
    assert keys == _keys(load_experiment(path))
    assert len(set(keys.values())) == len(keys) == 4
    # why the GPU is missing may be worded differently from one run to the next
    assert keys == _keys(load_experiment(path), HOST | {"host.gpu": "none: nvidia-smi failed"})
    # selecting implementations does not change the identity of the cases it keeps
    only = _keys(load_experiment(path, implementations=["sklearn"]))
    assert only == {k: v for k, v in keys.items() if k[0] == "sklearn"}


def test_file_bytes_repeats_and_hardware_change_every_key(workdir):
    path = write(workdir / "k.yaml", TEXT)
    keys = set(_keys(load_experiment(path)).values())
    assert keys.isdisjoint(_keys(load_experiment(path, repeats=3)).values())
    assert keys.isdisjoint(_keys(load_experiment(path), HOST | {"host.cpu_model": "Other CPU"}).values())
    assert keys.isdisjoint(_keys(load_experiment(path), HOST | {"host.gpu": "H200", "host.gpu_count": "1"}).values())
    write(path, TEXT + "# a comment changes the file's sha256\n")
    assert keys.isdisjoint(_keys(load_experiment(path)).values())


def test_what_decides_the_numbers_changes_every_key(workdir):
    """The threads a suite really used (not the file's usually empty field), the cores, the
    library versions and mlcompare's commit: a resume after any change measures again."""
    path = write(workdir / "k.yaml", TEXT)  # no `threads:` in the file
    experiment = load_experiment(path)

    def keys(host=HOST, threads=2):
        fp = experiment_fingerprint(experiment, host, threads)
        return {case_fingerprint(c, fp) for c in experiment.cases()}

    base = keys()
    assert base == keys()
    assert base.isdisjoint(keys(threads=4))  # same file, another machine's default threads
    assert base.isdisjoint(keys(HOST | {"host.cpu_physical_cores": "16"}))
    assert base.isdisjoint(keys(HOST | {"version.scikit-learn": "1.9.2"}))
    assert base.isdisjoint(keys(HOST | {"mlcompare.git_commit": "0123abc"}))
    assert base.isdisjoint(keys(HOST | {"mlcompare.git_dirty": "true"}))
    assert base.isdisjoint({case_fingerprint(c, experiment_fingerprint(load_experiment(path, rounds=3), HOST, 2))
                            for c in experiment.cases()})
