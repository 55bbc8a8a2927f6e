"""What `mlcompare advise` is asked, checked before anything runs, and the experiment of each
step of its ladder.

The user's table is described by flags instead of a `{file: ...}` entry, and validated by the
same model (`cards.FileEntry`) and read by the same code (`data.tables`): the errors are the
entry's, with each field named by the flag that sets it (`--target` for `target`). Each step
of the ladder is an ordinary experiment file written beside the step's subsample in the
dataset cache and loaded by `load_experiment`, so a step is checked like any suite.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import yaml

from mlcompare.config import fields
from mlcompare.config.cards import FileEntry
from mlcompare.config.experiment import Experiment, load_experiment
from mlcompare.config.experiment_schema import CostPerHour
from mlcompare.config.pairing import Pairing
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.data.tables import TableSource
from mlcompare.errors import InputError, InputErrors

#: The `{file: ...}` entry's fields and the flags of `mlcompare advise` that set them.
FLAGS = {"target": "--target", "task": "--task", "categorical": "--categorical", "drop": "--drop", "nan": "--nan"}
#: The tasks `advise` serves: a target to learn.
TASKS = ("classification", "regression")


@contextmanager
def named_by_flags(source: str) -> Iterator[None]:
    """Errors of the table (from `source`) name the flag that sets the field, not the field."""
    try:
        yield
    except InputErrors as many:
        raise InputErrors([_flagged(e, source) for e in many.errors]) from None
    except InputError as exc:
        raise _flagged(exc, source) from None


def _flagged(exc: InputError, source: str) -> InputError:
    if exc.source != source or exc.field is None:
        return exc
    head, _, rest = exc.field.partition(".")
    head = head.split("[", 1)[0]
    if head == "file":
        return InputError(source, None, exc.message)
    message = exc.message.replace("(set nan: drop to drop them)", "(--nan drop drops them)")
    return InputError(source, FLAGS.get(head, exc.field) + (f".{rest}" if rest else ""), message)


def own_file(path: str, target: str, categorical: list[str], drop: list[str], nan: str) -> TableSource:
    """The table's description, validated as a `{file: ...}` entry (its task is set once known)."""
    entry = {"file": str(Path(path).expanduser().absolute()), "task": "regression", "target": target,
             "categorical": categorical, "drop": drop, "nan": nan}
    with named_by_flags(path):
        return fields.validate(FileEntry, entry, path).to_table(path, raw=entry)


def pairings_for(task: str, catalog: dict[str, Pairing], models: list[str] | None) -> list[Pairing]:
    """The pairings of the task (`--models`: those named, each checked against the task)."""
    of_task = [p for p in catalog.values() if p.task == task]
    if not models:
        return of_task
    chosen: list[Pairing] = []
    for name in models:
        if name not in catalog:
            raise InputError("--models", None, f"{name!r} is not a pairing ({task} pairings: "
                             f"{', '.join(p.name for p in of_task)})")
        if catalog[name].task != task:
            raise InputError("--models", None, f"{name!r} is a {catalog[name].task} pairing, and the target is a "
                             f"{task} target ({task} pairings: {', '.join(p.name for p in of_task)})")
        if name not in {p.name for p in chosen}:
            chosen.append(catalog[name])
    return chosen


@dataclasses.dataclass
class Chosen:
    """The implementations of each pairing the ladder measures, and those left out, with why."""

    implementations: dict[str, list[str]]  # pairing -> implementation names, the baseline first
    left_out: dict[str, dict[str, str]]  # pairing -> {implementation: why it is not measured}


def implementations_for(pairings: list[Pairing], names: list[str] | None) -> Chosen:
    """Every implementation of each pairing but the distributed ones (a cluster on this one
    machine is not the question), or those `--implementations` names; the baseline always."""
    known = {n for p in pairings for impl in p.implementations.values() for n in (impl.name, impl.library)}
    for name in names or []:
        if name not in known:
            raise InputError("--implementations", None, f"{name!r} matches no implementation of the pairings "
                             f"chosen (known: {', '.join(sorted(known))})")
    chosen: dict[str, list[str]] = {}
    left: dict[str, dict[str, str]] = {}
    for p in pairings:
        keep: list[str] = []
        out: dict[str, str] = {}
        for impl in p.implementations.values():
            if impl.name == p.baseline:
                keep.insert(0, impl.name)
            elif names is not None:
                if {impl.name, impl.library} & set(names):
                    keep.append(impl.name)
            elif impl.distributed:
                out[impl.name] = (f"distributed ({impl.distributed}): left out of advise, whose question is one "
                                  "machine; --implementations names it to measure it")
            else:
                keep.append(impl.name)
        if names is not None and len(keep) < 2:
            raise InputError("--implementations", None, f"selects no implementation of {p.name} besides its "
                             f"baseline {p.baseline} (its implementations: {', '.join(p.implementations)})")
        chosen[p.name], left[p.name] = keep, out
    return Chosen(chosen, left)


def load_prices(path: str) -> dict[str, float]:
    """`--prices FILE`: US dollars per hour of each device's machine, `{cpu: 0.192, gpu: 3.67}`
    (or the same under `cost_per_hour:`, as in an experiment file)."""
    data = load_yaml_mapping(Path(path), path)
    at = ""
    if "cost_per_hour" in data:
        data, at = data["cost_per_hour"], "cost_per_hour"
    return fields.validate(CostPerHour, data, path, at=at).prices()


def step_experiment(folder: Path, name: str, subsample: Path, rows: int, table: TableSource,
                    implementations: dict[str, list[str]], catalog: dict[str, Pairing], rounds: int,
                    timeout_s: float, prices: dict[str, float]) -> Experiment:
    """One step of the ladder as an experiment: the subsample of `rows` rows, the pairings still
    growing with their implementations. Its file is written into `folder` and loaded like any."""
    entry: dict[str, Any] = {"file": str(subsample), "task": table.tasks[0], "target": table.target,
                             "n_samples": rows, "nan": table.nan}
    if table.categorical:
        entry["categorical"] = list(table.categorical)
    if table.drop:
        entry["drop"] = list(table.drop)
    union = list(dict.fromkeys(n for names in implementations.values() for n in names))
    data: dict[str, Any] = {
        "name": name, "description": f"mlcompare advise: {table.name} at {rows} rows",
        "rounds": rounds, "repeats": 1, "timeout_s": max(1.0, round(timeout_s, 1)),
        "datasets": [entry], "pairings": list(implementations), "implementations": union}
    if prices:
        data["cost_per_hour"] = dict(prices)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    experiment = load_experiment(path, catalog=catalog)
    narrowed = [dataclasses.replace(p, implementations={k: v for k, v in p.implementations.items()
                                                        if k in implementations[p.name]})
                for p in experiment.pairings]
    return dataclasses.replace(experiment, pairings=narrowed)  # its selections are made again for these
