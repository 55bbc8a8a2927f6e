"""Dataset sizes against this machine: refused before anything runs, in one line, with units."""

from __future__ import annotations

import psutil
import pytest
from conftest import run_cli, write

from mlcompare.config.experiment import load_experiment
from mlcompare.config.sizes import array_bytes, check_sizes, human_bytes
from mlcompare.data.cache import data_dir, human_count, materialise
from mlcompare.errors import InputError

HUGE = """\
    name: huge
    datasets:
      - {generator: regression, n_samples: 1000, n_features: 3}
      - {generator: blobs, n_samples: 1000000000000, n_features: 1000}
    pairings: [kmeans, linear_regression]
"""


@pytest.mark.parametrize("n,text", [(999, "999"), (10_000, "10k"), (2_500_000, "2.5M"), (10**9, "1G"),
                                    (10**12, "1T"), (1_500_000_000_000, "1.5T"), (10**15, "1P")])
def test_counts_have_units(n, text):
    assert human_count(n) == text


@pytest.mark.parametrize("n,text", [(512, "512 B"), (1536, "1.5 KiB"), (3 * 2**30, "3 GiB"),
                                    (4 * 10**15, "3.55 PiB")])
def test_bytes_have_binary_units(n, text):
    assert human_bytes(n) == text


def test_a_dataset_larger_than_memory_is_refused_before_anything_runs(workdir):
    path = write(workdir / "huge.yaml", HUGE)
    memory = human_bytes(psutil.virtual_memory().total)
    message = (f"mlcompare: error: {path}: datasets[1]: blobs 1T×1000 is 3.56 PiB as float32 arrays, more than "
               f"this machine's {memory} of memory (--no-size-check to run it anyway)\n")
    for command in ("validate", "run"):
        result = run_cli(command, str(path), cwd=workdir)
        assert (result.returncode, result.stderr) == (2, message)
    assert not (workdir / "mlflow.db").exists() and not (workdir / "data").exists()  # nothing written
    checked = run_cli("validate", str(path), "--no-size-check", cwd=workdir)
    assert checked.returncode == 0 and "ok: " in checked.stdout


def test_the_size_is_the_arrays_bytes_and_the_cache_disk_counts_new_datasets_only(workdir):
    path = write(workdir / "e.yaml", """\
        name: e
        datasets:
          - {generator: regression, n_samples: 1000, n_features: 3}
          - {generator: regression, n_samples: 2000, n_features: 3, dtype: float64}
        pairings: [linear_regression]
    """)
    experiment = load_experiment(path)
    small, large = experiment.datasets
    assert (array_bytes(small), array_bytes(large)) == (1000 * 4 * 4, 2000 * 4 * 8)
    check_sizes(experiment, memory=64_000, free_disk=160_000)  # both fit, together too, each cached twice
    with pytest.raises(InputError) as refused:
        check_sizes(experiment, memory=60_000, free_disk=10**9)
    assert str(refused.value) == (f"{path}: datasets[1]: regression 2k×3 is 62.5 KiB as float64 arrays, more "
                                  "than this machine's 58.6 KiB of memory (--no-size-check to run it anyway)")
    with pytest.raises(InputError) as refused:
        check_sizes(experiment, memory=10**9, free_disk=150_000)
    assert "datasets[1]: regression 2k×3 is 62.5 KiB as float64 arrays, 125 KiB cached (Parquet and NumPy) (with " \
           "the other new datasets: 156 KiB), more than the 146 KiB free for the dataset cache" in str(refused.value)
    materialise(small)  # cached now: it needs no more disk
    check_sizes(experiment, memory=10**9, free_disk=150_000)
    cached = sum(f.stat().st_size for f in (data_dir() / small.cache_key()).iterdir())
    assert 2 * array_bytes(small) <= cached <= 2 * array_bytes(small) + 20_000  # what the check counts, and headers
