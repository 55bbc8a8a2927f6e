"""A case's plan: a warm-up only where its first call differs, values enough for its process's
cost, and the decisions on its run."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import faults_experiment, run_cli, store_runs

from mlcompare.measure.timing import SETTLE_S
from mlcompare.suite.plan import (
    SECOND_FIT_TOLERANCE,
    SETTLE_TOLERANCE,
    WARMUP_TOLERANCE,
    Overheads,
    drop_unsettled,
    warmup_plan,
)


def _process(fit_cold, fit_values, predict_cold=0.05, predict_values=(0.010, 0.011), fit_loops=1, warmups=1):
    return {"status": "ok", "fit_times": list(fit_values), "predict_times": list(predict_values),
            "metrics": {"fit_cold_time_s": fit_cold, "fit_loops": fit_loops, "fit_warmups": warmups,
                        "predict_cold_time_s": predict_cold, "predict_loops": 1, "predict_warmups": 1}}


def test_a_warm_up_is_dropped_once_the_first_calls_do_not_differ_and_stays_dropped():
    plan = warmup_plan([_process(0.505, [0.50, 0.51])])
    assert (plan.fit, plan.predict) == (False, True)
    assert plan.spec() == {"fit_warmup": False, "predict_warmup": True, "fit_settle_s": 0.0, "fit_calibrate": True}
    assert "fit: first call 1.00× the next ones' median over 1 process (≤ 1.03): the first value from process 2 on" \
        in plan.note
    assert "predict: first call 4.76× the next ones' median over 1 process (> 1.03): a warm-up in every process" \
        in plan.note
    # dropped once, dropped for good: later processes have no warm-up to compare
    later = warmup_plan([_process(0.505, [0.50, 0.51]), _process(0.9, [0.5], warmups=0)], plan)
    assert not later.fit and "from process 2 on" in later.note


def test_one_noisy_first_call_is_outvoted_by_the_next_processes():
    """The evidence grows with every process that kept its warm-up: the median ratio decides."""
    noisy = [_process(0.56, [0.50])]  # 1.12×: kept after one process
    assert warmup_plan(noisy).fit
    three = noisy + [_process(0.50, [0.505]), _process(0.51, [0.50])]
    plan = warmup_plan(three, warmup_plan(noisy))
    assert not plan.fit and "over 3 processes (≤ 1.03): the first value from process 4 on" in plan.note
    slow = [_process(0.60, [0.50]) for _ in range(3)]
    assert warmup_plan(slow).fit  # a real first-call cost stays a warm-up
    assert WARMUP_TOLERANCE == 0.03


def _calibrated(values, offsets):
    record = _process(values[0], values)
    record["fit_value_offsets_s"] = list(offsets)
    record["reported_time_s"] = sum(values)
    return record


def test_values_slowed_after_the_first_fit_make_the_next_processes_warm_up_through_it():
    """The first process times values past SETTLE_S after its first fit; those that started inside
    it against those after decide, once, for every later process."""
    slowed = _calibrated([0.02, 0.02, 0.01, 0.01, 0.01], [0.0, 0.05, 0.16, 0.17, 0.18])
    plan = warmup_plan([slowed])
    assert plan.settle and not plan.calibrate and plan.spec()["fit_settle_s"] == SETTLE_S
    assert plan.spec()["fit_warmup"]  # warming up through the window keeps the first call apart too
    assert f"the first values within {SETTLE_S:g} s of it 2.00× the later ones (> {1 + SETTLE_TOLERANCE:.2f})" \
        in plan.note
    later = warmup_plan([slowed, _process(0.01, [0.01, 0.01])], plan)
    assert later.settle and "warm-ups until" in later.note  # the decision and its reason stay
    steady = warmup_plan([_calibrated([0.0105, 0.01, 0.01, 0.0101], [0.0, 0.06, 0.16, 0.17])])
    assert not steady.settle and not steady.calibrate and "1.02× the later ones (≤ 1.10)" in steady.note
    # calls too long to have values on both sides: nothing to decide, and no more calibrating
    long = warmup_plan([_calibrated([0.3], [0.0])])
    assert not long.settle and not long.calibrate and "calls too long to tell" in long.note
    # a first process that did not calibrate (it failed, say) leaves the question open
    assert warmup_plan([_process(0.5, [0.5, 0.5])]).calibrate


def test_a_slow_second_fit_of_a_long_call_is_warmed_through_while_the_first_fit_is_kept_apart():
    """Where a call lasts CALIBRATE_BELOW_S or more, a process's figure is one value or two, and the
    value in the window after the first fit is the second fit: 1.10× the later ones is a warm-up
    (SECOND_FIT_TOLERANCE, not the SETTLE_TOLERANCE that lets a few short values pass), but only
    while the first fit is kept apart too: one that became a value left nothing to pay for."""
    second_slow = [_calibrated([0.33, 0.30, 0.30], [0.0, 0.33, 0.63])]
    second_slow[0]["metrics"]["fit_cold_time_s"] = 0.6  # the first fit 2× the values: kept apart
    plan = warmup_plan(second_slow)
    assert plan.fit and plan.settle_second and not plan.settle and plan.warms_through
    assert plan.spec()["fit_settle_s"] == SETTLE_S
    assert (f"1.10× the later ones (> {1 + SECOND_FIT_TOLERANCE:.2f}, the second fit of a long call): "
            "a warm-up through it while the first fit is one, from process 2 on") in plan.note
    # the next processes' first fits are like their values: the first fit's warm-up is dropped,
    # and the second's with it
    alike = [_process(0.30, [0.30], warmups=2) for _ in range(4)]
    later = warmup_plan(second_slow + alike, plan)
    assert not later.fit and later.settle_second and not later.warms_through
    assert later.spec() == {"fit_warmup": False, "predict_warmup": True, "fit_settle_s": 0.0, "fit_calibrate": False}
    assert "the second fit's warm-up dropped with the first's from process 6 on" in later.note
    assert "the second fit's warm-up dropped" in warmup_plan(second_slow + alike + alike[:1], later).note
    steady = warmup_plan([_calibrated([0.312, 0.30, 0.30], [0.0, 0.31, 0.61])])
    assert not steady.warms_through and f"1.04× the later ones (≤ {1 + SECOND_FIT_TOLERANCE:.2f})" in steady.note
    # 1.10 over short values, a few of many in a process, passes
    short = warmup_plan([_calibrated([0.011, 0.011, 0.01, 0.01, 0.01], [0.0, 0.05, 0.16, 0.17, 0.18])])
    assert not short.warms_through and f"(≤ {1 + SETTLE_TOLERANCE:.2f})" in short.note


def test_the_first_processs_values_in_the_window_become_warm_ups_once_it_is_found_to_matter():
    record = _calibrated([0.02, 0.02, 0.01, 0.01], [0.0, 0.05, 0.16, 0.17])
    assert drop_unsettled(record) == 2
    assert record["fit_times"] == [0.01, 0.01] and record["fit_value_offsets_s"] == [0.16, 0.17]
    assert record["metrics"]["fit_warmups"] == 3
    assert record["reported_time_s"] == pytest.approx(0.02)
    # a process with no value after the window keeps its values: they are all it has
    inside = _calibrated([0.02, 0.02], [0.0, 0.05])
    assert drop_unsettled(inside) == 0 and inside["fit_times"] == [0.02, 0.02]


def test_values_that_are_loop_means_always_keep_the_first_call_apart():
    plan = warmup_plan([_process(0.001, [0.001, 0.001], fit_loops=40)])
    assert plan.fit and "fit: timed in loops (or no values), the first call apart" in plan.note


def test_the_overhead_of_a_kind_of_process_is_the_median_of_those_measured():
    overheads = Overheads()
    assert overheads.typical("forked") == pytest.approx(0.15)
    for wall, model in ((1.0, 0.8), (2.0, 1.7), (9.0, 1.0)):
        overheads.add({"status": "ok", "process": "forked", "process_wall_s": wall, "model_time_s": model})
    assert overheads.typical("forked") == pytest.approx(0.3)  # 0.2, 0.3, 8.0: one slow start does not decide
    assert overheads.typical("fresh") == pytest.approx(0.15)


def test_a_slow_first_fit_keeps_its_warm_up_and_a_steady_one_is_the_first_value(workdir, faults):
    """Real fits in real processes: `first_slow`'s first fit of each process lasts 0.4 s against
    0.06 s after; `steady`'s is like the others. Counting the fits each process really ran: every
    process of `first_slow` spends one fit apart, `steady` only its first."""
    path = faults_experiment(workdir, ["sklearn", "steady", "first_slow", "after_effect"], sizes=[300])
    path.write_text(path.read_text().replace("rounds: 1", "rounds: 3"))
    result = run_cli("run", str(path), "--quiet", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    runs = {r.data.params["implementation"]: r for r in store_runs("faults") if "mlflow.parentRunId" in r.data.tags}
    fits = Counter(line.split()[0] for line in (workdir / "faults" / "fits").read_text().splitlines())
    steady, slow = runs["steady"], runs["first_slow"]
    assert steady.data.metrics["fit_processes"] == slow.data.metrics["fit_processes"] == 3
    # steady: one warm-up in its first process, none after
    assert steady.data.metrics["fit_warmups"] == 0
    assert fits["steady"] == steady.data.metrics["fit_repeats"] + 1
    # its first call within the tolerance of the next ones (0.97× and 1.02× both are)
    ratio = float(re.search(r"fit: first call ([0-9.]+)×", steady.data.tags["warmup_plan"]).group(1))
    assert abs(ratio - 1) <= WARMUP_TOLERANCE
    assert "the first value from process 2 on" in steady.data.tags["warmup_plan"]
    # first_slow: a warm-up in every process, and its values are the 0.06 s fits only
    assert slow.data.metrics["fit_warmups"] == 1
    assert fits["first_slow"] == slow.data.metrics["fit_repeats"] + 3
    assert "a warm-up in every process" in slow.data.tags["warmup_plan"].split(";")[0]
    assert slow.data.metrics["fit_time_s"] == pytest.approx(0.06, rel=0.2)
    assert slow.data.metrics["fit_cold_time_s"] == pytest.approx(0.4, rel=0.2)
    # the values of a process add up to at least 1.5 × what it spends around its model calls:
    # a 0.06 s fit gets two or more values a process
    assert slow.data.metrics["fit_repeats"] >= 3 * 2
    # after_effect: its first fit is like the others, the fits in the 0.12 s after it last 3 times
    # as long. The first process saw it; the next ones warm up through the window, and the
    # first's values in it became warm-ups: every value left is a 0.03 s fit.
    after = runs["after_effect"]
    assert "warm-ups until 0.15 s after it from process 2 on" in after.data.tags["warmup_plan"]
    assert "no warm-up through it" in steady.data.tags["warmup_plan"]
    assert "no warm-up through it" in slow.data.tags["warmup_plan"]
    assert after.data.metrics["fit_time_s"] == pytest.approx(0.03, rel=0.2)
    assert after.data.metrics["fit_warmups"] >= 2  # the first fit and the window's
    # every process spent more than its first fit apart: at least one call inside each window
    assert fits["after_effect"] >= after.data.metrics["fit_repeats"] + 3 * 2
    for run in (steady, slow, after):
        assert run.data.tags["rounds_stop"].startswith("3 processes")
        assert run.data.metrics["reported_time_s"] < run.data.metrics["model_time_s"]


def test_a_long_fit_whose_second_call_is_slow_reports_the_later_calls(workdir, faults):
    """Real fits in real processes: `second_slow`'s fits last 0.45 s, then 0.36 s, then 0.3 s.
    Each process keeps its first fit apart (1.5× the next); with one value a process after it,
    every process gave the 0.36 s second fit. The first process now takes two values past the
    first fit's window, finds the second fit slower, and the next ones warm up through it."""
    path = faults_experiment(workdir, ["second_slow"], sizes=[300])
    path.write_text(path.read_text().replace("rounds: 1", "rounds: 3"))
    result = run_cli("run", str(path), "--quiet", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    (run,) = [r for r in store_runs("faults") if "mlflow.parentRunId" in r.data.tags]
    plan = run.data.tags["warmup_plan"]
    assert "a warm-up in every process" in plan.split(";")[0]
    assert f"(> {1 + SECOND_FIT_TOLERANCE:.2f}, the second fit of a long call): a warm-up through it " \
        "while the first fit is one, from process 2 on" in plan
    assert run.data.metrics["fit_processes"] == 3
    assert run.data.metrics["fit_time_s"] == pytest.approx(0.3, rel=0.1)
    assert run.data.metrics["fit_cold_time_s"] == pytest.approx(0.45, rel=0.1)
    assert run.data.metrics["fit_warmups"] == 2  # the first fit and the second
    fits = Counter(line.split()[0] for line in (workdir / "faults" / "fits").read_text().splitlines())
    assert fits["second_slow"] == run.data.metrics["fit_repeats"] + 3 * 2


def test_a_first_process_whose_window_values_are_dropped_still_gives_its_repeats(workdir, faults):
    """`after_effect` with three repeats a process: the first process's values inside the window
    become warm-ups, and the values it took past the window are still three (it used to stop
    at the first value past it: one value left, and the decision taken on that one)."""
    path = faults_experiment(workdir, ["after_effect"], sizes=[300])
    path.write_text(path.read_text().replace("rounds: 1", "rounds: 2").replace("repeats: 1", "repeats: 3"))
    result = run_cli("run", str(path), "--quiet", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    (after,) = [r for r in store_runs("faults") if "mlflow.parentRunId" in r.data.tags]
    assert "warm-ups until 0.15 s after it from process 2 on" in after.data.tags["warmup_plan"]
    assert after.data.metrics["fit_processes"] == 2
    assert after.data.metrics["fit_repeats"] >= 2 * 3  # each process its three values at least
    assert after.data.metrics["fit_time_s"] == pytest.approx(0.03, rel=0.2)


def test_only_a_case_s_first_process_describes_it_the_later_ones_only_time(workdir, faults_here, monkeypatch):
    """Quality, agreement, fitted counts, parameters, thread pools and the library's version are
    what the suite keeps from a case's first process (`rounds.pool_rounds`): the later processes
    take none of them, and the run holds the first one's. Every process gives its timings."""
    from pathlib import Path

    from mlcompare.config.experiment import load_experiment
    from mlcompare.suite import runner
    from mlcompare.tracking.writer import Recorder

    processes: dict[str, list[dict]] = {}
    real = runner.run_here

    def recording(case, *args, **kwargs):
        record = real(case, *args, **kwargs)
        saved = Path(record.get("predictions_path", "")).is_file()  # the suite's scratch is gone at its end
        processes.setdefault(case.implementation.name, []).append({**record, "saved": saved})
        return record

    monkeypatch.setattr(runner, "run_here", recording)
    path = faults_experiment(workdir, ["sklearn", "steady"], sizes=[300])
    path.write_text(path.read_text().replace("rounds: 1", "rounds: 3"))
    outcome = runner.run_suite(load_experiment(path), Recorder("faults"), say=lambda line: None)
    assert outcome.count("ok") == 2
    described = ("effective_params", "audited", "threadpools", "library_version", "predictions_path")
    runs = {r.data.params["implementation"]: r for r in store_runs("faults") if "mlflow.parentRunId" in r.data.tags}
    for name, records in processes.items():
        assert len(records) == 3 and all(r["status"] == "ok" and r["fit_times"] for r in records)
        first, *later = records
        assert all(key in first for key in described) and "r2" in first["metrics"]
        assert first["saved"] and not any(record["saved"] for record in later)
        for record in later:
            assert not [key for key in described if key in record], name
            assert "r2" not in record["metrics"]
        run = runs[name]
        assert run.data.metrics["r2"] == pytest.approx(first["metrics"]["r2"])
        assert run.data.tags["library_version"] == first["library_version"]
        assert run.data.params["estimator.fit_intercept"] == first["effective_params"]["fit_intercept"]
        assert run.data.metrics["fit_processes"] == 3
    # the agreement of the two implementations' predictions: from their first processes' files
    assert runs["steady"].data.metrics["prediction_agreement"] == pytest.approx(1.0, abs=1e-6)
