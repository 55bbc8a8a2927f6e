"""Downloads of real datasets, against a real HTTP server on loopback (no other network)."""

from __future__ import annotations

import gzip
import hashlib
import socket

import numpy as np
import psutil
import pytest
from conftest import main_here, run_cli, serving_folder, store_runs, write

from mlcompare.config.cards import load_cards, parse_card
from mlcompare.data import download
from mlcompare.data.cache import DatasetSpec, load_split, materialise
from mlcompare.errors import InputError

ROWS = "\n".join(f"{i % 3},{i * 0.5},{(i * 7) % 11}" for i in range(90)) + "\n"


@pytest.fixture
def server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving a folder with one small gzipped CSV."""
    served = tmp_path / "served"
    served.mkdir()
    (served / "small.csv.gz").write_bytes(gzip.compress(ROWS.encode(), mtime=0))
    with serving_folder(served) as url:
        yield url, served


def _card(url: str, sha256: str | None, retries: int = 0):
    return parse_card({"name": "small", "task": "classification", "rows": 90, "features": 2,
                       "source": {"url": f"{url}/small.csv.gz", "sha256": sha256, "filename": "small.csv.gz",
                                  "retries": retries},
                       "format": {"type": "csv", "header": False}, "target": "0", "licence": "test"},
                      "datasets/small.yaml")


def _sha(served) -> str:
    return hashlib.sha256((served / "small.csv.gz").read_bytes()).hexdigest()


def test_download_verify_cache_and_use(server, tmp_path):
    url, served = server
    card = _card(url, _sha(served))
    root = tmp_path / "cache"
    path = download.fetch(card, root)
    assert path == root / "downloads" / "small.csv.gz" and download.verify(card, root) == "ok"
    (served / "small.csv.gz").unlink()  # the server no longer has it: the cache answers
    assert download.fetch(card, root) == path
    arrays = load_split(materialise(DatasetSpec("small", None, 2, kind="card", table=card), root))
    assert arrays["X_train"].shape[1] == 2 and set(np.unique(arrays["y_train"])) == {0, 1, 2}


def test_checksum_mismatch_caches_nothing(server, tmp_path):
    url, _ = server
    card = _card(url, "0" * 64)
    with pytest.raises(InputError) as err:
        download.fetch(card, tmp_path)
    assert err.value.field == "source.sha256" and "expected 000" in err.value.message
    assert "nothing was cached" in err.value.message
    assert not (tmp_path / "downloads" / "small.csv.gz").exists()


def test_unreachable_url_says_where_to_put_the_file(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    card = _card(f"http://127.0.0.1:{port}", "a" * 64)
    with pytest.raises(InputError) as err:
        download.fetch(card, tmp_path)
    assert err.value.field == "source.url"
    assert f"http://127.0.0.1:{port}/small.csv.gz" in err.value.message
    assert str(tmp_path / "downloads" / "small.csv.gz") in err.value.message


def test_a_file_placed_by_hand_is_used_offline(server, tmp_path):
    url, served = server
    card = _card("http://127.0.0.1:9", _sha(served))  # unreachable, but the file is already there
    (tmp_path / "downloads").mkdir()
    (tmp_path / "downloads" / "small.csv.gz").write_bytes((served / "small.csv.gz").read_bytes())
    assert download.fetch(card, tmp_path) == tmp_path / "downloads" / "small.csv.gz"


def test_unpublished_checksum_must_be_pinned_on_purpose(server, tmp_path):
    url, served = server
    card = _card(url, None)
    with pytest.raises(InputError, match="fetch small --pin"):
        download.fetch(card, tmp_path)
    download.fetch(card, tmp_path, pin=True)
    assert download.pinned_hash(card, tmp_path) == _sha(served)
    # the source changes afterwards: the pin catches it
    (tmp_path / "downloads" / "small.csv.gz").unlink()
    (served / "small.csv.gz").write_bytes(gzip.compress(b"9,9,9\n", mtime=0))
    with pytest.raises(InputError, match="nothing was cached"):
        download.fetch(card, tmp_path)


def _cards_folder(root, url: str, sha256: str):
    """A cards folder holding one card, `small`, for the served CSV with this checksum."""
    cards = root / "cards"
    cards.mkdir()
    (cards / "small.yaml").write_text(
        f"name: small\ntask: classification\nrows: 90\nfeatures: 2\nlicence: test\ntarget: '0'\n"
        f"source: {{url: '{url}/small.csv.gz', sha256: '{sha256}', retries: 0}}\n"
        "format: {type: csv, header: false}\n")
    return cards


def test_datasets_commands(server, tmp_path):
    url, served = server
    cards = _cards_folder(tmp_path, url, _sha(served))
    env = {"MLCOMPARE_CARDS_DIR": str(cards), "MLCOMPARE_DATA_DIR": str(tmp_path / "data")}
    listed = run_cli("datasets", "list", env=env)
    assert listed.returncode == 0 and "small" in listed.stdout and "download missing" in listed.stdout
    fetched = run_cli("datasets", "fetch", "small", env=env)
    assert fetched.returncode == 0, fetched.stderr
    assert run_cli("datasets", "verify", "small", env=env).stdout.strip() == "download small: ok"
    (tmp_path / "data" / "downloads" / "small.csv.gz").write_bytes(b"tampered")
    tampered = run_cli("datasets", "verify", "small", env=env)
    assert tampered.returncode == 1 and "MISMATCH" in tampered.stdout
    unknown = run_cli("datasets", "fetch", "nope", env=env)
    assert unknown.returncode == 2 and "unknown dataset 'nope'" in unknown.stderr
    cleaned = run_cli("datasets", "clean", "--downloads", env=env)
    assert cleaned.returncode == 0 and not (tmp_path / "data" / "downloads").exists()


def _fake_rows(card, rows: int = 40):
    """A small table shaped like the card's source: its columns, target and categoricals."""
    import pandas as pd

    rng = np.random.default_rng(0)
    names = list(card.columns) or [str(i) for i in range(card.features + 1)]
    frame = pd.DataFrame(rng.normal(size=(rows, len(names))).round(3), columns=names)
    for column in card.categorical:
        frame[column] = rng.choice(["AA", "BB", "CC"], rows)
    if card.tasks[0] == "classification":
        frame[card.target] = rng.integers(0, 3, rows) * (40 if card.target_above is not None else 1)
    return frame


