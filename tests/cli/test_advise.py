"""`mlcompare advise`: real ladders on two real-world-shaped tables (string categories, missing
values, a skewed target) within small budgets, every figure traced back to the store, and bad
input refused in one line before any run is written."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO, main_here, run_cli, write

from mlcompare import records
from mlcompare.report.advice import Figure, figure_text

ADVICE = "tags.`mlcompare.kind` = 'advice'"


def churn_table(path: Path, rows: int = 3000, seed: int = 0) -> Path:
    """Customers of a subscription: text regions and plans, a skewed spend, some values missing,
    an ID column, and whether they left (about one in six: an unbalanced class)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west", "centre"], rows, p=[.3, .25, .2, .15, .1])
    plan = rng.choice(["basic", "plus", "pro"], rows, p=[.6, .3, .1])
    tenure = rng.gamma(2.0, 12.0, rows).round()
    spend = rng.lognormal(3.5, 0.8, rows)
    calls = rng.poisson(2.0, rows)
    logit = -1.5 + 0.3 * calls - 0.04 * tenure + 0.8 * (plan == "basic") + 0.4 * (region == "south")
    frame = pd.DataFrame({"customer_id": [f"c{i:06d}" for i in range(rows)], "region": region, "plan": plan,
                          "tenure_months": tenure, "monthly_spend": spend, "support_calls": calls,
                          "age": rng.normal(42, 12, rows).round(),
                          "churned": np.where(rng.random(rows) < 1 / (1 + np.exp(-logit)), "yes", "no")})
    for column, share in (("age", 0.05), ("monthly_spend", 0.02), ("region", 0.03)):
        frame.loc[rng.random(rows) < share, column] = np.nan
    frame.to_csv(path, index=False)
    return path


def houses_table(path: Path, rows: int = 3000, seed: int = 1) -> Path:
    """House sales: text neighbourhoods and types, rooms and areas with gaps, a price with a long
    right tail (log-normal), as Parquet."""
    rng = np.random.default_rng(seed)
    hood = rng.choice([f"hood_{c}" for c in "abcdefgh"], rows)
    kind = rng.choice(["flat", "terraced", "detached"], rows, p=[.5, .3, .2])
    rooms = rng.integers(1, 8, rows).astype(float)
    area = rng.gamma(4.0, 20.0, rows) + 15 * rooms
    year = rng.integers(1900, 2024, rows).astype(float)
    price = np.exp(10 + 0.006 * area + 0.4 * (kind == "detached") + 0.1 * (hood == "hood_a")
                   + rng.normal(0, 0.35, rows))
    frame = pd.DataFrame({"listing": [f"L{i}" for i in range(rows)], "neighbourhood": hood, "type": kind,
                          "rooms": rooms, "area_m2": area, "year_built": year,
                          "distance_km": rng.exponential(6.0, rows), "price": price})
    for column, share in (("rooms", 0.04), ("year_built", 0.03), ("neighbourhood", 0.02)):
        frame.loc[rng.random(rows) < share, column] = np.nan
    frame.to_parquet(path, index=False)
    return path


def _advise(workdir: Path, *args: str, budget: float) -> tuple[object, float]:
    began = time.monotonic()
    result = run_cli("advise", *args, "--budget-s", str(budget), cwd=workdir, timeout=int(budget * 3))
    return result, time.monotonic() - began


def _client():
    from mlflow.tracking import MlflowClient

    return MlflowClient()


def _advice_run(client):
    experiments = [e.experiment_id for e in client.search_experiments()]
    found = client.search_runs(experiments, ADVICE)
    assert len(found) == 1
    return found[0]


def _advice_json(client, run) -> dict:
    path = client.download_artifacts(run.info.run_id, "advice.json")
    return json.loads(Path(path).read_text())


def _figures(advice: dict):
    for pairing in advice["pairings"]:
        for impl in pairing["implementations"]:
            for key in ("fit_figure", "predict", "quality", "speedup", "cost", "extrapolated"):
                if key in impl:
                    yield pairing, impl, key, impl[key]


