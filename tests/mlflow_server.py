"""A real `mlflow server` on a loopback port for the team-server tests, stopped with its workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from postgres_server import free_port


@contextmanager
def mlflow_server(root: Path, backend: str, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`mlflow server --backend-store-uri BACKEND ARGS...` with its artifacts under `root` and its
    log in `root/server.log`; its URL once it answers /health (its log in the failure if it dies)."""
    port = free_port()
    with open(root / "server.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", *args, "--backend-store-uri", backend,
             "--artifacts-destination", str(root / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
             "--workers", "1"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 180
            while not _healthy(url):
                assert server.poll() is None, (root / "server.log").read_text()[-3000:]
                assert time.monotonic() < deadline, (root / "server.log").read_text()[-3000:]
                time.sleep(0.5)
            yield url
        finally:
            try:
                os.killpg(server.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            server.wait(timeout=60)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False
