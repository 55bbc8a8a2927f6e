"""Property-based tests: whatever the experiment file, pairing file or command line, the
answer is a valid experiment or one line of error with exit code 2 — never a traceback,
never a run in the store.

The loaders and the argument parser are fuzzed in this process (hundreds of inputs); the
real `mlcompare run` in a few subprocesses, each with its own SQLite store.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sqlite3
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import SMALL_EXPERIMENT, run_cli
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from mlcompare import cli
from mlcompare.cli.flags import experiment_from_args, explicit_booleans
from mlcompare.config.experiment import Experiment, load_experiment
from mlcompare.config.pairing import load_catalog
from mlcompare.data.synthetic import GENERATOR_TASKS
from mlcompare.errors import InputError
from mlcompare.pairings.quality import TASK_METRICS
from mlcompare.suite.resume import case_fingerprint, experiment_fingerprint

CATALOG = load_catalog()
IMPL_NAMES = sorted({n for p in CATALOG.values() for i in p.implementations.values() for n in (i.name, i.library)})
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# -- values a YAML file can hold ------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-3, 300),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    # YAML's own types: !!timestamp, !!binary, !!set
                    st.dates(), st.binary(max_size=4), st.sets(st.integers(0, 3), max_size=2))
yaml_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                     st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner,
                                                     max_size=4)),
    max_leaves=8)


def either(good: st.SearchStrategy) -> st.SearchStrategy:
    """Mostly a plausible value, sometimes anything at all."""
    return st.one_of(good, good, good, good, yaml_values)


sizes = st.one_of(st.integers(20, 5000), st.lists(st.integers(20, 5000), min_size=1, max_size=3),
                  st.integers(10**15, 10**30))
names = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=30)
OPTIONS = {  # a generator's own options, with plausible values
    "blobs": {"centers": st.integers(1, 20), "cluster_std": st.floats(0, 10)},
    "classification": {"n_informative": st.one_of(st.integers(1, 8), st.integers(10**15, 10**20)),
                       "n_redundant": st.integers(0, 4), "n_classes": st.one_of(st.integers(2, 6), st.just(2**70)),
                       "class_sep": st.floats(0, 5)},
    "regression": {"n_informative": st.integers(1, 8), "noise": st.floats(0, 100)},
}
TASKS = {"blobs": "clustering", "classification": "classification", "regression": "regression"}


@st.composite
def clean_experiments(draw) -> dict:
    """Experiment documents that are valid or fail only on how their values combine."""
    generators = draw(st.lists(st.sampled_from(sorted(OPTIONS)), min_size=1, max_size=3, unique=True))
    entries = []
    for generator in generators:
        entry = {"generator": generator, "n_samples": draw(sizes), "n_features": draw(st.integers(1, 40))}
        entry |= draw(st.fixed_dictionaries({}, optional={
            **OPTIONS[generator], "seed": st.integers(0, 2**32 - 1), "test_size": st.floats(0.05, 0.95),
            "dtype": st.sampled_from(["float32", "float64"])}))
        entries.append(entry)
    served = [name for name, p in CATALOG.items() if p.task in {TASKS[g] for g in generators}]
    doc = {"name": draw(names), "datasets": entries}
    pairings = draw(st.lists(st.sampled_from(served), min_size=1, unique=True))
    if draw(st.booleans()) or len(served) < len(CATALOG):
        doc["pairings"] = pairings
    impls = sorted({n for name in pairings for i in CATALOG[name].implementations.values()
                    for n in (i.name, i.library)})
    doc |= draw(st.fixed_dictionaries({}, optional={
        "description": st.text(max_size=30), "repeats": st.integers(1, 10),
        "dtype": st.sampled_from(["float32", "float64"]), "seed": st.integers(0, 2**32 - 1),
        "timeout_s": st.floats(1, 1e9), "implementations": st.lists(st.sampled_from(impls), min_size=1, unique=True),
        "cost_per_hour": st.fixed_dictionaries({}, optional={"cpu": st.floats(0.001, 100),
                                                              "gpu": st.floats(0.001, 100)}),
        "predict_batch_sizes": st.lists(st.integers(1, 10**6), min_size=1, max_size=4, unique=True),
        "predict_latency_budget_s": st.floats(0.01, 10)}))
    return doc


@st.composite
def near_misses(draw) -> dict:
    """A clean document with one field, at any depth, replaced by anything or removed."""
    doc = draw(clean_experiments())
    parent, key = doc, draw(st.sampled_from(sorted(doc)))
    while isinstance(parent[key], (dict, list)) and parent[key] and draw(st.booleans()):
        parent = parent[key]
        key = draw(st.sampled_from(sorted(parent) if isinstance(parent, dict) else range(len(parent))))
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = draw(yaml_values)
    return doc


experiment_docs = st.one_of(clean_experiments(), near_misses(),
                            st.dictionaries(st.sampled_from(["name", "datasets", "pairings", "repeats", "other"]),
                                            yaml_values, max_size=4))

#: Hand-written nasties: YAML features a generator of plain values never produces.
NASTY_YAML = [
    "name: x\ndatasets: &d [*d]\n", "name: &n [*n]\ndatasets: []\n",
    "name: !!python/object/apply:os.system ['true']\n", "name: !!binary aGVsbG8=\ndatasets: [1]\n",
    "name: x\ndatasets: !!set {a, b}\n", "name: 2024-01-01\n", "? [a, b]\n: 1\n", "name: x\n\tdatasets: 1\n",
    "%YAML 9.9\n---\nname: x\n", "--- 1\n--- 2\n",
    "name: x\ndatasets: [{generator: blobs, n_samples: 100, n_features: 2}]\npairings: [kmeans]\ntimeout_s: .inf\n",
    "name: \"a\\nb\"\n\"k\\u2028\": 1\n", "a: &a\n  b: *a\nname: x\n", "\ufeffname: x\n", "name: x\x00\n",
]


def _edit(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (position, length to drop, insertion) edits to a valid file: near-miss inputs."""
    for position, drop, insert in edits:
        position %= len(text) + 1
        text = text[:position] + insert + text[position + drop:]
    return text


