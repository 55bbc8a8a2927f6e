"""The documentation holds to what it shows: a short README, links that resolve, every code
block exercised (YAML parsed and experiment and pairing files validated by the project's own
loaders, Python compiled and run, every `mlcompare` command line parsed by the real parser),
every registered plot documented, and docs/cli.md exactly what its generator prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO
from docs_blocks import documents, fenced, files

DOCS = documents()
LANGUAGES = {"yaml", "python", "sh", "text", "toml"}
#: Paths of these folders named anywhere in the docs must exist (mlcompare/ paths are left to
#: tests/test_layout.py and the package's own renames).
CHECKED_FOLDERS = ("tests", "bench", "experiments", "datasets")


def _prose(doc: str) -> str:
    """The page without its fenced blocks and inline code spans."""
    text = (REPO / doc).read_text()
    text = re.sub(r"^\s*```.*?^\s*```\s*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(doc: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"^\s*```.*?^\s*```\s*$", "", (REPO / doc).read_text(), flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, re.M)}


def test_the_readme_is_short_and_narrow():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (at most 250)"
    wide = [(n, len(line)) for n, line in enumerate(lines, 1) if len(line) > 100]
    assert not wide, f"README.md lines over 100 characters (line, length): {wide}"


def test_every_docs_page_is_checked_and_indexed():
    index = (REPO / "docs" / "README.md").read_text()
    for page in (REPO / "docs").glob("*.md"):
        assert page.relative_to(REPO).as_posix() in DOCS
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_relative_link_resolves(doc):
    base = (REPO / doc).parent
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(doc)):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        page = (base / path).resolve() if path else REPO / doc
        if not page.exists():
            bad.append(f"{target}: no such file")
        elif anchor and page.suffix == ".md" and anchor not in _anchors(page.relative_to(REPO).as_posix()):
            bad.append(f"{target}: no heading with that anchor")
    assert not bad, f"{doc}: {bad}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_the_docs_name_exists(doc):
    text = (REPO / doc).read_text()
    named = set(re.findall(rf"(?<![\w./-])((?:{'|'.join(CHECKED_FOLDERS)})/[\w./-]*\w\.(?:py|yaml|md))", text))
    written = set(files(doc))  # files a page's own blocks write (kernel_ridge.yaml)
    missing = sorted(p for p in named if not (REPO / p).exists() and p not in written)
    assert not missing, f"{doc} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_block_says_its_language(doc):
    unknown = [(line, lang) for lang, _, line in fenced(doc) if lang not in LANGUAGES]
    assert not unknown, f"{doc}: blocks (line, language) outside {sorted(LANGUAGES)}: {unknown}"


def _kind(data: object) -> str:
    if isinstance(data, dict) and {"name", "task", "implementations"} <= data.keys():
        return "pairing"
    if isinstance(data, dict) and {"name", "datasets"} <= data.keys():
        return "experiment"
    return "fragment"


def test_yaml_blocks_parse_and_experiment_and_pairing_files_validate(tmp_path, monkeypatch):
    from mlcompare.config.estimators import check_pairing
    from mlcompare.config.experiment import load_experiment
    from mlcompare.config.pairing import parse_pairing

    monkeypatch.setenv("MLCOMPARE_DATA_DIR", str(tmp_path / "data"))
    checked = {"pairing": 0, "experiment": 0, "fragment": 0}
    for doc in DOCS:
        folder = tmp_path / doc.replace("/", "_")
        folder.mkdir()
        for name, text in files(doc).items():  # the files a page writes, side by side as it says
            (folder / name).write_text(text)
        for number, (lang, text, line) in enumerate(fenced(doc)):
            if lang != "yaml":
                continue
            where = f"{doc}:{line}"
            data = yaml.safe_load(text)
            assert isinstance(data, dict), f"{where}: not a mapping"
            kind = _kind(data)
            checked[kind] += 1
            if kind == "pairing":
                check_pairing(parse_pairing(data, where))
            elif kind == "experiment":
                path = folder / f"block{number}.yaml"
                path.write_text(text)
                assert load_experiment(path).cases(), where
    # the classification above must keep finding the documented files
    assert checked["pairing"] >= 2 and checked["experiment"] >= 5, checked


def test_toml_blocks_parse():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    found = 0
    for doc in DOCS:
        for lang, text, line in fenced(doc):
            if lang == "toml":
                tomllib.loads(text)
                found += 1
    assert found


def test_python_blocks_compile_and_run(tmp_path):
    """Every block is compiled; each runs in a fresh Python in an empty folder with a store of
    its own, in which the MLflow experiments it looks up exist (empty). The store is MLflow's
    file store: creating and migrating a SQLite one would take most of this file's time."""
    ran = 0
    for doc in DOCS:
        for lang, text, line in fenced(doc):
            if lang != "python":
                continue
            compile(text, f"{doc}:{line}", "exec")
            work = tmp_path / f"run{ran}"
            work.mkdir()
            setup = "".join(f"MlflowClient().create_experiment({name!r})\n"
                            for name in re.findall(r"get_experiment_by_name\(\"([^\"]+)\"\)", text))
            if setup:
                setup = "from mlflow.tracking import MlflowClient\n" + setup
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                   "MLFLOW_TRACKING_URI": (work / "mlruns").as_uri(), "MLFLOW_ALLOW_FILE_STORE": "true"}
            for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
                env.pop(var, None)
            result = subprocess.run([sys.executable, "-c", setup + text], cwd=work, env=env,
                                    capture_output=True, text=True, timeout=120)
            assert result.returncode == 0, f"{doc}:{line}\n{result.stderr[-2000:]}"
            ran += 1
    assert ran >= 2


