"""Rounds: a case in several fresh processes, in shuffled order, its repeats pooled; the
machine's load at each start; the stability flag."""

from __future__ import annotations

import statistics
from collections import defaultdict

import pytest
from conftest import run_cli, store_runs, write

from mlcompare.records import Status
from mlcompare.suite.host import LoadMeter
from mlcompare.suite.rounds import pool_rounds, stability


def _round(fits, cold, memory, load=0.5):
    return {"status": Status.OK, "fit_times": fits, "fit_host_times": fits, "predict_times": [0.01, 0.02],
            "model_time_s": 1.0,
            "metrics": {"fit_time_s": sorted(fits)[len(fits) // 2], "fit_cold_time_s": cold, "transfer_time_s": 0.0,
                        "load_time_s": 0.1, "fit_peak_host_memory_mb": memory, "load_avg_1m_at_start": load,
                        "r2": 0.9}}


def test_rounds_pool_their_repeats_and_keep_the_worst_memory():
    pooled = pool_rounds([_round([1.0, 1.2, 1.1], 2.0, 30.0), _round([1.4, 1.3, 1.5], 3.0, 32.0, load=2.5)])
    assert pooled["fit_times"] == [1.0, 1.2, 1.1, 1.4, 1.3, 1.5] and pooled["rounds"] == 2
    m = pooled["metrics"]
    assert m["fit_time_s"] == pytest.approx(1.25) and m["fit_repeats"] == 6
    assert m["fit_cold_time_s"] == pytest.approx(2.5)  # the median of the rounds' cold fits
    assert m["fit_peak_host_memory_mb"] == 32.0 and m["load_avg_1m_at_start"] == 2.5
    assert m["fit_time_rounds_cv"] == pytest.approx(statistics.stdev([1.1, 1.4]) / 1.25)  # the rounds' medians
    # the interval is over the two processes' medians (1.1, 1.4), never the six repeats pooled
    assert pooled["fit_process_times"] == [1.1, 1.4] and m["fit_processes"] == 2
    assert (m["fit_time_ci_low_s"], m["fit_time_ci_high_s"]) == (1.1, 1.4)
    assert m["fit_time_ci_level"] == pytest.approx(0.5)  # two processes: their range covers the median half the time
    assert pooled["model_time_s"] == 2.0


def test_a_case_says_it_was_timed_in_loops_only_when_every_process_was():
    """Seen on a real run: one process of a sub-millisecond fit timed it alone; the run said nothing."""
    looped, alone = _round([0.001, 0.001], 0.002, 30.0), _round([0.0066], 0.002, 30.0)
    looped["metrics"] |= {"fit_loops": 50, "predict_loops": 20}
    alone["metrics"] |= {"fit_loops": 1, "predict_loops": 20}
    m = pool_rounds([looped, alone, looped])["metrics"]
    assert (m["fit_loops"], m["predict_loops"]) == (1, 20)


def test_one_process_has_a_range_and_no_level():
    """Three repeats in one process are not three draws of the next run: no interval is logged,
    and the record says why."""
    pooled = pool_rounds([_round([1.0, 1.2, 1.1], 2.0, 30.0)])
    m = pooled["metrics"]
    assert not any(name.startswith(("fit_time_ci", "predict_time_ci")) for name in m), m
    assert (m["fit_time_min_s"], m["fit_time_s"]) == (1.0, 1.1) and m["fit_processes"] == 1
    assert pooled["interval_note"].startswith("one process: no interval across runs")


def test_a_failed_round_fails_the_case():
    failed = {"status": Status.FAILED, "error": "boom"}
    assert pool_rounds([_round([1.0, 1.1], 2.0, 1.0), failed])["error"] == "boom (round 2 of 2)"


def test_stability_flags_noise_and_load():
    assert stability({"metrics": {"fit_time_cv": 0.05, "load_avg_1m_at_start": 0.5}}, cpus=2) == "stable"
    assert stability({"metrics": {"fit_time_cv": 0.3}}, cpus=2) == "noisy: fit-time CV 0.300 > 0.10"
    # the load average at the start is not judged (it lags and counts the suite itself); what
    # others took during the timed calls is
    assert stability({"metrics": {"fit_time_cv": 0.01, "load_avg_1m_at_start": 3.2}}, cpus=2) == "stable"
    assert stability({"metrics": {"cpu_others_cores_during_timed": 0.6}}, cpus=2) == (
        "noisy: other processes took 0.60 of 2 CPUs during the timed calls (> 0.25)")
    assert "rounds' medians 0.20" in stability({"metrics": {"fit_time_rounds_cv": 0.2}}, cpus=8)


def test_cpu_steal_is_the_share_since_the_last_reading(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n")
    meter = LoadMeter(stat)
    stat.write_text("cpu  150 0 70 900 10 0 0 70 0 0\ncpu0 1 2 3\n")  # 200 more jiffies, 30 of them stolen
    reading = meter.reading()
    assert reading["cpu_steal_pct_at_start"] == pytest.approx(15.0)
    assert meter.reading()["cpu_steal_pct_at_start"] == 0.0  # no tick since: nothing stolen
    assert "cpu_steal_pct_at_start" not in LoadMeter(tmp_path / "no").reading()


ROUNDS = """\
name: rounds
repeats: 2
rounds: 4
datasets: [{generator: regression, n_samples: 300, n_features: 3}]
pairings:
  - name: counted
    task: regression
    metrics: [r2]
    implementations:
      a: {estimator: faulty_estimators.CountsFits, device: cpu, params: {label: a}}
      b: {estimator: faulty_estimators.CountsFits, device: cpu, params: {label: b}}
"""


def test_each_case_runs_in_fresh_processes_in_shuffled_order(workdir, faults):
    write(workdir / "rounds.yaml", ROUNDS)
    result = run_cli("run", "rounds.yaml", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    fits = [line.split() for line in (workdir / "faults" / "fits").read_text().splitlines()]
    processes = defaultdict(list)
    for label, pid, _ in fits:
        processes[label].append(pid)
    runs = {r.data.params["implementation"]: r for r in store_runs("rounds") if "mlflow.parentRunId" in r.data.tags}
    order = [pid for _, pid, _ in fits]
    starts = []  # which case each process ran, in the order the processes started
    for label in "ab":
        pids = set(processes[label])
        assert len(pids) == 4  # four rounds, four processes
        # every fit a process ran is a value, or its warm-up (the first process always has one)
        m = runs[label].data.metrics
        assert len(processes[label]) == m["fit_repeats"] + (4 if m["fit_warmups"] else 1)
        assert all(processes[label].count(pid) >= 2 for pid in pids)  # at least two values a process
        starts += [(order.index(pid), label) for pid in pids]
    firsts = [label for _, label in sorted(starts)][::2]  # who started each round
    assert firsts != ["a"] * 4  # the baseline is not always first
    for run in runs.values():
        assert run.data.params["rounds"] == "4"
        assert run.data.metrics["fit_repeats"] >= 8 and "fit_time_rounds_cv" in run.data.metrics
        assert run.data.metrics["fit_processes"] == 4
    assert runs["b"].data.metrics["speedup_fit_ci_level"] == pytest.approx(1 - 2 / 70)  # 4 processes against 4


def test_the_rounds_are_spread_over_the_whole_suite(workdir, faults):
    """Two comparison groups (two sizes), three rounds: every case's round 1 before any round 2,
    so each case's processes sample the whole time the suite runs, not one moment of it."""
    write(workdir / "spread.yaml", ROUNDS.replace("rounds: 4", "rounds: 3").replace(
        "n_samples: 300", "n_samples: [300, 400]"))
    result = run_cli("run", "spread.yaml", cwd=workdir, env=faults)
    assert result.returncode == 0, result.stderr
    fits = [line.split() for line in (workdir / "faults" / "fits").read_text().splitlines()]
    processes = list(dict.fromkeys((label, rows, pid) for label, pid, rows in fits))  # in the order they ran
    assert len(processes) == 4 * 3
    cases = [(label, rows) for label, rows, _ in processes]
    for number in range(3):  # each block of four processes is one round of all four cases
        assert sorted(cases[4 * number:4 * number + 4]) == sorted(set(cases)), cases
    assert "round 1/3 done in " in result.stderr and "round 2/3 done in " in result.stderr
