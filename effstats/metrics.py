"""Sample-level metrics for predicted correctness (Lifelong Benchmarks, Eq. 2-4), the aleatoric / epistemic
error decomposition (Sect. 4.5), the E_agg counterexample (Theorem 2.1), curve fits and correlations.

Notation: ``a`` is the true correctness of a model on ``n`` items, ``y`` the predicted correctness, both binary.
Every function takes one vector (n,) or many models at once (n_models, n) and then returns one value per row.

* :math:`E(a, y) = \\lVert a - y \\rVert_1 / n` (MAE, Eq. 2) — :func:`effstats.metrics.mae`
* :math:`E_{\\mathrm{agg}}(a, y) = \\big|\\,|y| - |a|\\,\\big| / n` — :func:`effstats.metrics.e_agg`
* :math:`E_{\\mathrm{rand}}(a, y) = p_a p_y + (1 - p_a)(1 - p_y)` with :math:`p_a = |a|/n`, :math:`p_y = |y|/n`
  (Eq. 3) — :func:`effstats.metrics.e_rand`
* :math:`\\kappa = ((1 - E) - E_{\\mathrm{rand}}) / (1 - E_{\\mathrm{rand}})` (Eq. 4), Cohen's kappa for two
  raters — :func:`effstats.metrics.cohen_kappa`.
  The paper states :math:`0 \\le \\kappa \\le 1`; in fact :math:`-1 \\le \\kappa \\le 1` (negative when predictions
  agree less than chance, e.g. the Theorem 2.1 construction).

Equation and section numbers follow the Lifelong Benchmarks version of the paper.

References
----------
Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems (NeurIPS)*,
arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
Progress").

Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological Measurement*
20(1), 37-46.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._ordering import check_order, dp_rows
from ._shared import _e_rand_rates, _id_list, _kappa_from_rates, _plain
from ._correlations import CorrelationResult, accuracy_correlation, model_correlation_matrix
from ._curve_fits import CurveFit, fit_exponential, fit_power_law
from ._validation import _number, check_binary, check_unit_interval
from .responses import ResponseMatrix

__all__ = [
    "mae",
    "e_agg",
    "e_rand",
    "cohen_kappa",
    "sample_metrics",
    "aggregate_counterexample",
    "oracle_count_prediction",
    "ErrorDecomposition",
    "decompose_errors",
    "CurveFit",
    "fit_exponential",
    "fit_power_law",
    "CorrelationResult",
    "accuracy_correlation",
    "model_correlation_matrix",
]


def _values(x: Any, name: str = "a") -> Any:
    if not isinstance(x, ResponseMatrix):
        return x
    if x.missing is not None and x.missing.any():
        # a missing cell is stored as 0: scoring it would count "not evaluated" as "wrong"
        raise ValueError(f"{name}: {int(x.missing.sum())} cells are missing (not evaluated); sample-level metrics "
                         "need every cell: subset the matrix to the evaluated items")
    return x.values


def _labels(x: Any) -> tuple[pd.Index | None, pd.Index] | None:
    """(row ids or None, column ids) of a labelled input (ResponseMatrix, DataFrame, Series), None for arrays."""
    if isinstance(x, ResponseMatrix):
        return x.model_ids, x.item_ids
    if isinstance(x, pd.DataFrame):
        return x.index, x.columns
    if isinstance(x, pd.Series):
        return None, x.index
    return None


def _align_labelled(a: Any, y: Any) -> tuple[Any, Any]:
    """When both ``a`` and ``y`` carry ids, ``y``'s values reordered to ``a``'s items (and models) by id; a mismatch
    raises ValueError listing the ids. Otherwise both unchanged (arrays are positional)."""
    la, ly = _labels(a), _labels(y)
    if la is None or ly is None:
        return a, y
    yv = np.asarray(_values(y, "y").to_numpy() if isinstance(y, (pd.DataFrame, pd.Series)) else _values(y, "y"))
    for axis, what in ((1, "item"), (0, "model")):
        ia, iy = la[axis], ly[axis]
        if ia is None or iy is None or ia.equals(iy):
            continue
        if iy.has_duplicates or ia.has_duplicates:
            raise ValueError(f"y: duplicated {what} ids; labelled a and y are aligned by id")
        missing, unseen = ia.difference(iy, sort=False), iy.difference(ia, sort=False)
        if len(missing) or len(unseen):
            parts = [f"missing {what}s {_id_list(missing)}"] if len(missing) else []
            parts += [f"unexpected {what}s {_id_list(unseen)}"] if len(unseen) else []
            raise ValueError(f"y: labelled y must have a's {what} ids (any order); " + "; ".join(parts))
        take = iy.get_indexer(ia)
        yv = yv[..., take] if axis == 1 or yv.ndim == 1 else yv[take]
    return a, yv


def _pair(a: Any, y: Any, *, binary: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate two same-shape (n,) or (n_models, n) arrays; return float/bool 2-D views and whether input was 1-D.

    Labelled inputs (ResponseMatrix, DataFrame, Series) on both sides are aligned by id (items, and models when
    both have model ids); arrays are positional."""
    chk = (lambda x, nm: check_binary(x, nm, ndim=(1, 2))) if binary else (lambda x, nm: check_unit_interval(x, nm,
                                                                                                             ndim=(1,
                                                                                                                   2)))
    a, y = _align_labelled(a, y)
    av = chk(_values(a, "a"), "a")
    yv = chk(_values(y, "y"), "y")
    if av.shape != yv.shape:
        raise ValueError(f"y: expected the shape of a {av.shape}, got {yv.shape}")
    one = av.ndim == 1
    return np.atleast_2d(av), np.atleast_2d(yv), one


