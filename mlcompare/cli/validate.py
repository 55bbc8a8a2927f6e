"""`mlcompare validate [EXPERIMENT]`: check an experiment file, or the pairings alone; run nothing."""

from __future__ import annotations

import argparse

from mlcompare.cli.command import Command, register
from mlcompare.cli.flags import add_pairing_flags, add_selection, experiment_from_args


@register
class Validate(Command):
    name = "validate"
    help = "check an experiment file (or only pairings) without running anything"
    order = 20

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add_selection(parser, experiment_required=False)
        add_pairing_flags(parser)

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        if args.experiment is None:
            catalog = _checked_catalog(args)
            print(f"ok: {len(catalog)} pairings ({', '.join(sorted(catalog))})")
            return 0
        experiment = experiment_from_args(args)
        cases = experiment.cases()
        print(f"{experiment.source}: ok: {len(cases)} cases "
              f"({len(experiment.pairings)} pairings, {len(experiment.datasets)} datasets, "
              f"repeats {experiment.repeats})")
        return 0


def _checked_catalog(args: argparse.Namespace) -> dict:
    """The catalog with plugins and --pairings files; installed estimators imported and checked
    (those of the --pairings files only, when given)."""
    from mlcompare.config.estimators import check_pairing
    from mlcompare.config.selection import build_catalog
    from mlcompare.pairings.imports import allowed_modules

    catalog, added = build_catalog(allowed_modules(args.allow_module), args.pairings)
    for pairing in catalog.values():
        if not added or pairing.name in added:  # with --pairings, just those files
            check_pairing(pairing)
    return catalog
