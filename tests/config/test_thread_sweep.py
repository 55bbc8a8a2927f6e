"""`threads: [1, 2, 4]`: every CPU implementation at each count, the baseline also at its own threads."""

from __future__ import annotations

import pytest
from conftest import write

from mlcompare.cli import build_parser
from mlcompare.cli.flags import experiment_from_args
from mlcompare.config.experiment import load_experiment
from mlcompare.errors import InputError
from mlcompare.suite import resume

SWEEP = """\
    name: threads
    threads: [1, 2, 4]
    datasets: [{generator: classification, n_samples: 200, n_features: 4}]
    pairings: [gradient_boosting]
    implementations: [sklearn, lightgbm, xgboost_gpu]
"""


def test_cpu_implementations_run_at_each_count_and_the_baseline_once_more(workdir):
    exp = load_experiment(write(workdir / "e.yaml", SWEEP))
    cases = [(c.implementation.name, c.threads, c.is_baseline, dict(c.impl_point)) for c in exp.cases()]
    assert cases == [
        ("sklearn", None, True, {}),  # the baseline, at the experiment's threads: every speed-up is against it
        ("sklearn", 1, False, {"threads": 1}), ("sklearn", 2, False, {"threads": 2}),
        ("sklearn", 4, False, {"threads": 4}),
        ("xgboost_gpu", None, False, {}),  # a GPU implementation is not swept
        ("lightgbm", 1, False, {"threads": 1}), ("lightgbm", 2, False, {"threads": 2}),
        ("lightgbm", 4, False, {"threads": 4}),
    ]
    assert exp.threads is None and exp.thread_sweep == (1, 2, 4)
    assert exp.cases()[1].name == "gradient_boosting · sklearn · classification 200×4 · threads=1"
    # the count is not an estimator parameter: the estimator's params are the same at every count
    assert len({repr(c.pairing.estimator_params(c.implementation)) for c in exp.cases()[:4]}) == 1
    # each count is a case of its own for --resume
    experiment_fp = resume.experiment_fingerprint(exp, {})
    assert len({resume.case_fingerprint(c, experiment_fp) for c in exp.cases()}) == len(exp.cases())


def test_the_baseline_threads_can_be_named(workdir):
    exp = load_experiment(write(workdir / "e.yaml", SWEEP + "    baseline_threads: 2\n"))
    assert exp.threads == 2 and exp.thread_sweep == (1, 2, 4)


def test_the_threads_flag_replaces_the_sweep(workdir):
    path = write(workdir / "e.yaml", SWEEP)
    exp = experiment_from_args(build_parser().parse_args(["validate", str(path), "--threads", "3"]))
    assert exp.threads == 3 and exp.thread_sweep == ()
    assert [c.threads for c in exp.cases()] == [None, None, None]


@pytest.mark.parametrize("text,field,message", [
    ("threads: [1, 2, 2]", "threads", "a thread count is listed twice: [1, 2, 2]"),
    ("threads: [1, 0]", "threads[1]", "expected an integer >= 1, got 0"),
    ("threads: []", "threads", "expected an integer or a non-empty list of integers, got an empty list"),
    ("threads: 2\nbaseline_threads: 1", "baseline_threads", "only with a list of threads"),
])
def test_a_bad_sweep_is_one_line_naming_the_field(workdir, text, field, message):
    body = SWEEP.replace("    threads: [1, 2, 4]\n", "").rstrip() + "\n" + "".join(f"    {line}\n" for line in
                                                                                text.split("\n"))
    path = write(workdir / "e.yaml", body)
    with pytest.raises(InputError) as caught:
        load_experiment(path)
    assert str(caught.value).startswith(f"{path}: {field}: {message}")