def _out(x: np.ndarray, one: bool) -> Any:
    return float(x[0]) if one else x


def mae(a: Any, y: Any) -> Any:
    """Mean absolute error between true and predicted correctness (Notes).

    The sample-level error of Prabhu et al. (Eq. 2): the fraction of items whose predicted correctness is
    wrong, vectorised over models.

    Parameters
    ----------
    a : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True correctness, values in [0, 1] (binary or scores). A :class:`effstats.ResponseMatrix` with missing
        cells is refused.
    y : array-like of the same shape, or ResponseMatrix
        Predicted correctness. When both ``a`` and ``y`` carry ids (ResponseMatrix, DataFrame, Series), ``y`` is
        aligned to ``a`` by item (and model) id; arrays are positional.

    Returns
    -------
    float or ndarray of shape (n_models,)
        A float for 1-D input, one value per row for 2-D input; in [0, 1].

    See Also
    --------
    effstats.metrics.e_agg : the error of the predicted accuracy only.
    effstats.metrics.cohen_kappa : agreement corrected for chance.
    effstats.metrics.sample_metrics : every metric in one table.

    Notes
    -----
    With :math:`a, y \\in \\{0, 1\\}^n` (or scores in :math:`[0, 1]`),

    .. math::

        E(a, y) = \\frac{\\lVert a - y \\rVert_1}{n} = \\frac{1}{n} \\sum_{i=1}^{n} |a_i - y_i| .

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])  # true correctness on 8 items
    >>> y = np.array([1, 0, 0, 1, 1, 0, 1, 0])  # a prediction of it
    >>> from effstats.metrics import mae
    >>> mae(a, y)
    0.25
    >>> mae(np.vstack([a, a]), np.vstack([y, a]))
    array([0.25, 0.  ])
    """
    av, yv, one = _pair(a, y, binary=False)
    return _out(np.abs(av.astype(float) - yv).mean(axis=1), one)


def e_agg(a: Any, y: Any) -> Any:
    """Aggregate (accuracy) error: the error of the predicted accuracy (Notes).

    The error of the predicted accuracy, the metric most efficient-evaluation papers report. Prabhu et al.
    (Theorem 2.1) show that ``E_agg = 0`` allows the worst sample-level error; see
    :func:`effstats.metrics.aggregate_counterexample`.

    Parameters
    ----------
    a, y : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True and predicted correctness in [0, 1], as in :func:`effstats.metrics.mae`.

    Returns
    -------
    float or ndarray of shape (n_models,)
        ``|mean(y) - mean(a)|`` per row; a float for 1-D input.

    See Also
    --------
    effstats.metrics.mae : the sample-level error.
    effstats.metrics.aggregate_counterexample : ``E_agg = 0`` with the largest ``E``.

    Notes
    -----
    .. math::

        E_{\\mathrm{agg}}(a, y) = \\frac{\\big|\\, |y| - |a| \\,\\big|}{n},

    with :math:`|a| = \\sum_i a_i` the number of correct items.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])  # true correctness on 8 items
    >>> y = np.array([1, 0, 0, 1, 1, 0, 1, 0])  # a prediction of it
    >>> from effstats.metrics import e_agg, mae
    >>> e_agg(a, y), mae(a, y)  # the same accuracy, two items wrong
    (0.0, 0.25)
    """
    av, yv, one = _pair(a, y, binary=False)
    return _out(np.abs(yv.astype(float).mean(axis=1) - av.mean(axis=1)), one)


