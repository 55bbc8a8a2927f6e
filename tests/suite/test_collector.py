"""Python's garbage collector while a suite starts: off until the first case's process, then
what the start-up made frozen and the collector on again, in the suite and in the warm
worker whose children are the cases (`mlcompare.collector`). Real processes, a real suite."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import cli_env, faults_experiment

#: `mlcompare ARGV` in a fresh process, `collector.started` replaced by a recording stand-in
#: (which calls it): at its first call, who called, how many full collections the process
#: had made, and what the collector holds before and after.
_DRIVER = """
import gc, json, sys
from mlcompare import collector

started, seen = collector.started, []

def recording():
    if not seen:
        tracked = len(gc.get_objects())
        seen.append({"caller": sys._getframe(1).f_code.co_name, "on_before": gc.isenabled(), "tracked": tracked,
                     "full_collections": gc.get_stats()[2]["collections"]})
        started()
        seen[0].update(on_after=gc.isenabled(), frozen=gc.get_freeze_count())
    else:
        started()

collector.started = recording
from mlcompare.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "first": seen[0] if seen else None}))
"""


def test_a_suite_starts_without_the_collector_and_freezes_what_it_made_at_its_first_case(workdir, faults):
    path = faults_experiment(workdir, ["sklearn", "probe"], sizes=[200, 300])
    result = subprocess.run([sys.executable, "-c", _DRIVER, "run", str(path)], cwd=workdir, env=cli_env(faults),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    first = out["first"]
    assert out["code"] == 0 and first["caller"] == "_launch"  # at the first case's process
    # MLflow, its store and scikit-learn imported (hundreds of thousands of objects kept), and not
    # one full collection walked them; then every object there was is frozen, the collector on
    assert first["tracked"] > 100_000 and first["full_collections"] == 0
    assert first["on_before"] is False and first["on_after"] is True
    assert first["frozen"] >= first["tracked"]
    # the cases' processes, forked from a warm worker that imported with the collector off,
    # have it on between their timed calls (the Probe reads it as the case describes it)
    lines = (workdir / "faults" / "collector").read_text().split()
    assert len(lines) >= 4 and set(lines[1::2]) == {"True"}


def test_every_other_command_runs_with_the_collector_on(workdir):
    """A command that runs no suite (`list` here) turns it back on before its own work."""
    code = """
import gc
from mlcompare.cli import listing, main

run, seen = listing.List.run, []

def recording(args):
    seen.append(gc.isenabled())
    return run(args)

listing.List.run = recording
main(["list"])
print(seen)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=workdir, env=cli_env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[True]"
