"""The ladder's planner: its sizes, what it predicts a step costs, and that it stops growing
where the next step would not fit, leaving out the dearest implementation first.

The steps are run by a simulated machine (a clock and a known cost per process), so these
tests check the planning alone; tests/cli/test_advise.py runs real ladders."""

from __future__ import annotations

import math

import pytest

from mlcompare.records import Status, StoredRun
from mlcompare.suite import ladder
from mlcompare.suite.ladder import Step, Unit, ladder_sizes, run_ladder


def test_the_sizes_are_geometric_up_to_the_table_and_fewer_on_a_small_one():
    sizes = ladder_sizes(4000)
    assert sizes == [250, 500, 1000, 2000, 4000]
    big = ladder_sizes(327_000)
    ratios = [b / a for a, b in zip(big, big[1:])]
    assert big[-1] == 327_000 and len(big) == ladder.STEPS and max(ratios) <= ladder.MAX_RATIO + 1e-9
    assert len(ladder_sizes(600)) == 3 and ladder_sizes(300) == [300]
    assert ladder_sizes(4000, min_rows=1000)[0] == 1000


def test_the_work_is_priced_by_the_last_slope_at_least_linear():
    unit = Unit("p", "i", sizes=[1000], work_s=[2.0], processes=[3])
    assert unit.predicted_work(2000) == pytest.approx(2.0 * 2 ** ladder.PRIOR_EXPONENT)
    unit.sizes.append(2000), unit.work_s.append(8.0)  # quadratic between the last two
    assert unit.predicted_work(4000) == pytest.approx(32.0)
    flat = Unit("p", "i", sizes=[1000, 2000], work_s=[1.0, 1.1], processes=[3, 3])
    assert flat.predicted_work(4000) == pytest.approx(2.2)  # fixed costs flatten it: priced linear


class Machine:
    """A simulated machine: each implementation's process costs `coefficient * rows ** exponent`
    seconds of model calls, plus the harness's per process and per step costs."""

    def __init__(self, costs: dict[tuple[str, str], tuple[float, float]], rounds: int = 3,
                 per_process: float = 0.5, per_step: float = 2.0, skipped: tuple = (), failing: dict | None = None):
        self.now, self.costs, self.rounds = 0.0, costs, rounds
        self.per_process, self.per_step, self.skipped, self.failing = per_process, per_step, skipped, failing or {}
        self.ran: list[tuple[int, dict[str, list[str]]]] = []

    def clock(self) -> float:
        return self.now

    def run_step(self, rows: int, implementations: dict[str, list[str]], timeout_s: float) -> Step:
        self.ran.append((rows, implementations))
        cases, cases_wall = [], 0.0
        for pairing, names in implementations.items():
            for name in names:
                params = {"pairing": pairing, "implementation": name, "n_samples": str(rows)}
                if (pairing, name) in self.skipped:
                    cases.append(StoredRun(name, name, "FINISHED", 0, params, {},
                                           {"case_status": Status.SKIPPED, "skip_reason": "no GPU"}))
                    continue
                if self.failing.get((pairing, name)) == rows:
                    cases.append(StoredRun(name, name, "FAILED", 0, params, {},
                                           {"case_status": Status.FAILED, "error": "timeout"}))
                    continue
                coefficient, exponent = self.costs[(pairing, name)]
                work = coefficient * rows ** exponent
                cases_wall += self.rounds * (work + self.per_process)
                cases.append(StoredRun(name, name, "FINISHED", 0, params,
                                       {"model_time_s": self.rounds * work, "fit_processes": self.rounds},
                                       {"case_status": Status.OK}))
        self.now += cases_wall + self.per_step
        return Step(rows, f"suite-{rows}", cases_wall + self.per_step, cases_wall, cases)


def units(*keys: tuple[str, str]) -> list[Unit]:
    return [Unit(p, i, baseline=i == "sklearn") for p, i in keys]


SIZES = [250, 500, 1000, 2000, 4000]


