"""`mlcompare validate` and the import allow-list: bad pairings fail in one line, before any run."""

from __future__ import annotations

import pytest
from conftest import no_runs, run_cli, write
from mlflow.tracking import MlflowClient

PAIRING = """\
name: my_ridge
task: regression
params: {alpha: 1.0}
implementations:
  sklearn: {estimator: sklearn.linear_model.Ridge, device: cpu}
  cuml: {estimator: cuml.linear_model.Ridge, device: gpu}
"""
EXPERIMENT = """\
name: e
repeats: 1
rounds: 1
datasets: [{generator: regression, n_samples: 200, n_features: 4}]
"""


def test_a_good_pairing_file_validates(workdir):
    write(workdir / "p.yaml", PAIRING)
    result = run_cli("validate", "--pairings", "p.yaml", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "my_ridge" in result.stdout and "ok: 22 pairings" in result.stdout


@pytest.mark.parametrize("change,field,message", [
    (("alpha: 1.0}", "alpha: 1.0, colour: red}"), "params.colour", "does not accept the parameter 'colour'"),
    (("task: regression", "task: regression\nflavour: x"), "flavour", "unknown key"),
    (("params: {alpha: 1.0}", "params: [1.0]"), "params", "expected a mapping, got a list"),
    (("sklearn.linear_model.Ridge", "sklearn.linear_model.Ridgee"), "implementations.sklearn.estimator",
     "has no 'Ridgee'"),
    (("sklearn.linear_model.Ridge", "sklearn.linearmodel.Ridge"), "implementations.sklearn.estimator",
     "no module 'sklearn.linearmodel'"),
    (("sklearn.linear_model.Ridge", "os.system"), "implementations.sklearn.estimator", "not under an allowed module"),
    (("device: cpu}", "device: cpu, params: {solver: [a, b]}}"), None, None),  # a list is a value here: ok
])
def test_validate_names_file_and_field(workdir, change, field, message):
    write(workdir / "p.yaml", PAIRING.replace(*change))
    result = run_cli("validate", "--pairings", "p.yaml", cwd=workdir)
    if field is None:
        assert result.returncode == 0, result.stderr
        return
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mlcompare: error: p.yaml: {field}: "), result.stderr
    assert message in lines[0]


def test_kwargs_estimators_are_checked_and_passthrough_allows(workdir):
    pairing = """\
name: boost
task: regression
implementations:
  xgb: {estimator: xgboost.XGBRegressor, device: cpu, params: {max_bins: 64}}
"""
    write(workdir / "p.yaml", pairing)
    bad = run_cli("validate", "--pairings", "p.yaml", cwd=workdir)
    assert bad.returncode == 2 and "implementations.xgb.params.max_bins" in bad.stderr
    assert "did you mean 'max_bin'" in bad.stderr
    write(workdir / "p.yaml", pairing.replace("max_bins: 64}", "max_bins: 64}, passthrough: [max_bins]"))
    assert run_cli("validate", "--pairings", "p.yaml", cwd=workdir).returncode == 0


def test_an_uninstalled_library_is_a_skip_not_an_error(workdir):
    write(workdir / "p.yaml", PAIRING.replace("cuml.linear_model.Ridge", "cuml.linear_model.NoSuchThing"))
    from mlcompare.measure import device

    if device.library_installed("cuml"):
        pytest.skip("cuML is installed here")
    assert run_cli("validate", "--pairings", "p.yaml", cwd=workdir).returncode == 0


def test_arbitrary_modules_are_refused_before_any_run(workdir):
    write(workdir / "e.yaml", EXPERIMENT + """\
pairings:
  - name: evil
    task: regression
    implementations: {a: {estimator: subprocess.Popen, device: cpu}}
""")
    result = run_cli("run", "e.yaml", cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.startswith("mlcompare: error: e.yaml: pairings[0].implementations.a.estimator: "
                                    "'subprocess.Popen' is not under an allowed module")
    assert no_runs(workdir)


USER_MODULE = """\
from sklearn.linear_model import Ridge


class HalfRidge(Ridge):
    '''A user's own estimator: Ridge with twice the penalty.'''

    def fit(self, X, y):
        self.alpha = self.alpha * 2
        return super().fit(X, y)
"""


@pytest.mark.parametrize("how", ["flag", "env", "file and flag"])
def test_the_allow_list_is_extended_by_the_person_running_with_a_flag_or_the_environment(workdir, how):
    write(workdir / "mymodels.py", USER_MODULE)
    body = EXPERIMENT + """\
pairings:
  - name: half_ridge
    task: regression
    implementations: {mine: {estimator: mymodels.HalfRidge, device: cpu}}
"""
    write(workdir / "e.yaml", body)
    env = {"PYTHONPATH": str(workdir)}
    refused = run_cli("validate", "e.yaml", cwd=workdir, env=env)
    assert refused.returncode == 2 and "not under an allowed module" in refused.stderr
    assert "--allow-module mymodels" in refused.stderr  # what grants it
    # one real run (the worker re-checks the list on import); validating is enough for the others
    args = ["run", "e.yaml", "--quiet"] if how == "flag" else ["validate", "e.yaml"]
    if how == "file and flag":  # the file says what it needs; the flag grants it
        write(workdir / "e.yaml", body + "allowed_modules: [mymodels]\n")
    if how != "env":
        args += ["--allow-module", "mymodels"]
    else:
        env["MLCOMPARE_ALLOWED_MODULES"] = "othermodule, mymodels"
    result = run_cli(*args, cwd=workdir, env=env)
    assert result.returncode == 0, result.stderr
    if how == "flag":
        assert "1 ran, 0 skipped, 0 failed" in result.stdout


def test_a_sweep_is_recorded_as_params_and_run_names(workdir):
    write(workdir / "e.yaml", EXPERIMENT + """\
implementations: [sklearn, sklearnex]
pairings:
  - {pairing: ridge, params: {alpha: [0.5, 5.0]}}
""")
    result = run_cli("run", "e.yaml", "--quiet", cwd=workdir)
    assert result.returncode == 0, result.stderr
    client = MlflowClient()
    exp = client.get_experiment_by_name("e")
    runs = [r for r in client.search_runs([exp.experiment_id]) if "mlflow.parentRunId" in r.data.tags]
    assert sorted((r.data.params["implementation"], r.data.params["sweep.alpha"]) for r in runs) == [
        ("sklearn", "0.5"), ("sklearn", "5.0"), ("sklearnex", "0.5"), ("sklearnex", "5.0")]
    names = {r.info.run_name for r in runs}
    assert "ridge · sklearnex · regression 200×4 · alpha=5.0" in names
    for run in runs:
        assert run.data.params["estimator.alpha"] == run.data.params["sweep.alpha"]
        assert "speedup_fit" in run.data.metrics  # each point compared with the baseline at that point


def test_every_mistake_of_a_file_is_one_line_at_once(workdir):
    """Three mistakes (a value out of range, an option another generator takes, an unknown
    key): three lines, each naming the file and the field; exit 2; no run written."""
    write(workdir / "three.yaml", """\
        name: three
        repeats: 0
        rounds: 1
        colour: blue
        datasets: [{generator: blobs, n_samples: 200, n_features: 4, n_classes: 3}]
        """)
    for command in ("validate", "run"):
        result = run_cli(command, "three.yaml", cwd=workdir)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()[-3:]
        assert all(line.startswith("mlcompare: error: three.yaml: ") for line in lines), lines
        fields = sorted(line.split(": ")[3] for line in lines)
        assert fields == ["colour", "datasets[0].n_classes", "repeats"], lines
        assert no_runs(workdir)


def test_mistakes_of_the_schema_and_of_the_catalog_come_in_one_pass(workdir):
    """A value out of range, another generator's option, an unknown pairing, an unknown
    implementation and an unknown dataset card: five lines at once, not the catalog's after
    the schema's are fixed."""
    write(workdir / "five.yaml", """\
        name: five
        repeats: -1
        rounds: 1
        datasets:
          - {generator: blobs, n_samples: 200, n_features: 4, n_classes: 3}
          - {dataset: no_such_card}
        pairings: [kmeans, no_such_pairing]
        implementations: [sklearn, no_such_implementation]
        """)
    for command in ("validate", "run"):
        result = run_cli(command, "five.yaml", cwd=workdir)
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert all(line.startswith("mlcompare: error: five.yaml: ") for line in lines), lines
        assert sorted(line.split(": ")[3] for line in lines) == [
            "datasets[0].n_classes", "datasets[1].dataset", "implementations[1]", "pairings[1]", "repeats"], lines
        assert no_runs(workdir)
    # the catalog's mistakes alone, every one of them too
    write(workdir / "two.yaml", EXPERIMENT + "pairings: [ridge, nope]\nimplementations: [sklearn, nada, zilch]\n")
    result = run_cli("validate", "two.yaml", cwd=workdir)
    assert result.returncode == 2
    assert [line.split(": ")[3] for line in result.stderr.strip().splitlines()] == [
        "pairings[1]", "implementations[1]", "implementations[2]"]


def test_the_blobs_generator_lists_only_its_own_options(workdir):
    write(workdir / "blobs.yaml", "name: b\ndatasets: [{generator: blobs, n_samples: 200, n_features: 4, "
                                  "bogus: 1, noise: 0.1}]\n")
    result = run_cli("validate", "blobs.yaml", cwd=workdir)
    assert result.returncode == 2
    unknown = next(line for line in result.stderr.splitlines() if "datasets[0].bogus" in line)
    allowed = unknown.split("allowed: ")[1].rstrip(")").split(", ")
    assert {"centers", "cluster_std"} <= set(allowed)
    assert not {"noise", "n_classes", "n_informative"} & set(allowed)  # other generators' options
    noise = next(line for line in result.stderr.splitlines() if "datasets[0].noise" in line)
    assert noise.endswith("not an option of the blobs generator (its options: centers, cluster_std)")


@pytest.mark.parametrize("argv,points_to", [(["list", "--bogus"], "mlcompare list --help"),
                                            (["run", "x.yaml", "--bogus=3"], "mlcompare run --help"),
                                            (["--bogus", "list"], "mlcompare --help")])
def test_an_unknown_flag_points_to_the_help_of_the_command_it_was_given_to(workdir, argv, points_to):
    result = run_cli(*argv, cwd=workdir)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(f"(see {points_to})"), result.stderr
