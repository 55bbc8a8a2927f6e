"""`mlcompare datasets list | fetch | verify | clean`: dataset cards and the local cache."""

from __future__ import annotations

import argparse
import shutil

from mlcompare.cli.command import Command, register
from mlcompare.config.cards import load_cards
from mlcompare.data import cache as datasets
from mlcompare.data import download
from mlcompare.data.tables import TableSource
from mlcompare.errors import InputError


@register
class Datasets(Command):
    name = "datasets"
    help = "dataset cards and the local cache"
    order = 40

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="datasets_command", required=True, metavar="ACTION")
        actions.add_parser("list", help="every card, whether its download is cached, and the cached datasets")
        fetch = actions.add_parser("fetch", help="download (and verify) the named cards' files")
        fetch.add_argument("names", nargs="+", metavar="NAME")
        fetch.add_argument("--pin", action="store_true",
                           help="for a card without a published sha256: record this download's hash")
        verify = actions.add_parser("verify", help="check cached downloads and datasets against their hashes")
        verify.add_argument("names", nargs="*", metavar="NAME")
        clean = actions.add_parser("clean", help="delete the prepared datasets (and, with --downloads, the downloads)")
        clean.add_argument("--downloads", action="store_true")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        root = datasets.data_dir()
        actions = {"list": _list, "fetch": _fetch, "verify": _verify, "clean": _clean}
        return actions[args.datasets_command](args, root)


def _cards(names: list[str]) -> list[TableSource]:
    cards = load_cards()
    unknown = [n for n in names if n not in cards]
    if unknown:
        raise InputError("datasets", None, f"unknown dataset {unknown[0]!r} (cards: {', '.join(sorted(cards))})")
    return [cards[n] for n in names] if names else list(cards.values())


def _list(args: argparse.Namespace, root) -> int:
    print(f"cards ({len(load_cards())}), cache {root}:")
    for card in _cards([]):
        shape = f"{card.rows:,}×{card.features}" if card.rows and card.features else "?"
        if card.sklearn:
            where = "bundled with scikit-learn (offline)"
        else:
            where = f"download {download.verify(card, root)}" + ("" if download.expected_hash(card, root)
                                                                 else ", no checksum yet: fetch --pin")
        print(f"  {card.name:<22} {'/'.join(card.tasks):<26} {shape:>16}  {where}")
    entries = datasets.cached_entries(root)
    print(f"prepared datasets ({len(entries)}):")
    for directory, meta in entries:
        size = sum(f.stat().st_size for f in directory.iterdir()) / 2**20
        print(f"  {directory.name}  {meta['label']:<28} {meta['dtype']}  {size:8.1f} MiB")
    return 0


def _fetch(args: argparse.Namespace, root) -> int:
    for card in _cards(args.names):
        if card.sklearn:
            print(f"{card.name}: bundled with scikit-learn, nothing to download")
            continue
        path = download.fetch(card, root, pin=args.pin)
        print(f"{card.name}: {path} (sha256 {download.expected_hash(card, root)})")
    return 0


def _verify(args: argparse.Namespace, root) -> int:
    bad = 0
    for card in _cards(args.names):
        if card.url:
            state = download.verify(card, root)
            bad += state == "MISMATCH"
            print(f"download {card.name}: {state}")
    if not args.names:
        for directory, meta in datasets.cached_entries(root):
            state = "ok" if datasets.content_matches(directory) else "MISMATCH"
            bad += state == "MISMATCH"
            print(f"prepared {meta['label']} ({directory.name}): {state}")
    return 1 if bad else 0


def _clean(args: argparse.Namespace, root) -> int:
    removed = 0
    for directory, _ in datasets.cached_entries(root):
        shutil.rmtree(directory)
        removed += 1
    print(f"removed {removed} prepared datasets from {root}")
    if args.downloads and download.downloads_dir(root).exists():
        shutil.rmtree(download.downloads_dir(root))
        print(f"removed the downloads in {download.downloads_dir(root)}")
    return 0
