"""Estimators that fail the way real ones do on a bad day. For fault-injection tests only.

The tests put this folder on PYTHONPATH, allow the module through
MLCOMPARE_ALLOWED_MODULES=faulty_estimators and add `pairings/` through
MLCOMPARE_PAIRING_DIRS. Estimators that take part in interrupt and resume tests talk to
the test through files in $MLCOMPARE_FAULTS_DIR.
"""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression

from mlcompare.measure.timing import RECHECK_BELOW_S


def _faults_dir() -> Path:
    return Path(os.environ["MLCOMPARE_FAULTS_DIR"])


class Segfault(LinearRegression):
    """Reads address 0, as a buggy native extension would: the worker dies of SIGSEGV."""

    def fit(self, X, y):
        ctypes.string_at(0)
        return self


class ExitsHard(LinearRegression):
    """Leaves without a word (a native library calling exit())."""

    def fit(self, X, y):
        os._exit(3)


class OutOfMemory(LinearRegression):
    """Asks for 1 PiB, more than any address space: numpy raises MemoryError."""

    def fit(self, X, y):
        np.empty(2**47, dtype=np.float64)
        return self


class Hang(LinearRegression):
    """Never returns, after starting a process of its own; writes both pids to hang.pids."""

    def fit(self, X, y):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        (_faults_dir() / "hang.pids").write_text(f"{os.getpid()} {child.pid}")
        while True:
            time.sleep(1)


class Gate(LinearRegression):
    """Writes its pid to `started`, then waits in its first fit until the file `open` exists."""

    def fit(self, X, y):
        folder = _faults_dir()
        if not (folder / "open").exists():
            (folder / "started").write_text(str(os.getpid()))
            while not (folder / "open").exists():
                time.sleep(0.05)
        return super().fit(X, y)


class FailsWhileMarked(LinearRegression):
    """Raises while the file `fail` exists, works once it is gone (a flaky case)."""

    def fit(self, X, y):
        if (_faults_dir() / "fail").exists():
            raise RuntimeError("failing on purpose while the 'fail' marker exists")
        return super().fit(X, y)


class ExhaustsMemory(LinearRegression):
    """Really runs out of memory, without endangering the machine: caps its own address space
    at what it maps now plus 256 MiB, then fills 16 MiB blocks until an allocation fails."""

    def fit(self, X, y):
        import resource

        status = Path("/proc/self/status").read_text()
        mapped = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmSize:"))) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mapped + 256 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))
        blocks = []
        while True:
            blocks.append(np.ones(2**21))


class Probe(LinearRegression):
    """Counts the fits of its own process: appends `pid fits_before_this_one start end` (monotonic
    clock, one for every process on the machine) to `fits` for each fit, and `pid parent_pid
    hash("probe")` (the process's hash seed, seen through one string's hash) to `parents`
    at its first. Its parameters read outside a fit (the case's description) append `pid
    collector_on` to `collector`: whether Python's garbage collector is on between the timed calls."""

    fits_in_this_process = 0
    fitting = False

    def fit(self, X, y):
        before = Probe.fits_in_this_process
        Probe.fits_in_this_process += 1
        if not before:
            with open(_faults_dir() / "parents", "a") as out:
                out.write(f"{os.getpid()} {os.getppid()} {hash('probe')}\n")
        start = time.monotonic()
        Probe.fitting = True
        try:
            result = super().fit(X, y)
        finally:
            Probe.fitting = False
        end = time.monotonic()
        with open(_faults_dir() / "fits", "a") as out:
            out.write(f"{os.getpid()} {before} {start} {end}\n")
        return result

    def get_params(self, deep=True):
        if not Probe.fitting:
            with open(_faults_dir() / "collector", "a") as out:
                out.write(f"{os.getpid()} {gc.isenabled()}\n")
        return super().get_params(deep=deep)


class CountsFits(LinearRegression):
    """Appends "LABEL PID ROWS" per fit to `fits` in $MLCOMPARE_FAULTS_DIR: which fits ran, in which process, on
    how many rows.
    Each fit lasts at least timing.RECHECK_BELOW_S, so that every fit is timed alone (never in a loop) and
    each warm fit is one value (no fit rechecked)."""

    def __init__(self, label="", fit_intercept=True, copy_X=True, n_jobs=None, positive=False):
        super().__init__(fit_intercept=fit_intercept, copy_X=copy_X, n_jobs=n_jobs, positive=positive)
        self.label = label

    def fit(self, X, y):
        with open(_faults_dir() / "fits", "a") as f:
            f.write(f"{self.label} {os.getpid()} {len(X)}\n")
        time.sleep(RECHECK_BELOW_S)
        return super().fit(X, y)


class SeesItsData(LinearRegression):
    """Appends "LABEL PID ROWS SUM HELD READ_NOW" per fit to `data` in $MLCOMPARE_FAULTS_DIR: the rows it
    was given (their count and sum), whether its process found its dataset held by the warm server that
    forked it, and whether the server read it for this process (`measure.held_dataset`)."""

    def __init__(self, label="", fit_intercept=True, copy_X=True, n_jobs=None, positive=False):
        super().__init__(fit_intercept=fit_intercept, copy_X=copy_X, n_jobs=n_jobs, positive=positive)
        self.label = label

    def fit(self, X, y):
        from mlcompare.measure import held_dataset

        held = held_dataset._held
        with open(_faults_dir() / "data", "a") as f:
            f.write(f"{self.label} {os.getpid()} {len(X)} {float(np.asarray(X, dtype=np.float64).sum())!r} "
                    f"{Path(held.directory).name if held else '-'} {int(held.read_now) if held else '-'}\n")
        return super().fit(X, y)


