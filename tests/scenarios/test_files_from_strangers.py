"""Experiment, pairing and card files from someone else are data: they never run code, never
widen their own permissions and never write outside the dataset cache.

Each test plants a marker that running the file's code would create (or a file that a climb
out of the cache would write) and checks, after `mlcompare validate` and `mlcompare run`
refused the file with one line and exit 2, that it is not there and that no run was written.
"""

from __future__ import annotations

import hashlib
import io
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import no_runs, run_cli, serving_folder, write

ROWS = "".join(f"{i % 2},{i * 0.5},{(i * 7) % 11}\n" for i in range(80))

#: A module a stranger's file names: calling any of its things leaves the marker.
KIT = '''\
import os


def _leave_marker(*args, **kwargs):
    with open(os.environ["STRANGER_MARKER"], "w") as out:
        out.write("ran")


def write_marker(*args, **kwargs):
    _leave_marker()


class NotAnEstimator:
    """A class with no fit: building it runs its constructor."""

    def __init__(self, *args, **kwargs):
        _leave_marker()


from strangers_kit import tools  # noqa: E402  (a module, named as if it were a class)
'''


def _experiment(estimator: str, params: str = "{}", extra: str = "") -> str:
    return f"""\
name: stranger
rounds: 1
{extra}datasets: [{{generator: regression, n_samples: 200, n_features: 4}}]
pairings:
  - name: theirs
    task: regression
    implementations: {{x: {{estimator: {estimator}, device: cpu, params: {params}}}}}
"""


def _refused(workdir: Path, args: list[str], env: dict, marker: Path) -> list[str]:
    """`validate` and `run` of the same file: both exit 2 with one line per mistake, run nothing,
    write no run; the lines of `run`."""
    lines: list[str] = []
    for command in ("validate", "run"):
        result = run_cli(command, *args, cwd=workdir, env=env)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert lines and all(line.startswith("mlcompare: error: ") for line in lines), result.stderr
        assert not marker.exists(), f"{command} ran the file's code"
    assert no_runs(workdir)
    return lines


@pytest.fixture
def marker(workdir) -> Path:
    return workdir / "MARKER"


def test_an_experiment_cannot_grant_itself_a_module(workdir, marker):
    """`allowed_modules: [subprocess]` and `subprocess.Popen` as an estimator: refused at once,
    naming the flag that would grant it, and the command never runs."""
    command = f"[{sys.executable}, -c, 'open(r\"{marker}\", \"w\")']"
    write(workdir / "e.yaml", _experiment("subprocess.Popen", f"{{args: {command}}}",
                                          extra="allowed_modules: [subprocess]\n"))
    lines = _refused(workdir, ["e.yaml"], {}, marker)
    asked = next(line for line in lines if "allowed_modules[0]" in line)
    assert asked.startswith("mlcompare: error: e.yaml: allowed_modules[0]: 'subprocess' is not granted")
    assert "--allow-module subprocess" in asked and "MLCOMPARE_ALLOWED_MODULES=subprocess" in asked
    assert any("pairings[0].implementations.x.estimator" in line for line in lines)
    # granted by the person running, Popen is still no estimator: refused, nothing run
    lines = _refused(workdir, ["e.yaml", "--allow-module", "subprocess"], {}, marker)
    assert lines == ["mlcompare: error: e.yaml: pairings[0].implementations.x.estimator: 'subprocess.Popen' "
                     "is a class without a fit method, not an estimator"]


@pytest.mark.parametrize("path,why", [("strangers_kit.write_marker", "is a function, not an estimator class"),
                                      ("strangers_kit.tools", "is a module, not an estimator class"),
                                      ("strangers_kit.NotAnEstimator", "is a class without a fit method, "
                                                                       "not an estimator")])
