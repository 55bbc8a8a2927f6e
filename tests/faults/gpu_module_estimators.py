"""An estimator whose module imports a GPU library's module (numba.cuda, which touches no device
when imported). For the test that the warm worker refuses to fork once such a module is loaded."""

from __future__ import annotations

import numba.cuda  # noqa: F401 - the point of this module
from sklearn.linear_model import LinearRegression


class NextToNumbaCuda(LinearRegression):
    """scikit-learn's LinearRegression, from a module that loaded numba.cuda."""