#: This process's pace multiplier for each Paced case (chosen at its first fit in the process).
_PACE: dict[str, float] = {}


class Paced(LinearRegression):
    """A model whose fit costs a known time per unit of budget and whose quality is a known function
    of the budget: least squares with its coefficients scaled by cap × (1 − 2^(−budget/25)), the
    whole fit lasting `seconds_per_unit` × budget × this process's multiplier. The multipliers of a
    case's processes are 0.98, 1.00 and 1.02 in turn (a between-process spread the intervals must
    hold, counted in $MLCOMPARE_FAULTS_DIR), so two of them with the same cap are equally good at
    every budget, and one twice as slow per unit takes exactly twice as long, process for process."""

    def __init__(self, n_estimators=100, seconds_per_unit=0.001, cap=1.0, label="", fit_intercept=True,
                 copy_X=True, n_jobs=None, positive=False):
        super().__init__(fit_intercept=fit_intercept, copy_X=copy_X, n_jobs=n_jobs, positive=positive)
        self.n_estimators, self.seconds_per_unit, self.cap, self.label = n_estimators, seconds_per_unit, cap, label

    def fit(self, X, y):
        start = time.perf_counter()
        key = f"paced-{self.label}-{self.n_estimators}"
        if key not in _PACE:  # this case's k-th process: the k-th multiplier
            counter = _faults_dir() / key
            done = len(counter.read_text().splitlines()) if counter.exists() else 0
            with counter.open("a") as f:
                f.write(f"{os.getpid()}\n")
            _PACE[key] = (0.98, 1.0, 1.02)[done % 3]
        super().fit(X, y)
        self.coef_ = self.coef_ * self.cap * (1 - 2.0 ** (-self.n_estimators / 25))
        # the whole fit lasts its paced time: the least squares' own time is inside it
        pace = self.seconds_per_unit * self.n_estimators * _PACE[key]
        time.sleep(max(0.0, pace - (time.perf_counter() - start)))
        return self


class _Logged(LinearRegression):
    """Least squares that lasts exactly `seconds` a fit (its own time inside), appending
    "LABEL PID" to `fits` in $MLCOMPARE_FAULTS_DIR for each: how many fits each process ran."""

    label = ""

    def _fit_lasting(self, seconds: float, X, y):
        start = time.perf_counter()
        super().fit(X, y)
        with open(_faults_dir() / "fits", "a") as f:
            f.write(f"{self.label} {os.getpid()}\n")
        time.sleep(max(0.0, seconds - (time.perf_counter() - start)))
        return self


class Steady(_Logged):
    """Every fit lasts 0.12 s, the first of a process too: nothing to warm up."""

    label = "steady"

    def fit(self, X, y):
        return self._fit_lasting(0.12, X, y)


_WARMED: set[int] = set()


class FirstFitSlow(_Logged):
    """A process's first fit lasts 0.4 s, the next ones 0.06 s: a JIT or a cache to fill first.
    (0.06 s, well under what a forked process spends around its model calls, about 0.08 s on a
    quiet machine: 1.5 times that takes two values or more.)"""

    label = "first_slow"

    def fit(self, X, y):
        first = os.getpid() not in _WARMED
        _WARMED.add(os.getpid())
        return self._fit_lasting(0.4 if first else 0.06, X, y)


_FIRST_ENDED: dict[int, float] = {}


class SlowAfterFirstFit(_Logged):
    """A process's first fit lasts 0.05 s and leaves something behind for 0.12 s after it ends
    (OpenBLAS's threads spinning, say): fits that start in that window last 0.09 s, later ones
    0.03 s. The first call is like the later ones; what follows it is not."""

    label = "after_effect"

    def fit(self, X, y):
        now = time.perf_counter()
        ended = _FIRST_ENDED.get(os.getpid())
        if ended is None:
            self._fit_lasting(0.05, X, y)
            _FIRST_ENDED[os.getpid()] = time.perf_counter()
            return self
        return self._fit_lasting(0.09 if now - ended < 0.12 else 0.03, X, y)


_FITS_SO_FAR: dict[int, int] = {}


class SlowSecondFit(_Logged):
    """A process's first fit lasts 0.45 s, its second 0.36 s, the later ones 0.3 s: the second
    pays for what the first left (scikit-learn's LinearRegression on 375k×64 grows its heap anew
    after the first fit's large frees). A process that takes one value after one warm-up gives
    the second fit's time."""

    label = "second_slow"

    def fit(self, X, y):
        done = _FITS_SO_FAR.get(os.getpid(), 0)
        _FITS_SO_FAR[os.getpid()] = done + 1
        return self._fit_lasting((0.45, 0.36)[done] if done < 2 else 0.3, X, y)
