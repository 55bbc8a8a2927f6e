"""Importing estimators safely: the module allow-list, the import, the parameters a class takes.

An experiment or pairing file must never be a way to run arbitrary code, so estimators are
imported only from allow-listed modules (and their submodules), and what an import path names
must be an estimator class (a class with a `fit` method) before anything calls it. Only the
person running grants a module (`--allow-module`, $MLCOMPARE_ALLOWED_MODULES); a file may say
which modules it needs, never grant them (`ungranted`). Both sides use this: the suite while
validating, a case's process again before it builds its estimator.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
from typing import Any, Iterable, cast

from mlcompare.errors import InputError

#: Estimators may only be imported from these modules (and their submodules): an
#: experiment or pairing file must never be a way to run arbitrary code. The person running
#: extends the list with `--allow-module` or this variable; a file never does.
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


def grant_hint(module: str) -> str:
    """How the person running grants `module`, for the errors that refuse one."""
    return f"if you trust it, run with --allow-module {module} (or {ALLOWED_MODULES_ENV}={module})"


def import_path_problem(path: str, allowed: tuple[str, ...]) -> str | None:
    """Why `path` may not be imported, in words; None when it may."""
    if "." not in path or not _MODULE_NAME.match(path) or not path.startswith(allowed):
        return (f"{path!r} is not under an allowed module ({', '.join(p.rstrip('.') for p in allowed)}); "
                f"{grant_hint(path.rpartition('.')[0] or path)}")
    return None


def ungranted(requested: Iterable[str], allowed: tuple[str, ...]) -> list[str]:
    """The modules a file asks for that the person running has not granted (a file's
    `allowed_modules:` says what it needs; it never widens the list itself)."""
    return [name for name in requested if not f"{name}.".startswith(allowed)]


def estimator_problem(path: str, found: object) -> str | None:
    """Why what `path` names is not an estimator class, in words; None when it is one.

    Checked before anything is called: a function, a module or a class without `fit` under an
    allowed module (`sklearn.datasets.clear_data_home`, `sklearn.utils.Bunch`) would otherwise
    be called with the file's params by the first fit.
    """
    if not isinstance(found, type):
        kind = "a module" if inspect.ismodule(found) else "a function" if callable(found) else \
            f"a {type(found).__name__}"
        return f"{path!r} is {kind}, not an estimator class"
    try:
        fit = getattr(found, "fit", None)
    except Exception:  # noqa: BLE001 - a descriptor that fails on the class: no usable fit
        fit = None
    if not callable(fit):
        return f"{path!r} is a class without a fit method, not an estimator"
    return None


def check_import_path(source: str, field_: str, path: str, allowed: tuple[str, ...] | None = None) -> None:
    problem = import_path_problem(path, allowed_modules() if allowed is None else allowed)
    if problem:
        raise InputError(source, field_, problem)


def import_estimator(path: str, allowed: tuple[str, ...] | None = None) -> type:
    """Import an estimator class by dotted path, refusing anything off the allow-list and
    anything that is not an estimator class (`estimator_problem`)."""
    check_import_path("estimator", "import", path, allowed_modules() if allowed is None else allowed)
    module_name, _, class_name = path.rpartition(".")
    module = importlib.import_module(module_name)
    found = getattr(module, class_name, None)
    problem = estimator_problem(path, found)
    if problem:
        raise InputError("estimator", "import", problem)
    return cast(type, found)


def unknown_params(cls: type, params: dict[str, Any]) -> list[str]:
    """Parameter names the estimator does not accept.

    Checked against the constructor's signature and the `get_params()` of a default
    instance, so estimators that forward **kwargs (XGBoost's) are checked too.
    """
    return sorted(set(params) - accepted_params(cls))


@functools.cache
def accepted_params(cls: type) -> frozenset[str]:
    """Constructor parameters, also of estimators that forward **kwargs to a base class
    (XGBoost's, cuML 25.12's forests and neighbours do), read from signatures only.

    Cached: the warm worker reads them once for every estimator it preloads, so a process
    forked from it does not read them again (the first `inspect.signature` of XGBoost's and
    LightGBM's constructors cost 38-48 ms in each such process here).

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
    return frozenset(names)


_VARIADIC = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)

