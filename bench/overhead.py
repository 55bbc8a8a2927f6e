"""The harness's own cost: how much of a suite's wall time is spent outside the models, and where.

Three measurements (the machine may be shared and noisy, so only ratios and shares taken
inside one run mean anything):

1. `quick` — experiments/quick.yaml run the way `mlcompare run` runs it (in this process,
   from the command-line entry point, a fresh store and, unless --data-dir, a fresh dataset
   cache), timed from before mlcompare is imported to the end of the report. The models'
   own time is what each case's process spent inside the estimators' calls (`model_time_s`:
   cold, warm and untimed fits, predicts, transfers; read back from the store where the
   suite logs it). Everything else is outside the models, split into:
   - per case: process start (from asking for the case's process to its case code starting:
     a fork, or a Python start and its imports), data read (`load_time_s`; for a forked case
     the warm server's read before the fork, counted once where it read, not where it held), the case's own
     work outside the model calls and the data read (scoring, memory sampling, the audit),
     process end (its result written, the process gone, the record read);
   - logging: the suite's time in the recorder's calls (and, writing behind, waiting for the
     writer: at a case's start and before the store is read back);
   - the suite: the store opened, the datasets prepared (where a forked child makes them
     while the store opens: the wait for them after it), the warm worker renewed before each
     round (a new server's imports, waited for), the warm worker and its spares waited for
     before a case's process is asked for (their imports, at the first case: part of the
     start-up), the report built and attached, the rest (imports, MLflow's among them, and
     the bookkeeping between cases);
   and, across stages, the start-up (until the first case's process is asked for) and the
   time from the last case's end to the command's end.
   Works on any checkout (--tree), so the same figures can be taken of an older version:
   the case-side timestamps come from a `sitecustomize` put on the case processes'
   PYTHONPATH, which wraps the case function without changing any of its code.
2. `bare` — recorded against bare: for sklearn KMeans, sklearn LinearRegression and XGBoost
   (cpu), the suite's recorded `fit_time_s` and `predict_time_s` (a case process forked from
   the warm worker, repeats, device sync, the predictions brought to the host) against a bare
   loop of the same fits and predicts on the same cached arrays, in a child forked from a
   fresh Python that imported the estimator's library (as the warm worker is), with the same
   garbage-collector policy (off inside each timed call) and calls under 5 ms timed in
   loops, as the harness times them. Each round
   draws the cases' order and which of the two runs first. The median ratio over every
   case and round should be within 1.00 ± 0.03 for each phase; the interval of that median
   (order statistics over the case × round ratios) says whether the run resolved it.
3. `logging` — logging 1,000 cases' params, metrics and tags into a fresh SQLite store.

Run:  .venv/bin/python bench/overhead.py [--parts quick,bare,logging] [--tree PATH] [--rounds 3]
      [--data-dir DIR] [--store FILE]   (reuse a dataset cache and a store: a second run's figures)
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Data sized so that one fit takes ~0.2-2 s on a 2-core machine.
BENCH_EXPERIMENT = """\
name: overhead
repeats: 5
rounds: 1
datasets:
  - {generator: blobs, n_samples: 400000, n_features: 32, centers: 8, cluster_std: 4.0}
  - {generator: regression, n_samples: 1000000, n_features: 64}
  - {generator: classification, n_samples: 100000, n_features: 32}
