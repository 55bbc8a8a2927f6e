"""The registry of subcommands: each module of this package registers its own (asv's pattern).

Adding a command is one new module here with a `Command` subclass decorated `@register`:
`mlcompare.cli.build_parser` finds it. A command module imports what it needs inside
`run`, so that a bad command line never pays for pandas, MLflow or the estimators.
"""

from __future__ import annotations

import argparse
from typing import ClassVar

#: name -> command class, filled as the command modules are imported.
COMMANDS: dict[str, type[Command]] = {}


class Command:
    """One `mlcompare NAME ...` subcommand."""

    name: ClassVar[str]
    help: ClassVar[str]
    description: ClassVar[str | None] = None
    order: ClassVar[int] = 100  # position in `mlcompare --help`
    #: runs suites: its start-up (`mlcompare.collector`) lasts until its first case's process
    runs_cases: ClassVar[bool] = False

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Declare the command's flags and positional arguments."""

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        """Do the work; return the exit code. Bad input raises `InputError`."""
        raise NotImplementedError


def register(cls: type[Command]) -> type[Command]:
    """Class decorator: make the command available under its `name`."""
    if cls.name in COMMANDS and COMMANDS[cls.name] is not cls:
        raise ValueError(f"two commands are named {cls.name!r}")
    COMMANDS[cls.name] = cls
    return cls