#: Shell words after which a command line ends (a redirection, a pipe, the next command).
_ENDS = {">", ">>", "2>", "|", "&&", "||", ";"}


def _sh_commands(doc: str) -> list[tuple[int, list[str]]]:
    """(line, words) of every command of the shell blocks: `\\` continuations joined,
    comments dropped, cut where a redirection, a pipe or the next command starts."""
    out = []
    for lang, text, line in fenced(doc):
        if lang != "sh":
            continue
        logical, start = "", 0
        for offset, raw in enumerate(text.splitlines()):
            start = start if logical else line + 1 + offset
            if raw.rstrip().endswith("\\"):
                logical += raw.rstrip()[:-1] + " "
                continue
            words = shlex.split(logical + raw, comments=True)
            logical = ""
            end = next((i for i, w in enumerate(words) if w in _ENDS), len(words))
            if words[:end]:
                out.append((start, words[:end]))
    return out


def _mlcompare_lines(doc: str) -> list[tuple[int, list[str]]]:
    return [(line, words[1:]) for line, words in _sh_commands(doc) if Path(words[0]).name == "mlcompare"]


def test_every_mlcompare_command_line_parses_and_names_files_that_exist(capsys):
    from mlcompare.cli import build_parser, parse
    from mlcompare.cli.flags import explicit_booleans

    parser = build_parser()
    seen = 0
    for doc in DOCS:
        written = set(files(doc))
        for line, argv in _mlcompare_lines(doc):
            where = f"{doc}:{line}: mlcompare {' '.join(argv)}"
            try:
                args = parse(parser, explicit_booleans(argv))
            except SystemExit as exc:  # --version and --help end here too, with 0
                assert exc.code == 0, f"{where}: {capsys.readouterr().err.strip()}"
                continue
            seen += 1
            named = [*([args.experiment] if args.command in ("run", "validate") else []),
                     *(getattr(args, "pairings", None) or [])]
            for path in filter(None, named):
                assert (REPO / path).exists() or path in written, f"{where}: {path} does not exist"
    assert seen >= 20, seen


def test_mlflow_run_lines_name_experiment_files_that_exist():
    seen = 0
    for doc in DOCS:
        for line, words in _sh_commands(doc):
            for flag, value in zip(words, words[1:]):
                if flag == "-P" and value.startswith("experiment="):
                    assert (REPO / value.partition("=")[2]).exists(), f"{doc}:{line}: {value}"
                    seen += 1
    assert seen


def test_every_registered_plot_is_documented():
    from mlcompare.report.plots import PLOTS

    page = (REPO / "docs" / "reading-results.md").read_text()
    missing = [name for name in PLOTS if f"`plots/{name}`" not in page]
    assert not missing, f"plots registered in PLOTS but not named in docs/reading-results.md: {missing}"


def test_the_cli_reference_is_what_the_parser_says():
    from mlcompare.cli.docs import render

    assert (REPO / "docs" / "cli.md").read_text() == render(), (
        "docs/cli.md is out of date: python -m mlcompare.cli.docs > docs/cli.md")