def e_rand(a: Any, y: Any) -> Any:
    """Agreement expected by chance between two predictions with the rates of ones of ``a`` and ``y`` (Eq. 3 of
    Prabhu et al.).

    ``p_a`` and ``p_y`` are the rates of ones in ``a`` and ``y``: two independent predictions with these rates
    agree on a fraction ``E_rand`` of the items on average. It is the chance term of
    :func:`effstats.metrics.cohen_kappa`.

    Parameters
    ----------
    a, y : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True and predicted correctness, binary (0/1 or bool); labelled inputs as in :func:`effstats.metrics.mae`.

    Returns
    -------
    float or ndarray of shape (n_models,)
        In [0, 1]; a float for 1-D input.

    See Also
    --------
    effstats.metrics.cohen_kappa : agreement beyond ``E_rand``.

    Notes
    -----
    With :math:`p_a = |a| / n` and :math:`p_y = |y| / n`,

    .. math::

        E_{\\mathrm{rand}}(a, y) = p_a\\, p_y + (1 - p_a)(1 - p_y).

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
    Measurement* 20(1), 37-46.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])  # true correctness on 8 items
    >>> y = np.array([1, 0, 0, 1, 1, 0, 1, 0])  # a prediction of it
    >>> from effstats.metrics import e_rand
    >>> e_rand(a, y)  # both rates are 1/2
    0.5
    """
    av, yv, one = _pair(a, y, binary=True)
    pa, py = av.mean(axis=1), yv.mean(axis=1)
    return _out(_e_rand_rates(pa, py), one)


def cohen_kappa(a: Any, y: Any, *, undefined: float = 1.0) -> Any:
    """Cohen's kappa between true and predicted correctness, vectorised over models.

    The agreement beyond chance (Notes; Eq. 4 of Prabhu et al., Cohen 1960). Equals
    ``sklearn.metrics.cohen_kappa_score(a, y)`` on binary vectors (checked in the tests). Prabhu et al. state
    ``0 <= kappa <= 1``; the range is ``[-1, 1]``, negative when a prediction agrees less than chance.

    Parameters
    ----------
    a, y : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True and predicted correctness, binary (0/1 or bool); labelled inputs as in :func:`effstats.metrics.mae`.
    undefined : float in [-1, 1], default=1.0
        Returned where both vectors are the same constant (kappa is 0/0 there; perfect agreement). scikit-learn
        returns NaN in that case.

    Returns
    -------
    float or ndarray of shape (n_models,)
        In [-1, 1]; a float for 1-D input.

    Raises
    ------
    ValueError
        If ``undefined`` is not a number in [-1, 1], or ``a`` and ``y`` are not binary arrays of the same shape.

    See Also
    --------
    effstats.metrics.e_rand : the chance term.
    effstats.metrics.sample_metrics : kappa with the other metrics, one row per model.
    sklearn.metrics.cohen_kappa_score : the same statistic for one pair of label vectors.

    Notes
    -----
    .. math::

        \\kappa = \\frac{(1 - E) - E_{\\mathrm{rand}}}{1 - E_{\\mathrm{rand}}},

    with :math:`E` the :func:`effstats.metrics.mae` and :math:`E_{\\mathrm{rand}}` the
    :func:`effstats.metrics.e_rand` of ``a`` and ``y``.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
    Measurement* 20(1), 37-46.

    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])  # true correctness on 8 items
    >>> y = np.array([1, 0, 0, 1, 1, 0, 1, 0])  # a prediction of it
    >>> from effstats.metrics import cohen_kappa
    >>> cohen_kappa(a, y)  # (0.75 - 0.5) / (1 - 0.5)
    0.5
    >>> cohen_kappa(np.ones(4), np.ones(4))  # constant and equal: the ``undefined`` value
    1.0
    """
    undefined = _number(undefined)
    real = isinstance(undefined, (int, float, np.integer, np.floating)) and not isinstance(undefined, (bool, np.bool_))
    if not real or not -1 <= undefined <= 1:
        raise ValueError(f"undefined: expected a real number in [-1, 1] (kappa's range), got {_plain(undefined)!r}")
    av, yv, one = _pair(a, y, binary=True)
    err = (av != yv).mean(axis=1)
    return _out(_kappa_from_rates(err, av.mean(axis=1), yv.mean(axis=1), float(undefined)), one)


