"""Plots: the Pareto front, and every plot renders even with nothing to show."""

from __future__ import annotations

from mlcompare.report import plots, results


def test_pareto_front_keeps_the_undominated():
    times = [1.0, 2.0, 3.0, 0.5]
    quality = [0.90, 0.95, 0.94, 0.80]
    assert plots.pareto_front(times, quality) == [True, True, False, True]
    # lower is better (a loss): the fastest with the lowest loss dominates everything
    assert plots.pareto_front([1.0, 2.0], [0.1, 0.2], higher_is_better=False) == [True, False]
    assert plots.pareto_front([1.0, 1.0], [0.5, 0.5]) == [True, True]  # ties dominate nobody


def test_every_plot_renders_a_png_without_data():
    empty = results.case_frame([])
    images = plots.render_all(empty, [])
    assert set(images) == set(plots.NAMES)
    assert all(png.startswith(b"\x89PNG\r\n\x1a\n") for png in images.values())
