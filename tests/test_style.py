"""`ruff check` on the whole tree and `mypy` on the package, with the configuration in pyproject.toml:
clean, in CI too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _ruff() -> list[str]:
    here = Path(sys.executable).with_name("ruff")  # installed by the dev extra beside this Python
    found = str(here) if here.exists() else shutil.which("ruff")
    assert found, "ruff is not installed: pip install -e '.[dev]'"
    return [found]


def test_ruff_is_clean_on_the_whole_tree():
    result = subprocess.run([*_ruff(), "check", "--output-format", "concise", "."], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean_on_the_package():
    here = Path(sys.executable).with_name("mypy")  # installed by the dev extra beside this Python
    found = str(here) if here.exists() else shutil.which("mypy")
    assert found, "mypy is not installed: pip install -e '.[dev]'"
    result = subprocess.run([found, "--cache-dir", str(REPO / ".mypy_cache")], cwd=REPO, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
