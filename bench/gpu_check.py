"""The GPU proof in one go: probe the device, run the checks only a GPU can answer, then run
experiments/gpu-check.yaml, writing everything to an output folder.

Meant for a GPU box that may lack MLflow, cuDF and cuML (wheels carried by hand): without
MLflow the suite's records are written as JSON lines (records.jsonl) that can be logged
into a store elsewhere later; checks that need a missing library are skipped, saying so.

    python bench/gpu_check.py --out OUT [--experiment experiments/gpu-check.yaml]
                              [--implementations xgboost,sklearn] [--max-rows N]
                              [--checks all|none|name,name] [--no-suite] [--no-mlflow]
    python bench/gpu_check.py --check NAME        # one check, in this process; prints its JSON

OUT receives probe.json (devices, driver, fingerprint, what can run), checks.json (one
record per check: pass, fail or skip, with what it read), and the suite's records.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


class JsonRecorder:
    """A recorder with the suite's interface that writes plain JSON lines instead of MLflow."""

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


def run_checks(names: list[str], out: Path) -> list[dict]:
    """Each check in a fresh process (a CUDA context, RMM's resource are per process)."""
    results = []
    for name in names:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--check", name],
                              capture_output=True, text=True, timeout=900)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        result = json.loads(lines[-1]) if lines else {
            "check": name, "status": "fail", "detail": f"exit {done.returncode}: {done.stderr[-2000:]}"}
        results.append(result)
        print(f"check {name}: {result['status']} ({result.get('seconds', '?')} s): {result['detail']}", flush=True)
        (out / "checks.json").write_text(json.dumps(results, indent=1, default=str))
    return results


def run_experiment(args: argparse.Namespace) -> None:
    from mlcompare.config.experiment import load_experiment
    from mlcompare.suite.cases import prepare_datasets
    from mlcompare.suite.runner import run_suite

    names = [n for n in args.implementations.split(",") if n] or None
    experiment = load_experiment(args.experiment, implementations=names)
    if args.max_rows:
        experiment = dataclasses.replace(experiment, datasets=[d for d in experiment.datasets
                                                               if (d.n_samples or 0) <= args.max_rows])
    recorder = None
    if not args.no_mlflow:
        try:
            if not os.environ.get("MLFLOW_TRACKING_URI"):
                os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{args.out.resolve() / 'mlflow.db'}"
            from mlcompare.tracking.writer import Recorder

            recorder = Recorder(experiment.name)
        except ImportError as exc:
            print(f"MLflow not importable ({exc})", flush=True)
    if recorder is None:
        print(f"writing JSON records to {args.out / 'records.jsonl'}", flush=True)
        recorder = JsonRecorder(args.out / "records.jsonl")
    start = time.perf_counter()
    prepared = prepare_datasets(experiment)
    outcome = run_suite(experiment, recorder, prepared=prepared)
    (args.out / "results.json").write_text(json.dumps(outcome.records, indent=1, default=str))
    print(f"done in {time.perf_counter() - start:.0f} s: {outcome.count('ok')} ran, "
          f"{outcome.count('skipped')} skipped, {outcome.count('failed')} failed", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--experiment", default=str(REPO / "experiments" / "gpu-check.yaml"))
    parser.add_argument("--implementations", default="", help="comma-separated filter, e.g. sklearn,xgboost")
    parser.add_argument("--max-rows", type=int, default=0, help="leave out datasets larger than this")
    parser.add_argument("--checks", default="all", help="all, none, or comma-separated check names")
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
    os.environ.setdefault("MLCOMPARE_DATA_DIR", str(args.out.resolve().parent / "mlcompare-data"))
    probe(args.out)
    import gpu_checks

    names = list(gpu_checks.CHECKS) if args.checks == "all" else [] if args.checks == "none" else \
        [n for n in args.checks.split(",") if n]
    unknown = sorted(set(names) - set(gpu_checks.CHECKS))
    if unknown:
        parser.error(f"unknown checks {unknown} (known: {', '.join(gpu_checks.CHECKS)})")
    checks = run_checks(names, args.out)
    if not args.no_suite:
        run_experiment(args)
    return 1 if any(c["status"] == "fail" for c in checks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
