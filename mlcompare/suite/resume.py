"""Fingerprints that let `--resume` tell which cases an earlier suite already finished.

The experiment fingerprint covers what makes measurements comparable: the experiment
file's bytes (sha256), the repeats, threads and minimum fit time actually used, and the
hardware (CPU model, GPUs),
so a suite resumed on another machine measures everything again. A case's fingerprint
adds what identifies it: pairing, implementation, estimator and its resolved parameters
(a changed pairing file changes it) and the dataset's own fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mlcompare.config.experiment import Case, Experiment
from mlcompare.records import CASE_FINGERPRINT_TAG, EXPERIMENT_FINGERPRINT_TAG  # noqa: F401 - the tags they go in


def _digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:24]


def experiment_fingerprint(experiment: Experiment, host: dict[str, str]) -> str:
    """`host` is sysinfo.fingerprint(); only the hardware part of it counts."""
    gpus = host.get("host.gpu", "") if host.get("host.gpu_count", "0") != "0" else "none"
    return _digest({"file_sha256": experiment.sha256, "repeats": experiment.repeats,
                    "threads": experiment.threads, "min_time_s": experiment.min_time_s,
                    "cpu": host.get("host.cpu_model", ""), "gpus": gpus})


def case_fingerprint(case: Case, experiment_fp: str) -> str:
    impl = case.implementation
    return _digest({"experiment": experiment_fp, "pairing": case.pairing.name, "implementation": impl.name,
                    "estimator": impl.estimator, "device": impl.device,
                    "params": case.pairing.estimator_params(impl), "dataset": case.dataset.fingerprint()})
