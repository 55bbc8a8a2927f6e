"""The harness's own cost: is a recorded `fit_time_s` the fit (and `predict_time_s` the predict), and nothing else?

Three measurements, all in one run (the machine may be shared and noisy, so only ratios
measured side by side mean anything):

1. Recorded against bare: for sklearn KMeans, sklearn LinearRegression and XGBoost (cpu),
   on data where one fit takes roughly 0.2-2 s, the suite's recorded `fit_time_s` and
   `predict_time_s` (a worker process, repeats, device sync, the predictions brought to
   the host) against a bare loop of the same fits and predicts on the same cached arrays
   in this process. Rounds alternate suite and bare loop. The median ratio should be
   within 1.00 ± 0.03 for each phase.
2. For experiments/quick.yaml: the share of the suite's wall time spent outside the
   models' own calls (process starts, imports, data generation and loading, logging).
3. Logging 1,000 cases' params, metrics and tags into a fresh SQLite store.

Run:  .venv/bin/python bench/overhead.py [--rounds 3] [--skip-quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Data sized so that one fit takes ~0.2-2 s on a 2-core machine.
BENCH_EXPERIMENT = """\
name: overhead
repeats: 5
datasets:
  - {generator: blobs, n_samples: 400000, n_features: 32, centers: 8, cluster_std: 4.0}
  - {generator: regression, n_samples: 1000000, n_features: 64}
  - {generator: classification, n_samples: 100000, n_features: 32}
pairings: [kmeans, linear_regression, gradient_boosting]
implementations: [sklearn, xgboost_cpu]
"""
MEASURED = {("kmeans", "sklearn"), ("linear_regression", "sklearn"), ("gradient_boosting", "xgboost_cpu")}
PHASES = ("fit", "predict")


def bare_times(case, threads: int, repeats: int) -> tuple[list[float], list[float]]:
    """The same fits and predicts as the suite's, on the same cached arrays, with nothing around them."""
    from threadpoolctl import threadpool_limits

    from mlcompare.config.imports import import_estimator
    from mlcompare.data import cache as datasets
    from mlcompare.measure.threads import with_threads

    arrays = datasets.load_split(datasets.materialise(case.dataset))
    cls = import_estimator(case.implementation.estimator)
    params = with_threads(cls, case.pairing.estimator_params(case.implementation), threads)
    args = (arrays["X_train"],) if case.pairing.task == "clustering" else (arrays["X_train"], arrays["y_train"])
    fits, predicts = [], []
    with threadpool_limits(limits=threads):
        model = cls(**params).fit(*args)  # warm-up, as the suite's cold fit
        for _ in range(repeats):
            start = time.perf_counter()
            model = cls(**params).fit(*args)
            fits.append(time.perf_counter() - start)
        model.predict(arrays["X_test"])  # warm-up, as the suite's first predict
        for _ in range(repeats):
            start = time.perf_counter()
            model.predict(arrays["X_test"])
            predicts.append(time.perf_counter() - start)
    return fits, predicts


