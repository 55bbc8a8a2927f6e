"""A throwaway PostgreSQL server for tests: initdb into a temporary folder, start it on a
free loopback port, stop and remove it afterwards. Raises `Unavailable` (with the reason)
when it cannot: no server binaries, no unprivileged user to run them as, or a failed start."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


class Unavailable(Exception):
    """PostgreSQL cannot be started here; the message says why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bindir() -> Path:
    """Debian keeps initdb and pg_ctl out of PATH, under /usr/lib/postgresql/VERSION/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    if not candidates:
        raise Unavailable("PostgreSQL server binaries not found (Debian: apt-get install postgresql)")
    return Path(candidates[-1]).parent


def _as_user() -> list[str]:
    """initdb and postgres refuse to run as root: run them as the `postgres` user then."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("running as root and there is no 'postgres' user to run the server as") from None
    runuser = shutil.which("runuser")
    if not runuser:
        raise Unavailable("running as root and `runuser` is missing")
    return [runuser, "-u", "postgres", "--"]


@contextmanager
def postgres() -> Iterator[str]:
    """Yield the SQLAlchemy URI of an empty database `mlflow` on a fresh server."""
    bindir, prefix = _bindir(), _as_user()
    root = Path(tempfile.mkdtemp(prefix="mlcompare-pg-"))
    data, log = root / "data", root / "server.log"
    if prefix:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = free_port()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)

    started = False
    try:
        step = run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                   "-E", "UTF8", "--no-sync")
        if step.returncode != 0:
            raise Unavailable(f"initdb failed: {(step.stderr or step.stdout).strip()[-500:]}")
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        step = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
                   "-o", options, "start")
        if step.returncode != 0:
            tail = log.read_text()[-500:] if log.exists() else step.stderr
            raise Unavailable(f"PostgreSQL did not start: {tail.strip()}")
        started = True
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
        try:
            conn.autocommit = True  # CREATE DATABASE cannot run inside a transaction
            conn.cursor().execute("CREATE DATABASE mlflow")
        finally:
            conn.close()
        # the driver is named: SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/mlflow"
    finally:
        if started:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)
