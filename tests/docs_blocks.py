"""Code blocks of the docs, so tests can follow them exactly as a reader would."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(doc: str = "docs/pairings.md") -> list[tuple[str, str]]:
    """(language, text) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer((REPO / doc).read_text())]


def files(doc: str = "docs/pairings.md") -> dict[str, str]:
    """Blocks whose first line is a comment naming a file (`# kernel_ridge.yaml`): name -> text."""
    out = {}
    for _, text in blocks(doc):
        first = text.splitlines()[0]
        match = re.match(r"^# (\S+\.(?:yaml|py|toml))\b", first)
        if match:
            out[match.group(1)] = text
    return out


def commands(doc: str = "docs/pairings.md") -> list[str]:
    """Every `mlcompare ...` line of the shell blocks, in order."""
    return [line.strip() for lang, text in blocks(doc) if lang == "sh"
            for line in text.splitlines() if line.strip().startswith("mlcompare ")]


def write_files(target: Path, names: list[str], doc: str = "docs/pairings.md") -> None:
    found = files(doc)
    for name in names:
        (target / name).write_text(found[name])
