"""`mlcompare compare`'s gates on suites written into a real store: a gate never passes in
silence, and what it decides it decides over the processes."""

from __future__ import annotations

from conftest import main_here

CASE = {"pairing": "random_forest", "implementation": "sklearn", "library": "sklearn", "device": "cpu",
        "dataset": "classification", "n_samples": "2500", "n_features": "20"}
TAGS = {"mlcompare.kind": "case", "case_status": "ok", "main_metric": "accuracy", "baseline": "sklearn"}


def _suite(name: str, processes: list[float], quality: dict[str, float] | None = None) -> str:
    """A suite of one case whose processes took these seconds, written by our own recorder."""
    from statistics import median

    from mlcompare.tracking.writer import Recorder

    recorder = Recorder("gates")
    parent = recorder.start_suite(f"suite · {name}", {"suite_name": name}, {"mlcompare.kind": "suite"})
    scores = {"accuracy": 0.9} if quality is None else quality
    recorder.log_case("random_forest · sklearn", "FINISHED", CASE, {"fit_time_s": median(processes), **scores},
                      TAGS, history={"fit_time_process_s": processes, "fit_time_repeat_s": processes})
    recorder.finish_suite("FINISHED", {}, {}, {})
    return parent


def test_a_gate_that_cannot_decide_a_case_exits_2_naming_it(workdir):
    """Ten times slower, but one process a side: the gate cannot tell, and says so (before, it
    passed with exit 0 and nothing on stderr)."""
    a, b = _suite("one", [1.0]), _suite("one", [10.0])
    code, out, err = main_here("compare", a, b, "--fail-slower", "1.1")
    assert code == 2 and "B against A" in out  # the comparison is written first
    last = err.strip().splitlines()[-1]
    assert last.startswith("mlcompare: error: --fail-slower: cannot decide 1 case(s): random_forest · sklearn · "
                           "classification 2.5k×20 (fit: 1 process in B against 1 in A)"), err
    code, _, err = main_here("compare", a, b, "--fail-slower", "1.1", "--undecided", "warn")
    assert code == 0 and err.strip().startswith("mlcompare: warning: --fail-slower: cannot decide 1 case(s)")


def test_a_gate_decides_over_the_processes(workdir):
    a = _suite("six", [1.0, 1.05, 0.97, 1.02, 0.99, 1.01])
    slow = _suite("six", [1.6, 1.65, 1.58, 1.62, 1.7, 1.61])
    same = _suite("six", [1.01, 0.98, 1.03, 1.0, 0.96, 1.04])
    code, _, err = main_here("compare", a, slow, "--fail-slower", "1.1")
    assert code == 1 and "1 case(s) of B significantly more than 1.1× slower" in err
    assert main_here("compare", a, same, "--fail-slower", "1.1")[0] == 0
    assert main_here("compare", a, slow, "--fail-slower", "1.7")[0] == 0  # 1.6× is not beyond 1.7×


def test_the_quality_gate_names_a_case_whose_main_metric_is_missing(workdir):
    """A case that ran in both suites without its main metric on one side: --fail-quality cannot
    judge it, and says so instead of passing."""
    processes = [1.0, 1.05, 0.97, 1.02, 0.99, 1.01]
    a, b = _suite("quality", processes), _suite("quality", processes, quality={})
    code, _, err = main_here("compare", a, b, "--fail-quality", "0.01")
    last = err.strip().splitlines()[-1]
    assert code == 2 and last.startswith("mlcompare: error: --fail-quality: cannot decide 1 case(s): "
                                         "random_forest · sklearn · classification 2.5k×20"), err
    code, _, err = main_here("compare", a, b, "--fail-quality", "0.01", "--undecided", "warn")
    assert code == 0 and "mlcompare: warning: --fail-quality: cannot decide 1 case(s)" in err
    worse = _suite("quality", processes, quality={"accuracy": 0.8})
    code, _, err = main_here("compare", a, worse, "--fail-quality", "0.01")
    assert code == 1, err


def test_min_change_is_the_smallest_change_a_verdict_calls(workdir):
    """B 3 % slower in every process: under the default smallest change (5 %, what identical
    suites drift apart by on one machine) it is "no change"; with --min-change 1 it is called."""
    from mlcompare.cli.compare import MIN_CHANGE
    from mlcompare.report.suite_comparison.table import MIN_CHANGE as TABLE_DEFAULT

    assert MIN_CHANGE == TABLE_DEFAULT
    processes = [1.0, 1.004, 0.997, 1.002, 0.999, 1.001]
    a, b = _suite("drift", processes), _suite("drift", [t * 1.03 for t in processes])
    code, out, _ = main_here("compare", a, b, "--format", "csv")
    assert code == 0 and "no change" in out and "slower" not in out
    code, out, _ = main_here("compare", a, b, "--format", "csv", "--min-change", "1")
    assert code == 0 and ",slower," in out
    code, out, _ = main_here("compare", a, b)
    assert "0 calls in 1 timing test of a change beyond ×/÷ 1.05 (more than 5 %)" in out
    assert "with nothing changed by more than that, any call" in out
    code, out, _ = main_here("compare", a, b, "--min-change", "1")
    assert "1 call in 1 timing test of any change" in out and "with nothing changed, any call" in out
    code, _, err = main_here("compare", a, b, "--min-change", "0.9")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--min-change" in err and "0.9" in err, err
