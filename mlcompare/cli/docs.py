"""`python -m mlcompare.cli.docs > docs/cli.md`: the command-line reference, generated from the parser.

Every command, its positional arguments and flags, with the help strings the parser holds,
as Markdown tables (the same on every Python version, unlike argparse's own `--help`
layout). `tests/test_docs.py` fails when the committed docs/cli.md differs from this output,
so a new command or flag is documented by running this again. Not a command itself: the
command registry skips this module.
"""

from __future__ import annotations

import argparse

HEADER = """\
# Command line

Generated from the parser by `python -m mlcompare.cli.docs > docs/cli.md`; do not edit by hand
(`tests/test_docs.py` fails when this file differs from what that command prints). Every
command also answers `--help`.
"""


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def _argument(action: argparse.Action) -> str:
    """How the argument is written: `NAME`, `[NAME ...]`, `--flag VALUE`, `--switch`."""
    if action.nargs == 0:
        shown = ""
    else:
        name = _metavar(action)
        written: dict[int | str | None, str] = {None: name, "?": f"[{name}]", "*": f"[{name} ...]",
                                                 "+": f"{name} [{name} ...]"}
        shown = written.get(action.nargs, f"{name} ..." if action.nargs == argparse.REMAINDER else name)
    if not action.option_strings:
        return shown
    return ", ".join(action.option_strings) + (f" {shown}" if shown else "")


def _help(action: argparse.Action, prog: str) -> str:
    """The help string as argparse prints it (`%(default)s` and `%%` expanded), on one line."""
    if not action.help:
        return "—"
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    params["prog"] = prog
    if params.get("choices") is not None:
        params["choices"] = ", ".join(str(c) for c in params["choices"])
    return " ".join((action.help % params).split())


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _exclusive(parser: argparse.ArgumentParser) -> dict[argparse.Action, list[str]]:
    """For each flag of a mutually exclusive group, the flags it cannot go with."""
    out: dict[argparse.Action, list[str]] = {}
    for group in parser._mutually_exclusive_groups:
        for action in group._group_actions:
            out[action] = [o.option_strings[0] for o in group._group_actions if o is not action]
    return out


def _table(parser: argparse.ArgumentParser) -> list[str]:
    """The arguments of one parser (its sub-commands listed apart), without `--help`."""
    exclusive = _exclusive(parser)
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        meaning = _help(action, parser.prog)
        if action in exclusive:
            meaning += "; not with " + ", ".join(f"`{o}`" for o in exclusive[action])
        rows.append(f"| `{_cell(_argument(action))}` | {_cell(meaning)} |")
    return ["| argument | meaning |", "|---|---|", *rows] if rows else []


def _usage(parser: argparse.ArgumentParser) -> str:
    positional = [_argument(a) for a in parser._actions if not a.option_strings
                  and not isinstance(a, argparse._SubParsersAction)]
    sub = _subparsers(parser)
    if sub is not None:
        positional.append(f"{sub.metavar or 'COMMAND'} ...")
    has_options = any(a.option_strings and not isinstance(a, argparse._HelpAction) for a in parser._actions)
    return " ".join([parser.prog, *(["[options]"] if has_options else []), *positional])


def _section(parser: argparse.ArgumentParser, summary: str, level: int) -> list[str]:
    lines = ["#" * level + f" `{parser.prog}`", ""]
    for text in (summary, parser.description):
        if text:
            lines += [_sentence(text), ""]
    lines += [f"`{_usage(parser)}`", ""]
    table = _table(parser)
    if table:
        lines += [*table, ""]
    sub = _subparsers(parser)
    if sub is not None:
        helps = {choice.dest: choice.help for choice in sub._choices_actions}
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| `{name}` | {_cell(helps.get(name) or '—')} |" for name in sub.choices]
        lines.append("")
        for name, child in sub.choices.items():
            lines += _section(child, helps.get(name) or "", level + 1)
    return lines


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """docs/cli.md's text."""
    if parser is None:
        from mlcompare.cli import build_parser

        parser = build_parser()
    return HEADER + "\n" + "\n".join(_section(parser, "", 2)).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
