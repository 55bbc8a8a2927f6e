"""`mlcompare report`: the comparison table of recorded suites, read back from the MLflow store."""

from __future__ import annotations

import argparse
import sys

from mlcompare.cli.command import Command, register
from mlcompare.errors import InputError

#: `--format` choices (the keys of mlcompare.report.render.RENDERERS; not imported from
#: there so that a bad command line never pays for pandas and matplotlib).
REPORT_FORMATS = ("table", "markdown", "csv", "html")


@register
class Report(Command):
    name = "report"
    help = "the comparison table of recorded suites, read from the MLflow store"
    description = ("Rebuild the comparison table from the MLflow store (MLFLOW_TRACKING_URI, else ./mlflow.db). "
                   "With no selection: every suite.")
    order = 50

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--experiment", action="append", metavar="NAME",
                            help="an MLflow experiment name or a suite name (repeatable)")
        parser.add_argument("--run-id", action="append", metavar="ID", help="a suite's parent run id (repeatable)")
        parser.add_argument("--format", choices=REPORT_FORMATS, default="table",
                            help="output format (default: table)")
        parser.add_argument("--output", metavar="PATH", help="write to this file instead of stdout")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from mlcompare import report
        from mlcompare.tracking import reader

        try:
            suites = reader.find_suites(experiments=args.experiment, run_ids=args.run_id)
        except reader.SelectionError as exc:
            raise InputError(exc.flag, None, str(exc)) from None
        if not suites:
            where = f" in experiment {', '.join(args.experiment)}" if args.experiment else ""
            raise InputError("report", None, f"no mlcompare suite runs{where} in {reader.store_uri()}")
        text = report.render(report.compare(suites), args.format)
        write_output(text, args.output, f"{len(suites)} suite(s)")
        return 0


def write_output(text: str, path: str | None, what: str) -> None:
    """To `path` (saying so on stderr), else to stdout; an unwritable path is an input error."""
    if not path:
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise InputError("--output", None, f"cannot write {path}: {exc.strerror}") from None
    print(f"mlcompare: {what} written to {path}", file=sys.stderr)