def test_under_an_allowed_module_only_an_estimator_class_is_taken(workdir, marker, path, why):
    kit = workdir / "kit" / "strangers_kit"
    kit.mkdir(parents=True)
    (kit / "__init__.py").write_text(KIT)
    (kit / "tools.py").write_text("")
    write(workdir / "e.yaml", _experiment(path))
    env = {"PYTHONPATH": str(workdir / "kit"), "STRANGER_MARKER": str(marker)}
    lines = _refused(workdir, ["e.yaml", "--allow-module", "strangers_kit"], env, marker)
    assert lines == [f"mlcompare: error: e.yaml: pairings[0].implementations.x.estimator: {path!r} {why}"]


def test_a_scikit_learn_function_is_refused_before_it_is_ever_called(workdir):
    """`sklearn.datasets.clear_data_home` deletes scikit-learn's data folder when called."""
    home = workdir / "sklearn-data"
    home.mkdir()
    (home / "kept.txt").write_text("still here")
    write(workdir / "e.yaml", _experiment("sklearn.datasets.clear_data_home", "{data_home: " + str(home) + "}"))
    lines = _refused(workdir, ["e.yaml"], {"SCIKIT_LEARN_DATA": str(home)}, workdir / "never")
    assert lines == ["mlcompare: error: e.yaml: pairings[0].implementations.x.estimator: "
                     "'sklearn.datasets.clear_data_home' is a function, not an estimator class"]
    assert (home / "kept.txt").read_text() == "still here"


# -- dataset cards -------------------------------------------------------------------------------

def _card_experiment(workdir: Path) -> Path:
    return write(workdir / "e.yaml", """\
        name: stranger
        rounds: 1
        datasets: [{dataset: theirs}]
        pairings: [random_forest]
        implementations: [sklearn]
        """)


def _card(cards: Path, url: str, sha256: str, filename: str | None = None, member: str | None = None) -> None:
    source = f"url: {url}, sha256: {sha256}" + (f", filename: '{filename}'" if filename else "")
    fmt = "type: csv, header: false" + (f", member: '{member}'" if member else "")
    write(cards / "theirs.yaml", f"""\
        name: theirs
        source: {{{source}}}
        format: {{{fmt}}}
        task: classification
        target: "0"
        """)


@pytest.fixture
def served(workdir):
    """A real HTTP server on loopback serving `served/`; the cards folder; the dataset cache."""
    folder = workdir / "served"
    folder.mkdir()
    (folder / "rows.csv").write_text(ROWS)
    cards = workdir / "cards"
    cards.mkdir()
    _card_experiment(workdir)
    with serving_folder(folder) as url:
        yield url, folder, cards, {"MLCOMPARE_CARDS_DIR": str(cards)}


def _errors(stderr: str) -> list[str]:
    """The error lines (pooch says what it downloads; MLflow that it created the store)."""
    return [line for line in stderr.splitlines() if line.startswith("mlcompare: ")]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_a_card_with_a_plain_file_name_downloads_into_the_cache(workdir, served):
    """The control of the tests below: the same card, named plainly, is fetched and runs."""
    url, folder, cards, env = served
    _card(cards, f"{url}/rows.csv", _sha(folder / "rows.csv"), filename="rows.csv")
    result = run_cli("run", "e.yaml", "--quiet", cwd=workdir, env=env)
    assert result.returncode == 0, result.stderr
    assert (workdir / "data" / "downloads" / "rows.csv").read_text() == ROWS


@pytest.mark.parametrize("filename", ["../../../escaped.csv", "/tmp/escaped-by-a-card.csv", "sub/escaped.csv",
                                      ".."])
def test_a_card_whose_file_name_leaves_the_cache_is_refused(workdir, served, filename):
    url, folder, cards, env = served
    _card(cards, f"{url}/rows.csv", _sha(folder / "rows.csv"), filename=filename)
    before = _files_under(workdir)
    lines = _refused(workdir, ["e.yaml"], env, workdir / "never")
    assert lines == [f"mlcompare: error: {cards / 'theirs.yaml'}: source.filename: {filename!r} is not a plain "
                     "file name (no folders, '..', '~' or '/'): it must stay inside the cache"]
    assert _files_under(workdir) == before and not Path("/tmp/escaped-by-a-card.csv").exists()


