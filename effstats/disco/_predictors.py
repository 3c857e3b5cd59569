"""The regressors that map model signatures to scores (DISCO's Table 2e)."""
from __future__ import annotations

from typing import Any

from sklearn.base import clone

from .._validation import check_option, check_positive_int, check_rng

PREDICTORS = ("knn", "rf", "linear", "ridge", "lasso", "gb", "mlp2", "mlp3")


def make_predictor(
    name: str | Any, *, random_state: Any = None, n_neighbors: int = 1, metric: str = "cosine", argname: str = "name"
):
    """The regressors of Table 2(e) with App. I's settings (all scikit-learn).

    ``knn`` (k = 1, cosine distance as in the authors' code; ``metric="euclidean"`` for scikit-learn's default), ``rf`` (defaults), ``linear``, ``ridge`` (λ = 10), ``lasso`` (λ = 1e-4),
    ``gb`` (200 estimators), ``mlp2`` (hidden [128], 200 epochs, lr 1e-3) and ``mlp3`` ([128, 128], 700
    epochs). The paper trains the MLPs with AdamW; scikit-learn's Adam with its default L2 of 1e-4 is
    the nearest equivalent. A scikit-learn regressor instance is returned as a clone. ``argname`` is the
    argument's name in error messages (``"predictor"`` when called by :class:`DISCO`).
    """
    from sklearn import ensemble, linear_model, neighbors, neural_network

    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    metric = check_option(metric, "metric", ("cosine", "euclidean"), ignore_case=True)
    if not isinstance(name, str):
        if not hasattr(name, "fit") or not hasattr(name, "predict"):
            raise ValueError(f"{argname}: expected one of {PREDICTORS} or a scikit-learn regressor, got {name!r}")
        return clone(name)
    rs = None if random_state is None else int(check_rng(random_state, "random_state").integers(2**31 - 1))
    table = {
        "knn": lambda: neighbors.KNeighborsRegressor(n_neighbors=n_neighbors, metric=metric, algorithm="brute"),
        "rf": lambda: ensemble.RandomForestRegressor(random_state=rs, n_jobs=-1),
        "linear": lambda: linear_model.LinearRegression(),
        "ridge": lambda: linear_model.Ridge(alpha=10.0),
        "lasso": lambda: linear_model.Lasso(alpha=1e-4, max_iter=5000),
        "gb": lambda: ensemble.GradientBoostingRegressor(n_estimators=200, random_state=rs),
        "mlp2": lambda: neural_network.MLPRegressor((128,), learning_rate_init=1e-3, max_iter=200, random_state=rs),
        "mlp3": lambda: neural_network.MLPRegressor((128, 128), learning_rate_init=1e-3, max_iter=700, random_state=rs),
    }
    key = next((k for k in table if k == name.casefold()), None)
    if key is None:
        raise ValueError(f"{argname}: expected one of {PREDICTORS} or a scikit-learn regressor, got {name!r}")
    return table[key]()
