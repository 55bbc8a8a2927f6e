"""The suite's own process leaves scikit-learn and SciPy's statistics to the cases' processes.

Whatever the suite imports between two cases is time outside every model, paid on the
critical path: the median's interval (the binomial law) and the agreement of two clusterings
(their contingency table) once imported SciPy's statistics and scikit-learn there, about 1.3
CPU-seconds here, for arithmetic the suite now does itself. A real suite, in a fresh process,
as a second run finds things (the estimators' checks remembered).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import cli_env, run_cli, store_runs, write

_DRIVER = """
import json, sys
from mlcompare.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "loaded": sorted(m for m in ("sklearn", "scipy.stats") if m in sys.modules)}))
"""


def test_a_suite_s_process_imports_neither_scikit_learn_nor_scipy_stats(workdir):
    pytest.importorskip("sklearnex")
    path = write(workdir / "clusters.yaml", """\
        name: clusters
        rounds: 3
        datasets: [{generator: blobs, n_samples: [600], n_features: 4, centers: 8, cluster_std: 0.2}]
        pairings: [kmeans]
        implementations: [sklearn, sklearnex]
    """)
    # the estimators' checks remembered, as any run after the first finds them (a first check
    # imports each estimator's library in the suite's process: config/estimator_check_cache.py)
    assert run_cli("validate", str(path)).returncode == 0
    result = subprocess.run([sys.executable, "-c", _DRIVER, "run", str(path)], cwd=workdir, env=cli_env(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out == {"code": 0, "loaded": []}
    # and the suite did what once imported them: intervals over the processes, the two
    # clusterings' agreement (the same blobs, so the same clusters up to their ids)
    cases = {run.info.run_name: run.data.metrics for run in store_runs("clusters")
             if "mlflow.parentRunId" in run.data.tags}
    sklearnex = next(m for name, m in cases.items() if "sklearnex" in name)
    assert sklearnex["prediction_agreement"] == pytest.approx(1.0)
    assert all(m["fit_time_ci_level"] > 0.7 for m in cases.values())