def test_a_url_whose_last_part_climbs_out_needs_a_file_name(workdir, served):
    url, folder, cards, env = served
    _card(cards, f"{url}/..", _sha(folder / "rows.csv"))
    lines = _refused(workdir, ["e.yaml"], env, workdir / "never")
    assert lines == [f"mlcompare: error: {cards / 'theirs.yaml'}: source.url: its last part '..' is not a plain "
                     "file name inside the cache: set source.filename"]


@pytest.mark.parametrize("member", ["../rows.csv", "/etc/hostname", "a/../../rows.csv"])
def test_an_archive_member_outside_the_archive_is_refused(workdir, served, member):
    url, folder, cards, env = served
    _card(cards, f"{url}/rows.csv", _sha(folder / "rows.csv"), filename="rows.tar", member=member)
    lines = _refused(workdir, ["e.yaml"], env, workdir / "never")
    assert lines == [f"mlcompare: error: {cards / 'theirs.yaml'}: format.member: {member!r} is not a relative "
                     "path inside the archive (no '..', drive or leading '/')"]


def _tar_with_link(path: Path, target: str) -> None:
    with tarfile.open(path, "w") as archive:
        link = tarfile.TarInfo("rows.csv")
        link.type, link.linkname = tarfile.SYMTYPE, target
        archive.addfile(link)


def _zip_with_link(path: Path, target: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        info = zipfile.ZipInfo("rows.csv")
        info.external_attr = (0o120777 << 16)  # a symbolic link, as `zip --symlinks` stores one
        archive.writestr(info, target)


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_an_archive_member_that_is_a_link_is_refused(workdir, served, kind):
    """A link inside the archive could name any file of the machine: only a regular file is read,
    and nothing is extracted."""
    url, folder, cards, env = served
    outside = workdir / "outside.csv"
    outside.write_text(ROWS)
    archive = folder / f"rows.{kind}"
    (_tar_with_link if kind == "tar" else _zip_with_link)(archive, str(outside))
    _card(cards, f"{url}/rows.{kind}", _sha(archive), member="rows.csv")
    result = run_cli("run", "e.yaml", cwd=workdir, env=env)
    assert result.returncode == 2, result.stderr
    assert _errors(result.stderr) == [
        f"mlcompare: error: {cards / 'theirs.yaml'}: format.member: 'rows.csv' in rows.{kind} is a link or a "
        "folder, not a file: refused"]
    assert no_runs(workdir)
    downloads = workdir / "data" / "downloads"
    assert sorted(p.name for p in downloads.iterdir()) == [f"rows.{kind}"]  # the archive only: nothing extracted


def test_a_link_in_the_cache_that_leaves_it_is_refused(workdir, served):
    """A download's name that is a link to a file outside the cache is neither written through
    nor read."""
    url, folder, cards, env = served
    outside = workdir / "outside.csv"
    outside.write_text("not rows\n")
    downloads = workdir / "data" / "downloads"
    downloads.mkdir(parents=True)
    (downloads / "rows.csv").symlink_to(outside)
    _card(cards, f"{url}/rows.csv", _sha(folder / "rows.csv"), filename="rows.csv")
    result = run_cli("run", "e.yaml", cwd=workdir, env=env)
    assert result.returncode == 2, result.stderr
    assert _errors(result.stderr) == [
        f"mlcompare: error: {cards / 'theirs.yaml'}: source.filename: 'rows.csv' would be written outside the "
        f"dataset cache ({downloads}): refused"]
    assert outside.read_text() == "not rows\n" and no_runs(workdir)


def test_the_bytes_of_a_member_that_is_a_file_are_read_in_memory(workdir, served):
    """The control of the link test: a regular member of a tar archive is read, nothing extracted."""
    url, folder, cards, env = served
    archive = folder / "rows.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("data/rows.csv")
        info.size = len(ROWS)
        tar.addfile(info, io.BytesIO(ROWS.encode()))
    _card(cards, f"{url}/rows.tar", _sha(archive), member="data/rows.csv")
    result = run_cli("run", "e.yaml", "--quiet", cwd=workdir, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (workdir / "data" / "downloads").iterdir()) == ["rows.tar"]
