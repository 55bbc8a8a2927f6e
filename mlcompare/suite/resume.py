"""Fingerprints that let `--resume` tell which cases an earlier suite already finished.

The experiment fingerprint covers what decides the numbers: the experiment file's bytes
(sha256); the repeats, rounds, minimum fit time and CPU threads actually used (the
threads a suite resolved, not the file's usually empty field); the hardware (CPU model,
physical cores and the CPUs this process may use, GPUs); the versions of the libraries
that do the work; and mlcompare's own version and commit (and whether its tree had local
changes). A suite resumed on another machine, after an upgrade or with other threads
measures everything again. A case's fingerprint adds what identifies it: pairing,
implementation, estimator and its resolved parameters (a changed pairing file changes
it) and the dataset's own fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mlcompare.config.experiment import Case, Experiment
from mlcompare.records import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG  # noqa: F401 - the tags they go in


def _digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:24]


def experiment_fingerprint(experiment: Experiment, host: dict[str, str], threads: int | None = None) -> str:
    """`host` is `suite.host.fingerprint()`: its hardware, version and commit tags count (not
    why a GPU is missing, which is worded differently from one run to the next); `threads`
    is what the suite's CPU cases use (default: the experiment's own field)."""
    gpus = host.get("host.gpu", "") if host.get("host.gpu_count", "0") != "0" else "none"
    sweep = {"thread_sweep": list(experiment.thread_sweep)} if experiment.thread_sweep else {}
    software = {k: v for k, v in host.items() if k.startswith("version.") or k.startswith("mlcompare.git_")}
    return _digest({"file_sha256": experiment.sha256, "repeats": experiment.repeats, "rounds": experiment.rounds,
                    "threads": threads if threads is not None else experiment.threads,
                    "min_time_s": experiment.min_time_s, "min_rounds": min(experiment.min_rounds, experiment.rounds),
                    "precision": experiment.precision,
                    "cpu": host.get("host.cpu_model", ""), "cores": host.get("host.cpu_physical_cores", ""),
                    "cpus_usable": host.get("host.cpus_usable", ""), "gpus": gpus, **software, **sweep})


def case_fingerprint(case: Case, experiment_fp: str) -> str:
    impl = case.implementation
    return _digest({"experiment": experiment_fp, "pairing": case.pairing.name, "implementation": impl.name,
                    "estimator": impl.estimator, "device": impl.device,
                    "params": case.pairing.estimator_params(impl), "dataset": case.dataset.fingerprint(),
                    **({"threads": case.threads} if case.threads is not None else {})})
