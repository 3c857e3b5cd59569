"""The regressors that map model signatures to scores (DISCO's Table 2e)."""
from __future__ import annotations

from typing import Any

from sklearn.base import clone

from .._validation import check_option, check_positive_int, check_rng

#: Names of the signature regressors of :func:`effstats.disco.make_predictor` (Table 2(e) of Rubinstein et al.
#: 2025).
#:
#: Examples
#: --------
#: >>> from effstats.disco import PREDICTORS, make_predictor
#: >>> PREDICTORS
#: ('knn', 'rf', 'linear', 'ridge', 'lasso', 'gb', 'mlp2', 'mlp3')
#: >>> type(make_predictor("ridge")).__name__
#: 'Ridge'
PREDICTORS = ("knn", "rf", "linear", "ridge", "lasso", "gb", "mlp2", "mlp3")


def make_predictor(
    name: str | Any, *, random_state: Any = None, n_neighbors: int = 1, metric: str = "cosine", argname: str = "name"
):
    """A regressor of Table 2(e) of Rubinstein et al. (2025) with their App. I settings (all scikit-learn).

    ``knn`` (k = 1, cosine distance as in the authors' code; ``metric="euclidean"`` for scikit-learn's default),
    ``rf`` (defaults), ``linear``, ``ridge`` (λ = 10), ``lasso`` (λ = 1e-4), ``gb`` (200 estimators), ``mlp2``
    (hidden [128], 200 epochs, lr 1e-3) and ``mlp3`` ([128, 128], 700 epochs). The paper trains the MLPs with
    AdamW; scikit-learn's Adam with its default L2 of 1e-4 is the nearest equivalent.

    Parameters
    ----------
    name : str or object
        One of :data:`effstats.disco.PREDICTORS`, in any case, or a scikit-learn regressor (returned as a clone).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the forest, boosting and MLP regressors.
    n_neighbors : int, default=1
        k of ``knn``, at least 1.
    metric : {"cosine", "euclidean"}, default="cosine"
        Distance of ``knn``, in any case.
    argname : str, default="name"
        The argument's name in error messages (``"predictor"`` when called by :class:`effstats.disco.DISCO`).

    Returns
    -------
    sklearn.base.BaseEstimator
        An unfitted scikit-learn regressor.

    See Also
    --------
    effstats.disco.DISCO : fits the regressor on the source models' signatures.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.disco import PREDICTORS, make_predictor
    >>> PREDICTORS
    ('knn', 'rf', 'linear', 'ridge', 'lasso', 'gb', 'mlp2', 'mlp3')
    >>> make_predictor("knn")
    KNeighborsRegressor(algorithm='brute', metric='cosine', n_neighbors=1)
    >>> make_predictor("Ridge")
    Ridge(alpha=10.0)
    """
    from sklearn import ensemble, linear_model, neighbors, neural_network

    from ._forest import random_forest

    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    metric = check_option(metric, "metric", ("cosine", "euclidean"), ignore_case=True)
    if not isinstance(name, str):
        if not hasattr(name, "fit") or not hasattr(name, "predict"):
            raise ValueError(f"{argname}: expected one of {PREDICTORS} or a scikit-learn regressor, got {name!r}")
        return clone(name)
    rs = None if random_state is None else int(check_rng(random_state, "random_state").integers(2**31 - 1))
    table = {
        "knn": lambda: neighbors.KNeighborsRegressor(n_neighbors=n_neighbors, metric=metric, algorithm="brute"),
        "rf": lambda: random_forest(rs),
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