def _write_like_the_source(card, folder) -> None:
    """The card's file, in the card's format and compression, written from a small table."""
    import bz2
    import io
    import tarfile
    import zipfile

    path = folder / card.filename
    frame = _fake_rows(card)
    if card.fmt == "libsvm":
        lines = [f"{1 if i % 2 else -1} 1:{i * 0.1:.3f} {card.features}:{0.5 + i:.3f}" for i in range(40)]
        path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
        return
    text = frame.to_csv(index=False, header=card.header).encode()
    if card.member and card.filename.endswith(".zip"):
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(card.member, text)
    elif card.member:
        with tarfile.open(path, "w:gz") as archive:
            info = tarfile.TarInfo(card.member)
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text))
    elif card.filename.endswith(".gz"):
        path.write_bytes(gzip.compress(text, mtime=0))
    elif card.filename.endswith(".bz2"):
        path.write_bytes(bz2.compress(text))
    else:
        path.write_bytes(text)


DOWNLOADED_CARDS = sorted(name for name, card in load_cards().items() if card.url)


@pytest.mark.parametrize("name", DOWNLOADED_CARDS)
def test_every_download_card_reads_its_format_over_loopback(server, tmp_path, name):
    """Each card's whole path on a small stand-in of its file: download, verify, unpack, encode."""
    import dataclasses

    url, served = server
    card = load_cards()[name]
    _write_like_the_source(card, served)
    sha = hashlib.sha256((served / card.filename).read_bytes()).hexdigest()
    local = dataclasses.replace(card, url=f"{url}/{card.filename}", sha256=sha, retries=0)
    spec = DatasetSpec(name, None, card.features, kind="card", table=local)
    arrays = load_split(materialise(spec, tmp_path))
    assert arrays["X_train"].shape[1] == card.features
    assert arrays["X_train"].dtype == np.float32 and np.isfinite(arrays["X_train"]).all()
    if card.tasks[0] == "classification":
        labels = np.unique(np.concatenate([arrays["y_train"], arrays["y_test"]]))
        assert labels.tolist() == list(range(len(labels))) and len(labels) >= 2
    assert download.verify(local, tmp_path) == "ok"


def test_a_checksum_mismatch_met_while_the_store_opens_is_one_line_and_writes_no_run(server, workdir, monkeypatch,
                                                                                     forked_pids):
    """The datasets are made by a forked child while the store opens: its input error is
    still the one-line error of the experiment's dataset, and no case runs or is written."""
    url, _ = server
    monkeypatch.setenv("MLCOMPARE_CARDS_DIR", str(_cards_folder(workdir, url, "0" * 64)))
    experiment = write(workdir / "e.yaml", "name: e\nrepeats: 1\nrounds: 1\ndatasets: [{dataset: small}]\n"
                                           "pairings: [random_forest]\nimplementations: [sklearn]\n")
    code, out, err = main_here("run", str(experiment), "--quiet")
    last = err.splitlines()[-1]  # after MLflow's own lines on creating the store, when it creates it
    assert code == 2 and out == "" and all("INFO mlflow" in line for line in err.splitlines()[:-1])
    assert last.startswith("mlcompare: error: ") and "small.yaml: source.sha256: " in last and "expected 000" in last
    assert store_runs("e") == [] and len(forked_pids) == 1 and not psutil.pid_exists(forked_pids[0])
