"""`python -m mlcompare.worker SPEC RESULT`: one case in its own process.

Reads the case spec (JSON), runs it, writes the result record (JSON). An exception in
the case becomes a `failed` record; a crash leaves no record, which the suite reports.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    try:
        if spec.get("accelerator"):
            # Before anything imports scikit-learn (the runner does): the accelerator
            # intercepts the imports that follow.
            from mlcompare.device import install_accelerator

            install_accelerator(spec["accelerator"])
        from mlcompare.runner import run_case

        record = run_case(spec)
    except Exception as exc:  # noqa: BLE001 - any failure of the case is its result
        traceback.print_exc()
        record = {"status": "failed", "error": f"{type(exc).__name__}: {exc}".strip()}
    from mlcompare.runner import json_default

    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, default=json_default))
    tmp.replace(result_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
