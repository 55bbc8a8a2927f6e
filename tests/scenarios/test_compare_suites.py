"""`mlcompare compare` and `run --compare-to` on real suites recorded in a real SQLite store.

The random forest's fit splits its trees over `n_jobs` threads, so on a 2-core machine
`--threads 1` fits about twice as slowly as `--threads 2`. The machine running the tests
may be shared: another job's load arriving between the two suites changes their times
too, so each timing claim gets up to `ATTEMPTS` fresh pairs of suites before it fails.
A comparison that is wrong every time still fails.
"""

from __future__ import annotations

import csv
import io
import re

from conftest import run_cli, write
from mlflow.tracking import MlflowClient

from mlcompare.cli import main

ATTEMPTS = 3
FOREST = """\
    name: forest
    repeats: 7
    timeout_s: 300
    datasets: [{generator: classification, n_samples: 2500, n_features: 20}]
    pairings: [random_forest]
    implementations: [sklearn]
"""
CASE = "random_forest · sklearn · classification 2.5k×20"


def _suite(workdir, *flags: str) -> str:
    """`mlcompare run forest.yaml FLAGS` in a fresh process; the parent run id."""
    result = run_cli("run", "forest.yaml", "--quiet", *flags, cwd=workdir)
    assert result.returncode == 0, result.stderr
    return re.search(r"parent run ([0-9a-f]{32})", result.stdout).group(1)


