"""The GPU proof in one go: probe the device, then run experiments/gpu-check.yaml and write
every result record (and, when MLflow is importable, an MLflow store) to an output folder.

Meant for a GPU box that may lack MLflow (wheels carried by hand): without MLflow the
records are written as JSON lines and can be logged into a store elsewhere later.

Run:  python bench/gpu_check.py --out OUT [--experiment experiments/gpu-check.yaml]
                                 [--implementations xgboost,sklearn] [--max-rows N]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
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

    def finish_suite(self, status, metrics, tags, files) -> None:
        self._write("suite_end", status=status, metrics=metrics, tags=tags)
        for name, text in files.items():
            (self.path.parent / name).write_text(text, encoding="utf-8")

    def abort_suite(self, status="KILLED") -> None:
        self._write("suite_end", status=status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--experiment", default=str(REPO / "experiments" / "gpu-check.yaml"))
    parser.add_argument("--implementations", default="", help="comma-separated filter, e.g. sklearn,xgboost")
    parser.add_argument("--max-rows", type=int, default=0, help="leave out datasets larger than this")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MLCOMPARE_DATA_DIR", str(args.out.parent / "mlcompare-data"))

    from mlcompare.config.experiment import load_experiment
    from mlcompare.config.pairing import load_catalog
    from mlcompare.measure import device
    from mlcompare.suite import host as sysinfo
    from mlcompare.suite.cases import prepare_datasets
    from mlcompare.suite.runner import run_suite

    gpus, why = device.cuda_devices()
    probe = {"gpus": gpus, "why_none": why, "driver": device.driver_versions(), "python": platform.python_version(),
             "fingerprint": sysinfo.fingerprint(),
             "implementations": {f"{p.name}/{i.name}": device.skip_reason(i.library, i.device) or "can run"
                                 for p in load_catalog().values() for i in p.implementations.values()}}
    (args.out / "probe.json").write_text(json.dumps(probe, indent=2))
    print(json.dumps({k: probe[k] for k in ("gpus", "why_none", "driver")}), flush=True)

    names = [n for n in args.implementations.split(",") if n] or None
    experiment = load_experiment(args.experiment, implementations=names)
    if args.max_rows:
        experiment = dataclasses.replace(experiment, datasets=[d for d in experiment.datasets
                                                               if (d.n_samples or 0) <= args.max_rows])
    try:
        if not os.environ.get("MLFLOW_TRACKING_URI"):
            os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{args.out.resolve() / 'mlflow.db'}"
        from mlcompare.tracking.writer import Recorder

        recorder = Recorder(experiment.name)
    except ImportError as exc:
        print(f"MLflow not importable ({exc}); writing JSON records to {args.out / 'records.jsonl'}", flush=True)
        recorder = JsonRecorder(args.out / "records.jsonl")
    start = time.perf_counter()
    prepared = prepare_datasets(experiment)
    outcome = run_suite(experiment, recorder, prepared=prepared)
    (args.out / "results.json").write_text(json.dumps(outcome.records, indent=1, default=str))
    print(f"done in {time.perf_counter() - start:.0f} s: {outcome.count('ok')} ran, "
          f"{outcome.count('skipped')} skipped, {outcome.count('failed')} failed", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