valid_text = textwrap.dedent(SMALL_EXPERIMENT)
file_contents = st.one_of(
    experiment_docs.map(lambda doc: yaml.safe_dump(doc, allow_unicode=True)),
    st.builds(_edit, st.just(valid_text),
              st.lists(st.tuples(st.integers(0, 10**4), st.integers(0, 8),
                                 st.text(alphabet=":-[]{},&*!#|>'\"\n\t 0123456789abcdefnx.", max_size=4)),
                       min_size=1, max_size=4)),
    st.text(max_size=200), st.binary(max_size=200), st.sampled_from(NASTY_YAML),
)


def _one_line_each(exc: InputError) -> None:
    """Every mistake found is one line of its own naming the file (several mistakes: several lines)."""
    errors = getattr(exc, "errors", [exc])
    lines = str(exc).splitlines()
    assert len(lines) == len(errors) >= 1, str(exc)
    for line, error in zip(lines, errors):
        assert line == str(error) and line.startswith(error.source), line


def _check_loaded(load) -> str:
    """Run a loader: an Experiment with cases that can be sent to a worker, or a one-line error."""
    try:
        experiment = load()
    except InputError as exc:
        _one_line_each(exc)
        return "error"
    assert isinstance(experiment, Experiment)
    cases = experiment.cases()
    assert cases
    fp = experiment_fingerprint(experiment, {"host.cpu_model": "cpu", "host.gpu_count": "0"})
    for case in cases:
        json.dumps(case.pairing.estimator_params(case.implementation), allow_nan=False)  # goes to the worker
        case_fingerprint(case, fp)
        assert case.name.isprintable()
    yaml.safe_dump(experiment.raw)  # logged with the parent run
    return "valid"


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="mlcompare-fuzz-") as folder:
        yield Path(folder)


@pytest.fixture(scope="module", autouse=True)
def no_store_is_opened(tmp_path_factory):
    """In-process fuzzing never opens a tracking store: point MLflow at a file that must not appear."""
    db = tmp_path_factory.mktemp("fuzzstore") / "mlflow.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
        yield
    assert not db.exists()


@settings(FUZZ, max_examples=400)
@given(content=file_contents)
def test_any_experiment_file_is_valid_or_one_line_of_error(scratch, content):
    path = scratch / "experiment.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    event(_check_loaded(lambda: load_experiment(path)))


# -- pairing files ---------------------------------------------------------------------------

ESTIMATORS = ["sklearn.linear_model.Ridge", "sklearn.cluster.KMeans", "xgboost.XGBRegressor", "cuml.cluster.KMeans"]
BAD_ESTIMATORS = ["os.system", "sklearn", "sklearn.\nx", "sklearnx.Y", "faulty_estimators.Hang", "builtins.eval",
                  " sklearn.A", "sklearn.a..b"]
identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,11}", fullmatch=True)
plain = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(-1e6, 1e6), st.text(max_size=12),
                  st.lists(st.integers(0, 9), max_size=3))
