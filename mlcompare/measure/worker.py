"""`python -m mlcompare.measure.worker SPEC RESULT [QUIET_FD]`: one case in its own process.

Reads the case spec (JSON), runs it, writes the result record (JSON). An exception in
the case becomes a `failed` record; a crash leaves no record, which the suite reports
(with the Python stack of a segfault in stderr, thanks to faulthandler). The same `run`
serves a fresh process started this way and a process forked by the warm worker
(`mlcompare.measure.warm_server`). QUIET_FD is the suite's lock the process starts holding
(`mlcompare.measure.timed_lock`).
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import sys
import traceback
from pathlib import Path

from mlcompare.forked_call import die_with_parent
from mlcompare.measure import timed_lock
from mlcompare.records import Failure, Status

#: Set by the suite: the worker must not outlive it (a SIGKILLed suite cannot kill it).
PARENT_PID_ENV = "MLCOMPARE_SUITE_PID"

# How CUDA libraries word running out of device memory (CuPy and RMM raise MemoryError
# subclasses; XGBoost and others raise their own errors with these words).
_OUT_OF_MEMORY = re.compile(r"out of memory|out_of_memory|cudaErrorMemoryAllocation|bad_alloc", re.IGNORECASE)


def failure_kind(exc: BaseException) -> Failure:
    """`out_of_memory` for host or device memory exhaustion, else `exception`."""
    if isinstance(exc, MemoryError) or _OUT_OF_MEMORY.search(str(exc)):
        return Failure.OUT_OF_MEMORY
    return Failure.EXCEPTION


def main(argv: list[str]) -> int:
    faulthandler.enable()
    die_with_parent(os.environ.get(PARENT_PID_ENV))
    return run(Path(argv[0]), Path(argv[1]), int(argv[2]) if len(argv) > 2 else None)


def run(spec_path: Path, result_path: Path, quiet_fd: int | None = None) -> int:
    """Run the case of `spec_path` here and write its record to `result_path`."""
    timed_lock.adopt(quiet_fd)
    spec = json.loads(spec_path.read_text())
    try:
        if spec.get("accelerator"):
            # Before anything imports scikit-learn (the runner does): the accelerator
            # intercepts the imports that follow.
            from mlcompare.measure.device import install_accelerator

            spec["accelerator_setup"] = install_accelerator(spec["accelerator"])
        from mlcompare.measure.case import run_case

        record = run_case(spec)
    except Exception as exc:  # noqa: BLE001 - any failure of the case is its result
        traceback.print_exc()
        record = {"status": Status.FAILED, "failure": failure_kind(exc), "error_type": type(exc).__name__,
                  "error": f"{type(exc).__name__}: {exc}".strip()}
    finally:
        timed_lock.release()  # already, unless the case ended before its timed calls did
    from mlcompare.records import json_default

    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, default=json_default))
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
