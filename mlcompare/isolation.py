"""Run a case in a fresh Python process and turn whatever happens into a record.

The case spec and the result travel as JSON files; the data is read by the worker from
the dataset cache. A crash, a kill by signal or a timeout become `failed` records with
the reason and the tail of the worker's stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import mlcompare

_STDERR_TAIL = 4000


def run_isolated(spec: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mlcompare-case-") as tmp:
        spec_path, result_path, err_path = (Path(tmp) / n for n in ("spec.json", "result.json", "stderr.txt"))
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        package_root = str(Path(mlcompare.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "mlcompare.worker", str(spec_path), str(result_path)],
                                    stdin=subprocess.DEVNULL, stdout=err, stderr=err, env=env,
                                    start_new_session=True)
            try:
                code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill(proc)
                return {"status": "failed", "error": f"timeout: no result after {timeout_s:g} s, worker killed",
                        "stderr_tail": _tail(err_path)}
            except BaseException:  # Ctrl-C or SIGTERM: take the worker down with us
                _kill(proc)
                raise
        if result_path.exists():
            record = json.loads(result_path.read_text())
            if record["status"] != "ok":
                record["stderr_tail"] = _tail(err_path)
            return record
        if code < 0:
            try:
                why = f"worker killed by signal {signal.Signals(-code).name}"
            except ValueError:
                why = f"worker killed by signal {-code}"
        else:
            why = f"worker exited with code {code} and no result"
        return {"status": "failed", "error": why, "stderr_tail": _tail(err_path)}


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _tail(path: Path) -> str:
    data = path.read_bytes()[-_STDERR_TAIL:] if path.exists() else b""
    return data.decode(errors="replace")
