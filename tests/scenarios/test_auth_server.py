"""A team tracking server with logins: `mlflow server --app-name basic-auth` on loopback, its
admin password set through its configuration file, a second user made through its REST API.

The right user's suite runs; a wrong password, an experiment the user may not read and one
the user may only read each end in one line on stderr, exit 2 and nothing written (read back
as the admin); `report`, `compare` and `heal` likewise. The password given in the store URI
appears nowhere: not in what the commands print, not in the server's files (its databases,
its artifact folder, its log).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_cli, write
from mlflow.tracking import MlflowClient
from mlflow_server import mlflow_server

pytest.importorskip("flask_wtf", reason="MLflow's auth extra is not installed (the dev extra has it)")

EXPERIMENT = """\
    name: {name}
    repeats: 1
    rounds: 1
    datasets: [{{generator: regression, n_samples: 200, n_features: 3}}]
    pairings: [linear_regression]
    implementations: [sklearn, cuml]
"""


@dataclass
class Server:
    url: str
    port: int
    root: Path
    admin_password: str
    password: str  # the second user's, `bob`

    def admin(self) -> MlflowClient:
        return MlflowClient(tracking_uri=f"http://admin:{self.admin_password}@127.0.0.1:{self.port}")

    def as_admin(self, path: str, payload: dict) -> dict:
        """One call of the server's REST API as its admin."""
        login = base64.b64encode(f"admin:{self.admin_password}".encode()).decode()
        request = urllib.request.Request(f"{self.url}{path}", data=json.dumps(payload).encode(), method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Basic {login}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"{}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The server, with user `bob` (the default permission, READ, on what others made), an
    experiment `admins-only` bob is denied, and `read-only`, tagged by an earlier suite, which
    bob may only read."""
    root = tmp_path_factory.mktemp("auth-server")
    admin_password, password = f"adm-{secrets.token_hex(8)}", f"bob-{secrets.token_hex(8)}"
    config = root / "basic_auth.ini"
    config.write_text("[mlflow]\ndefault_permission = READ\n"
                      f"database_uri = sqlite:///{root / 'basic_auth.db'}\n"
                      f"admin_username = admin\nadmin_password = {admin_password}\n"
                      "authorization_function = mlflow.server.auth:authenticate_request_basic_auth\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env |= {"MLFLOW_AUTH_CONFIG_PATH": str(config), "MLFLOW_FLASK_SERVER_SECRET_KEY": secrets.token_hex(16)}
    with mlflow_server(root, f"sqlite:///{root / 'mlflow.db'}", "--app-name", "basic-auth", env=env) as url:
        port = int(url.rsplit(":", 1)[1])
        found = Server(url, port, root, admin_password, password)
        found.as_admin("/api/2.0/mlflow/users/create", {"username": "bob", "password": password})
        denied = found.as_admin("/api/2.0/mlflow/experiments/create", {"name": "admins-only"})["experiment_id"]
        found.as_admin("/api/3.0/mlflow/users/permissions/grant", {"username": "bob", "resource_type": "experiment",
                                                                  "resource_id": denied, "permission": "DENY"})
        found.as_admin("/api/2.0/mlflow/experiments/create", {
            "name": "read-only", "tags": [{"key": "mlflow.experimentKind", "value": "custom_model_development"}]})
        yield found


def _files_holding(root: Path, secret: str) -> list[str]:
    """Every file under `root` (databases, artifacts, logs) whose bytes hold `secret`."""
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if path.is_file() and secret.encode() in path.read_bytes())


def _as_bob(server: Server, password: str) -> dict:
    return {"MLFLOW_TRACKING_URI": server.url, "MLFLOW_TRACKING_USERNAME": "bob", "MLFLOW_TRACKING_PASSWORD": password}


def test_the_right_user_runs_a_suite_and_the_password_in_the_uri_is_shown_and_stored_nowhere(server, workdir):
    suite = write(workdir / "bob.yaml", EXPERIMENT.format(name="bob-suite"))
    store = f"http://bob:{server.password}@127.0.0.1:{server.port}"
    ran = run_cli("run", str(suite), cwd=workdir, env={"MLFLOW_TRACKING_URI": store})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert f"store http://bob:***@127.0.0.1:{server.port}, parent run" in ran.stderr
    assert f"the runs table: {server.url}/#/experiments/" in ran.stdout  # a link the browser can open
    reported = run_cli("report", "--experiment", "bob-suite", cwd=workdir, env={"MLFLOW_TRACKING_URI": store})
    assert reported.returncode == 0, reported.stderr[-3000:]
    assert "linear_regression" in reported.stdout

    admin = server.admin()
    experiment = admin.get_experiment_by_name("bob-suite")
    runs = admin.search_runs([experiment.experiment_id])
    assert sorted(r.info.status for r in runs) == ["FINISHED", "FINISHED", "FINISHED"]  # suite, sklearn, cuml skipped
    parent = next(r for r in runs if r.data.tags.get("mlcompare.kind") == "suite")
    assert {a.path for a in admin.list_artifacts(parent.info.run_id)} >= {"comparison.csv", "experiment.yaml"}
    for output in (ran.stdout, ran.stderr, reported.stdout, reported.stderr):
        assert server.password not in output
    assert _files_holding(server.root, server.password) == []
    assert list((server.root / "artifacts").rglob("comparison.csv")), "the artifacts were not where grep looked"


def test_a_wrong_password_is_one_line_and_writes_nothing(server, workdir):
    suite = write(workdir / "wrong.yaml", EXPERIMENT.format(name="wrong-login"))
    ran = run_cli("run", str(suite), cwd=workdir, env=_as_bob(server, "not-the-password"))
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert ran.stdout == ""
    [line] = ran.stderr.splitlines()
    assert line.startswith(f"mlcompare: error: {server.url}: the tracking server refused the login of user 'bob' "
                           "(HTTP 401) while reading experiment 'wrong-login'"), line
    assert "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD" in line
    assert server.admin().get_experiment_by_name("wrong-login") is None


@pytest.mark.parametrize("experiment, refused, needs", [
    ("admins-only", "reading experiment 'admins-only'", "READ"),
    # bob may read it: refused at the suite's first write, before any run is created
    ("read-only", "writing to experiment 'read-only'", "EDIT"),
])
def test_a_user_without_permission_on_the_experiment_is_one_line_and_writes_nothing(server, workdir, experiment,
                                                                                   refused, needs):
    admin = server.admin()
    found = admin.get_experiment_by_name(experiment)
    tags_before = dict(found.tags)
    suite = write(workdir / "denied.yaml", EXPERIMENT.format(name=experiment))
    ran = run_cli("run", str(suite), cwd=workdir, env=_as_bob(server, server.password))
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert ran.stdout == ""
    [line] = ran.stderr.splitlines()
    assert line.startswith(f"mlcompare: error: {server.url}: the tracking server refused user 'bob' permission "
                           f"(HTTP 403) for {refused}"), line
    assert f"it needs {needs} permission on the experiment" in line
    assert admin.search_runs([found.experiment_id]) == []
    assert dict(admin.get_experiment(found.experiment_id).tags) == tags_before


@pytest.mark.parametrize("command", [["report"], ["compare", "bob-suite", "bob-suite~1"], ["heal"]])
def test_report_compare_and_heal_with_a_wrong_password_are_one_line(server, workdir, command):
    wrong = f"wrong-{secrets.token_hex(6)}"
    ran = run_cli(*command, cwd=workdir, env={"MLFLOW_TRACKING_URI": f"http://bob:{wrong}@127.0.0.1:{server.port}"})
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert ran.stdout == ""
    [line] = ran.stderr.splitlines()
    assert line.startswith(f"mlcompare: error: http://bob:***@127.0.0.1:{server.port}: the tracking server refused "
                           "the login of user 'bob' (HTTP 401)"), line
    assert wrong not in line


def test_no_login_at_all_says_what_to_set(server, workdir):
    ran = run_cli("heal", cwd=workdir, env={"MLFLOW_TRACKING_URI": server.url})
    assert ran.returncode == 2
    assert ran.stderr.splitlines() == [
        f"mlcompare: error: {server.url}: the tracking server refused a request without a login (HTTP 401) while "
        "listing the experiments: set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD to an account of this "
        "server"]


def test_the_run_mlflow_run_made_loses_the_token_of_its_source(workdir):
    """`mlflow run https://TOKEN@host/repo` tags its run with that source: the suite masks it on the
    run it is given (the run is made here as the launcher makes it, in a real store)."""
    token = f"ghp_{secrets.token_hex(8)}"
    uri = os.environ["MLFLOW_TRACKING_URI"]
    client = MlflowClient(tracking_uri=uri)
    outer = client.create_run(client.create_experiment("launched"), tags={
        "mlflow.source.name": f"https://{token}@github.com/org/mlcompare#sub",
        "mlflow.source.type": "PROJECT", "mlflow.project.entryPoint": "main"}).info.run_id
    suite = write(workdir / "launched.yaml", EXPERIMENT.format(name="launched"))
    ran = run_cli("run", str(suite), cwd=workdir, env={"MLFLOW_RUN_ID": outer})
    assert ran.returncode == 0, ran.stderr[-3000:]
    tags = client.get_run(outer).data.tags
    assert tags["mlflow.source.name"] == "https://***@github.com/org/mlcompare#sub"
    assert tags["mlflow.project.entryPoint"] == "main"
    assert token not in ran.stdout + ran.stderr
    assert _files_holding(workdir, token) == []