def sample_metrics(a: Any, y: Any) -> pd.DataFrame:
    """All sample-level metrics of a prediction, one row per model.

    Parameters
    ----------
    a, y : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True and predicted correctness, binary (0/1 or bool); labelled inputs as in :func:`effstats.metrics.mae`.

    Returns
    -------
    DataFrame of shape (n_models, 6)
        Columns ``mae``, ``e_agg``, ``e_rand``, ``kappa``, ``predicted_accuracy`` (of ``y``) and
        ``accuracy_true`` (of ``a``). Indexed by ``a``'s model ids when ``a`` is a ResponseMatrix or DataFrame,
        by position otherwise.

    See Also
    --------
    effstats.metrics.mae, effstats.metrics.e_agg, effstats.metrics.e_rand, effstats.metrics.cohen_kappa

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import sample_metrics
    >>> a = np.array([[1, 1, 0, 1, 0, 0, 1, 0], [1, 1, 1, 1, 1, 1, 0, 0]])
    >>> y = np.array([[1, 0, 0, 1, 1, 0, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    >>> sample_metrics(a, y)
        mae  e_agg  e_rand  kappa  predicted_accuracy  accuracy_true
    0  0.25   0.00    0.50    0.5                 0.5           0.50
    1  0.25   0.25    0.75    0.0                 1.0           0.75
    """
    av, yv, _ = _pair(a, y, binary=True)
    pa, py = av.mean(axis=1), yv.mean(axis=1)
    err = (av != yv).mean(axis=1)
    return pd.DataFrame(
        {
            "mae": err,
            "e_agg": np.abs(py - pa),
            "e_rand": _e_rand_rates(pa, py),
            "kappa": _kappa_from_rates(err, pa, py),
            "predicted_accuracy": py,
            "accuracy_true": pa,
        },
        index=_row_ids(a, len(err)),
    )


def _row_ids(a: Any, n_rows: int) -> pd.Index | None:
    lab = _labels(a)
    rows = None if lab is None else lab[0]
    return rows if rows is not None and len(rows) == n_rows else None


# ---------------------------------------------------------------------------------------------- Theorem 2.1
def aggregate_counterexample(a: Any) -> np.ndarray:
    """A prediction with ``E_agg = 0`` and the largest sample-level error (Theorem 2.1 of Prabhu et al., App. J).

    With at most half of the items correct, every correct item is predicted wrong and the first ``|a|`` wrong items are
    predicted correct; with more than half, symmetrically. The prediction has the true accuracy and the largest
    sample-level error (Notes), so a small aggregate error says nothing about per-item predictions.

    Parameters
    ----------
    a : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True correctness, binary.

    Returns
    -------
    y : ndarray of bool, the shape of ``a``

    See Also
    --------
    effstats.metrics.e_agg : the aggregate error this prediction zeroes.
    effstats.metrics.oracle_count_prediction : the "oracle" of Sect. 2.1.

    Notes
    -----
    With :math:`p = |a| / n \\le 1/2` the prediction has the true accuracy and the sample-level error

    .. math::

        E_{\\mathrm{agg}} = 0, \\qquad E = 2 \\min(p, 1 - p),

    the largest any prediction with the true accuracy can have.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import aggregate_counterexample, e_agg, mae
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])
    >>> y = aggregate_counterexample(a)
    >>> y.astype(int)
    array([0, 0, 1, 0, 1, 1, 0, 1])
    >>> e_agg(a, y), mae(a, y)
    (0.0, 1.0)
    """
    av = check_binary(_values(a), "a", ndim=(1, 2))
    one = av.ndim == 1
    a2 = np.atleast_2d(av)
    n = a2.shape[1]
    k = a2.sum(axis=1, keepdims=True)
    zero_rank = np.cumsum(~a2, axis=1) - 1  # rank of each wrong item among the row's wrong items
    one_rank = np.cumsum(a2, axis=1) - 1
    minority_ones = 2 * k <= n
    # p <= 1/2: y = 1 exactly on the first k wrong items; p > 1/2: y = 0 exactly on the first n - k right items
    y_low = ~a2 & (zero_rank < k)
    y_high = ~(a2 & (one_rank < (n - k)))
    y = np.where(minority_ones, y_low, y_high)
    return y[0] if one else y


