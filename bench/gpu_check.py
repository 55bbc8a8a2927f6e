"""The GPU proof in one go: probe the device, run the checks only a GPU can answer, then run an
experiment in stages, packing everything into three files after every step, so that a lease
cut short still returns what ran.

Meant for a GPU box that may lack MLflow, cuDF and cuML (wheels carried by hand): without
MLflow the suite's records are written as JSON lines (records.jsonl) that can be logged into
a store elsewhere later; checks that need a missing library are skipped, saying so.

    python bench/gpu_check.py --out OUT [--experiment experiments/gpu-first.yaml]
                              [--work DIR] [--data-dir DIR] [--implementations xgboost,sklearn]
                              [--max-rows N] [--stage-rows 300000] [--checks all|none|name,name]
                              [--check-timeout 240] [--no-suite] [--no-mlflow]
    python bench/gpu_check.py --check NAME        # one check, in this process; prints its JSON

OUT receives at most three files, rewritten after every step:
- `runs.tgz`: the work folder (probe.json: devices, driver, fingerprint, what can run;
  checks.json: one record per check, pass, fail or skip, with what it read; records.jsonl:
  every stage's suite; results.json; the suites' report files);
- `env.txt`: the Python, its packages and versions, the driver and nvidia-smi's answer;
- `gpu_check.log`: everything this command printed.
The datasets go to --data-dir (or MLCOMPARE_DATA_DIR), never beside OUT.

The experiment runs in stages, so that GPU rows come back early: the boosting pairings
(quick CPU baselines) at up to --stage-rows rows first, before the checks; after them the
forests, then the other pairings, then every larger dataset. Each stage is a suite of its
own (its cases compared with their baselines as in any suite).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mlcompare.records import PlainRecorder  # noqa: E402 - after the path: the checkout, not an install


class JsonRecorder(PlainRecorder):
    """A recorder with the suite's interface (`mlcompare.records.Recorder`) that writes plain JSON
    lines instead of MLflow: nothing to read back, heal or write behind."""

    def __init__(self, path: Path) -> None:
        self.path, self.tracking_uri, self.parent_id = path, f"file:{path}", "json-suite"

    def _write(self, kind: str, **fields) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": kind, **fields}, default=str) + "\n")

    def start_suite(self, run_name, params, tags, system_metrics=False) -> str:
        self._write("suite", run_name=run_name, params=params, tags=tags)
        return self.parent_id

    def log_case(self, run_name, status, params, metrics, tags, history=None, texts=None, dataset=None) -> str:
        self._write("case", run_name=run_name, status=status, params=params, metrics=metrics, tags=tags,
                    history=history, dataset=dataset, texts=texts)
        return run_name

    def finish_suite(self, status, metrics, tags, files, tables=None) -> None:
        self._write("suite_end", status=status, metrics=metrics, tags=tags)
        for name, content in files.items():
            path = self.path.parent / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        for name, table in (tables or {}).items():
            table.to_json(self.path.parent / name, orient="split", index=False)

    def abort_suite(self, status="KILLED", tags=None) -> None:
        self._write("suite_end", status=status, tags=tags or {})


def probe(out: Path) -> dict:
    from mlcompare.config.pairing import load_catalog
    from mlcompare.measure import device
    from mlcompare.suite import host as sysinfo

    gpus, why = device.cuda_devices()
    found = {"gpus": gpus, "why_none": why, "driver": device.driver_versions(), "python": platform.python_version(),
             "nvml": device.nvml()[1] or "ok", "gpu_properties": device.gpu_properties(),
             "gpu_state": device.gpu_state(), "reader": device.device_reader(),
             "fingerprint": sysinfo.fingerprint(),
             "implementations": {f"{p.name}/{i.name}": device.skip_reason(i.library, i.device) or "can run"
                                 for p in load_catalog().values() for i in p.implementations.values()}}
    (out / "probe.json").write_text(json.dumps(found, indent=2))
    print(json.dumps({k: found[k] for k in ("gpus", "why_none", "driver", "nvml", "reader")}), flush=True)
    return found


def run_checks(names: list[str], work: Path, timeout_s: float, pack) -> list[dict]:
    """Each check in a fresh process (a CUDA context, RMM's resource are per process), each
    stopped at `timeout_s` (a check that hangs is a failure, and the next one runs)."""
    results = []
    for name in names:
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--check", name],
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            result = {"check": name, "status": "fail", "detail": f"timed out after {timeout_s:.0f} s"}
        else:
            lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
            result = json.loads(lines[-1]) if lines else {
                "check": name, "status": "fail", "detail": f"exit {done.returncode}: {done.stderr[-2000:]}"}
        result.setdefault("seconds", round(time.perf_counter() - started, 1))
        results.append(result)
        print(f"check {name}: {result['status']} ({result['seconds']} s): {result['detail']}", flush=True)
        (work / "checks.json").write_text(json.dumps(results, indent=1, default=str))
        pack()
    return results


#: Pairings whose CPU baselines are quick: run first, so that GPU rows come back early.
FIRST_PAIRINGS = ("gradient_boosting", "gradient_boosting_regressor")
SECOND_PAIRINGS = ("random_forest", "random_forest_regressor")


def stages(experiment, stage_rows: int) -> list[tuple[str, object]]:
    """(name, sub-experiment) in the order they run: boosting, forests, the rest, at up to
    `stage_rows` rows; then every larger dataset. Stages without a case are left out."""
    def part(pairings, small: bool):
        datasets = [d for d in experiment.datasets if ((d.n_samples or 0) <= stage_rows) == small]
        chosen = [p for p in experiment.pairings if pairings(p.name)]
        return dataclasses.replace(experiment, pairings=chosen, datasets=datasets)

    plan = [("boosting", part(lambda n: n in FIRST_PAIRINGS, True)),
            ("forests", part(lambda n: n in SECOND_PAIRINGS, True)),
            ("others", part(lambda n: n not in FIRST_PAIRINGS + SECOND_PAIRINGS, True)),
            ("larger", part(lambda n: True, False))]
    return [(name, sub) for name, sub in plan if sub.cases()]


class Suites:
    """The experiment's stages, run a few at a time (`run`), into one recorder."""

    def __init__(self, args: argparse.Namespace, work: Path, pack) -> None:
        self.args, self.work, self.pack, self.records = args, work, pack, []
        self.recorder = None
        self.plan: list = []

    def run(self, names: tuple[str, ...] | None = None) -> None:
        """The stages named (all that are left: None), in the plan's order."""
        if self.recorder is None:
            self._open()
        for name, sub in [(n, sub) for n, sub in self.plan if names is None or n in names]:
            self.plan = [(n, s) for n, s in self.plan if n != name]
            self._stage(name, sub)

    def _open(self) -> None:
        from mlcompare.config.experiment import load_experiment

        args = self.args
        names = [n for n in args.implementations.split(",") if n] or None
        experiment = load_experiment(args.experiment, implementations=names)
        if args.max_rows:
            experiment = dataclasses.replace(experiment, datasets=[d for d in experiment.datasets
                                                                   if (d.n_samples or 0) <= args.max_rows])
        self.plan = stages(experiment, args.stage_rows)
        if not args.no_mlflow:
            try:
                if not os.environ.get("MLFLOW_TRACKING_URI"):
                    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{self.work.resolve() / 'mlflow.db'}"
                from mlcompare.tracking.writer import Recorder

                self.recorder = Recorder(experiment.name)
            except ImportError as exc:
                print(f"MLflow not importable ({exc})", flush=True)
        if self.recorder is None:
            print(f"writing JSON records to {self.work / 'records.jsonl'}", flush=True)
            self.recorder = JsonRecorder(self.work / "records.jsonl")

    def _stage(self, name: str, sub) -> None:
        from mlcompare.suite.cases import prepare_datasets
        from mlcompare.suite.runner import run_suite

        start = time.perf_counter()
        print(f"stage {name}: {len(sub.cases())} cases ({', '.join(p.name for p in sub.pairings)}; "
              f"{', '.join(d.label for d in sub.datasets)})", flush=True)
        outcome = run_suite(sub, self.recorder, prepared=prepare_datasets(sub))
        self.records += outcome.records
        (self.work / "results.json").write_text(json.dumps(self.records, indent=1, default=str))
        print(f"stage {name} done in {time.perf_counter() - start:.0f} s: {outcome.count('ok')} ran, "
              f"{outcome.count('skipped')} skipped, {outcome.count('failed')} failed", flush=True)
        self.pack()


def environment(out: Path) -> None:
    """env.txt: the Python, every installed distribution and its version, the driver, nvidia-smi."""
    from importlib import metadata

    lines = [f"python {platform.python_version()} ({sys.executable})", f"platform {platform.platform()}", ""]
    lines += sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"])
    try:
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        smi = f"nvidia-smi: {exc}"
    (out / "env.txt").write_text("\n".join(lines) + "\n\n" + smi)


class Tee:
    """One of this process's streams to the terminal and to OUT/gpu_check.log (both streams share it)."""

    def __init__(self, stream, log) -> None:
        self.stream, self.log = stream, log

    def write(self, text: str) -> int:
        self.log.write(text)
        self.log.flush()
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()
        self.log.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--work", type=Path, default=None,
                        help="where the records are written before they are packed (default: a folder in /tmp)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="the dataset cache (default: MLCOMPARE_DATA_DIR, else a folder in /tmp)")
    parser.add_argument("--experiment", default=str(REPO / "experiments" / "gpu-first.yaml"))
    parser.add_argument("--implementations", default="", help="comma-separated filter, e.g. sklearn,xgboost")
    parser.add_argument("--max-rows", type=int, default=0, help="leave out datasets larger than this")
    parser.add_argument("--stage-rows", type=int, default=300_000,
                        help="datasets up to this many rows run in the first stages, larger ones last")
    parser.add_argument("--checks", default="all", help="all, none, or comma-separated check names")
    parser.add_argument("--check-timeout", type=float, default=240.0, help="seconds a check may take (default 240)")
    parser.add_argument("--no-suite", action="store_true", help="probe and checks only")
    parser.add_argument("--no-mlflow", action="store_true", help="JSON records even where MLflow is installed")
    parser.add_argument("--check", help=argparse.SUPPRESS)  # one check, in this process
    args = parser.parse_args()
    if args.check:
        import gpu_checks

        print(json.dumps(gpu_checks.run(args.check), default=str), flush=True)
        return 0
    if args.out is None:
        parser.error("--out is required")
    args.out.mkdir(parents=True, exist_ok=True)
    work = (args.work or Path("/tmp") / f"mlcompare-gpu-check-{os.getpid()}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    data = args.data_dir or Path(os.environ.get("MLCOMPARE_DATA_DIR") or "/tmp/mlcompare-data")
    if data.resolve().is_relative_to(args.out.resolve()):
        parser.error(f"--data-dir {data} is inside --out: the datasets must not be sent back")
    os.environ["MLCOMPARE_DATA_DIR"] = str(data.resolve())
    log = (args.out / "gpu_check.log").open("a", encoding="utf-8")
    sys.stdout, sys.stderr = Tee(sys.stdout, log), Tee(sys.stderr, log)  # the suite's progress is on stderr

    def pack() -> None:
        """OUT/runs.tgz from the work folder, as it is now (written aside, then moved over)."""
        partial = args.out / "runs.tgz.partial"
        with tarfile.open(partial, "w:gz") as tar:
            tar.add(work, arcname="runs")
        partial.replace(args.out / "runs.tgz")

    environment(args.out)
    probe(work)
    pack()
    import gpu_checks

    names = list(gpu_checks.CHECKS) if args.checks == "all" else [] if args.checks == "none" else \
        [n for n in args.checks.split(",") if n]
    unknown = sorted(set(names) - set(gpu_checks.CHECKS))
    if unknown:
        parser.error(f"unknown checks {unknown} (known: {', '.join(gpu_checks.CHECKS)})")
    suites = Suites(args, work, pack)
    if not args.no_suite:  # first: the boosting stage's GPU rows come back within the first minutes
        suites.run(("boosting",))
    checks = run_checks(names, work, args.check_timeout, pack)
    if not args.no_suite:
        suites.run()
    return 1 if any(c["status"] == "fail" for c in checks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