def test_with_budget_enough_every_implementation_reaches_the_top():
    machine = Machine({("gb", "sklearn"): (1e-4, 1.0), ("gb", "lightgbm"): (2e-5, 1.0)})
    found = run_ladder(units(("gb", "sklearn"), ("gb", "lightgbm")), SIZES, deadline=500, run_step=machine.run_step,
                       reserve=lambda done: 5.0, clock=machine.clock)
    assert [s.rows for s in found.steps] == SIZES and all(u.sizes == SIZES for u in found.units)
    assert not found.not_afforded and all(not u.stopped for u in found.units)
    assert found.reserve_s == 5.0 and found.per_process_s() == pytest.approx(0.5)
    assert found.fixed_s() == pytest.approx(2.0)


def test_a_tight_budget_stops_the_dearest_first_and_the_ladder_ends_in_time():
    machine = Machine({("gb", "sklearn"): (1e-3, 1.2), ("gb", "lightgbm"): (1e-4, 1.0),
                       ("lr", "sklearn"): (1e-5, 1.0)})
    deadline = 120.0
    found = run_ladder(units(("gb", "sklearn"), ("gb", "lightgbm"), ("lr", "sklearn")), SIZES, deadline,
                       machine.run_step, reserve=lambda done: 5.0, clock=machine.clock)
    slow = next(u for u in found.units if u.key == ("gb", "sklearn"))
    assert slow.stopped.startswith("not afforded") and slow.sizes[-1] < SIZES[-1]
    assert found.not_afforded[0].startswith("gb · sklearn")  # the dearest goes first
    # once left out, never run again
    assert all("sklearn" not in names.get("gb", []) for rows, names in machine.ran if rows > slow.sizes[-1])
    assert machine.now <= deadline - found.reserve_s  # what was predicted was not exceeded
    assert any(u.sizes[-1] == SIZES[-1] for u in found.units)  # the cheap ones went on


def test_an_implementation_that_cannot_run_or_fails_stops_with_why():
    machine = Machine({("gb", "sklearn"): (1e-4, 1.0), ("gb", "lightgbm"): (1e-4, 1.0)},
                      skipped=(("gb", "xgboost_gpu"),), failing={("gb", "lightgbm"): 1000})
    found = run_ladder(units(("gb", "sklearn"), ("gb", "xgboost_gpu"), ("gb", "lightgbm")), SIZES, 1000,
                       machine.run_step, reserve=lambda done: 1.0, clock=machine.clock)
    by_key = {u.key: u for u in found.units}
    assert by_key[("gb", "xgboost_gpu")].stopped == "not measured: no GPU" and by_key[("gb", "xgboost_gpu")].skipped
    assert by_key[("gb", "lightgbm")].stopped == "failed at 1000 rows: timeout"
    assert by_key[("gb", "lightgbm")].sizes == [250, 500] and by_key[("gb", "sklearn")].sizes == SIZES
    assert [names for rows, names in machine.ran][1] == {"gb": ["sklearn", "lightgbm"]}


def test_nothing_affordable_after_the_first_step_ends_the_ladder():
    machine = Machine({("gb", "sklearn"): (0.05, 1.0)})
    found = run_ladder(units(("gb", "sklearn")), SIZES, deadline=60, run_step=machine.run_step,
                       reserve=lambda done: 5.0, clock=machine.clock)
    assert [s.rows for s in found.steps] == [250] and found.units[0].stopped.startswith("not afforded: 500 rows")
    assert math.isclose(found.steps[0].per_process_s, 0.5)


def test_the_margin_is_left_free_of_planned_steps():
    costs = {("gb", "sklearn"): (1e-3, 1.2), ("gb", "lightgbm"): (1e-4, 1.0)}
    plain, kept = Machine(costs), Machine(costs)
    run_ladder(units(("gb", "sklearn"), ("gb", "lightgbm")), SIZES, 150, plain.run_step, lambda done: 5.0,
               clock=plain.clock)
    found = run_ladder(units(("gb", "sklearn"), ("gb", "lightgbm")), SIZES, 150, kept.run_step, lambda done: 5.0,
                       clock=kept.clock, margin_s=40)
    assert plain.now > 150 - 40 - found.reserve_s  # without the margin the plan uses that time
    assert kept.now <= 150 - 40 - found.reserve_s and kept.ran[-1] == (4000, {"gb": ["lightgbm"]})
