"""A file written whole or not at all (`data.whole_file`), as the dataset cache, a user's table's
subsamples and the estimators' checks write theirs."""

from __future__ import annotations

import pytest

from mlcompare.data.whole_file import written_whole


def test_the_block_s_file_replaces_the_old_one_in_one_rename_and_nothing_else_is_left(tmp_path):
    path = tmp_path / "checks.json"
    path.write_text("old")
    with written_whole(path, prefix=".checks-", suffix=".json") as temporary:
        assert temporary.parent == tmp_path and temporary.name.startswith(".checks-")
        temporary.write_text("new")
        assert path.read_text() == "old"  # a reader meanwhile sees the old file whole
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checks.json"]


def test_a_block_that_fails_leaves_the_old_file_and_no_part_of_the_new(tmp_path):
    path = tmp_path / "X_train.npy"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt), written_whole(path) as temporary:
        temporary.write_text("half")
        raise KeyboardInterrupt
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X_train.npy"]