def oracle_count_prediction(a: Any, order: Any = None) -> np.ndarray:
    """The "oracle" prediction of Prabhu et al. (Sect. 2.1): the true count, the wrong items.

    Knowing only the true number of correct items ``k = |a|``, predict the first ``k`` items of ``order``
    correct. ``E_agg = 0`` by construction; ``E`` is what the missing per-item information costs. Under an order
    unrelated to correctness, ``E`` has expectation ``2 p (1 - p)`` for accuracy ``p`` (0.42-0.5 for ``p`` in
    0.3-0.7).

    Parameters
    ----------
    a : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True correctness, binary.
    order : array-like of int of shape (n_items,), default=None
        A permutation of the items (first = predicted correct first); ``None`` is the natural order.

    Returns
    -------
    y : ndarray of bool, the shape of ``a``

    See Also
    --------
    effstats.metrics.aggregate_counterexample : the worst prediction with ``E_agg = 0``.
    effstats.metrics.decompose_errors : the best "ones then zeros" prediction in an order.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import oracle_count_prediction, mae
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])
    >>> oracle_count_prediction(a).astype(int)
    array([1, 1, 1, 1, 0, 0, 0, 0])
    >>> mae(a, oracle_count_prediction(a))
    0.25
    """
    av = check_binary(_values(a), "a", ndim=(1, 2))
    one = av.ndim == 1
    a2 = np.atleast_2d(av)
    n = a2.shape[1]
    rank = np.arange(n)
    if order is not None:
        o = check_order(order, n)
        rank = np.empty(n, np.int64)
        rank[o] = np.arange(n)
    y = rank[None, :] < a2.sum(axis=1, keepdims=True)
    return y[0] if one else y


# ---------------------------------------------------------------------------------------------- decomposition
@dataclass(frozen=True)
class ErrorDecomposition:
    """Aleatoric / epistemic decomposition of the sample-level error and of kappa.

    Returned by :func:`effstats.metrics.decompose_errors`. ``y*`` is the best "ones then zeros" prediction in
    the sort order with all ``n`` items known (a dynamic-programming search on the full ``a``): what no predictor
    that follows the order can beat (aleatoric), and the distance from it (epistemic).

    For any ``y``, ``total <= aleatoric + epistemic`` and ``|aleatoric - epistemic| <= total`` (the triangle
    inequality of the Hamming distance); ``epistemic = 0`` if and only if ``y = y*``, and then
    ``kappa = kappa_aleatoric``. When ``y`` itself is "ones then zeros" in the order (every Sort & Search
    prediction), also ``aleatoric <= total``.

    Attributes
    ----------
    total : ndarray of shape (n_models,)
        ``E(a, y)``.
    aleatoric : ndarray of shape (n_models,)
        ``E(a, y*)``.
    epistemic : ndarray of shape (n_models,)
        ``E(y*, y)``.
    kappa, kappa_aleatoric, kappa_epistemic : ndarray of shape (n_models,)
        Cohen's kappa of the same three pairs.
    best_threshold : ndarray of int of shape (n_models,)
        The number of leading ones in ``y*``.

    See Also
    --------
    effstats.metrics.decompose_errors : computes it.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import decompose_errors
    >>> a = np.array([1, 1, 0, 1, 0, 0, 1, 0])
    >>> d = decompose_errors(a, a[::-1], order=np.arange(8))
    >>> float(d.total[0]), float(d.aleatoric[0]), float(d.epistemic[0])
    (0.5, 0.25, 0.5)

    """

    total: np.ndarray
    aleatoric: np.ndarray
    epistemic: np.ndarray
    kappa: np.ndarray
    kappa_aleatoric: np.ndarray
    kappa_epistemic: np.ndarray
    best_threshold: np.ndarray = field(repr=False)

    def frame(self) -> pd.DataFrame:
        """Tidy table, one row per model and one column per error or kappa.

        Returns
        -------
        DataFrame of shape (n_models, 6)

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.metrics import decompose_errors
        >>> a = np.array([[1, 1, 0, 1, 0, 0, 1, 0], [1, 1, 1, 0, 1, 0, 0, 0]])  # two models' true correctness
        >>> decompose_errors(a, a[:, ::-1], order=np.arange(8)).frame().round(3)
           total  aleatoric  epistemic  kappa  kappa_aleatoric  kappa_epistemic
        0    0.5      0.250      0.500    0.0             0.50             0.00
        1    1.0      0.125      0.875   -1.0             0.75            -0.75
        """
        return pd.DataFrame({k: getattr(self, k) for k in ("total", "aleatoric", "epistemic", "kappa",
                                                           "kappa_aleatoric", "kappa_epistemic")})

    to_frame = frame  # the result protocol's name

    def mean(self) -> pd.Series:
        """The mean of each column of :meth:`effstats.metrics.ErrorDecomposition.frame` over the models.

        Returns
        -------
        Series

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.metrics import decompose_errors
        >>> a = np.array([[1, 1, 0, 1, 0, 0, 1, 0], [1, 1, 1, 0, 1, 0, 0, 0]])
        >>> decompose_errors(a, a[:, ::-1], order=np.arange(8)).mean()[["total", "aleatoric", "epistemic"]].round(3)
        total        0.750
        aleatoric    0.188
        epistemic    0.688
        dtype: float64
        """
        return self.frame().mean()