def _check_traced_to_the_store(client, advice: dict, stdout: str) -> None:
    """Every measured figure equals the metric of the run it names; every figure at the table's
    size is printed as the advice formats it; in every pairing the baseline and at least one
    other implementation measured here have such figures (how many of them are at the table's
    size depends on how fast the machine is while the test runs: on a shared machine the
    ladder may stop below the top, and those figures are then predicted)."""
    measured: dict[str, set[str]] = {p["pairing"]: set() for p in advice["pairings"]}
    for pairing, impl, key, figure in _figures(advice):
        if not figure.get("predicted"):
            assert figure["run_id"], (impl["implementation"], key)
            stored = client.get_run(figure["run_id"]).data.metrics
            price = figure.get("price_per_hour", 3600.0) / 3600  # a cost made here: the run's time at a price
            assert stored[figure["metric"]] * price == pytest.approx(figure["value"], rel=1e-12)
            if impl["origin"] == "here":
                measured[pairing["pairing"]].add(impl["implementation"])
        if key in ("fit_figure", "extrapolated"):
            unit = "s"
            assert figure_text(Figure(**figure), unit) in stdout, (impl["implementation"], key)
        for point in impl["points"]:
            assert client.get_run(point["run_id"]).data.metrics["fit_time_s"] == pytest.approx(point["fit_time_s"])
    for pairing in advice["pairings"]:
        names = measured[pairing["pairing"]]
        assert pairing["baseline"] in names and len(names) >= 2, (pairing["pairing"], names)


def _check_predictions_are_labelled(stdout: str) -> None:
    """A predicted figure is never shown without its label, interval and self-check error."""
    numbers = re.findall(r"predicted ([\d$][^()\n]*?)\(([^)]*)\)", stdout)
    assert numbers, "no predicted figure printed"
    for figure, why in numbers:
        assert "[" in figure and "%]" in figure, figure
        assert why.startswith("self-check error"), why
    blocks = re.findall(r"  Beyond the table \([^)]*\):\n((?:    .*\n)+)", stdout)
    assert blocks, "no extrapolation printed"
    for line in (line for block in blocks for line in block.splitlines()):
        assert ("predicted " in line and "%]" in line and "self-check error" in line) or "not predicted" in line, line