pairings: [kmeans, linear_regression, gradient_boosting]
implementations: [sklearn, xgboost_cpu]
"""
MEASURED = {("kmeans", "sklearn"), ("linear_regression", "sklearn"), ("gradient_boosting", "xgboost_cpu")}
PHASES = ("fit", "predict")

#: Put on the case processes' PYTHONPATH: wraps `run_case` as soon as its module is imported
#: (in a fresh worker, or in the warm worker before it forks) and appends `pid begin end`
#: (CLOCK_MONOTONIC, one clock for every process of the machine) to $MLCOMPARE_BENCH_CASES.
SITECUSTOMIZE = '''\
import importlib.abc, importlib.machinery, os, sys, time

_LOG = os.environ.get("MLCOMPARE_BENCH_CASES")


def _wrap(module):
    run_case = module.run_case

    def timed_run_case(spec):
        begin = time.monotonic()
        try:
            return run_case(spec)
        finally:
            with open(_LOG, "a") as out:
                out.write(f"{os.getpid()} {begin} {time.monotonic()}\\n")

    module.run_case = timed_run_case


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "mlcompare.measure.case":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _wrap(module)

        spec.loader.exec_module = exec_module
        return spec


if _LOG:
    sys.meta_path.insert(0, _Finder())
'''


class Clock:
    """Durations of calls to some of the suite's own functions (recording stand-ins)."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[float, float]]] = defaultdict(list)

    def wrap(self, owner: object, name: str, label: str | None = None) -> None:
        original = getattr(owner, name, None)
        if original is None:  # not in this version of mlcompare
            return
        calls = self.calls[label or name]

        @functools.wraps(original)
        def timed(*args, **kwargs):
            begin = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                calls.append((begin, time.monotonic()))

        setattr(owner, name, timed)

    def total(self, label: str) -> float:
        return sum(end - begin for begin, end in self.calls.get(label, []))


def quick_stages(experiment_path: Path, work: Path, warm: bool) -> dict:
    """Run the experiment once through `mlcompare run` in this process; every stage's seconds."""
    cases_log = work / "cases.log"
    site = work / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    os.environ["MLCOMPARE_BENCH_CASES"] = str(cases_log)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))

    started = time.monotonic()
    from mlcompare import cli
    from mlcompare.suite import cases, isolation, runner
    from mlcompare.tracking import writer

    clock = Clock()
    outcomes = []
    run_suite = runner.run_suite

    def keeping(*args, **kwargs):
        outcome = run_suite(*args, **kwargs)
        outcomes.append(outcome)
        return outcome

    runner.run_suite = keeping
    isolated = []  # (begin, end, case name, record) of each case run here
    run_here = runner.run_here

    def keeping_case(case, *args, **kwargs):
        begin = time.monotonic()
        record = run_here(case, *args, **kwargs)
        isolated.append((begin, time.monotonic(), case.name, record))
        return record

    runner.run_here = keeping_case
    clock.wrap(runner, "prepare_datasets", "prepare")
    clock.wrap(cases, "prepare_datasets", "prepare")
    clock.wrap(runner, "_summary_from_store", "report")
    clock.wrap(isolation, "renew_warm_worker", "renew")  # a new server before each round, waited for
    # the servers' imports, waited for before a case's process is asked for (the first case's)
    clock.wrap(getattr(isolation, "WarmWorker", None), "ready", "servers ready")
    clock.wrap(writer.Recorder, "__init__", "store opened")
    for method in ("start_suite", "log_case", "finished_cases", "finish_suite", "abort_suite"):
        clock.wrap(writer.Recorder, method, "logging")
    clock.wrap(writer.Recorder, "drain", "writer wait")  # writing behind: before the store is read
    # prepared by a forked child while the store opens: only the wait for it is the suite's
    clock.wrap(getattr(cases, "PreparingBeside", None), "result", "prepare wait")
    try:
        from mlcompare.measure import timed_lock

        clock.wrap(timed_lock.Turns, "for_case", "writer wait")  # writing behind: at a case's start
    except ImportError:
        pass
    argv = ["run", str(experiment_path), "--quiet"] + ([] if warm else ["--no-warm-worker"])
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse: an older mlcompare without --no-warm-worker
        if warm:
            raise
        code = exc.code
    wall = time.monotonic() - started
    assert code in (0, 1), f"mlcompare run exited with {code}"
    outcome = outcomes[0]
    ran = [r for r in outcome.records if "model_time_s" in r]
    model_records = sum(r["model_time_s"] for r in ran)
    model_store = _time_in_store(outcome.parent_run_id, "model_time_s")
    reported = _time_in_store(outcome.parent_run_id, "reported_time_s")
    # each case process against its case code's begin and end (the one that began inside its window)
    lines = [(float(b), float(e)) for b, e in (line.split()[1:] for line in cases_log.read_text().splitlines())]
    waits = clock.calls.get("writer wait", []) + clock.calls.get("servers ready", [])
    start_s = end_s = inside_s = load = 0.0
    processes = []
    for call_begin, call_end, name, record in isolated:
        code = next(((b, e) for b, e in lines if call_begin <= b <= call_end), None)
        if code is None:  # skipped (no process), or it died before its case code ended
            continue
        case_begin, case_end = code
        waited = sum(min(e, case_begin) - b for b, e in waits if call_begin <= b < case_begin)
        model, read = record.get("model_time_s", 0.0), record.get("metrics", {}).get("load_time_s", 0.0)
        # a dataset the warm server read before the fork (`held_dataset`): its read is in the start
        by_server, here = record.get("load_by_server_s", 0.0), record.get("load_in_process_s", read)
        stages = (case_begin - call_begin - waited - by_server, by_server + here,
                  (case_end - case_begin) - model - here, call_end - case_end)
        start_s, load, inside_s, end_s = (a + b for a, b in zip((start_s, load, inside_s, end_s), stages))
        processes.append((sum(stages), name, record.get("process", "fresh"), model, stages))
    # until the first case's process is asked for: its call, then the servers' imports waited for in it
    first = min(((b, e) for b, e, _, record in isolated if record.get("status") != "skipped"), default=None)
    ready_first = sum(e - b for b, e in clock.calls.get("servers ready", []) if first and first[0] <= b <= first[1])
    return {"wall": wall, "startup": (first[0] - started + ready_first) if first else None,
            "after_last": wall - (max(end for _, end, _, _ in isolated) - started) if isolated else None,
            "model": model_store if model_store is not None else model_records,
            "model_source": "store" if model_store is not None else "records", "ran": len(ran),
            "reported": reported,
            "processes": len(processes), "cases": len(outcome.records), "process_start": start_s,
            "by_case": sorted(processes, reverse=True),
            "data_read": load, "case_other": inside_s, "process_end": end_s, "logging": clock.total("logging"),
            "writer_wait": clock.total("writer wait"), "store_opened": clock.total("store opened"),
            "renew": clock.total("renew"), "renewals": len(clock.calls.get("renew", [])),
            "servers_ready": clock.total("servers ready") - _inside(clock, "servers ready", "renew"),
            "prepared_beside": "prepare wait" in clock.calls,
            "prepare": clock.total("prepare wait" if "prepare wait" in clock.calls else "prepare"),
            "report": clock.total("report") - _drain_in(clock, "report")}


