"""cost_per_hour, --cost-per-hour and predict_batch_sizes: read, merged, and refused in one line."""

from __future__ import annotations

import pytest
from conftest import main_here, run_cli, write

from mlcompare import cli
from mlcompare.config.experiment import load_experiment
from mlcompare.errors import InputError

HEAD = """\
name: priced
datasets: [{generator: classification, n_samples: [400, 1000], n_features: 4}]
pairings: [gradient_boosting]
implementations: [sklearn, xgboost_cpu]
"""


def test_prices_and_batch_sizes_are_read(workdir):
    path = write(workdir / "e.yaml", HEAD + "cost_per_hour: {cpu: 0.192, gpu: 3.67}\n"
                                           "predict_batch_sizes: [1, 100, 250]\npredict_latency_budget_s: 0.5\n")
    exp = load_experiment(path)
    assert exp.cost_per_hour == {"cpu": 0.192, "gpu": 3.67}
    assert exp.predict_batch_sizes == [1, 100, 250] and exp.predict_latency_budget_s == 0.5
    plain = load_experiment(write(workdir / "p.yaml", HEAD))
    assert plain.cost_per_hour == {} and plain.predict_batch_sizes == [] and plain.predict_latency_budget_s == 1.0
    one = load_experiment(write(workdir / "o.yaml", HEAD + "cost_per_hour: {gpu: 2}\npredict_batch_sizes: 10\n"))
    assert one.cost_per_hour == {"gpu": 2.0} and one.predict_batch_sizes == [10]


@pytest.mark.parametrize("extra,field,message", [
    ("cost_per_hour: {cpu: 0}", "cost_per_hour.cpu", "expected a finite number > 0, got 0"),
    ("cost_per_hour: {cpu: -1.5}", "cost_per_hour.cpu", "> 0"),
    ("cost_per_hour: {cpu: .inf}", "cost_per_hour.cpu", "finite"),
    ("cost_per_hour: {tpu: 1}", "cost_per_hour.tpu", "unknown key (allowed: cpu, gpu)"),
    ("cost_per_hour: {}", "cost_per_hour", "name the price of cpu, gpu or both"),
    ("cost_per_hour: 3.5", "cost_per_hour", "expected a mapping"),
    ("predict_batch_sizes: [1, 0]", "predict_batch_sizes[1]", "expected an integer >= 1"),
    ("predict_batch_sizes: [10, 10]", "predict_batch_sizes", "lists a batch size twice"),
    ("predict_batch_sizes: []", "predict_batch_sizes", "non-empty list"),
    # the largest test split is 250 rows (a quarter of 1,000): 251 rows a call would measure nothing
    ("predict_batch_sizes: [1, 251]", "predict_batch_sizes[1]",
     "251 rows per call, but the largest test split of this experiment has 250 rows"),
    ("predict_latency_budget_s: 0", "predict_latency_budget_s", ">= 0.01"),
])
def test_bad_values_name_the_file_and_field(workdir, extra, field, message):
    path = write(workdir / "bad.yaml", HEAD + extra + "\n")
    with pytest.raises(InputError) as error:
        load_experiment(path)
    assert error.value.field == field, str(error.value)
    assert message in str(error.value)


def test_a_batch_size_that_only_the_larger_dataset_can_fill_is_accepted(workdir):
    exp = load_experiment(write(workdir / "e.yaml", HEAD + "predict_batch_sizes: [200]\n"))
    assert exp.predict_batch_sizes == [200]  # 100 test rows at 400 samples: that case leaves it out and says so


def test_the_flag_replaces_the_files_price_for_the_devices_it_names(workdir):
    path = write(workdir / "e.yaml", HEAD + "cost_per_hour: {cpu: 0.192, gpu: 3.67}\n")
    args = cli.build_parser().parse_args(["run", str(path), "--cost-per-hour", "gpu=2.5"])
    from mlcompare.cli.flags import experiment_from_args

    assert experiment_from_args(args).cost_per_hour == {"cpu": 0.192, "gpu": 2.5}
    args = cli.build_parser().parse_args(["run", str(path), "--cost-per-hour="])  # MLproject's empty
    assert experiment_from_args(args).cost_per_hour == {"cpu": 0.192, "gpu": 3.67}


@pytest.mark.parametrize("value,message", [
    ("cpu=abc", "expected a price per hour > 0 for cpu, got 'abc'"),
    ("cpu=0", "expected a price per hour > 0 for cpu, got '0'"),
    ("tpu=1", "expected cpu=PRICE, gpu=PRICE or both (e.g. cpu=0.192,gpu=3.67), got 'tpu=1'"),
    ("cpu", "got 'cpu'"),
    ("cpu=1,cpu=2", "names the cpu price twice"),
])
def test_a_bad_flag_is_one_line_and_exit_2(workdir, value, message):
    path = write(workdir / "e.yaml", HEAD)
    code, out, err = main_here("validate", str(path), "--cost-per-hour", value)
    assert code == 2 and out == ""
    assert err.startswith("mlcompare: error: --cost-per-hour: ") and message in err and err.count("\n") == 1


def test_validate_refuses_a_bad_file_without_writing_anything(workdir):
    path = write(workdir / "e.yaml", HEAD + "predict_batch_sizes: [5000]\n")
    result = run_cli("run", str(path), cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"mlcompare: error: {path}: predict_batch_sizes[0]: 5000 rows per call, but the "
                                     "largest test split of this experiment has 250 rows")
    assert not (workdir / "mlflow.db").exists()
