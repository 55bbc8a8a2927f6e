"""Python's cyclic garbage collector while a process starts: off, then what it made set aside.

A command's start-up imports hundreds of thousands of objects the collector tracks (MLflow and
its SQLAlchemy store, scikit-learn, the estimators' libraries: 660,000 in quick.yaml's suite at
its first case, 275,000 in each of its warm workers) and keeps nearly all of them; the
collector would walk them over and over as they pile up. Measured on the project's 2-core
machine: 0.6 CPU-seconds of the suite's own start-up (seven full collections), 3–5 % of each
warm worker's imports, and two more full collections, 0.2 s each, at the report. So a process
turns it off while it starts (`starting`), and once started (`started`: before a suite's first case, after a warm
worker's imports) freezes what it has (`gc.freeze`: later collections do not walk it) and
turns it back on. A cycle made during the start-up is kept for the process's life: bounded
by the start-up itself (1,023 unreachable objects after a warm worker's imports).

The case processes are never concerned: a warm worker forks them after `started`, and their
timed calls turn the collector off and back on themselves (`measure.timing`).
"""

from __future__ import annotations

import gc

_started = True  # a process that never said `starting` is left as it is


def starting() -> None:
    """The collector off until `started`."""
    global _started
    _started = False
    gc.disable()


def started() -> None:
    """The start-up's objects out of the collector's reach, the collector on again (once)."""
    global _started
    if _started:
        return
    _started = True
    gc.freeze()
    gc.enable()
