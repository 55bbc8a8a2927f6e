"""`mlcompare.redaction.redact`: what may be shown of a store URI, or of a message naming one."""

from __future__ import annotations

import pytest

from mlcompare.redaction import carries_secret, redact


@pytest.mark.parametrize("uri, shown", [
    ("http://alice:s3cr3t@127.0.0.1:5000", "http://alice:***@127.0.0.1:5000"),
    ("https://alice:s3cr3t@mlflow.example.org/", "https://alice:***@mlflow.example.org/"),
    ("postgresql://mlflow:pg-pass@db:5432/mlflow", "postgresql://mlflow:***@db:5432/mlflow"),
    ("postgresql+psycopg2://mlflow:pg-pass@db/mlflow", "postgresql+psycopg2://mlflow:***@db/mlflow"),
    # an unescaped @ in the password: masked to the last @ before the host
    ("mysql://root:p@ss@db/mlflow", "mysql://root:***@db/mlflow"),
    # no colon: a token as the user-info (git remotes in CI)
    ("https://ghp_abcdef@github.com/org/repo.git", "https://***@github.com/org/repo.git"),
    ("postgresql://db/mlflow?user=u&password=pg-pass&sslmode=require",
     "postgresql://db/mlflow?user=u&password=***&sslmode=require"),
    ("https://host/data.csv?token=abc123", "https://host/data.csv?token=***"),
    ("https://acct.blob.core.windows.net/c/f?sv=2022&sig=XYZ%3D&se=1", "https://acct.blob.core.windows.net/c/f?sv=2022&sig=***&se=1"),
    ("http://host/?API_KEY=k1;access_token=t2#top", "http://host/?API_KEY=***;access_token=***#top"),
])
def test_passwords_tokens_and_secret_parameters_are_masked(uri, shown):
    assert redact(uri) == shown
    assert carries_secret(uri)


@pytest.mark.parametrize("text", [
    "sqlite:///mlflow.db", "sqlite:////tmp/a b/mlflow.db", "http://127.0.0.1:5000", "file:///tmp/x@y/mlflow.db",
    "https://host/data.csv?user=alice&format=csv", "write to bob@example.org", "http://host/?token=", "",
])
def test_what_holds_no_secret_is_unchanged(text):
    assert redact(text) == text
    assert not carries_secret(text)


def test_a_message_naming_a_url_is_masked_where_the_url_is():
    message = ("API request to http://bob:hunter2@127.0.0.1:5077/api/2.0/mlflow/runs/create failed with exception "
               "HTTPConnectionPool(host='127.0.0.1', port=5077): Max retries exceeded; also tried "
               "'postgresql://u:pw2@db/x'")
    shown = redact(message)
    assert "hunter2" not in shown and "pw2" not in shown
    assert shown.startswith("API request to http://bob:***@127.0.0.1:5077/api/2.0/mlflow/runs/create failed")
    assert "'postgresql://u:***@db/x'" in shown


def test_masking_twice_changes_nothing_more():
    once = redact("http://u:p@h/?token=t and https://tok@h2")
    assert redact(once) == once
