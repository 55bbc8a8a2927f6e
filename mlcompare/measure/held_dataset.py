"""A case's dataset read by the warm server just before it forks the case, and held for the next.

A forked CPU case (`measure.warm_server`) finds its cached dataset already in memory: the
server reads it (`hold`) after the suite asks for the case and before it forks, and the child's
pages are its parent's (copy-on-write: nothing is copied unless written). The suite runs a
round's cases of one dataset one after the other (`suite.runner`) and says with each whether
the next one reads the same dataset (`keep_dataset`): the server then keeps it, so that the read is
paid once a round per dataset rather than once a process; otherwise it lets it go as soon as
it has forked (`drop`), and the child holds the only reference.

Only the read moves: the child's first fit is still the first call of its library in its
process (imports, pools and caches as cold as before), and its memory figures are unchanged
(the fit's peak is measured from the process's size just before it; a child's resident size
held its dataset before as well).

`load_time_s` of a case that received its dataset so is the server's read of it (the same
reader, timed the same way), also where the server read it for the case before; the record's
`load_by_server_s` says what the server spent reading for this process (0.0: it held it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlcompare.data import cache as datasets
from mlcompare.measure import timing


@dataclass(frozen=True)
class Held:
    """A dataset in this process's memory, read by the warm server."""

    directory: str
    arrays: dict[str, np.ndarray]
    read_s: float  # the read's seconds, timed as a case's own read is
    read_now: bool = True  # read for the process forked next (False: held from the case before)


_held: Held | None = None


def hold(directory: str | Path) -> Held:
    """In the server, before a fork: the dataset of `directory` in memory, read now unless held
    already (any other held dataset is let go first: a child inherits one dataset, its own)."""
    global _held
    directory = str(directory)
    if _held is not None and _held.directory == directory:
        _held = Held(directory, _held.arrays, _held.read_s, read_now=False)
        return _held
    _held = None
    arrays, read_s = timing.timed(lambda: datasets.load_split(Path(directory)), False)
    _held = Held(directory, arrays, read_s)
    return _held


def drop() -> None:
    """In the server, after a fork: let the dataset go (the child keeps its pages while it runs)."""
    global _held
    _held = None


def held(directory: str | Path) -> Held | None:
    """In a forked case's process: its dataset as its server read it, or None (read it yourself)."""
    return _held if _held is not None and _held.directory == str(directory) else None
