"""Downloads of real datasets through pooch: checksum, cache, retries.

A card with a published sha256 is verified on every download; a file whose hash does not
match is never moved into the cache. A card whose source publishes no hash must be pinned
once on purpose (`mlcompare datasets fetch NAME --pin`): the hash of that first download
is kept in `downloads/pins.json` and every later download is checked against it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from mlcompare.data import paths
from mlcompare.data.tables import TableSource
from mlcompare.errors import InputError


def downloads_dir(root: Path) -> Path:
    return root / "downloads"


def cached_file(table: TableSource, root: Path) -> Path:
    """Where a card's download lives: a plain name in the downloads folder, never a path or a
    link that leaves it (checked again here, whoever made the card)."""
    folder = downloads_dir(root)
    name = cast(str, table.filename)  # a download's card always has one (`cards.Card.to_table`)
    path = paths.inside(folder, name)
    if path is None:
        raise InputError(table.source, "source.filename", f"{name!r} would be written outside the dataset cache "
                         f"({folder}): refused")
    return path


def pinned_hash(table: TableSource, root: Path) -> str | None:
    pins = downloads_dir(root) / "pins.json"
    return json.loads(pins.read_text()).get(table.url) if pins.exists() else None


def expected_hash(table: TableSource, root: Path) -> str | None:
    return table.sha256 or pinned_hash(table, root)


def fetch(table: TableSource, root: Path, pin: bool = False) -> Path:
    """The local path of a card's file, downloaded (and verified) if not cached yet."""
    import pooch
    import requests

    folder = downloads_dir(root)
    known = expected_hash(table, root)
    target = cached_file(table, root)
    if not known and not pin:
        raise InputError(table.source, "source.sha256",
                         f"{table.name}'s source publishes no checksum and none is pinned: run "
                         f"`mlcompare datasets fetch {table.name} --pin` once (or place the file at {target} "
                         "and pin it) to record the hash of a download you trust")
    folder.mkdir(parents=True, exist_ok=True)
    fetcher = pooch.create(path=folder, base_url="", registry={table.filename: f"sha256:{known}" if known else None},
                           urls={table.filename: table.url}, retry_if_failed=table.retries)
    try:
        local = Path(fetcher.fetch(table.filename, downloader=pooch.HTTPDownloader(timeout=60)))
    except ValueError as exc:  # pooch: hash mismatch; the bad download was not kept
        got = str(exc).split("but got ", 1)[-1].split(".", 1)[0] if "but got " in str(exc) else "another value"
        raise InputError(table.source, "source.sha256",
                         f"the download of {table.url} has sha256 {got}, expected {known}; "
                         "nothing was cached") from None
    except (requests.exceptions.RequestException, OSError) as exc:
        reason = type(exc).__name__
        raise InputError(table.source, "source.url",
                         f"cannot download {table.name} from {table.url} ({reason}); to use it offline, "
                         f"place the file by hand at {target}") from None
    if pin and not known:
        _write_pin(table, root, pooch.file_hash(str(local)))
    return local


def verify(table: TableSource, root: Path) -> str:
    """'ok', 'missing' or 'MISMATCH' for a card's cached download."""
    import pooch

    local = cached_file(table, root)
    if not local.exists():
        return "missing"
    known = expected_hash(table, root)
    if not known:
        return "unpinned"
    return "ok" if pooch.file_hash(str(local)) == known else "MISMATCH"


def _write_pin(table: TableSource, root: Path, sha256: str) -> None:
    pins_path = downloads_dir(root) / "pins.json"
    pins = json.loads(pins_path.read_text()) if pins_path.exists() else {}
    pins[table.url] = sha256
    pins_path.write_text(json.dumps(pins, indent=2, sort_keys=True))