def _drain_in(clock: Clock, label: str) -> float:
    """Writer waits that happened inside calls of `label` (counted once, as waiting)."""
    return _inside(clock, "writer wait", label)


def _inside(clock: Clock, inner: str, outer: str) -> float:
    """Time in calls of `inner` made inside calls of `outer` (counted once, under `outer`)."""
    inside = 0.0
    for begin, end in clock.calls.get(outer, []):
        inside += sum(e - b for b, e in clock.calls.get(inner, []) if begin <= b and e <= end)
    return inside


def _time_in_store(parent_run_id: str, metric: str) -> float | None:
    """Σ of a metric (model_time_s, reported_time_s) over the suite's case runs as the store holds
    them (None: not logged by this version)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient()
    parent = client.get_run(parent_run_id)
    runs = client.search_runs([parent.info.experiment_id], f"tags.`mlflow.parentRunId` = '{parent_run_id}'",
                              max_results=5000)
    values = [r.data.metrics[metric] for r in runs if metric in r.data.metrics]
    return sum(values) if values else None


def print_quick(s: dict) -> None:
    wall, model = s["wall"], s["model"]
    outside = wall - model
    per = max(s["processes"], 1)
    print(f"   wall {wall:.1f} s; in the models' own calls {model:.1f} s ({s['ran']} of {s['cases']} cases ran; "
          f"model time from the {s['model_source']}); outside them {outside:.1f} s = {outside / wall:.1%}")
    if s.get("reported") is not None:
        print(f"   in the timed calls whose values are reported (fit, host-input fit and predict values × their "
              f"loops): {s['reported']:.1f} s = {s['reported'] / wall:.1%} of wall; model calls reported nowhere "
              f"(warm-ups, calibration): {model - s['reported']:.1f} s = {(model - s['reported']) / wall:.1%}")
    rows = [("process start (fork, or Python start + imports)", s["process_start"], per),
            ("data read (load_time_s)", s["data_read"], per),
            ("case code outside model calls and data read", s["case_other"], per),
            ("process end (result, exit, record read)", s["process_end"], per),
            ("logging: recorder calls in the suite's thread", s["logging"], s["cases"]),
            ("logging: waiting for the writer", s["writer_wait"], s["cases"]),
            ("store opened (experiment found or created)", s["store_opened"], None),
            (f"warm worker renewed before a round ({s.get('renewals', 0)}), ready", s.get("renew", 0.0), None),
            ("warm worker and spares: imports waited for at a case", s.get("servers_ready", 0.0), None),
            ("datasets: waited for, after the store (a child made them)" if s.get("prepared_beside")
             else "datasets prepared", s["prepare"], None),
            ("report built and attached", s["report"], None)]
    accounted = sum(seconds for _, seconds, _ in rows)
    for name, seconds, count in rows:
        each = f"  ({seconds / count * 1000:7.1f} ms a case)" if count else ""
        print(f"   {name:<52} {seconds:7.2f} s = {seconds / wall:6.1%} of wall{each}")
    print(f"   {'the rest (imports, bookkeeping between cases)':<52} {outside - accounted:7.2f} s = "
          f"{(outside - accounted) / wall:6.1%} of wall")
    if s.get("startup") is not None:
        print(f"   (start-up, from the command's start until the first case's process is asked for: "
              f"{s['startup']:.2f} s; from the last case's end to the command's end: {s['after_last']:.2f} s)")
    by_kind = defaultdict(list)
    for total, _, kind, _, _ in s["by_case"]:
        by_kind[kind].append(total)
    for kind, totals in sorted(by_kind.items()):
        print(f"   {kind} case processes: {len(totals)}, outside the models {sum(totals):.2f} s "
              f"(median {statistics.median(totals) * 1000:.0f} ms a case)")
    print("   the case processes with the most time outside the models "
          "(start, data read, case code, end; seconds):")
    for total, name, kind, model, stages in s["by_case"][:6]:
        print(f"     {total:6.2f} s  {name} ({kind}; model {model:.2f} s): {', '.join(f'{x:.2f}' for x in stages)}")


def bare_times(case, threads: int, repeats: int) -> tuple[list[float], list[float]]:
    """The same fits and predicts as the suite's, on the same cached arrays, with nothing around
    them, in a process made the way a case's is: a fresh Python that imports the estimator's
    library first (as the warm worker does), then forks, and the child times the loop with
    the same garbage-collector policy (off inside each timed call), the predictions made a
    numpy array, and calls under 5 ms timed in loops of 50 ms (timeit's autorange)."""
    import json as _json
    import subprocess

    job = {"estimator": case.implementation.estimator, "params": case.pairing.estimator_params(case.implementation),
           "task": case.pairing.task, "dataset": str(_materialised(case)), "threads": threads, "repeats": repeats}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--bare-child", _json.dumps(job)],
                          capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode != 0:
        raise RuntimeError(f"the bare loop failed: {done.stderr[-2000:]}")
    fits, predicts = _json.loads(done.stdout.strip().splitlines()[-1])
    return fits, predicts


def _materialised(case) -> Path:
    from mlcompare.data import cache as datasets

    return datasets.materialise(case.dataset)


def bare_child(job: dict) -> None:
    """`--bare-child`: import the estimator's library, fork, time the loop in the child, print it."""
    import json as _json

    from mlcompare.pairings.imports import import_estimator

    cls = import_estimator(job["estimator"])  # the warm worker's preload
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, _json.dumps(_bare_loop(cls, job)).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    print(data.decode())


def _bare_loop(cls, job: dict) -> list[list[float]]:
    import gc
    import math

    import numpy as np
    from threadpoolctl import threadpool_limits

    from mlcompare.data import cache as datasets
    from mlcompare.measure.threads import with_threads

    arrays = datasets.load_split(Path(job["dataset"]))
    params = with_threads(cls, job["params"], job["threads"])
    args = (arrays["X_train"],) if job["task"] == "clustering" else (arrays["X_train"], arrays["y_train"])

    def timed(fn, loops: int = 1) -> float:
        gc.disable()
        try:
            start = time.perf_counter()
            for _ in range(loops):
                fn()
            return (time.perf_counter() - start) / loops
        finally:
            gc.enable()

    def values(fn) -> list[float]:
        first = timed(fn)  # long enough: the first value; too short: it sets a loop of 50 ms of calls
        loops = 1 if first >= 0.005 else max(2, math.ceil(0.05 / first))
        return ([first] if loops == 1 else []) + [timed(fn, loops) for _ in range(job["repeats"] - (loops == 1))]

    with threadpool_limits(limits=job["threads"]):
        model = cls(**params).fit(*args)  # warm-up, as the suite's cold fit
        fits = values(lambda: cls(**params).fit(*args))
        model = cls(**params).fit(*args)
        np.asarray(model.predict(arrays["X_test"]))  # warm-up, as the suite's first predict
        predicts = values(lambda: np.asarray(model.predict(arrays["X_test"])))
    return [fits, predicts]


def recorded_vs_bare(rounds: int, work: Path) -> dict[tuple[str, str, str], list[float]]:
    """Per case, phase (fit, predict) and round: a one-case suite (one process) and the bare loop
    (one forked child) back to back, the cases and which of the two goes first drawn anew each
    round (seeded: a rerun draws the same)."""
    import dataclasses
    import random

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
    order = random.Random(0)
    for round_ in range(1, rounds + 1):
        order.shuffle(cases)
        for case in cases:
            one = dataclasses.replace(experiment, pairings=[case.pairing], datasets=[case.dataset],
                                      implementations=[case.implementation.name])

            def suite() -> dict[str, float]:
                metrics = run_suite(one, Recorder("overhead"), say=lambda line: None).records[0]["metrics"]
                return {"fit": metrics["fit_time_s"], "predict": metrics["predict_time_s"]}

            def bare() -> dict[str, float]:
                fits, predicts = bare_times(case, threads, experiment.repeats)
                return {"fit": statistics.median(fits), "predict": statistics.median(predicts)}

            if order.random() < 0.5:
                recorded, plain = suite(), bare()
            else:
                plain, recorded = bare(), suite()
            for phase in PHASES:
                key = (case.pairing.name, case.implementation.name, phase)
                ratios[key].append(recorded[phase] / plain[phase])
                print(f"  round {round_}: {key[0]:<18} {key[1]:<12} {phase:<7} recorded {recorded[phase]:.4f} s, "
                      f"bare {plain[phase]:.4f} s, ratio {recorded[phase] / plain[phase]:.3f}", flush=True)
    return ratios


def logging_cost(cases: int, behind: bool) -> float:
    """Seconds the suite's thread spends logging `cases` cases (writing behind: until all are written)."""
    from mlcompare.tracking.writer import Recorder

    recorder = Recorder("overhead-logging")
    recorder.start_suite("logging", {"suite_name": "logging"}, {"mlcompare.kind": "suite"})
    if behind:
        recorder.write_behind()
    params = {f"param_{i}": i for i in range(45)}
    metrics = {f"metric_{i}": i / 7 for i in range(25)}
    tags = {f"tag_{i}": "x" * 40 for i in range(30)}
    start = time.perf_counter()
    for i in range(cases):
        recorder.log_case(f"case {i}", "FINISHED", params, metrics, tags,
                          history={"fit_time_repeat_s": [0.1, 0.11, 0.12]})
    if behind:
        recorder.drain()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="quick,bare,logging", help="comma-separated: quick, bare, logging")
    parser.add_argument("--tree", type=Path, default=REPO, help="the mlcompare checkout to measure (default: this)")
    parser.add_argument("--experiment", type=Path, default=None, help="default: the tree's experiments/quick.yaml")
    parser.add_argument("--data-dir", type=Path, default=None, help="a dataset cache to reuse (default: a fresh one)")
    parser.add_argument("--store", type=Path, default=None,
                        help="an SQLite store file to reuse, as a second run finds it (default: a fresh one)")
    parser.add_argument("--no-warm-worker", dest="warm", action="store_false",
                        help="quick: every case in a fresh process")
    parser.add_argument("--rounds", type=int, default=7, help="bare: rounds of every case (default 7)")
    parser.add_argument("--log-cases", type=int, default=1000)
    parser.add_argument("--bare-child", help=argparse.SUPPRESS)  # one bare loop, in a process of its own
    args = parser.parse_args()
    if args.bare_child:
        import json as _json

        sys.path.insert(0, str(REPO))
        bare_child(_json.loads(args.bare_child))
        return 0
    parts = set(args.parts.split(","))
    args.tree = args.tree.resolve()
    experiment = (args.experiment or args.tree / "experiments" / "quick.yaml").resolve()
    sys.path.insert(0, str(args.tree))
    with tempfile.TemporaryDirectory(prefix="mlcompare-bench-") as tmp:
        work = Path(tmp)
        os.chdir(work)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{(args.store or work / 'mlflow.db').resolve()}"
        os.environ["MLCOMPARE_DATA_DIR"] = str(args.data_dir or work / "data")
        for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
            os.environ.pop(var, None)

        if "quick" in parts:  # first: nothing of mlcompare or MLflow is imported yet
            print(f"1. {experiment.name} through `mlcompare run` ({args.tree}"
                  f"{'' if args.warm else ', --no-warm-worker'})", flush=True)
            print_quick(quick_stages(experiment, work, args.warm))

        if "bare" in parts:
            print(f"2. recorded fit_time_s and predict_time_s against a bare loop ({args.rounds} rounds)", flush=True)
            ratios = recorded_vs_bare(args.rounds, work)
            for (pairing, impl, phase), values in sorted(ratios.items()):
                print(f"   {pairing:<18} {impl:<12} {phase:<7} median ratio {statistics.median(values):.3f} "
                      f"(rounds: {', '.join(f'{v:.3f}' for v in values)})")
            from mlcompare.measure.stats import median_interval

            for phase in PHASES:
                values = [r for (_, _, p), found in ratios.items() if p == phase for r in found]
                overall, interval = statistics.median(values), median_interval(values)
                width = f", interval {interval.low:.3f}–{interval.high:.3f} ({interval.level:.1%})" if interval else ""
                verdict = ("resolved within" if interval and 0.97 <= interval.low and interval.high <= 1.03 else
                           "not resolved to")
                print(f"   {phase}: overall median ratio {overall:.3f}{width}: {verdict} 1.00 ± 0.03")

        if "logging" in parts:
            from mlcompare.tracking.writer import Recorder

            seconds = logging_cost(args.log_cases, behind=False)
            print(f"3. logging {args.log_cases} cases to SQLite: {seconds:.1f} s "
                  f"({seconds / args.log_cases * 1000:.1f} ms a case, written in the suite's thread)")
            if hasattr(Recorder, "write_behind"):
                seconds = logging_cost(args.log_cases, behind=True)
                print(f"   written behind: {seconds:.1f} s until all were written "
                      f"({seconds / args.log_cases * 1000:.1f} ms a case; the suite's thread only queues them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