def decompose_errors(a: Any, y: Any, order: Any) -> ErrorDecomposition:
    """Decompose ``E(a, y)`` into aleatoric ``E(a, y*)`` and epistemic ``E(y*, y)`` error (and likewise kappa).

    Sect. 4.5 of Prabhu et al.: ``y*`` is the best prediction that is "ones then zeros" in ``order``, found by
    dynamic programming on the full ``a``. The aleatoric part is the error of the order itself; the epistemic
    part is what a predictor loses by not knowing where the model's threshold lies.

    Parameters
    ----------
    a : array-like of shape (n_items,) or (n_models, n_items), or ResponseMatrix
        True correctness, binary.
    y : array-like of the same shape
        Predicted correctness, binary (any predictor, not only Sort & Search).
    order : array-like of int of shape (n_items,)
        The sort order (easiest first) in which ``y*`` is "ones then zeros".

    Returns
    -------
    ErrorDecomposition

    See Also
    --------
    effstats.metrics.ErrorDecomposition : the result.
    effstats.sortsearch.SortSearch : predictions of this form.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *NeurIPS 2024*, arXiv:2402.19472.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.metrics import decompose_errors
    >>> a = np.array([[1, 1, 0, 1, 0, 0, 1, 0], [1, 1, 1, 1, 1, 1, 0, 0]])
    >>> y = np.array([[1, 0, 0, 1, 1, 0, 1, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    >>> d = decompose_errors(a, y, order=np.arange(8))
    >>> d.to_frame()[["total", "aleatoric", "epistemic"]]
       total  aleatoric  epistemic
    0   0.25       0.25       0.50
    1   0.25       0.00       0.25
    """
    av, yv, _ = _pair(a, y, binary=True)
    n = av.shape[1]
    o = check_order(order, n)
    kstar = dp_rows(av[:, o])
    ystar = np.empty_like(av)
    ystar[:, o] = np.arange(n)[None, :] < kstar[:, None]
    pa, py, ps = av.mean(1), yv.mean(1), ystar.mean(1)
    tot = (av != yv).mean(1)
    ale = (av != ystar).mean(1)
    epi = (ystar != yv).mean(1)
    return ErrorDecomposition(
        total=tot,
        aleatoric=ale,
        epistemic=epi,
        kappa=_kappa_from_rates(tot, pa, py),
        kappa_aleatoric=_kappa_from_rates(ale, pa, ps),
        kappa_epistemic=_kappa_from_rates(epi, ps, py),
        best_threshold=kstar,
    )
