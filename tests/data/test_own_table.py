"""A user's own table for `mlcompare advise`: the task read from its target, the rows the
`nan:` rule keeps, and subsamples that keep the classes' shares."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mlcompare.data.own_table import infer_task, read_own_table, subsample_file, subsample_rows
from mlcompare.data.tables import TableSource
from mlcompare.errors import InputError


def _table(path, target, **more) -> TableSource:
    return TableSource(name=path.stem, source=str(path), tasks=("regression",), target=target, path=str(path),
                       fmt="parquet", **more)


@pytest.mark.parametrize("values, task", [
    (["yes", "no", "no", "yes"] * 50, "classification"),
    ([True, False] * 100, "classification"),
    ([0, 1, 2, 1, 0] * 40, "classification"),
    (list(np.random.default_rng(0).lognormal(3, 1, 200)), "regression"),
    (list(range(200)), "regression"),  # whole numbers, too many to be classes
])
def test_the_task_is_read_from_the_target(tmp_path, values, task):
    found, why = infer_task(pd.Series(values), _table(tmp_path / "t.parquet", "y"))
    assert found == task and why


@pytest.mark.parametrize("values, words", [
    ([3.5] * 200, "constant target fits no task"),
    ([f"id{i}" for i in range(200)], "too many to be classes"),
    ([None] * 200, "no value"),
])
def test_a_target_that_fits_no_task_is_one_line_naming_it(tmp_path, values, words):
    with pytest.raises(InputError, match=words) as caught:
        infer_task(pd.Series(values, dtype=object if values[0] is None else None),
                   _table(tmp_path / "t.parquet", "y"))
    assert caught.value.field == "target" and "\n" not in str(caught.value)


def test_only_the_rows_the_nan_rule_keeps_are_used_and_text_targets_need_classification(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=300), "city": rng.choice(["a", "b"], 300),
                          "y": rng.choice(["up", "down"], 300)})
    frame.loc[[3, 50, 51], "x"] = np.nan
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    own = read_own_table(_table(path, "y", categorical=("city",), nan="drop"), None)
    assert own.task == "classification" and own.rows == 297 and own.raw_rows == 300 and own.features == 2
    assert not own.frame["x"].isna().any() and own.classes == 2
    with pytest.raises(InputError, match="fits no regression") as caught:
        read_own_table(_table(path, "y", categorical=("city",), nan="drop"), "regression")
    assert caught.value.field == "task"
    with pytest.raises(InputError, match="3 rows with missing") as caught:
        read_own_table(_table(path, "y", categorical=("city",)), None)
    assert caught.value.field == "nan"


def test_a_stratified_subsample_keeps_each_class_share_and_two_rows_of_a_rare_one():
    y = np.array([0] * 900 + [1] * 97 + [2] * 3)
    rows = subsample_rows(y, 100, stratified=True)
    counts = np.bincount(y[rows], minlength=3)
    assert len(rows) == 100 and len(set(rows)) == 100 and list(rows) == sorted(rows)
    assert counts[2] == 2 and abs(counts[1] - 9.7) <= 1 and counts.sum() == 100
    plain = subsample_rows(np.zeros(1000), 100, stratified=False)
    assert len(set(plain)) == 100 and subsample_rows(y, 5000, True).tolist() == list(range(1000))


def test_the_subsample_file_has_the_tables_name_and_is_reused(tmp_path):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"x": rng.normal(size=400), "y": rng.normal(size=400)})
    path = tmp_path / "sales.parquet"
    frame.to_parquet(path)
    own = read_own_table(_table(path, "y"), None)
    first = subsample_file(own, 150, root=tmp_path / "cache")
    assert first.name == "sales.parquet" and len(pd.read_parquet(first)) == 150
    stamp = first.stat().st_mtime_ns
    assert subsample_file(own, 150, root=tmp_path / "cache") == first and first.stat().st_mtime_ns == stamp
