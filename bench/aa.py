"""A/A and A/B: how often `mlcompare compare` calls a change where there is none, and whether it
finds a known one, at the default processes and repeats, on this machine.

A/A: the same experiment (18 CPU cases of the four mission pairings at small sizes, seven
implementations) run as two suites one after the other, compared with `mlcompare compare`'s
own code; that again for every pair. Counted over every timing test (fit and predict of each
shared case):

- the per-test false-change rate at the stated level: the share of tests whose exact p-value
  of a change beyond `--min-change` (compare's default: 1.05) is at most 1 − the level, i.e.
  whose interval at that level lies wholly beyond ×/÷ 1.05 (stated: at most 5 %); and the same
  for any change at all (`--min-change 1`: the interval excludes 1), which also counts the
  machine's drift between the two suites;
- the family's: the share of pairs in which the Benjamini–Hochberg verdicts called anything at
  all (stated: at most 5 %), and in which `--fail-slower 1.1` (and 1.0) would fail.

A/B: the same pairs with one side given one CPU thread instead of the default (every physical
core): the share of cases called slower, and whether the gate fails. The two sides alternate
which runs first.

Run:  .venv/bin/python bench/aa.py [--pairs 6] [--ab-pairs 2] [--out results.json] [--work DIR]
It prints the figures and writes every pair's tests to --out. Minutes per pair (two suites).
`--work DIR` keeps the store there; `--again results.json --work DIR` compares the suites that
run recorded again, with the comparison's code as it is now, without running anything.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EXPERIMENT = """\
name: aa
datasets:
  - {generator: blobs, n_samples: [20000, 60000], n_features: 16, centers: 8, cluster_std: 4.0}
  - {generator: classification, n_samples: [3000, 8000], n_features: 16}
  - {generator: regression, n_samples: [20000, 100000], n_features: 32}
pairings: [kmeans, random_forest, gradient_boosting, linear_regression]
implementations: [sklearn, sklearnex, xgboost_cpu, lightgbm]
"""


def run_suite(folder: Path, *flags: str) -> str:
    """One suite of the experiment, through the command line's own entry point; its parent run id."""
    from mlcompare.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", str(folder / "aa.yaml"), "--quiet", *flags])
    if code != 0:
        raise SystemExit(f"bench/aa.py: a suite exited {code}: {out.getvalue()[-2000:]}")
    return next(line.split("parent run ")[1].split()[0] for line in out.getvalue().splitlines()
                if "parent run " in line)


def compare(a: str, b: str) -> dict:
    """The comparison of B with A as `mlcompare compare` makes it: every timing test and the gates."""
    from mlcompare.report import suite_comparison
    from mlcompare.report.suite_comparison.table import FASTER, SLOWER, TIMES
    from mlcompare.tracking import reader

    comparison = suite_comparison.compare_suites(reader.find_suite(a, "A"), reader.find_suite(b, "B"))
    rate = comparison.false_call_rate
    # the same tests with B's processes divided by the pair's median B/A: whether a case moved
    # more than the suite as a whole did
    relative = {(case, name): (ratio, p) for case, name, ratio, p, _ in comparison.relative_tests()}
    tests = []
    for r in comparison.rows.to_dict("records"):
        for name, _, _ in TIMES:
            if isinstance(r[f"{name}_p"], float) and not math.isnan(r[f"{name}_p"]):
                moved, relative_p = relative[r["case"], name]
                tests.append({"case": r["case"], "quantity": name, "ratio": r[f"{name}_ratio"], "p": r[f"{name}_p"],
                              "p_any_change": r[f"{name}_p_any_change"],
                              "verdict": r[f"{name}_verdict"], "called": r[f"{name}_verdict"] in (FASTER, SLOWER),
                              "slower": r[f"{name}_verdict"] == SLOWER, "unadjusted": r[f"{name}_p"] <= rate,
                              "any_change": r[f"{name}_p_any_change"] <= rate,
                              "relative_p": relative_p, "relative": relative_p <= rate,
                              "relative_slower": relative_p <= rate and moved > 1})
    from mlcompare.report.suite_comparison.render import together_line

    return {"a": a, "b": b, "tests": tests, "cases": len(comparison.rows),
            "together": together_line(comparison) is not None,
            "relative_calls": [f"{case} ({name}) {verdict} {ratio:.3f}"
                               for case, name, ratio, verdict in comparison.relative_calls()],
            "gate_1.1": list(suite_comparison.slower_than(comparison, 1.1)["case"]),
            "gate_1.0": list(suite_comparison.slower_than(comparison, 1.0)["case"])}


def share(hits: int, total: int) -> str:
    """'3.1 % (7 of 224; 95 % interval 1.3–6.3 %)', the interval exact (Clopper–Pearson)."""
    from scipy.stats import beta

    low = beta.ppf(0.025, hits, total - hits + 1) if hits else 0.0
    high = beta.ppf(0.975, hits + 1, total - hits) if hits < total else 1.0
    return f"{100 * hits / total:.1f} % ({hits} of {total}; 95 % interval {100 * low:.1f}–{100 * high:.1f} %)"


