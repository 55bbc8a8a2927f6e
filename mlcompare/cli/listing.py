"""`mlcompare list`: every pairing and implementation, and whether each can run here."""

from __future__ import annotations

import argparse

from mlcompare.cli.command import Command, register
from mlcompare.cli.flags import add_pairing_flags


@register
class List(Command):
    name = "list"
    help = "every pairing and implementation, and whether it can run here"
    order = 30

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add_pairing_flags(parser)

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from mlcompare.config.selection import build_catalog
        from mlcompare.measure.capability import skip_reason
        from mlcompare.pairings.imports import allowed_modules

        catalog, _ = build_catalog(allowed_modules(args.allow_module), args.pairings)
        runnable = total = 0
        for pairing in sorted(catalog.values(), key=lambda p: (p.task, p.name)):
            origin = f"; plugin {pairing.plugin}" if pairing.plugin else ""
            print(f"{pairing.name} ({pairing.task}; metrics: {', '.join(pairing.metrics)}{origin})")
            for impl in pairing.implementations.values():
                reason = skip_reason(impl.library, impl.device, pairing.estimator_params(impl), impl.distributed)
                mark = "baseline, " if impl.name == pairing.baseline else ""
                state = f"cannot run here: {reason}" if reason else "can run here"
                under = f" under {impl.accelerator}" if impl.accelerator else ""
                under += f" on {impl.distributed}" if impl.distributed else ""
                print(f"  {impl.name:<16} {impl.device}  {impl.estimator}{under}  ({mark}{state})")
                total += 1
                runnable += reason is None
        print(f"{len(catalog)} pairings, {total} implementations, {runnable} can run here")
        return 0
