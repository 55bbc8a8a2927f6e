"""Importing estimators safely: the module allow-list, the import, the parameters a class takes.

An experiment or pairing file must never be a way to run arbitrary code, so estimators are
imported only from allow-listed modules (and their submodules). Both sides use this: the
suite while validating, a case's process again before it imports its estimator.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from typing import Any, Iterable, cast

from mlcompare.errors import InputError

#: Estimators may only be imported from these modules (and their submodules): an
#: experiment or pairing file must never be a way to run arbitrary code. Users extend the
#: list with `allowed_modules:` in an experiment, `--allow-module`, or this variable.
DEFAULT_ALLOWED_MODULES = ("sklearn", "cuml", "xgboost", "lightgbm", "catboost", "sklearnex", "umap")
ALLOWED_MODULES_ENV = "MLCOMPARE_ALLOWED_MODULES"
ALLOWED_MODULE_PREFIXES = tuple(f"{m}." for m in DEFAULT_ALLOWED_MODULES)
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def allowed_modules(extra: Iterable[str] = (), source: str = "--allow-module", field_: str | None = None,
                    environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The allow-list as prefixes ("sklearn."): the defaults, $MLCOMPARE_ALLOWED_MODULES, extra."""
    env = os.environ if environ is None else environ
    from_env = [m.strip() for m in env.get(ALLOWED_MODULES_ENV, "").split(",") if m.strip()]
    for name in from_env:
        if not _MODULE_NAME.match(name):
            raise InputError(ALLOWED_MODULES_ENV, None, f"{name!r} is not a module name (e.g. mypackage.models)")
    extra = list(extra)
    for i, name in enumerate(extra):
        if not isinstance(name, str) or not _MODULE_NAME.match(name):
            where = f"{field_}[{i}]" if field_ else None
            raise InputError(source, where, f"{name!r} is not a module name (e.g. mypackage.models)")
    names = dict.fromkeys([*DEFAULT_ALLOWED_MODULES, *from_env, *extra])
    return tuple(f"{n}." for n in names)


def is_module_name(name: object) -> bool:
    return isinstance(name, str) and bool(_MODULE_NAME.match(name))


def import_path_problem(path: str, allowed: tuple[str, ...]) -> str | None:
    """Why `path` may not be imported, in words; None when it may."""
    if "." not in path or not _MODULE_NAME.match(path) or not path.startswith(allowed):
        return (f"{path!r} is not under an allowed module ({', '.join(p.rstrip('.') for p in allowed)}); "
                "add yours with allowed_modules: in the experiment or --allow-module")
    return None


def check_import_path(source: str, field_: str, path: str, allowed: tuple[str, ...] | None = None) -> None:
    problem = import_path_problem(path, allowed_modules() if allowed is None else allowed)
    if problem:
        raise InputError(source, field_, problem)


def import_estimator(path: str, allowed: tuple[str, ...] | None = None) -> type:
    """Import an estimator class by dotted path, refusing anything off the allow-list."""
    check_import_path("estimator", "import", path, allowed_modules() if allowed is None else allowed)
    module_name, _, class_name = path.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def unknown_params(cls: type, params: dict[str, Any]) -> list[str]:
    """Parameter names the estimator does not accept.

    Checked against the constructor's signature and the `get_params()` of a default
    instance, so estimators that forward **kwargs (XGBoost's) are checked too.
    """
    return sorted(set(params) - accepted_params(cls))


def accepted_params(cls: type) -> set[str]:
    """Constructor parameters, also of estimators that forward **kwargs to a base class
    (XGBoost's, cuML 25.12's forests and neighbours do), read from signatures only.

    The class is never instantiated: a cuML estimator's constructor creates a CUDA handle,
    which would put a CUDA context in the suite's own process (and in its memory readings).
    The `__init__` of each class along the method resolution order is read for as long as
    the one before it passes **kwargs on; cuML's own list of parameter names
    (`_get_param_names`, a classmethod as in scikit-learn) is added where there is one.
    """
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):  # a builtin's __init__ (object's): nothing more to read
            break
        names |= {p.name for p in parameters if p.name != "self" and p.kind not in _VARIADIC}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            break
    listed = inspect.getattr_static(cls, "_get_param_names", None)
    if isinstance(listed, classmethod):  # scikit-learn's and cuML's: read from the class, never an instance
        try:
            names |= set(cast(Any, cls)._get_param_names())
        except Exception:  # noqa: BLE001 - the signatures are what we know
            pass
    return names


_VARIADIC = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)

