"""Dataset preparation at scale: time and peak memory to materialise 10M×50 float32
synthetic data, and reloading it from the Parquet cache against generating it again.

Each phase runs in a fresh process so its peak resident memory is its own; peak memory
is reported as growth over the process's size after imports, against the final float32
array (10M×50×4 bytes = 2.0 GB). Ratios are what count: the machine may be shared.

Run:  .venv/bin/python bench/datasets.py [--rows 10000000] [--features 50]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_PHASE = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
import psutil
from mlcompare.data import cache as datasets
spec = datasets.DatasetSpec("classification", {rows}, {features})
root = Path({root!r})
base = psutil.Process().memory_info().rss
start = time.perf_counter()
if {phase!r} == "materialise":
    datasets.materialise(spec, root)
else:
    arrays = datasets.load_split(root / spec.fingerprint())
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"seconds": seconds, "peak_growth": peak - base}}))
"""


def phase(name: str, rows: int, features: int, root: Path) -> dict:
    code = _PHASE.format(repo=str(REPO), rows=rows, features=features, root=str(root), phase=name)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=50)
    args = parser.parse_args()
    final = args.rows * args.features * 4
    with tempfile.TemporaryDirectory(prefix="mlcompare-bench-data-", dir=os.environ.get("TMPDIR")) as tmp:
        root = Path(tmp)
        made = phase("materialise", args.rows, args.features, root)
        loaded = phase("load", args.rows, args.features, root)
        size = sum(f.stat().st_size for f in root.rglob("*.parquet"))
    print(f"dataset: classification {args.rows:,}×{args.features} float32 "
          f"(final array {final / 2**30:.2f} GiB; Parquet on disk {size / 2**30:.2f} GiB)")
    print(f"materialise (generate in chunks, split, write Parquet): {made['seconds']:.1f} s, "
          f"peak memory growth {made['peak_growth'] / 2**30:.2f} GiB = {made['peak_growth'] / final:.2f}× the array")
    print(f"reload from the cache (pyarrow -> numpy):               {loaded['seconds']:.1f} s, "
          f"peak memory growth {loaded['peak_growth'] / 2**30:.2f} GiB = "
          f"{loaded['peak_growth'] / final:.2f}× the array")
    print(f"reload / materialise time: {loaded['seconds'] / made['seconds']:.2f} "
          f"(reading the cache is {made['seconds'] / loaded['seconds']:.1f}× faster than making the data again)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
