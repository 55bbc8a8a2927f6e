"""`mlcompare COMMAND ...`: the command line. Each command is a module of this package.

Bad input of any kind ends in one line on stderr naming the file and field (or the flag),
exit code 2, and nothing written to the tracking store.

Exit codes of `run`: 0 every case ran or was skipped with a reason; 1 a case failed (or
--fail-fast stopped the suite); 2 bad input; 128 + the signal's number when interrupted
(130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import NoReturn

import mlcompare
from mlcompare import collector
from mlcompare.cli.command import COMMANDS
from mlcompare.cli.flags import explicit_booleans
from mlcompare.errors import InputError, one_line

EXIT_BAD_INPUT = 2
#: Modules of this package that hold no command.
_HELPERS = {"command", "docs", "flags"}


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line like every other input error (no usage block)."""

    commands: dict[str, argparse.ArgumentParser]  # name -> the command's own parser (its errors point to its --help)

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):  # "argument --repeats: expected ..." -> "--repeats: expected ..."
            message = message[len("argument "):]
        print(f"mlcompare: error: {one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _discover() -> None:
    """Import every command module of this package: each registers its command."""
    for module in pkgutil.iter_modules(__path__):
        if module.name not in _HELPERS and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def build_parser() -> _Parser:
    _discover()
    parser = _Parser(prog="mlcompare", description="The same classical models on CPU and GPU, measured "
                     "honestly, recorded in MLflow.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {mlcompare.version()}",
                        help="print the installed version (importlib.metadata) and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.commands = {}
    for command in sorted(COMMANDS.values(), key=lambda c: (c.order, c.name)):
        parser.commands[command.name] = sub.add_parser(command.name, help=command.help,
                                                       description=command.description)
        command.add_arguments(parser.commands[command.name])
    return parser


def parse(parser: _Parser, argv: list[str]) -> argparse.Namespace:
    """`parse_args`, but a flag the command does not know is the command's error: its line
    points to `mlcompare COMMAND --help`, where that command's flags are, not to the top's."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        before_command = argv.index(args.command) > argv.index(unknown[0]) if unknown[0] in argv else False
        owner = parser if before_command else parser.commands[args.command]
        owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    collector.starting()
    try:
        argv = explicit_booleans(argv)
    except argparse.ArgumentTypeError as exc:
        # the help named is a command's only where one is on the line: a stray word is not echoed
        _discover()
        command = next((a for a in argv if a in COMMANDS), "")
        print(f"mlcompare: error: {exc} (see mlcompare {command} --help)".replace("  ", " "), file=sys.stderr)
        return EXIT_BAD_INPUT
    args = parse(build_parser(), argv)
    chosen = COMMANDS[args.command]
    if not chosen.runs_cases:  # a suite's start-up ends at its first case (`suite.isolation`)
        collector.started()
    try:
        return chosen.run(args)
    except InputError as exc:
        say_input_error(exc)
        return EXIT_BAD_INPUT
    finally:
        collector.started()


def say_input_error(exc: InputError) -> None:
    """One line on stderr per mistake (a file and the flags may hold several)."""
    for line in str(exc).splitlines():
        print(f"mlcompare: error: {line}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
