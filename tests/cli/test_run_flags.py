"""The flags of `run` and `validate`, parsed in this process: one-line errors, MLproject forms."""

from __future__ import annotations

import pytest
from conftest import main_here, write

from mlcompare import cli
from mlcompare.cli.flags import explicit_booleans


def _registered() -> str:
    """The registered commands as argparse lists them: in the order of `mlcompare --help`."""
    from mlcompare.cli.command import COMMANDS

    cli.build_parser()  # imports (registers) every command module
    return ", ".join(repr(c.name) for c in sorted(COMMANDS.values(), key=lambda c: (c.order, c.name)))


_COMMANDS = _registered()


@pytest.mark.parametrize("argv,message", [
    (["run"], "mlcompare: error: the following arguments are required: experiment (see mlcompare run --help)"),
    (["run", "e.yaml", "--keep-going", "--fail-fast"],
     "mlcompare: error: --fail-fast: not allowed with argument --keep-going (see mlcompare run --help)"),
    (["run", "e.yaml", "--resume=maybe"],
     "mlcompare: error: --resume: expected true or false, got 'maybe' (see mlcompare run --help)"),
    (["validate", "e.yaml", "--timeout", "nan"],
     "mlcompare: error: --timeout: expected a number of seconds >= 1, got 'nan' (see mlcompare validate --help)"),
    (["frobnicate"], "mlcompare: error: COMMAND: invalid choice: 'frobnicate' (choose from "
                     f"{_COMMANDS}) (see mlcompare --help)"),
])
def test_a_bad_command_line_is_one_line_and_exit_2(workdir, argv, message):
    code, out, err = main_here(*argv)
    assert (code, out, err) == (2, "", message + "\n")


@pytest.mark.parametrize("text,expected", [("", False), ("false", False), ("no", False), ("true", True),
                                           ("TRUE", True), ("1", True)])
def test_resume_takes_the_values_the_mlproject_passes(text, expected):
    args = cli.build_parser().parse_args(explicit_booleans(["run", "e.yaml", f"--resume={text}"]))
    assert args.resume is expected and args.experiment == "e.yaml"


@pytest.mark.parametrize("argv", [["run", "--resume", "e.yaml"], ["run", "e.yaml", "--resume"],
                                  ["run", "--resume=true", "e.yaml"], ["run", "--resume", "e.yaml", "--repeats", "2"]])
def test_resume_before_or_after_the_experiment_file(argv):
    args = cli.build_parser().parse_args(explicit_booleans(argv))
    assert (args.resume, args.experiment) == (True, "e.yaml")
    assert cli.build_parser().parse_args(["run", "e.yaml"]).resume is False


def test_resume_before_the_file_runs_the_suite(workdir):
    """The command the README shows, in the order a user types it: the file is the experiment."""
    path = write(workdir / "one.yaml", "name: one\nrepeats: 1\nrounds: 1\n"
                 "datasets: [{generator: regression, n_samples: 200, n_features: 3}]\npairings: [linear_regression]\n"
                 "implementations: [sklearn]\n")
    code, out, err = main_here("run", "--resume", str(path), "--quiet")
    assert code == 0, err
    assert "1 ran, 0 skipped, 0 failed, 0 already finished (resumed)" in out
    code, out, err = main_here("run", "--resume", str(path), "--quiet")
    assert code == 0, err
    assert "0 ran, 0 skipped, 0 failed, 1 already finished (resumed)" in out


def test_keep_going_is_the_default():
    parse = cli.build_parser().parse_args
    assert parse(["run", "e.yaml"]).fail_fast is False
    assert parse(["run", "e.yaml", "--keep-going"]).fail_fast is False
    assert parse(["run", "e.yaml", "--fail-fast"]).fail_fast is True


def test_validate_checks_the_flags_run_would_use(workdir, small_experiment):
    code, out, _ = main_here("validate", str(small_experiment), "--implementations", "sklearn", "--repeats", "4",
                         "--timeout", "30")
    assert code == 0 and "ok: 4 cases" in out and "repeats 4" in out
    code, _, err = main_here("validate", str(small_experiment), "--timeout=", "--repeats=")  # MLproject's empty
    assert code == 0 and err == ""


def test_timeout_overrides_the_file(workdir):
    from mlcompare.config.experiment import load_experiment

    path = write(workdir / "t.yaml", "name: t\ntimeout_s: 600\n"
                 "datasets: [{generator: regression, n_samples: 100, n_features: 2}]\npairings: [linear_regression]\n")
    assert load_experiment(path).timeout_s == 600
    assert load_experiment(path, timeout_s=45).timeout_s == 45
