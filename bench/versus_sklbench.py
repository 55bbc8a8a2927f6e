"""Beside scikit-learn_bench: the same cases timed by mlcompare and by Intel's scikit-learn_bench
("sklbench"), one tool after the other on this machine, side by side.

What is compared:

- each tool's wall time for the whole set of cases, from its command's start to its end (its
  start-up, data handling, timing, scoring and result files included): `mlcompare run
  EXPERIMENT` in a fresh process with a fresh MLflow store, and `python -m sklbench --config CFG
  --result-file OUT` in a fresh process. Both find their data already cached (mlcompare's own
  Parquet cache, made with `mlcompare.data.cache.materialise`; sklbench's custom-data cache,
  written from the very same rows), so neither wall holds making the data;
- per case, the fit time each reports (mlcompare: `fit_time_s`, the median over the case's
  processes, read back from its store with `fit_processes` and `fit_time_ci_level`; sklbench:
  the training `time[ms]`, its box-filtered mean of `bench:n_runs` fits in one process) and their
  ratio; the predict times the same way. The JSON keeps, for each mlcompare case, its model time
  and the warm-ups its processes decided (`warmup_plan`).

Made equal: the rows (sklbench's x is mlcompare's cached training rows then its test rows, split
with `{train_size: n_train, test_size: n_test, shuffle: false}`, so both train on the same
rows and predict on the same rows), their layout (numpy, C order, float32: what mlcompare hands
its estimators), the estimator class (sklbench's `library` is the module mlcompare imports it
from) and its keyword arguments (exactly what mlcompare builds it with:
`Pairing.estimator_params`, then `n_jobs` set to the thread count where it is left open), the
thread count (mlcompare's default, one per physical core; sklbench gets it as `n_jobs` and, for
the native pools that mlcompare limits with threadpoolctl and sklbench does not limit at all,
as OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS in its environment), and the
predict call timed (sklbench's inference methods narrowed to `predict`, mlcompare's timed
call; sklbench's default also times predict_proba and transform). Everything else is each
tool's own default: mlcompare's experiment sets no rounds, repeats, precision or min_time_s;
sklbench keeps n_runs 10 and time_limit 3600.

The two tools run alternately (`--pairs N`, each pair swapping which goes first). sklbench's
runner starts each case as `python -m sklbench.benchmarks.sklearn_estimator` and lists the
environment with `pip list`, both found on PATH: the folder of --sklbench-python is put first
on PATH for it, and the bench checks that the `python` found there is that Python.

Making a Python for sklbench (its own virtual environment; nothing of it is kept here):
  clone IntelPython/scikit-learn_bench and check out commit 399d9ebc117200c6e3eba0de2784fe1f36c04fec
  into SKLBENCH_SRC; python3 -m venv SKLBENCH_VENV; SKLBENCH_VENV/bin/pip install scikit-learn
  scikit-learn-intelex pandas numpy scipy tabulate fastparquet pyarrow h5py openpyxl tqdm psutil
  requests py-cpuinfo (the versions of scikit-learn and scikit-learn-intelex mlcompare's .venv has);
  the checkout has no installable package (`pip install -e` fails), so put it on the path with a
  .pth file: echo SKLBENCH_SRC > "$(SKLBENCH_VENV/bin/python -c 'import sysconfig;
  print(sysconfig.get_paths()["purelib"])')/sklbench-src.pth". Then SKLBENCH_PYTHON is
  SKLBENCH_VENV/bin/python (`SKLBENCH_PYTHON -m sklbench --help` works).

Run:  .venv/bin/python bench/versus_sklbench.py --sklbench-python SKLBENCH_PYTHON --out OUT
      [--cases kmeans,random_forest,linear_regression,gradient_boosting] [--implementations sklearn,sklearnex]
      [--scale full|small] [--sizes moderate|long] [--pairs 1] [--keep-work]
It prints the settings and the table and writes OUT/versus_sklbench.json (and each run's log,
experiment file, sklbench config and result file under OUT). `--scale small`: rows ÷ 10, a
quick trial. The full size takes some minutes a pair on 2 cores. `--sizes long`: the same pairings
where scikit-learn's fits last about a second or more (LONG_DATASETS), about five minutes a pair.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SKLBENCH_COMMIT = "399d9ebc117200c6e3eba0de2784fe1f36c04fec"

#: The four mission pairings at moderate sizes (fits of about 0.2-2 s on 2 cores), as quick.yaml has them.
DATASETS = {
    "kmeans": {"generator": "blobs", "n_samples": 200_000, "n_features": 32, "centers": 8, "cluster_std": 4.0},
    "random_forest": {"generator": "classification", "n_samples": 40_000, "n_features": 32},
    "linear_regression": {"generator": "regression", "n_samples": 500_000, "n_features": 64},
    "gradient_boosting": {"generator": "classification", "n_samples": 40_000, "n_features": 32},
}
#: The same pairings where scikit-learn's fits last about a second or more here: the sizes where
#: what a case costs is its fits, not the tools' fixed costs around them. One classification
#: dataset for both its pairings, as above (an experiment runs every pairing on every dataset of
#: its task).
LONG_DATASETS = {
    "kmeans": {"generator": "blobs", "n_samples": 1_000_000, "n_features": 32, "centers": 8, "cluster_std": 4.0},
    "random_forest": {"generator": "classification", "n_samples": 80_000, "n_features": 32},
    "linear_regression": {"generator": "regression", "n_samples": 1_000_000, "n_features": 64},
    "gradient_boosting": {"generator": "classification", "n_samples": 80_000, "n_features": 32},
}
SIZES = {"moderate": DATASETS, "long": LONG_DATASETS}
PAIRINGS = tuple(DATASETS)
IMPLEMENTATIONS = ("sklearn", "sklearnex")  # gradient_boosting has sklearn only among these
SCALES = {"full": 1, "small": 10}
#: sklbench's limits on threads are n_jobs and taskset; these are the native pools mlcompare limits too.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
LAYOUT = {"format": "numpy", "order": "C", "dtype": "float32"}


@dataclass
class BenchCase:
    """One case as both tools run it."""

    key: str  # "pairing/implementation"
    pairing: str
    implementation: str
    estimator: str  # mlcompare's import path, e.g. sklearn.cluster.KMeans
    params: dict[str, Any]  # the estimator's keyword arguments, as mlcompare builds them
    dataset_label: str
    dataset_name: str  # sklbench's name for the exported rows
    n_train: int
    n_test: int

    @property
    def module(self) -> str:
        return self.estimator.rsplit(".", 1)[0]

    @property
    def class_name(self) -> str:
        return self.estimator.rsplit(".", 1)[1]


@dataclass
class Run:
    tool: str
    wall_s: float
    returncode: int
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    note: str = ""


def experiment_yaml(pairings: list[str], implementations: list[str], scale: int, sizes: str = "moderate") -> str:
    """One mlcompare experiment for every case, at mlcompare's defaults (no rounds, repeats,
    precision or min_time_s), its datasets those of `sizes` (SIZES)."""
    specs = []
    for name in pairings:
        dataset = SIZES[sizes][name]
        entry = dict(dataset, n_samples=dataset["n_samples"] // scale)
        if entry not in specs:
            specs.append(entry)
    lines = ["name: versus-sklbench", "datasets:"]
    lines += ["  - {" + ", ".join(f"{k}: {v}" for k, v in entry.items()) + "}" for entry in specs]
    lines += [f"pairings: [{', '.join(pairings)}]", f"implementations: [{', '.join(implementations)}]"]
    return "\n".join(lines) + "\n"


def prepare(experiment_path: Path, mlc_data: Path, skl_data: Path) -> tuple[list[BenchCase], int]:
    """The experiment's cases with the params mlcompare builds its estimators with; every dataset
    materialised in mlcompare's cache and exported to sklbench's (train rows, then test rows)."""
    import numpy as np

    from mlcompare.config.experiment import load_experiment
    from mlcompare.data import cache
    from mlcompare.measure.threads import default_threads, with_threads
    from mlcompare.pairings.cluster_params import split_params
    from mlcompare.pairings.imports import import_estimator

    experiment = load_experiment(experiment_path)
    threads = experiment.threads or default_threads()
    exported: dict[str, tuple[str, int, int]] = {}
    cases = []
    for case in experiment.cases():
        spec = case.dataset
        fingerprint = spec.fingerprint()
        if fingerprint not in exported:
            directory = cache.materialise(spec, mlc_data)
            arrays = cache.load_split(directory)
            name = f"mlcompare_{spec.generator}_{spec.cache_key()}"
            x = np.ascontiguousarray(np.concatenate([arrays["X_train"], arrays["X_test"]]), dtype=np.float32)
            y = np.concatenate([arrays["y_train"], arrays["y_test"]])
            np.savez(skl_data / f"{name}_x.npz", x)
            np.savez(skl_data / f"{name}_y.npz", y)
            description: dict[str, Any] = {}
            if y.dtype.kind in "iu":  # labels: sklbench then loads y as integers, as mlcompare has them
                description["n_classes"] = int(len(np.unique(y)))
            (skl_data / f"{name}.json").write_text(json.dumps(description))
            exported[fingerprint] = (name, len(arrays["X_train"]), len(arrays["X_test"]))
        name, n_train, n_test = exported[fingerprint]
        impl = case.implementation
        cls = import_estimator(impl.estimator)
        params = with_threads(cls, split_params(case.pairing.estimator_params(impl))[0], threads)
        cases.append(BenchCase(f"{case.pairing.name}/{impl.name}", case.pairing.name, impl.name, impl.estimator,
                               params, spec.label, name, n_train, n_test))
    return cases, threads


def sklbench_config(cases: list[BenchCase], skl_data: Path) -> dict[str, Any]:
    """One sklbench template per case: the same estimator, params and rows; sklbench's defaults otherwise."""
    templates = {}
    for case in cases:
        templates[case.key] = {
            "algorithm": {"library": case.module, "estimator": case.class_name, "device": "cpu",
                          "estimator_params": case.params,
                          "estimator_methods": {"training": "fit", "inference": "predict"}},
            "data": {"dataset": case.dataset_name, "cache_directory": str(skl_data),
                     "split_kwargs": {"train_size": case.n_train, "test_size": case.n_test, "shuffle": False},
                     **LAYOUT},
        }
    return {"TEMPLATES": templates}


