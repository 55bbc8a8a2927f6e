"""Terminal output of a suite: a live bar and a summary table on a terminal, plain lines elsewhere."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from conftest import REPO, write

ONE_CASE = """\
    name: one
    repeats: 1
    rounds: 1
    datasets: [{generator: regression, n_samples: 200, n_features: 3}]
    pairings: [linear_regression]
    implementations: [sklearn, cuml]
"""


def _run_on_a_terminal(args: list[str], cwd, env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (stdout piped), as in an interactive shell."""
    leader, follower = pty.openpty()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_RUN")} | env
    full_env |= {"PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "160"}
    proc = subprocess.Popen([sys.executable, "-m", "mlcompare", *args], cwd=cwd, env=full_env,
                            stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    out = proc.stdout.read().decode()
    proc.wait(timeout=300)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_a_progress_bar_and_a_summary_table(workdir):
    write(workdir / "one.yaml", ONE_CASE)
    env = {"MLFLOW_TRACKING_URI": os.environ["MLFLOW_TRACKING_URI"], "MLCOMPARE_DATA_DIR": str(workdir / "data")}
    code, out, terminal = _run_on_a_terminal(["run", "one.yaml"], workdir, env)
    assert code == 0, terminal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)  # drop colours and cursor moves
    assert "elapsed" in plain and "left" in plain  # the bar, with its clock and estimate
    assert "linear_regression · sklearn · regression 200×3" in plain  # the current case
    assert "mlcompare suite" in plain and "status" in plain and "speed-up" in plain  # the summary table
    from mlcompare.measure import device

    if not device.cuda_devices()[0]:  # cuml cannot run here: said once, and no row in the table
        assert "cuml: skipped in its one case (" in plain
        assert "not in the table: cuml, skipped in every case" in plain
        assert "linear_regression · cuml" not in plain[plain.index("mlcompare suite"):]  # the table
    assert "1 ran" in out  # the one-line result stays on stdout


def test_a_resumed_suite_on_a_terminal_starts_its_bar_with_a_reused_case(workdir):
    """The first case to end may be one the store already had: the bar must start from it."""
    write(workdir / "one.yaml", ONE_CASE)
    env = {"MLFLOW_TRACKING_URI": os.environ["MLFLOW_TRACKING_URI"], "MLCOMPARE_DATA_DIR": str(workdir / "data")}
    assert _run_on_a_terminal(["run", "one.yaml"], workdir, env)[0] == 0
    code, out, terminal = _run_on_a_terminal(["run", "one.yaml", "--resume"], workdir, env)
    assert code == 0, terminal
    assert "Traceback" not in terminal, terminal
    assert "2 already finished (resumed)" in out


def test_not_a_terminal_gets_plain_lines_and_quiet_gets_nothing(workdir, capsys):
    from mlcompare.cli import main

    write(workdir / "one.yaml", ONE_CASE)
    assert main(["run", "one.yaml", "--implementations", "sklearn"]) == 0  # stderr captured: not a TTY
    plain = capsys.readouterr().err
    assert "[1/1] linear_regression · sklearn · regression 200×3: fit" in plain
    assert "\x1b[" not in plain and "elapsed" not in plain
    assert main(["run", "one.yaml", "--implementations", "sklearn", "--quiet"]) == 0
    quiet = capsys.readouterr().err
    assert "[1/1]" not in quiet and "mlcompare: suite" not in quiet