# parameter values YAML can write and JSON cannot carry to a worker
odd = st.one_of(st.dates(), st.binary(max_size=3), st.sets(st.integers(0, 3), min_size=1, max_size=2),
                st.sampled_from([float("nan"), float("inf")]))
param_values = st.one_of(plain, plain, plain, odd)


@st.composite
def clean_pairings(draw) -> dict:
    """Pairing documents that are valid or fail only on how their values combine."""
    task = draw(st.sampled_from(sorted(TASK_METRICS)))
    shared = draw(st.dictionaries(identifiers, param_values, max_size=4))
    impls = {}
    for name in draw(st.lists(names, min_size=1, max_size=3, unique=True)):
        impl = {"estimator": draw(st.sampled_from(ESTIMATORS)), "device": draw(st.sampled_from(["cpu", "gpu"]))}
        impl |= draw(st.fixed_dictionaries({}, optional={
            "rename": st.dictionaries(st.sampled_from(sorted(shared) or ["unused"]),
                                      st.one_of(st.none(), identifiers), max_size=2),
            "params": st.dictionaries(identifiers, param_values, max_size=3),
            "differences": st.lists(st.text(max_size=20), max_size=2)}))
        impls[name] = impl
    doc = {"name": draw(names.filter(lambda n: n not in CATALOG)), "task": task, "implementations": impls}
    doc |= draw(st.fixed_dictionaries({}, optional={
        "metrics": st.lists(st.sampled_from(TASK_METRICS[task]), min_size=1, unique=True), "params": st.just(shared),
        "baseline": st.sampled_from(sorted(impls)), "description": st.text(max_size=30)}))
    return doc


@st.composite
def pairing_near_misses(draw) -> dict:
    """A clean pairing with one field, at any depth, replaced by anything or removed."""
    doc = draw(clean_pairings())
    parent, key = doc, draw(st.sampled_from(sorted(doc)))
    while isinstance(parent[key], (dict, list)) and parent[key] and draw(st.booleans()):
        parent = parent[key]
        key = draw(st.sampled_from(sorted(parent) if isinstance(parent, dict) else range(len(parent))))
    replacement = st.one_of(yaml_values, st.sampled_from(BAD_ESTIMATORS), identifiers)
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[key]
    else:
        parent[key] = draw(replacement)
    return doc


pairing_docs = st.one_of(clean_pairings(), pairing_near_misses(),
                         st.dictionaries(st.sampled_from(["name", "task", "implementations", "params", "x"]),
                                         yaml_values, max_size=4))


@settings(FUZZ, max_examples=300)
@given(doc=pairing_docs, nasty=st.one_of(st.none(), st.sampled_from(NASTY_YAML)))
def test_any_pairing_file_is_valid_or_one_line_of_error(scratch, doc, nasty):
    folder = scratch / "pairings"
    folder.mkdir(exist_ok=True)
    (folder / "fuzzed.yaml").write_text(nasty or yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    try:
        catalog = load_catalog(folder)
    except InputError as exc:
        _one_line_each(exc)
        event("error")
        return
    event("valid")
    pairing = next(iter(catalog.values()))
    generator = next(g for g, tasks in GENERATOR_TASKS.items() if pairing.task in tasks)
    experiment = scratch / "uses-pairing.yaml"
    experiment.write_text(yaml.safe_dump({
        "name": "fuzz", "pairings": [pairing.name],
        "datasets": [{"generator": generator, "n_samples": 100, "n_features": 4}]}))
    # A well-formed pairing may still name params its (installed) estimator does not
    # take: the experiment's check says so in one line, or the experiment is valid.
    _check_loaded(lambda: load_experiment(experiment, catalog=catalog))


# -- command lines, in this process -----------------------------------------------------------

flag_values = {
    "--repeats": ["1", "2", "", "0", "-1", "x", "1.5", "99999999999999999999"],
    "--implementations": ["sklearn", "sklearn,cuml", "", ",", "sklearn,,cuml", "xgboost", "nope"],
    "--timeout": ["60", "1", "", "1e9", "0.5", "0", "-3", "nan", "inf", "1e999", "x"],
}


@st.composite
def argvs(draw, command: str) -> list[str]:
    files = draw(st.sampled_from(["VALID"] * 6 + ["BAD", "missing.yaml", "", "-", "FOLDER", "/dev/null"]))
    args = [command] + ([files] if draw(st.booleans()) or files != "" else [])
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from([*flag_values, *flag_values, "--resume", "--fail-fast", "--keep-going",
                                     "--quiet", "--bogus", "text"]))
        if kind in flag_values:
            value = draw(st.sampled_from(flag_values[kind]))
            args += [f"{kind}={value}"] if draw(st.booleans()) else [kind, value]
        elif kind == "--resume":
            args.append(draw(st.sampled_from(["--resume", "--resume=true", "--resume=no", "--resume=",
                                              "--resume=maybe"])))
        elif kind == "text":
            args.append(draw(st.text(min_size=1, max_size=10).filter(lambda t: "\x00" not in t)))
        else:
            args.append(kind)
    if draw(st.booleans()):
        args = draw(st.permutations(args))
    return args


