"""`mlcompare --version`: the installed distribution's version, written once (pyproject.toml)."""

from __future__ import annotations

from importlib import metadata

from conftest import main_here

import mlcompare


def test_version_prints_the_installed_version():
    code, out, _ = main_here("--version")
    assert code == 0
    assert out.strip() == f"mlcompare {metadata.version('mlcompare')}"
    assert mlcompare.__version__ == metadata.version("mlcompare")