def shift(tests: list[dict]) -> str:
    """How far the whole of B sat from the whole of A: the median B/A over the pair's tests and
    how many lie above 1. Nothing changed, so about half should; most on one side is the machine's
    speed drifting between the two suites, which no interval over one suite's processes covers."""
    ratios = sorted(t["ratio"] for t in tests)
    return f"median B/A {ratios[len(ratios) // 2]:.3f}, {sum(r > 1 for r in ratios)} of {len(ratios)} above 1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6, help="A/A pairs of suites (default 6)")
    parser.add_argument("--ab-pairs", type=int, default=2, help="A/B pairs, one side on one thread (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="write every pair's tests here (JSON)")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the store (and the data) in this folder instead of a temporary one")
    parser.add_argument("--again", type=Path, default=None, metavar="RESULTS",
                        help="run nothing: compare the pairs of an earlier --out again, from its --work store")
    args = parser.parse_args()
    if args.again and not args.work:
        parser.error("--again needs --work: the folder that holds the earlier run's store")
    with contextlib.ExitStack() as stack:
        if args.work:
            folder = args.work
            folder.mkdir(parents=True, exist_ok=True)
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mlcompare-aa-")))
        (folder / "aa.yaml").write_text(EXPERIMENT)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{folder / 'mlflow.db'}"
        os.environ.setdefault("MLCOMPARE_DATA_DIR", str(folder / "data"))
        if args.again:
            earlier = json.loads(args.again.read_text())
            aa = [compare(p["a"], p["b"]) for p in earlier["aa"]]
            ab = [compare(p["a"], p["b"]) for p in earlier["ab"]]
            report(aa, ab, args.out)
            return
        aa, ab = [], []
        started = time.perf_counter()
        for number in range(1, args.pairs + 1):
            found = compare(run_suite(folder), run_suite(folder))
            aa.append(found)
            wrong = sum(t["unadjusted"] for t in found["tests"])
            relative = sum(t["relative"] for t in found["tests"])
            print(f"A/A pair {number}/{args.pairs}: {found['cases']} cases, {len(found['tests'])} tests, "
                  f"{wrong} with p ≤ 0.05 ({sum(t['any_change'] for t in found['tests'])} for any change at all, "
                  f"{relative} relative to the shift), "
                  f"{sum(t['called'] for t in found['tests'])} called by the family, "
                  f"gate 1.1 fails on {len(found['gate_1.1'])}; {shift(found['tests'])} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
        for number in range(1, args.ab_pairs + 1):
            one = ["--threads", "1"]
            if number % 2:
                found = compare(run_suite(folder), run_suite(folder, *one))
            else:  # B first: the drift of the machine must not pass for the slowdown
                b = run_suite(folder, *one)
                found = compare(run_suite(folder), b)
            ab.append(found)
            fits = [t for t in found["tests"] if t["quantity"] == "fit"]
            print(f"A/B pair {number}/{args.ab_pairs}: {sum(t['slower'] for t in fits)} of {len(fits)} fits called "
                  f"slower, gate 1.1 fails on {len(found['gate_1.1'])} cases ({time.perf_counter() - started:.0f} s)",
                  flush=True)
    report(aa, ab, args.out)


def report(aa: list[dict], ab: list[dict], out: Path | None) -> None:
    """Print the figures over every pair; write the pairs' tests to `out` (JSON) when given."""
    tests = [t for pair in aa for t in pair["tests"]]
    print("\nA/A, at the defaults (six processes a case):")
    print("  per test, p ≤ 0.05 for a change beyond compare's --min-change (the interval at 95 % lies wholly "
          "beyond it; stated ≤ 5 %: ≤ 4.1 % at six processes a side, the exact test's attainable level): "
          f"{share(sum(t['unadjusted'] for t in tests), len(tests))}")
    print("  per test, p ≤ 0.05 for any change at all (--min-change 1: the interval excludes 1): "
          f"{share(sum(t['any_change'] for t in tests), len(tests))}")
    called = sum(t["called"] for t in tests)
    print(f"  per test, called by the family (Benjamini–Hochberg at 5 %): {share(called, len(tests))}")
    any_call = sum(any(t["called"] for t in p["tests"]) for p in aa)
    print(f"  pairs with any call at all (stated ≤ 5 %): {share(any_call, len(aa))}")
    print("  between the two suites of each pair: " + "; ".join(shift(p["tests"]) for p in aa))
    calm = [t for p in aa if not p["together"] for t in p["tests"]]
    print(f"  pairs whose comparison says the cases moved together: {share(sum(p['together'] for p in aa), len(aa))}; "
          "per test, p ≤ 0.05, in the others: "
          + (share(sum(t["unadjusted"] for t in calm), len(calm)) if calm else "none"))
    print("  per test, p ≤ 0.05 relative to the pair's common shift (B's processes divided by the pair's "
          f"median B/A; a move beyond --min-change): {share(sum(t['relative'] for t in tests), len(tests))}")
    moved = [p for p in aa if p["together"]]
    if moved:
        print("  of those, pairs where the line names a case that moved more than the shift (the family "
              f"relative to it): {share(sum(bool(p['relative_calls']) for p in moved), len(moved))}")
    print(f"  pairs failing --fail-slower 1.1: {share(sum(bool(p['gate_1.1']) for p in aa), len(aa))}; "
          f"1.0: {share(sum(bool(p['gate_1.0']) for p in aa), len(aa))}")
    if ab:
        fits = [t for pair in ab for t in pair["tests"] if t["quantity"] == "fit"]
        print("A/B, one CPU thread instead of the default:")
        print(f"  fits called slower: {share(sum(t['slower'] for t in fits), len(fits))}; median B/A "
              f"{sorted(t['ratio'] for t in fits)[len(fits) // 2]:.2f}; slower relative to the pair's common "
              f"shift, p ≤ 0.05: {share(sum(t['relative_slower'] for t in fits), len(fits))}")
        print(f"  pairs failing --fail-slower 1.1: {share(sum(bool(p['gate_1.1']) for p in ab), len(ab))}")
    if out:
        out.write_text(json.dumps({"aa": aa, "ab": ab}, indent=1))


if __name__ == "__main__":
    main()