def _files(folder: Path) -> dict[str, str]:
    valid = folder / "valid.yaml"
    valid.write_text("name: one\nrepeats: 1\nrounds: 1\n"
                     "datasets: [{generator: regression, n_samples: 100, n_features: 2}]\n"
                     "pairings: [linear_regression]\n")
    bad = folder / "bad.yaml"
    bad.write_text("name: bad\ndatasets: [{generator: moons, n_samples: 100, n_features: 2}]\n")
    (folder / "afolder").mkdir(exist_ok=True)
    return {"VALID": str(valid), "BAD": str(bad), "FOLDER": str(folder / "afolder")}


def _resolve(argv: list[str], files: dict[str, str]) -> list[str]:
    return [files.get(a, a) for a in argv]


def _command(argv: list[str]) -> str | None:
    """The command `cli.main` would run: the first word once `--resume=false` and the like are
    read (`--resume= run FILE` runs the suite, so it must not reach `cli.main` here)."""
    try:
        return next(iter(explicit_booleans(argv)), None)
    except argparse.ArgumentTypeError:
        return None


@settings(FUZZ, max_examples=400)
@example(argv=["--resume=", "run", "VALID", "--quiet"])  # a suite, though its first word is a flag
@example(argv=["\x1e", "VALID", "--resume=maybe", "validate"])  # a stray word is not named as the command
@example(argv=["run", "BAD", "--implementations", "nope"])  # two mistakes, the file's and the flag's: two lines
@given(argv=st.one_of(argvs("validate"), argvs("run"), argvs("list"),
                      st.lists(st.text(max_size=8).filter(lambda t: "\x00" not in t), max_size=3)))
def test_any_command_line_parses_or_is_one_line_of_error(scratch, argv):
    """`validate` runs for real; `run` up to the point where the store would open."""
    argv = _resolve(argv, _files(scratch))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if _command(argv) == "run":
                code = 0
                args = cli.parse(cli.build_parser(), explicit_booleans(argv))
                try:
                    experiment_from_args(args)
                except InputError as exc:  # as `cli.main` says it: a line per mistake
                    cli.say_input_error(exc)
                    code = 2
            else:
                code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    event(f"exit {code}")
    if code == 0:
        assert err.getvalue() == ""
    else:
        assert code == 2, (argv, err.getvalue())
        lines = err.getvalue().splitlines()
        assert lines and all(line.startswith("mlcompare: error: ") for line in lines), (argv, err.getvalue())


# -- command lines, as real processes ----------------------------------------------------------

@settings(FUZZ, max_examples=6)
@given(argv=argvs("run"))
def test_real_runs_of_fuzzed_command_lines(argv):
    """Exit 2 with one line and an untouched store, or a complete suite in the store."""
    with tempfile.TemporaryDirectory(prefix="mlcompare-fuzz-run-") as folder:
        folder = Path(folder)
        argv = _resolve(argv, _files(folder))
        db = folder / "mlflow.db"
        result = run_cli(*argv, cwd=folder, timeout=300,
                         env={"MLFLOW_TRACKING_URI": f"sqlite:///{db}", "MLCOMPARE_DATA_DIR": str(folder / "data")})
        event(f"exit {result.returncode}")
        assert "Traceback" not in result.stderr, result.stderr
        if result.returncode == 2:
            lines = result.stderr.splitlines()
            assert lines and all(line.startswith("mlcompare: error: ") for line in lines), result.stderr
            if db.exists():
                with sqlite3.connect(db) as conn:
                    assert conn.execute("select count(*) from runs").fetchone()[0] == 0
            return
        assert result.returncode in (0, 1), result.stderr
        if result.returncode == 0 and result.stdout.startswith("usage:"):  # -h among the words
            return
        with sqlite3.connect(db) as conn:
            statuses = dict(conn.execute("select status, count(*) from runs group by status").fetchall())
        assert "RUNNING" not in statuses
        assert sum(statuses.values()) >= 2  # the parent and at least one case