def _recommendations(stdout: str) -> list[str]:
    lines = stdout.split("Recommendations\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.strip() for line in lines]


def _check_nested_and_declared(client, run) -> None:
    steps = client.search_runs([run.info.experiment_id],
                               f"tags.`mlflow.parentRunId` = '{run.info.run_id}' and tags.`mlcompare.kind` = 'suite'")
    assert len(steps) >= 3  # a ladder: enough sizes for a fit and its self-check
    for step in steps:
        cases = client.search_runs([run.info.experiment_id], f"tags.`mlflow.parentRunId` = '{step.info.run_id}'")
        assert cases and all(c.data.tags["mlcompare.kind"] == "case" for c in cases)
    data = run.data
    assert records.undeclared("advice", data.params, data.metrics, data.tags) == []
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"advice.html", "advice.md", "advice.json", "plots"} <= artifacts
    plots = {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    assert plots == {"plots/time_vs_rows.png", "plots/speedup_vs_rows.png"}


def test_a_classification_table_gets_one_recommendation_per_pairing_within_its_budget(workdir):
    churn_table(workdir / "churn.csv", rows=2000)
    budget = 90
    result, wall = _advise(workdir, "churn.csv", "--target", "churned", "--categorical", "region,plan",
                           "--drop", "customer_id", "--nan", "drop",
                           "--models", "gradient_boosting,logistic_regression",
                           "--implementations", "sklearn,lightgbm,sklearnex,xgboost_gpu", "--extrapolate", "10",
                           budget=budget)
    assert result.returncode == 0, result.stderr[-3000:]
    assert wall <= 1.1 * budget, f"{wall:.1f} s for a {budget} s budget"
    out = result.stdout
    assert "task classification (inferred: churned holds 2 classes" in result.stderr
    recommendations = _recommendations(out)
    assert [r.split(" ", 1)[0] for r in recommendations] == ["gradient_boosting", "logistic_regression"]
    for line in recommendations:
        assert re.search(r": (\w+): .*× .* faster than sklearn at the same accuracy|: keep sklearn: ", line), line
    assert "the GPU implementations were not measured: no GPU here (xgboost_gpu)" in recommendations[0]
    assert "self-check: " in out and re.search(r"error [+-]\d+ %", out)
    _check_predictions_are_labelled(out)
    client = _client()
    run = _advice_run(client)
    assert run.info.status == "FINISHED" and run.data.tags["mlcompare.kind"] == "advice"
    advice = _advice_json(client, run)
    _check_traced_to_the_store(client, advice, out)
    assert advice["table"]["rows"] == len(pd.read_csv(workdir / "churn.csv").dropna())
    _check_nested_and_declared(client, run)
    assert any(k.endswith(".self_check_error") for k in run.data.metrics)
    assert run.data.metrics["advise_wall_time_s"] <= 1.1 * budget


REFERENCE = """\
    name: houses-reference
    rounds: 2
    datasets:
      - {file: houses.parquet, task: regression, target: price, categorical: [neighbourhood, type],
         drop: [listing], nan: drop}
    pairings: [linear_regression]
    implementations: [sklearn, sklearnex]
"""


def test_a_regression_table_with_prices_and_a_reference_suite_marks_where_each_figure_comes_from(workdir):
    houses_table(workdir / "houses.parquet", rows=2000)
    reference = run_cli("run", str(write(workdir / "reference.yaml", REFERENCE)), "--quiet", cwd=workdir)
    assert reference.returncode == 0, reference.stderr[-2000:]
    (workdir / "prices.yaml").write_text("{cpu: 0.192, gpu: 3.67}\n")
    budget = 90
    result, wall = _advise(workdir, "houses.parquet", "--target", "price", "--categorical", "neighbourhood,type",
                           "--drop", "listing", "--nan", "drop", "--models",
                           "gradient_boosting_regressor,linear_regression", "--implementations",
                           "sklearn,lightgbm,sklearnex,xgboost_gpu", "--extrapolate", "10", "--prices", "prices.yaml",
                           "--reference", "houses-reference", "--output", "report", budget=budget)
    assert result.returncode == 0, result.stderr[-3000:]
    assert wall <= 1.1 * budget, f"{wall:.1f} s for a {budget} s budget"
    out = result.stdout
    assert "regression of price (inferred: price is numeric" in out
    recommendations = _recommendations(out)
    assert [r.split(" ", 1)[0] for r in recommendations] == ["gradient_boosting_regressor", "linear_regression"]
    for line in recommendations:
        assert re.search(r"faster than sklearn at the same r2|: keep sklearn: ", line), line
    assert "cheapest fit: " in recommendations[1] and "cost per fit" in out
    # the reference's figures are marked with where they were measured
    assert "reference: suite run " in out and "(suite run " in out
    assert re.search(r"from suite run \w+ on .*: sklearnex .*× .* (faster than|the speed of) its sklearn",
                     recommendations[1])
    _check_predictions_are_labelled(out)
    client = _client()
    run = _advice_run(client)
    advice = _advice_json(client, run)
    _check_traced_to_the_store(client, advice, out)
    origins = {i["origin"] for p in advice["pairings"] for i in p["implementations"]}
    assert origins == {"here", advice["reference"]}
    _check_nested_and_declared(client, run)
    assert "advise_reference_runs" in run.data.tags
    assert (workdir / "report" / "advice.md").read_text().startswith("# mlcompare advise: houses")
    assert (workdir / "report" / "plots" / "time_vs_rows.png").read_bytes()[:4] == b"\x89PNG"


BAD = [
    (["--target", "nope"], "churn.csv: --target: column 'nope' is not in churn"),
    (["--target", "churned", "--categorical", "region,colour"], "churn.csv: --categorical: column 'colour'"),
    (["--target", "churned", "--categorical", "region,plan", "--drop", "customer_id"],
     "churn.csv: --nan: churn has"),
    (["--target", "customer_id", "--nan", "drop"], "churn.csv: --target: column 'customer_id' holds text"),
    (["--target", "constant", "--nan", "drop"], "churn.csv: --target: column 'constant' holds one value"),
    (["--target", "churned", "--task", "regression", "--nan", "drop"],
     "churn.csv: --task: column 'churned' holds text"),
    (["--target", "churned", "--budget-s", "5"], "--budget-s: expected at least 30 seconds"),
    (["--target", "churned", "--extrapolate", "1"], "--extrapolate: expected a factor"),
    (["--target", "churned", "--task", "clustering"], "--task: expected one of classification, regression"),
    (["--target", "churned", "--nan", "maybe"], "--nan: expected error or drop"),
    (["--target", "churned", "--rounds", "0"], "--rounds: expected a positive integer"),
    (["--target", "churned", "--categorical", "region,plan", "--drop", "customer_id", "--nan", "drop", "--models",
      "linear_regression"], "--models: 'linear_regression' is a regression pairing"),
    (["--target", "churned", "--categorical", "region,plan", "--drop", "customer_id", "--nan", "drop",
      "--implementations", "nosuchlib"], "--implementations: 'nosuchlib' matches no implementation"),
    (["--target", "churned", "--categorical", "region,plan", "--drop", "customer_id", "--nan", "drop",
      "--prices", "prices.yaml"], "prices.yaml: cpu: expected a finite number > 0"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[m.split(":")[1].strip() if ":" in m else m for _, m in BAD])
def test_bad_input_is_one_line_naming_the_file_or_flag_and_writes_no_run(workdir, args, message):
    table = churn_table(workdir / "churn.csv", rows=400)
    frame = pd.read_csv(table)
    frame["constant"] = 1.0
    frame.to_csv(table, index=False)
    (workdir / "prices.yaml").write_text("{cpu: -1}\n")
    code, out, err = main_here("advise", "churn.csv", *args)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlcompare: error: ") and message in lines[0], err
    store = workdir / "mlflow.db"
    assert not store.exists() or sqlite3.connect(store).execute("select count(*) from runs").fetchone()[0] == 0


def test_a_missing_table_and_a_missing_target_flag_are_one_line(workdir):
    code, _, err = main_here("advise", "nosuch.csv", "--target", "y")
    assert code == 2 and err.count("\n") == 1 and "nosuch.csv: no such file" in err
    code, _, err = main_here("advise", "nosuch.csv")
    assert code == 2 and "the following arguments are required: --target" in err
    assert not (workdir / "mlflow.db").exists()


def test_the_mlproject_entry_point_passes_flags_the_command_parses():
    from mlcompare.cli import build_parser, parse

    entry = yaml.safe_load((REPO / "MLproject").read_text())["entry_points"]["advise"]
    values = {name: spec.get("default", "x.csv" if name == "data" else "y")
              for name, spec in entry["parameters"].items()}
    argv = entry["command"].format(**values).split()[3:]  # after `python -m mlcompare`
    args = parse(build_parser(), argv)
    assert args.command == "advise" and args.table == "x.csv" and args.target == "y"
    assert args.budget_s == 600 and args.task is None and args.extrapolate is None and args.reference is None


def test_the_ladders_notes_stay_json_within_a_tags_length():
    from mlcompare.cli.advise import _TAG_LIMIT, _fitting_json

    small = {"stopped": {"gb · sklearn": "not afforded"}, "notes": ["one"]}
    assert json.loads(_fitting_json(small)) == small
    many = {"stopped": {f"pairing · impl{k}": "x" * 300 for k in range(60)}, "notes": ["y" * 400] * 20}
    text = _fitting_json(many)
    assert len(text) <= _TAG_LIMIT and json.loads(text)["notes"][-1].startswith("(more notes than a tag holds")
