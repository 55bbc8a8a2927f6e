"""The audit's refusals: evidence that is missing or points at the CPU fails the case."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

from mlcompare.measure.audit import FallbackError, output_evidence, verify_device

ACCEL = {"library": "cuml.accel", "device": "gpu", "accelerator": "cuml.accel",
         "estimator": "sklearn.cluster.KMeans", "accelerator_setup": "cuml.accel installed with disable_uvm=True"}


def test_cuml_accel_without_a_profile_is_refused_not_trusted():
    with pytest.raises(FallbackError, match="no profile of KMeans.fit"):
        verify_device(None, ACCEL, accel_report=None)


def test_cuml_accel_with_a_cpu_call_in_its_profile_is_a_fallback():
    stats = SimpleNamespace(gpu_calls=1, cpu_calls=1, fallback_reasons={"sparse input"})
    report = SimpleNamespace(method_calls={"KMeans.fit": stats, "KMeans.predict": stats})
    with pytest.raises(FallbackError, match=r"ran KMeans.fit on the CPU \(sparse input\)"):
        verify_device(None, ACCEL, accel_report=report)
    nothing = SimpleNamespace(method_calls={})
    with pytest.raises(FallbackError, match="no GPU call was recorded"):
        verify_device(None, ACCEL, accel_report=nothing)


def test_cuml_outputs_in_host_memory_for_device_inputs_fail_the_case():
    spec = {"library": "cuml", "device": "gpu"}
    with pytest.raises(FallbackError, match=r"returned its pred as numpy.ndarray, in host memory"):
        output_evidence("cuda (x)", spec, {"pred": np.zeros(3), "proba": None}, device_input=True)
    # not asked of other libraries, nor of fits given host arrays (cuml.accel takes numpy)
    assert output_evidence("cuda (x)", {"library": "xgboost", "device": "gpu"}, {"pred": np.zeros(3)}, True) \
        == "cuda (x)"
    assert output_evidence("cuda (x)", spec, {"pred": np.zeros(3)}, device_input=False) == "cuda (x)"


@pytest.mark.skipif(importlib.util.find_spec("cuml") is not None, reason="cuml is installed")
def test_cuml_evidence_says_what_was_checked():
    ran_on = verify_device(None, {"library": "cuml", "device": "gpu"}, gpu_growth_mb=12.5)
    assert ran_on == "cuda (device memory +12.5 MB during fit; this cuML has no CPU mode (removed in 25.08))"
