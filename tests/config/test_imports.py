"""Importing estimators: only estimator classes under allowed modules; the parameters they take,
read without ever building one."""

from __future__ import annotations

import sys

import pytest
import xgboost

from mlcompare.errors import InputError
from mlcompare.pairings.imports import accepted_params, import_estimator

BUILT: list[str] = []


class Base:
    """Stands for a GPU library's base estimator: building one would start a CUDA context."""

    def __init__(self, *, n_estimators=100, max_depth=16, handle=None, **kwargs):
        BUILT.append(type(self).__name__)

    @classmethod
    def _get_param_names(cls):
        return ["handle", "verbose", "output_type"]


class Forest(Base):
    """Passes most of its parameters on to its base through **kwargs, as cuML 25.12's forests do."""

    def __init__(self, *, split_criterion="gini", **kwargs):
        super().__init__(**kwargs)


class Closed(Base):
    """Takes no **kwargs: its base's parameters are not its own."""

    def __init__(self, *, alpha=1.0):
        super().__init__()


def test_params_come_from_the_signatures_along_the_bases_never_from_an_instance():
    BUILT.clear()
    assert accepted_params(Forest) == {"split_criterion", "n_estimators", "max_depth", "handle", "verbose",
                                       "output_type"}
    assert accepted_params(Closed) == {"alpha", "handle", "verbose", "output_type"}
    assert BUILT == []


def test_xgboost_params_passed_through_kwargs_are_still_known():
    names = accepted_params(xgboost.XGBClassifier)
    assert {"n_estimators", "max_depth", "max_bin", "tree_method", "device", "n_jobs"} <= names
    assert names == set(xgboost.XGBClassifier().get_params(deep=False))


CALLED: list[str] = []


def leaves_a_mark(*args, **kwargs):
    CALLED.append("function")


class NoFit:
    def __init__(self, *args, **kwargs):
        CALLED.append("class")


class Fits(NoFit):
    def fit(self, X, y=None):
        return self


@pytest.mark.parametrize("name,why", [("leaves_a_mark", "is a function, not an estimator class"),
                                      ("NoFit", "is a class without a fit method, not an estimator"),
                                      ("xgboost", "is a module, not an estimator class"),
                                      ("BUILT", "is a list, not an estimator class")])
def test_a_case_s_process_imports_only_an_estimator_class_and_calls_nothing(name, why):
    """The worker's own check (its library may not be importable where the suite validated)."""
    CALLED.clear()
    path = f"{__name__}.{name}"
    with pytest.raises(InputError) as refused:
        import_estimator(path, allowed=(f"{__name__}.",))
    assert refused.value.message == f"{path!r} {why}" and CALLED == []
    assert import_estimator(f"{__name__}.Fits", allowed=(f"{__name__}.",)) is Fits and CALLED == []


def test_a_module_off_the_list_is_refused_before_it_is_imported():
    with pytest.raises(InputError) as refused:
        import_estimator("antigravity.fly", allowed=("sklearn.",))
    assert "--allow-module antigravity" in refused.value.message
    assert "antigravity" not in sys.modules
