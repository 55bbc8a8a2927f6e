"""MLflow's usage telemetry (a thread posting the API calls it recorded) is off in a suite's process."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import cli_env

#: Variables that make MLflow keep its telemetry off by itself (it reads them as "a CI or a
#: test"): removed, so that what is seen is mlcompare's doing.
_CI_MARKERS = ("PYTEST_CURRENT_TEST", "GITHUB_ACTIONS", "CI", "CIRCLECI", "GITLAB_CI", "JENKINS_URL", "TRAVIS",
               "TF_BUILD", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_ARN", "BUILDKITE", "TEAMCITY_VERSION",
               "CLOUD_RUN_EXECUTION", "RUNBOT_HOST_URL", "RUNBOT_BUILD_NAME", "RUNBOT_WORKER_ID", "DO_NOT_TRACK",
               "MLFLOW_DISABLE_TELEMETRY")
PROBE = """
import json
import mlcompare.tracking.writer  # what a suite imports to log
from mlflow.telemetry.client import get_telemetry_client
from mlflow.telemetry.utils import _is_ci_env_or_testing
print(json.dumps({"ci": _is_ci_env_or_testing(), "client": get_telemetry_client() is not None}))
"""


def _probe(extra: dict[str, str]) -> dict:
    env = {k: v for k, v in cli_env().items() if k not in _CI_MARKERS} | extra
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_mlflow_s_telemetry_is_off_unless_the_user_turned_it_on():
    found = _probe({})
    assert found == {"ci": False, "client": False}  # MLflow alone would make its client here
    assert _probe({"MLFLOW_DISABLE_TELEMETRY": "false"}) == {"ci": False, "client": True}  # the user's word holds
