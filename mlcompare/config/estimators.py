"""Checks that need the estimators themselves: can each be imported, does it take its params?

Run before any case starts (`mlcompare validate` and `mlcompare run` alike). A library
that is not installed here is not an error: its cases are skipped, with the reason, at
run time. An installed library whose module or class does not exist, or an estimator
that does not accept a parameter the pairing gives it, is an error naming the field.
What a class that passed accepts is remembered until the installed libraries change
(`estimator_check_cache`): a later check of the same parameters imports nothing.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from typing import AbstractSet, Any

from mlcompare.config.estimator_check_cache import CheckCache
from mlcompare.config.pairing import Implementation, Pairing
from mlcompare.errors import InputError
from mlcompare.pairings.cluster_params import CLUSTER_PARAMS, check_cluster_params
from mlcompare.pairings.imports import accepted_params, estimator_problem
from mlcompare.pairings.libraries import library_installed


class NotImportable(Exception):
    """The import path names a module or class that does not exist in an installed library."""


@functools.lru_cache(maxsize=None)
def estimator_class(path: str) -> type | None:
    """The class at `path`, or None when it cannot be checked here (library not installed,
    or installed but unable to load on this machine: both reported when the case runs)."""
    if not library_installed(path.split(".", 1)[0]):
        return None
    module_name, _, class_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (missing == module_name or module_name.startswith(missing + ".")):
            raise NotImportable(f"{path!r} cannot be imported: there is no module {missing!r}") from None
        return None  # a dependency of the library is missing: the case fails and says so
    except Exception:  # noqa: BLE001 - the library cannot load here (e.g. no CUDA runtime)
        return None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise NotImportable(f"{path!r} cannot be imported: module {module_name!r} has no {class_name!r}")
    problem = estimator_problem(path, cls)
    if problem:
        raise NotImportable(problem)
    return cls


#: One per process: the environment's fingerprint is read once.
_REMEMBERED = CheckCache()


def accepted_by(path: str, wanted: AbstractSet[str] = frozenset()) -> frozenset[str] | None:
    """The parameter names the estimator at `path` accepts; None when it cannot be checked here.

    Remembered names serve when they hold every `wanted` name; otherwise (or when none are
    remembered) the class is imported and read, and what it accepts remembered. Raises
    `NotImportable` as `estimator_class` does."""
    remembered = _REMEMBERED.accepted(path)
    if remembered is not None and wanted <= remembered:
        return remembered
    cls = estimator_class(path)
    if cls is None:
        return None
    accepted = accepted_params(cls)
    _REMEMBERED.remember(path, accepted)
    return accepted


def check_implementation(pairing: Pairing, impl: Implementation, params: dict[str, Any] | None = None,
                         source: str | None = None, field_of=None) -> None:
    """Raise InputError for the first problem of one implementation's estimator.

    `params` defaults to what the pairing builds the estimator with; `source`/`field_of`
    let an experiment's overrides be reported against the experiment file.
    """
    params = pairing.estimator_params(impl) if params is None else params
    if impl.distributed:
        wrong = check_cluster_params(params)
        if wrong:
            where = field_of(wrong[0]) if field_of else pairing.param_field(impl, wrong[0])
            raise InputError(source or pairing.source, where, wrong[1])
    own = set(params) - set(impl.passthrough) - (set(CLUSTER_PARAMS) if impl.distributed else set())
    try:
        found = accepted_by(impl.estimator, own)
    except NotImportable as exc:
        raise InputError(pairing.source, pairing.field(f"implementations.{impl.name}.estimator"), str(exc)) from None
    if found is None:
        return
    accepted = found | set(impl.passthrough)
    if impl.distributed:
        accepted |= set(CLUSTER_PARAMS)
    for name in sorted(set(params) - accepted):
        where = field_of(name) if field_of else pairing.param_field(impl, name)
        close = difflib.get_close_matches(name, sorted(accepted), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InputError(source or pairing.source, where,
                         f"{impl.estimator} does not accept the parameter {name!r}{hint} (if the estimator "
                         f"takes it through **kwargs, list it under implementations.{impl.name}.passthrough)")


def check_pairing(pairing: Pairing) -> None:
    for impl in pairing.implementations.values():
        check_implementation(pairing, impl)