def _compare(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["compare", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _case_run(client: MlflowClient, parent_id: str):
    experiment = client.get_run(parent_id).info.experiment_id
    [run] = client.search_runs([experiment], f"tags.`mlflow.parentRunId` = '{parent_id}'")
    return run


def _repeats(client: MlflowClient, run_id: str) -> list[float]:
    return [m.value for m in sorted(client.get_metric_history(run_id, "fit_time_repeat_s"), key=lambda m: m.step)]


def test_one_thread_instead_of_two_is_flagged_slower_and_fails_the_gate(workdir, capsys):
    write(workdir / "forest.yaml", FOREST)
    for _ in range(ATTEMPTS):
        a = _suite(workdir, "--threads", "2")
        b = _suite(workdir, "--threads", "1")
        code, out, err = _compare(capsys, a, b, "--fail-slower", "1.3", "--format", "csv")
        if code == 1:
            break
    assert code == 1, f"not flagged in {ATTEMPTS} attempts:\n{out}{err}"
    [row] = list(csv.DictReader(io.StringIO(out)))
    assert (row["suite_a"], row["suite_b"], row["case"]) == (a, b, CASE)
    assert row["fit_verdict"] == "slower" and float(row["fit_ratio"]) > 1.3 and float(row["fit_low"]) > 1
    assert err.startswith("mlcompare: --fail-slower 1.3: 1 case(s) of B more than 1.3× slower")
    assert f"  {CASE}: fit {float(row['fit_ratio']):.3g}× [" in err

    # the numbers are the stored runs': B's median over A's, bounds that are ratios of two repeats
    client = MlflowClient()
    run_a, run_b = _case_run(client, a), _case_run(client, b)
    assert float(row["fit_ratio"]) == run_b.data.metrics["fit_time_s"] / run_a.data.metrics["fit_time_s"]
    ratios = {x / y for x in _repeats(client, run_b.info.run_id) for y in _repeats(client, run_a.info.run_id)}
    assert float(row["fit_low"]) in ratios and float(row["fit_high"]) in ratios
    assert float(row["fit_level"]) >= 0.95 and (row["fit_a_repeats"], row["fit_b_repeats"]) == ("7", "7")

    # what differs is said first; without a gate the exit code is 0
    code, out, err = _compare(capsys, a, b)
    assert (code, err) == (0, "")
    head = out.split("B against A")[0]
    assert "suite_threads: 2 → 1" in head and "cases: estimator.n_jobs: 2 → 1 (every shared case)" in head
    assert re.search(rf"{re.escape(CASE)} .* slower ", out)


def test_two_runs_of_the_same_settings_pass_and_the_comparison_is_logged_on_b(workdir, capsys):
    write(workdir / "forest.yaml", FOREST)
    for _ in range(ATTEMPTS):
        a = _suite(workdir, "--threads", "1")
        b = _suite(workdir, "--threads", "1", "--compare-to", a)
        code, out, err = _compare(capsys, a, b, "--fail-slower", "1.5", "--fail-quality", "0")
        if code == 0:
            break
    assert code == 0, f"a gate failed in {ATTEMPTS} attempts:\n{out}{err}"
    assert "What differs, A → B:\n  nothing in the machine, library versions or settings\n" in out
    assert re.search(rf"{re.escape(CASE)} .*accuracy (\S+) → \1 +same", out)  # the same seed, the same model

    # `run --compare-to A` put the comparison on B's parent run
    client = MlflowClient()
    parent = client.get_run(b)
    assert parent.data.tags["compared_to"] == a
    folder = f"compare/vs_{a[:8]}"
    names = {f.path for f in client.list_artifacts(b, "compare")}
    assert names == {f"{folder}.{ext}" for ext in ("csv", "md", "html", "png")}
    with open(client.download_artifacts(b, f"{folder}.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(client.download_artifacts(b, f"{folder}.csv"), encoding="utf-8") as f:
        logged = f.read()
    assert logged == _compare(capsys, a, b, "--format", "csv")[1]  # the same comparison, read back later
    with open(client.download_artifacts(b, f"{folder}.html"), encoding="utf-8") as f:
        page = f.read()
    assert CASE in page and page.count("data:image/png;base64,") == 1


def test_bad_input_is_one_line_and_exit_2(workdir, capsys):
    write(workdir / "forest.yaml", FOREST.replace("repeats: 7", "repeats: 2").replace("2500", "300"))
    write(workdir / "other.yaml", """\
        name: other
        repeats: 2
        datasets: [{generator: regression, n_samples: 200, n_features: 3}]
        pairings: [linear_regression]
        implementations: [sklearn]
    """)
    MlflowClient().search_experiments()  # the store exists (creating it, MLflow says so on stderr)
    missing = "0" * 32
    code, out, err = _compare(capsys, missing, "forest")
    assert (code, out) == (2, "") and err.startswith(f"mlcompare: error: A: no run id, MLflow experiment or suite "
                                                     f"'{missing}' in ") and err.count("\n") == 1
    result = run_cli("run", "other.yaml", "--compare-to", "forest", cwd=workdir)
    assert result.returncode == 2 and result.stderr.startswith("mlcompare: error: --compare-to: no run id")
    assert "other" not in {e.name for e in MlflowClient().search_experiments()}  # nothing ran, nothing written

    forest = _suite(workdir)
    assert run_cli("run", "other.yaml", "--quiet", cwd=workdir).returncode == 0
    code, out, err = _compare(capsys, "forest", "other")
    assert (code, out) == (2, "")
    assert re.fullmatch(r"mlcompare: error: B: suites \w{8} and \w{8} have no case in common \(1 cases in A, "
                        r"1 in B\)\n", err)
    code, _, err = _compare(capsys, "forest", "forest")
    assert code == 2 and "A and B are the same suite" in err
    code, _, err = _compare(capsys, "forest~1", "forest")
    assert code == 2 and err == "mlcompare: error: A: 'forest~1': 'forest' has 1 finished suite(s), so ~0 is " \
                                "the oldest\n"
    case_id = _case_run(MlflowClient(), forest).info.run_id
    code, _, err = _compare(capsys, forest, case_id)
    assert code == 2 and err == f"mlcompare: error: B: run {case_id} is not an mlcompare suite run (it is a case " \
                                f"of suite run {forest})\n"
    for flags, message in ((["--fail-slower", "0.9"], "--fail-slower: expected a ratio >= 1"),
                           (["--fail-quality", "-1"], "--fail-quality: expected a quality difference >= 0"),
                           (["--confidence", "95"], "--confidence: expected a confidence level between")):
        try:
            code = main(["compare", "forest", "other", *flags])
        except SystemExit as exc:
            code = exc.code
        assert code == 2 and capsys.readouterr().err.startswith(f"mlcompare: error: {message}")