def sklbench_env(sklbench_python: Path, threads: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    # unresolved: a virtual environment's python is a link, and the environment is where the link is
    env["PATH"] = os.pathsep.join([str(sklbench_python.parent), env.get("PATH", "")])
    env.update({name: str(threads) for name in THREAD_VARIABLES})
    return env


def probe_sklbench(sklbench_python: Path, env: dict[str, str]) -> dict[str, Any]:
    """sklbench's Python: the versions it runs, its checkout's commit, and whether the `python`
    its runner will start (found on PATH) is this one."""
    code = ("import json, sys, sklbench, sklearn; from importlib.metadata import version\n"
            "try: ex = version('scikit-learn-intelex')\nexcept Exception: ex = None\n"
            "print(json.dumps({'prefix': sys.prefix, 'sklbench': sklbench.__file__, 'sklearn': sklearn.__version__,"
            " 'sklearnex': ex, 'python': sys.version.split()[0]}))")
    done = subprocess.run([str(sklbench_python), "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"bench/versus_sklbench.py: {sklbench_python} cannot import sklbench:\n{done.stderr[-2000:]}")
    info = json.loads(done.stdout.strip().splitlines()[-1])
    on_path = subprocess.run(["python", "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True,
                             env=env)
    if on_path.returncode != 0 or on_path.stdout.strip() != info["prefix"]:
        raise SystemExit(f"bench/versus_sklbench.py: sklbench's runner starts each case as `python` from PATH, and "
                         f"the `python` beside {sklbench_python} is not that Python (use a virtual environment's "
                         f"bin/python)")
    source = Path(info["sklbench"]).resolve().parent.parent
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True)
    info["commit"] = commit.stdout.strip() if commit.returncode == 0 else "unknown (not a git checkout)"
    return info


def run_mlcompare(experiment_path: Path, mlc_data: Path, folder: Path, log: Path) -> Run:
    """`mlcompare run EXPERIMENT` in a fresh process with a fresh store; the data already cached."""
    folder.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{folder / 'mlflow.db'}"
    env["MLCOMPARE_DATA_DIR"] = str(mlc_data)
    script = Path(sys.executable).parent / "mlcompare"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "mlcompare"]
    with log.open("w") as out:
        start = time.perf_counter()
        done = subprocess.run([*command, "run", str(experiment_path)], stdout=out, stderr=subprocess.STDOUT,
                              cwd=folder, env=env)
        wall = time.perf_counter() - start
    run = Run("mlcompare", wall, done.returncode)
    run.cases = mlcompare_results(env["MLFLOW_TRACKING_URI"])
    return run


def mlcompare_results(uri: str) -> dict[str, dict[str, Any]]:
    """Per case ("pairing/implementation"): its fit and predict figures as the store holds them."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    ids = [e.experiment_id for e in client.search_experiments()]
    out = {}
    for run in client.search_runs(ids, "tags.`mlcompare.kind` = 'case'", max_results=1000):
        params, metrics, tags = run.data.params, run.data.metrics, run.data.tags
        key = f"{params.get('pairing')}/{params.get('implementation')}"
        # what the case spent and why: its model time, its warm-ups and the plan that decided them
        out[key] = {"status": tags.get("case_status", run.info.status),
                    **{name: metrics[name] for name in ("fit_time_s", "fit_processes", "fit_time_ci_level",
                                                        "fit_time_ci_low_s", "fit_time_ci_high_s", "fit_repeats",
                                                        "fit_cold_time_s", "fit_warmups", "model_time_s",
                                                        "predict_time_s", "predict_repeats") if name in metrics},
                    **({"warmup_plan": tags["warmup_plan"]} if "warmup_plan" in tags else {})}
    return out


def run_sklbench(sklbench_python: Path, env: dict[str, str], config: Path, folder: Path, log: Path,
                 cases: list[BenchCase]) -> Run:
    """`python -m sklbench --config CFG --result-file OUT` in a fresh process; its data cache already written."""
    folder.mkdir(parents=True)
    result = folder / "sklbench-result.json"
    with log.open("w") as out:
        start = time.perf_counter()
        done = subprocess.run([str(sklbench_python), "-m", "sklbench", "--config", str(config),
                               "--result-file", str(result)], stdout=out, stderr=subprocess.STDOUT, cwd=folder,
                              env=env)
        wall = time.perf_counter() - start
    run = Run("sklbench", wall, done.returncode)
    if result.exists():
        run.cases = sklbench_results(json.loads(result.read_text()), cases)
        shutil.copy(result, log.with_suffix(".result.json"))
    else:
        run.note = "no result file"
    return run


def sklbench_results(result: dict[str, Any], cases: list[BenchCase]) -> dict[str, dict[str, Any]]:
    """Per case: sklbench's training and inference times (its box-filtered means, in seconds), the
    spread it reports, and any estimator parameter its fitted estimator reports other than given."""
    by_id = {(c.module, c.class_name, c.dataset_name): c for c in cases}
    out: dict[str, dict[str, Any]] = {}
    for entry in result.get("bench_cases", []):
        case = by_id.get((entry.get("library"), entry.get("estimator"), entry.get("dataset")))
        if case is None:
            continue
        found = out.setdefault(case.key, {})
        phase = {"training": "fit", "inference": "predict"}.get(entry.get("stage"))
        if phase is None:
            continue
        times = [t / 1000 for t in entry["time[ms]"]]  # every run's, in the order run
        found[f"{phase}_time_s"], found[f"{phase}_time_std_s"] = box_filter(times)
        found[f"{phase}_runs_s"] = times
        found[f"{phase}_samples"] = entry.get("samples")
        if phase == "fit":
            found["params_differ"] = {k: entry.get(k) for k, v in case.params.items() if entry.get(k) != v}
    return out


def box_filter(values: list[float], left: float = 0.2, right: float = 0.8) -> tuple[float, float]:
    """sklbench's summary of a case's runs (`sklbench.utils.measurement.box_filter`, which its report
    applies to the raw `time[ms]` lists of the result file): the mean and standard deviation of the
    values strictly between the sorted values at 20 % and 80 % of the count (of 10 runs: the 4th
    to the 8th smallest, 5 values); one value, or all equal: that value."""
    import numpy as np

    ordered = sorted(values)
    if len(ordered) == 1 or len(set(ordered)) == 1:
        return ordered[0], 0.0
    lower, upper = ordered[int(len(ordered) * left)], ordered[int(len(ordered) * right)]
    kept = [v for v in ordered if lower < v < upper]
    return float(np.mean(kept)), float(np.std(kept))  # no value kept: nan, as sklbench's


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fmt(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else format(value, spec)


def print_table(cases: list[BenchCase], runs: list[list[Run]], threads: int, probe: dict[str, Any],
                versions: dict[str, Any], scale: str) -> dict[str, Any]:
    """The walls of every pair and the per-case figures (medians over the pairs); the summary as a dict."""
    print(f"\nsettings: {len(cases)} cases, scale {scale}, {threads} threads (mlcompare's default: physical cores; "
          f"sklbench: n_jobs where the estimator takes it, and {', '.join(THREAD_VARIABLES)}={threads})")
    print("data: mlcompare's cached train rows then test rows, handed to sklbench as numpy, C order, float32 "
          "(the layout mlcompare hands its estimators); split {train_size: n_train, test_size: n_test, "
          "shuffle: false}")
    print(f"mlcompare: defaults (no rounds, repeats, precision, min_time_s set); scikit-learn {versions['sklearn']}, "
          f"scikit-learn-intelex {versions['sklearnex']}")
    print(f"sklbench: commit {probe['commit']}, defaults (n_runs 10, time_limit 3600; inference: predict); "
          f"scikit-learn {probe['sklearn']}, scikit-learn-intelex {probe['sklearnex']}")
    if probe["commit"] != SKLBENCH_COMMIT:
        print(f"  NOTE: sklbench is not at the pinned commit {SKLBENCH_COMMIT}")
    if (probe["sklearn"], probe["sklearnex"]) != (versions["sklearn"], versions["sklearnex"]):
        print("  NOTE: the two environments run different library versions: fit times may differ for that alone")
    print("walls: from each command's start to its end; mlcompare with a fresh store, both with their data "
          "cache already made\n")
    print(f"{'pair':<6}{'first':<11}{'mlcompare wall s':>18}{'sklbench wall s':>17}{'ratio':>8}  exit codes")
    walls = []
    for i, pair in enumerate(runs, 1):
        by = {r.tool: r for r in pair}
        m, s = by["mlcompare"], by["sklbench"]
        walls.append((m.wall_s, s.wall_s))
        print(f"{i:<6}{pair[0].tool:<11}{m.wall_s:>18.1f}{s.wall_s:>17.1f}{m.wall_s / s.wall_s:>8.2f}  "
              f"mlcompare {m.returncode}, sklbench {s.returncode}{' (' + s.note + ')' if s.note else ''}")
    m_wall, s_wall = statistics.median(w[0] for w in walls), statistics.median(w[1] for w in walls)
    if len(runs) > 1:
        print(f"{'median':<17}{m_wall:>18.1f}{s_wall:>17.1f}{m_wall / s_wall:>8.2f}")
    print("\nper case (medians over the pairs): mlcompare fit_time_s = median over its processes (P, and the "
          "interval's level); sklbench = box-filtered mean of its 10 fits in one process")
    header = (f"{'case':<30}{'dataset':<22}{'mlcompare fit s':>16}{'P':>3}{'level':>7}{'sklbench fit s':>15}"
              f"{'ratio':>7}{'mlc predict s':>14}{'skl predict s':>14}{'ratio':>7}")
    print(header)
    summary = {}
    for case in cases:
        def median_of(tool: str, name: str) -> float | None:
            values = [r.cases.get(case.key, {}).get(name) for pair in runs for r in pair if r.tool == tool]
            values = [v for v in values if v is not None]
            return statistics.median(values) if values else None

        row = {f"{tool}_{name}": median_of(tool, name) for tool in ("mlcompare", "sklbench")
               for name in ("fit_time_s", "predict_time_s")}
        row |= {"mlcompare_fit_processes": median_of("mlcompare", "fit_processes"),
                "mlcompare_fit_time_ci_level": median_of("mlcompare", "fit_time_ci_level"),
                "fit_ratio": ratio(row["mlcompare_fit_time_s"], row["sklbench_fit_time_s"]),
                "predict_ratio": ratio(row["mlcompare_predict_time_s"], row["sklbench_predict_time_s"])}
        summary[case.key] = row
        processes = row["mlcompare_fit_processes"]
        level = row["mlcompare_fit_time_ci_level"]
        print(f"{case.key:<30}{case.dataset_label:<22}{fmt(row['mlcompare_fit_time_s'], '.4f'):>16}"
              f"{fmt(processes, '.0f'):>3}{fmt(level * 100 if level else None, '.1f') + '%':>7}"
              f"{fmt(row['sklbench_fit_time_s'], '.4f'):>15}{fmt(row['fit_ratio'], '.2f'):>7}"
              f"{fmt(row['mlcompare_predict_time_s'], '.4f'):>14}{fmt(row['sklbench_predict_time_s'], '.4f'):>14}"
              f"{fmt(row['predict_ratio'], '.2f'):>7}")
    problems = [f"{r.tool} {key}: {found.get('status')}" for pair in runs for r in pair
                for key, found in r.cases.items() if r.tool == "mlcompare" and found.get("status") not in ("ok", None)]
    problems += [f"sklbench {key}: reports {found['params_differ']}" for pair in runs for r in pair
                 if r.tool == "sklbench" for key, found in r.cases.items() if found.get("params_differ")]
    missing = [f"{r.tool} has no result for {c.key}" for pair in runs for r in pair for c in cases
               if c.key not in r.cases]
    for line in sorted(set(problems + missing)):
        print(f"  NOTE: {line}")
    fits = [row["fit_ratio"] for row in summary.values() if row["fit_ratio"] is not None]
    print(f"\nwall ratio mlcompare/sklbench {m_wall / s_wall:.2f} (target ≤ 0.80); fit ratios "
          f"{', '.join(f'{f:.2f}' for f in fits)} (target within 0.90-1.10)")
    return {"wall_s": {"mlcompare": m_wall, "sklbench": s_wall, "ratio": m_wall / s_wall}, "cases": summary}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sklbench-python", type=Path, required=True,
                        help="a Python where `python -m sklbench` works (a virtual environment's bin/python)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the JSON, logs and configs")
    parser.add_argument("--cases", default=",".join(PAIRINGS), help=f"pairings, comma-separated (default: all of "
                        f"{', '.join(PAIRINGS)})")
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS),
                        help="implementations, comma-separated (default: sklearn,sklearnex)")
    parser.add_argument("--scale", choices=tuple(SCALES), default="full", help="small: rows ÷ 10, a quick trial")
    parser.add_argument("--sizes", choices=tuple(SIZES), default="moderate",
                        help="moderate: quick.yaml's larger sizes (fits of 0.02-4.5 s); long: where scikit-learn's "
                             "fits last about a second or more")
    parser.add_argument("--pairs", type=int, default=1, help="runs of each tool, alternating which goes first")
    parser.add_argument("--keep-work", action="store_true", help="keep the data caches and stores (printed)")
    args = parser.parse_args()
    pairings = [p for p in args.cases.split(",") if p]
    implementations = [i for i in args.implementations.split(",") if i]
    unknown = [p for p in pairings if p not in DATASETS]
    if unknown or not pairings or args.pairs < 1:
        parser.error(f"--cases: one or more of {', '.join(PAIRINGS)}; --pairs at least 1")
    sklbench_python = Path(os.path.abspath(args.sklbench_python))  # absolute, links kept
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    import sklearn

    try:
        from importlib.metadata import version

        sklearnex_version: str | None = version("scikit-learn-intelex")
    except ImportError:
        sklearnex_version = None
    versions = {"sklearn": sklearn.__version__, "sklearnex": sklearnex_version, "python": platform.python_version()}

    work = Path(tempfile.mkdtemp(prefix="versus-sklbench-"))
    if " " in str(work):  # sklbench's runner splits each case's command line (its data folder in it) at spaces
        raise SystemExit(f"bench/versus_sklbench.py: the work folder {work} has a space; set TMPDIR")
    try:
        mlc_data, skl_data = work / "mlcompare-data", work / "sklbench-data"
        skl_data.mkdir(parents=True)
        experiment_path = out / "versus-sklbench.yaml"
        experiment_path.write_text(experiment_yaml(pairings, implementations, SCALES[args.scale], args.sizes))
        print(f"preparing: the datasets in mlcompare's cache, exported to sklbench's ({work})", flush=True)
        cases, threads = prepare(experiment_path, mlc_data, skl_data)
        config = out / "sklbench-config.json"
        config.write_text(json.dumps(sklbench_config(cases, skl_data), indent=2))
        env = sklbench_env(sklbench_python, threads)
        probe = probe_sklbench(sklbench_python, env)
        runs = []
        for pair in range(1, args.pairs + 1):
            order = ("mlcompare", "sklbench") if pair % 2 else ("sklbench", "mlcompare")
            done = []
            for tool in order:
                print(f"pair {pair}: {tool} ...", flush=True)
                folder, log = work / f"pair{pair}-{tool}", out / f"pair{pair}-{tool}.log"
                if tool == "mlcompare":
                    run = run_mlcompare(experiment_path, mlc_data, folder, log)
                else:
                    run = run_sklbench(sklbench_python, env, config, folder, log, cases)
                print(f"pair {pair}: {tool} took {run.wall_s:.1f} s (exit {run.returncode}; log {log})", flush=True)
                done.append(run)
            runs.append(done)
        summary = print_table(cases, runs, threads, probe, versions, f"{args.scale}, sizes {args.sizes}")
        results = {
            "settings": {"scale": args.scale, "sizes": args.sizes, "threads": threads, "pairs": args.pairs,
                         "layout": LAYOUT,
                         "thread_variables": {name: threads for name in THREAD_VARIABLES},
                         "sklbench_commit": probe["commit"], "sklbench_pinned": SKLBENCH_COMMIT,
                         "mlcompare_versions": versions,
                         "sklbench_versions": {k: probe[k] for k in ("sklearn", "sklearnex", "python")}},
            "cases": [{"key": c.key, "estimator": c.estimator, "params": c.params, "dataset": c.dataset_label,
                       "sklbench_dataset": c.dataset_name, "n_train": c.n_train, "n_test": c.n_test} for c in cases],
            "pairs": [[{"tool": r.tool, "wall_s": r.wall_s, "returncode": r.returncode, "note": r.note,
                        "cases": r.cases} for r in pair] for pair in runs],
            "summary": summary,
        }
        (out / "versus_sklbench.json").write_text(json.dumps(results, indent=2))
        print(f"\nwritten: {out / 'versus_sklbench.json'}")
    finally:
        if args.keep_work:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
