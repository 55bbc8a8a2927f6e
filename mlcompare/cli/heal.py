"""`mlcompare heal`: close the runs that suites which died (SIGKILL, out of memory) left RUNNING."""

from __future__ import annotations

import argparse

from mlcompare.cli.command import Command, register


@register
class Heal(Command):
    name = "heal"
    help = "mark KILLED the runs of suites that died without closing them (a SIGKILL, the OOM killer)"
    description = ("A suite records its host and process on its parent run. On this host, a suite whose process "
                   "is gone is dead: its parent run and case runs still RUNNING become KILLED, with the reason "
                   "in the killed_reason tag. `mlcompare run` does this for its own experiment on its own; this "
                   "command does it for any experiment, and for suites of other hosts when you say they are dead.")
    order = 70

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--experiment", action="append", metavar="NAME",
                            help="an MLflow experiment to look in (repeatable; default: every experiment)")
        parser.add_argument("--other-hosts", action="store_true",
                            help="also close RUNNING suites recorded on other hosts (they cannot be checked "
                                 "from here: only when you know they are dead)")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        import sys

        from mlcompare.suite.dead_suites import heal
        from mlcompare.tracking.housekeeping import Housekeeping

        store = Housekeeping(experiment_names=args.experiment)
        closed = heal(store, other_hosts=args.other_hosts, say=lambda line: print(line, file=sys.stderr))
        print(f"mlcompare: {len(closed)} run(s) marked KILLED")
        return 0
