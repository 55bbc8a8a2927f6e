"""The power-law fit of the advice: it recovers a known law, its intervals cover at their stated
level, its self-check sees a bend, and two lines cross where they should."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlcompare.report import scaling

SIZES = [250.0, 500.0, 1000.0, 2000.0, 4000.0]


def test_a_noiseless_law_is_recovered_from_the_largest_sizes():
    law = scaling.fit(SIZES, [0.002 * n ** 1.3 for n in SIZES])
    assert law is not None and law.sizes == tuple(SIZES[-scaling.TOP:])
    assert law.b == pytest.approx(1.3) and law.predict(40_000) == pytest.approx(0.002 * 40_000 ** 1.3)
    low, high = law.interval(40_000)
    assert low == pytest.approx(high) == pytest.approx(law.predict(40_000))


def test_two_sizes_make_a_line_without_an_interval_and_one_size_none():
    law = scaling.fit([100, 200], [1.0, 2.0])
    assert law is not None and law.b == pytest.approx(1.0) and law.interval(1000) is None
    assert not law.has_interval and law.exponent_interval() is None
    assert scaling.fit([100, 100], [1.0, 1.1]) is None


def test_the_prediction_interval_covers_a_new_measurement_at_its_level():
    rng = np.random.default_rng(7)
    far, trials, covered = 40_000.0, 3000, 0
    truth = lambda n: 0.01 * n ** 0.9  # noqa: E731
    for _ in range(trials):
        times = [truth(n) * math.exp(rng.normal(0, 0.15)) for n in SIZES]
        law = scaling.fit(SIZES, times)
        low, high = law.interval(far)
        covered += low <= truth(far) * math.exp(rng.normal(0, 0.15)) <= high
    assert abs(covered / trials - scaling.LEVEL) < 0.025


def test_the_self_check_sees_a_curve_that_steepens():
    times = [1e-4 * n + 1e-8 * n ** 2 for n in SIZES]  # quadratic takes over at the top
    check = scaling.self_check(SIZES, times)
    assert check is not None and check.rows == 4000 and check.from_sizes == 4
    assert check.error < -0.05  # predicted too fast from the flatter sizes below
    straight = scaling.self_check(SIZES, [0.003 * n for n in SIZES])
    assert straight.error == pytest.approx(0.0, abs=1e-9)
    assert scaling.self_check(SIZES[:2], [1.0, 2.0]) is None


def test_two_lines_cross_where_their_times_are_equal_and_the_interval_holds_it():
    rng = np.random.default_rng(3)
    slow_start = scaling.fit(SIZES, [0.5 * (n / 1000) ** 0.6 * math.exp(rng.normal(0, 0.05)) for n in SIZES])
    steep = scaling.fit(SIZES, [0.2 * (n / 1000) ** 1.1 * math.exp(rng.normal(0, 0.05)) for n in SIZES])
    found = scaling.crossing(slow_start, steep, ("flat", "steep"), (250, 1e6))
    expected = 1000 * (0.5 / 0.2) ** (1 / 0.5)  # 0.5 x^0.6 = 0.2 x^1.1
    assert found is not None and found.faster_above == "flat"
    assert found.rows == pytest.approx(expected, rel=0.3)
    assert found.low is not None and found.high is not None and found.low < found.rows < found.high
    parallel = scaling.fit(SIZES, [0.1 * n for n in SIZES])
    assert scaling.crossing(parallel, scaling.fit(SIZES, [0.2 * n for n in SIZES]), ("a", "b"), (1, 1e9)) is None
    assert scaling.crossing(slow_start, steep, ("flat", "steep"), (250, 1000)) is None  # outside the span


def test_a_predicted_ratio_has_an_interval_only_where_both_fits_do():
    a = scaling.fit(SIZES, [0.02 * n * (1 + 0.05 * (-1) ** i) for i, n in enumerate(SIZES)])
    b = scaling.fit(SIZES, [0.01 * n * (1 + 0.05 * (-1) ** (i + 1)) for i, n in enumerate(SIZES)])
    low, high = scaling.ratio_interval(a, b, 40_000)
    assert low < a.predict(40_000) / b.predict(40_000) < high
    assert scaling.ratio_interval(a, scaling.fit([1, 2], [1, 2]), 10) is None
