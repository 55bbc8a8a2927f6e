"""Flag types and flag groups shared by several commands.

Every flag value that MLproject may pass empty ("as the experiment says") accepts the
empty string; a wrong value is an `argparse.ArgumentTypeError`, which the parser prints
as one line like every other input error.
"""

from __future__ import annotations

import argparse
import math

_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off", "")


def positive_int_or_empty(text: str) -> int | None:
    """--repeats, --threads: a positive integer; empty means 'as the experiment says' (MLproject default)."""
    if text.strip() == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def seconds(text: str, minimum: float) -> float | None:
    """Seconds (>= minimum); empty means 'as the experiment says' (MLproject default)."""
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= {minimum:g}, got {text!r}")
    return value


def timeout_seconds(text: str) -> float | None:
    return seconds(text, 1)


def min_time_seconds(text: str) -> float | None:
    return seconds(text, 0)


def fraction_or_empty(text: str) -> float | None:
    """--precision: a fraction from 0 to 1; empty means 'as the experiment says' (MLproject default)."""
    if text.strip() == "":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction such as 0.05, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to 1, got {text!r}")
    return value


#: Flags that take no value on the command line (`--resume`, before or after the experiment
#: file) and also the `--resume=VALUE` form MLproject passes (see `explicit_booleans`).
BOOLEAN_FLAGS = ("--resume",)


def boolean(text: str) -> bool:
    """--resume=VALUE as the MLproject passes it: true/false, yes/no, 1/0, on/off, empty = false."""
    word = text.strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def explicit_booleans(argv: list[str]) -> list[str]:
    """`--resume=true` as `--resume`, `--resume=false` (or empty) as nothing.

    A flag that may take a value would swallow the word after it (`--resume FILE` read FILE
    as the value), so `--resume` takes none, and the `=VALUE` form is read here, before the
    parser sees it. A value that is not a boolean raises ArgumentTypeError naming the flag.
    """
    out = []
    for arg in argv:
        name, equals, value = arg.partition("=")
        if not equals or name not in BOOLEAN_FLAGS:
            out.append(arg)
            continue
        try:
            on = boolean(value)
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{name}: {exc}") from None
        if on:
            out.append(name)
    return out


def name_list_or_empty(text: str) -> list[str] | None:
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or None


def name_or_empty(text: str) -> str | None:
    """A suite (run id or name); empty means none, as MLproject passes it."""
    return text.strip() or None


def address_or_empty(text: str) -> str | None:
    """A Dask scheduler address; empty means none (run here), as MLproject passes it."""
    text = text.strip()
    if not text:
        return None
    if "://" not in text:
        raise argparse.ArgumentTypeError(f"expected a scheduler address like tcp://HOST:8786, got {text!r}")
    return text


def prices_or_empty(text: str) -> dict[str, float] | None:
    """--cost-per-hour cpu=0.192,gpu=3.67: US dollars per hour per device; empty means 'as the file says'."""
    prices: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        device, sep, amount = (s.strip() for s in part.partition("="))
        if not sep or device not in ("cpu", "gpu"):
            raise argparse.ArgumentTypeError(f"expected cpu=PRICE, gpu=PRICE or both (e.g. cpu=0.192,gpu=3.67), "
                                             f"got {part!r}")
        if device in prices:
            raise argparse.ArgumentTypeError(f"names the {device} price twice")
        try:
            value = float(amount)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"expected a price per hour > 0 for {device}, got {amount!r}")
        prices[device] = value
    return prices or None


def add_selection(parser: argparse.ArgumentParser, experiment_required: bool = True) -> None:
    """The flags that change what a suite runs: `validate` takes them too, to check them."""
    if experiment_required:
        parser.add_argument("experiment", help="experiment YAML file, e.g. experiments/quick.yaml")
    else:
        parser.add_argument("experiment", nargs="?",
                            help="experiment YAML file; without one, the catalog and --pairings files are checked")
    parser.add_argument("--repeats", type=positive_int_or_empty, default=None,
                        help="warm fits per case (overrides the file)")
    parser.add_argument("--implementations", type=name_list_or_empty, default=None,
                        help="comma-separated implementation or library names to run, e.g. sklearn,xgboost")
    parser.add_argument("--timeout", type=timeout_seconds, default=None, metavar="SECONDS",
                        help="per-case time limit; the worker is killed and the case FAILED with "
                             "reason timeout (overrides the file's timeout_s)")
    parser.add_argument("--threads", type=positive_int_or_empty, default=None,
                        help="CPU threads for every CPU implementation, instead of the file's threads or thread sweep "
                             "(default: the file's, else all physical cores)")
    parser.add_argument("--rounds", type=positive_int_or_empty, default=None,
                        help="the most fresh processes a case runs in, in shuffled order (overrides the file's "
                             "rounds; with --precision 0, every case runs exactly this many)")
    parser.add_argument("--precision", type=fraction_or_empty, default=None, metavar="FRACTION",
                        help="stop a case after its min_rounds once its fit-time interval's half-width is at most "
                             "this fraction of its median, e.g. 0.03; a wider one goes on only where --rounds lets "
                             "more processes narrow it (9 or more) (0: never early; overrides the file's)")
    parser.add_argument("--min-time", type=min_time_seconds, default=None, metavar="SECONDS",
                        help="keep repeating warm fits until this much fit time is measured")
    parser.add_argument("--no-size-check", dest="size_check", action="store_false",
                        help="run datasets larger than this machine's memory or the dataset cache's free disk "
                             "(refused by default)")
    parser.add_argument("--cost-per-hour", type=prices_or_empty, default=None, metavar="cpu=USD,gpu=USD",
                        help="US dollars per hour of the CPU machine and of the GPU box: every case gets its "
                             "fit cost (replaces the file's cost_per_hour for the devices named)")


def add_pairing_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairings", action="append", default=[], metavar="PATH",
                        help="a pairing YAML file or a directory of them, added to the catalog and to the "
                             "run (repeatable)")
    parser.add_argument("--allow-module", action="append", default=[], metavar="MODULE", dest="allow_module",
                        help="also allow estimators from this module and its submodules (repeatable)")


def experiment_from_args(args: argparse.Namespace):
    """The experiment the selection flags name, loaded and validated (`run` and `validate`)."""
    from mlcompare.config.experiment import load_experiment

    experiment = load_experiment(args.experiment, repeats=args.repeats, implementations=args.implementations,
                                 timeout_s=args.timeout, pairing_paths=args.pairings,
                                 allow_modules=args.allow_module, rounds=args.rounds, precision=args.precision)
    if args.threads is not None:  # one count for every CPU case, a sweep in the file included
        experiment.threads = args.threads
        experiment.thread_sweep = ()
    if args.min_time is not None:
        experiment.min_time_s = args.min_time
    if args.size_check:
        from mlcompare.config.sizes import check_sizes

        check_sizes(experiment)
    if args.cost_per_hour:
        experiment.cost_per_hour = {**experiment.cost_per_hour, **args.cost_per_hour}
    return experiment
