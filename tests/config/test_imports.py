"""Reading the parameters an estimator takes, without ever building one."""

from __future__ import annotations

import xgboost

from mlcompare.pairings.imports import accepted_params

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