def recorded_vs_bare(rounds: int, work: Path) -> dict[tuple[str, str, str], list[float]]:
    """Per case, phase (fit, predict) and round: a one-case suite and the bare loop back to
    back, in alternating order."""
    import dataclasses

    from mlcompare.config.experiment import load_experiment
    from mlcompare.measure.threads import default_threads
    from mlcompare.suite.runner import run_suite
    from mlcompare.tracking.writer import Recorder

    path = work / "overhead.yaml"
    path.write_text(BENCH_EXPERIMENT)
    experiment = load_experiment(path)
    threads = default_threads()
    cases = [c for c in experiment.cases() if (c.pairing.name, c.implementation.name) in MEASURED]
    ratios: dict[tuple[str, str, str], list[float]] = {(*k, phase): [] for k in MEASURED for phase in PHASES}
    for round_ in range(1, rounds + 1):
        for case in cases:
            one = dataclasses.replace(experiment, pairings=[case.pairing], datasets=[case.dataset],
                                      implementations=[case.implementation.name])

            def suite() -> dict[str, float]:
                metrics = run_suite(one, Recorder("overhead"), say=lambda line: None).records[0]["metrics"]
                return {"fit": metrics["fit_time_s"], "predict": metrics["predict_time_s"]}

            def bare() -> dict[str, float]:
                fits, predicts = bare_times(case, threads, experiment.repeats)
                return {"fit": statistics.median(fits), "predict": statistics.median(predicts)}

            if round_ % 2:
                recorded, plain = suite(), bare()
            else:
                plain, recorded = bare(), suite()
            for phase in PHASES:
                key = (case.pairing.name, case.implementation.name, phase)
                ratios[key].append(recorded[phase] / plain[phase])
                print(f"  round {round_}: {key[0]:<18} {key[1]:<12} {phase:<7} recorded {recorded[phase]:.4f} s, "
                      f"bare {plain[phase]:.4f} s, ratio {recorded[phase] / plain[phase]:.3f}", flush=True)
    return ratios


def quick_suite_share() -> tuple[float, float, int]:
    from mlcompare.config.experiment import load_experiment
    from mlcompare.suite.runner import run_suite
    from mlcompare.tracking.writer import Recorder

    experiment = load_experiment(REPO / "experiments" / "quick.yaml")
    start = time.perf_counter()
    outcome = run_suite(experiment, Recorder("overhead-quick"), say=lambda line: None)
    wall = time.perf_counter() - start
    inside = sum(r.get("model_time_s", 0.0) for r in outcome.records)
    return wall, inside, outcome.count("ok")


def logging_cost(cases: int) -> float:
    from mlcompare.tracking.writer import Recorder

    recorder = Recorder("overhead-logging")
    recorder.start_suite("logging", {"suite_name": "logging"}, {"mlcompare.kind": "suite"})
    params = {f"param_{i}": i for i in range(45)}
    metrics = {f"metric_{i}": i / 7 for i in range(25)}
    tags = {f"tag_{i}": "x" * 40 for i in range(30)}
    start = time.perf_counter()
    for i in range(cases):
        recorder.log_case(f"case {i}", "FINISHED", params, metrics, tags,
                          history={"fit_time_repeat_s": [0.1, 0.11, 0.12]})
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-quick", action="store_true", help="skip the quick.yaml wall-time share")
    parser.add_argument("--log-cases", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mlcompare-bench-") as tmp:
        work = Path(tmp)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
        os.environ.setdefault("MLCOMPARE_DATA_DIR", str(work / "data"))
        for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
            os.environ.pop(var, None)

        print(f"1. recorded fit_time_s and predict_time_s against a bare loop ({args.rounds} rounds)", flush=True)
        ratios = recorded_vs_bare(args.rounds, work)
        for (pairing, impl, phase), values in sorted(ratios.items()):
            print(f"   {pairing:<18} {impl:<12} {phase:<7} median ratio {statistics.median(values):.3f} "
                  f"(rounds: {', '.join(f'{v:.3f}' for v in values)})")
        for phase in PHASES:
            overall = statistics.median([r for (_, _, p), values in ratios.items() if p == phase for r in values])
            verdict = "within" if abs(overall - 1) <= 0.03 else "OUTSIDE"
            print(f"   {phase}: overall median ratio {overall:.3f}: {verdict} 1.00 ± 0.03")

        if not args.skip_quick:
            wall, inside, ran = quick_suite_share()
            print(f"2. experiments/quick.yaml: {wall:.1f} s wall, {inside:.1f} s in the models' own calls "
                  f"({ran} cases ran); outside them: {wall - inside:.1f} s = {(wall - inside) / wall:.0%}")

        seconds = logging_cost(args.log_cases)
        print(f"3. logging {args.log_cases} cases to SQLite: {seconds:.1f} s "
              f"({seconds / args.log_cases * 1000:.1f} ms a case; target under 10 s for 1,000)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
