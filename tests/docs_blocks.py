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


_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def documents() -> list[str]:
    """Every page of the documentation, as paths relative to the repository."""
    pages = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
    return ["README.md", *pages, "bench/README.md", "datasets/README.md"]


def fenced(doc: str) -> list[tuple[str, str, int]]:
    """(language, text, line number) of every fenced block, those indented inside a list item
    too (their indentation taken off), in order; a block without a language has ''. Unlike
    `blocks`, nothing is left out."""
    lines = (REPO / doc).read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, lang, start = opening.group(1), opening.group(2), i + 1
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i == len(lines):
            raise ValueError(f"{doc}:{start}: a fenced block is never closed")
        out.append((lang, "\n".join(body) + "\n", start))
        i += 1
    return out
