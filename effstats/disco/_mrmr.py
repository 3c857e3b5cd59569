"""mRMR item selection with (kernel) ridge regression, and random items with a learned regression.

Bowyer, Locatelli & Cao (2026) treat efficient benchmarking as multiple regression with feature selection: the
items are features, the source models are observations and a model's full-benchmark score is the response.
Items are chosen greedily by *minimum redundancy, maximum relevance* (Peng, Long & Ding 2005): relevance is the
mutual information between an item's responses and the models' scores, redundancy the mean mutual information
with the items already chosen. A ridge or polynomial kernel ridge regression, its penalty chosen by
cross-validation over the source models, maps a target's responses on the chosen items to its score.
Zhang, Dorner & Hardt (2025) call the same regression on uniformly random items "Random-Sampling-Learn".
"""
from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np
from scipy.special import digamma

from .._outputs import _impute
from .._subset import _SubsetEstimator
from .._validation import (check_array, check_item_count, check_option, check_positive_int, check_rng,
                           check_unit_interval, is_zero_one)
from ._selection import select_random

__all__ = ["MRMR", "RandomLearn", "select_mrmr", "mutual_information_relevance"]

_SCHEMES = ("quotient", "difference")
_REGRESSORS = ("kernel_ridge", "ridge")
_CHUNK = 2048  # items per block of the nearest-neighbour estimator: (n_models × 2048 × 2 n_neighbors) floats


def _is_binary(x: np.ndarray) -> bool:
    return is_zero_one(x)


def _ross_mi(x: np.ndarray, y: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Ross (2014) nearest-neighbour estimate of the mutual information between each binary column of ``x`` (M, N)
    and the continuous ``y`` (M,), in nats, shape (N,); 0 for an item with fewer than ``n_neighbors + 1`` models
    in one of its two classes (the estimator needs that many neighbours within a class).

    ``y`` is one-dimensional, so a model's k nearest models of its class are among the k before it and the k after
    it when its class is sorted by ``y``: the distance to the k-th is the k-th smallest of those 2k distances
    (M × N × 2k values, not the M × M × N of a search over all pairs).
    """
    m, n = x.shape
    k = n_neighbors
    dist = np.abs(y[:, None] - y[None, :])
    dsorted = np.sort(dist, axis=1)  # row i: every model's distance from model i, ascending
    out = np.zeros(n)
    xb = x.astype(bool)
    n1 = xb.sum(axis=0)
    n0 = m - n1
    ok = (n0 >= k + 1) & (n1 >= k + 1)
    cols = np.flatnonzero(ok)
    by_y = np.argsort(y, kind="stable")
    ys = y[by_y]
    rows = np.arange(m)[:, None]
    for start in range(0, len(cols), _CHUNK):
        j = cols[start:start + _CHUNK]
        at = np.arange(len(j))
        # per item: the models of class 0, then those of class 1, each sorted by y; a row's class is rows lo:hi
        pos = np.argsort(xb[by_y][:, j], axis=0, kind="stable")  # (M, J) positions in by_y
        yp = ys[pos]
        first = rows >= n0[j]
        lo, hi = np.where(first, n0[j], 0), np.where(first, m, n0[j])
        # before[o - 1], after[o - 1]: the distance to the o-th model before and after in the class (inf beyond it),
        # each ascending in o as the class is sorted by y
        before, after = [], []
        for o in range(1, k + 1):
            gap = np.full((m, len(j)), np.inf)
            gap[o:] = np.abs(yp[:-o] - yp[o:])
            before.append(np.where(rows - o >= lo, gap, np.inf))
            after.append(np.where(rows + o < hi, np.roll(gap, -o, axis=0), np.inf))
        # the k-th smallest of two ascending lists of k: the least over t of max(t-th before, (k - t)-th after)
        kth = np.minimum(before[k - 1], after[k - 1])
        for t in range(1, k):
            np.minimum(kth, np.maximum(before[t - 1], after[k - t - 1]), out=kth)
        d = np.empty((m, len(j)))
        d[by_y[pos], at] = kth  # (M, J): distance to the k-th, by model
        # models of either class within that distance (itself included); at least itself
        within = np.empty((m, len(j)), dtype=np.int64)
        for i in range(m):
            within[i] = np.searchsorted(dsorted[i], d[i] - 1e-15, side="right")
        within = np.maximum(within, 1)
        n_class = np.where(xb[:, j], n1[j], n0[j])
        mi = digamma(m) - digamma(n_class).mean(axis=0) + digamma(k) - digamma(within).mean(axis=0)
        out[j] = np.maximum(mi, 0.0)
    return out


def _binary_mi(x: np.ndarray, v: np.ndarray, p1: np.ndarray | None = None) -> np.ndarray:
    """Plug-in mutual information (nats) between each binary column of ``x`` (M, N) and the binary ``v`` (M,);
    ``p1``: the column means of ``x``, when the caller has them."""
    m = x.shape[0]
    p1 = x.mean(axis=0) if p1 is None else p1
    return np.maximum(_mi_cells(p1, v.mean(), (x.T @ v) / m), 0.0)


def _mi_cells(p1: np.ndarray, q1: Any, p11: np.ndarray) -> np.ndarray:
    """Σ joint log(joint / product) over the four cells of two binary variables with P(first) = p1, P(second) = q1
    and P(both) = p11 (arrays broadcast together); cells without mass add nothing."""
    cells = ((p11, p1 * q1), (p1 - p11, p1 * (1 - q1)), (q1 - p11, (1 - p1) * q1),
             (1 - p1 - q1 + p11, (1 - p1) * (1 - q1)))
    shape = np.broadcast(p1, q1, p11).shape
    mi = np.zeros(shape)
    term = np.empty(shape)
    for joint, prod in cells:
        joint, prod = np.broadcast_to(joint, shape), np.broadcast_to(prod, shape)
        pos = joint > 1e-15
        # only where the cell has mass (no masked copies: this runs once per chosen item over all items)
        np.divide(joint, prod, out=term, where=pos)
        np.log(term, out=term, where=pos)
        np.multiply(joint, term, out=term, where=pos)
        mi += np.where(pos, term, 0.0)
    return mi


@functools.lru_cache(maxsize=8)
def _redundancy_table(m: int) -> np.ndarray:
    """``_binary_mi`` of two binary columns of M = ``m`` models, for every count of ones of the chosen column, of
    the other and of both: (M + 1, M + 1, M + 1), from the same numbers as per item (counts / M), read-only."""
    share = np.arange(m + 1) / m
    with np.errstate(divide="ignore", invalid="ignore"):  # counts no pair of columns has (more shared ones than ones)
        table = np.maximum(_mi_cells(share[None, :, None], share[:, None, None], share[None, None, :]), 0.0)
    table.flags.writeable = False
    return table


def _gaussian_mi(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Mutual information (nats) of jointly Gaussian variables, ``-log(1 - r²) / 2``, between each column of ``x``
    and ``v``; 0 for a constant column."""
    xc = x - x.mean(axis=0)
    vc = v - v.mean()
    den = np.sqrt((xc**2).sum(axis=0) * (vc**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(den > 0, (xc.T @ vc) / den, 0.0)
    return -0.5 * np.log1p(-np.minimum(r**2, 1 - 1e-12))


def mutual_information_relevance(responses: Any, scores: Any, *, n_neighbors: int = 3) -> np.ndarray:
    """Mutual information between each item's responses and the models' scores (mRMR's relevance).

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items)
        Each model's correctness (0/1) or graded score in [0, 1] on each item.
    scores : array-like of shape (n_models,)
        Each model's full-benchmark score.
    n_neighbors : int, default=3
        Neighbours of the nearest-neighbour estimator for 0/1 responses.

    Returns
    -------
    numpy.ndarray of shape (n_items,)
        Mutual information in nats. For 0/1 responses, the nearest-neighbour estimator of Ross (2014) for a
        discrete and a continuous variable (0 where a class has fewer than ``n_neighbors + 1`` models); for graded
        responses the Gaussian value ``-log(1 - r²) / 2`` from the Pearson correlation ``r``.

    See Also
    --------
    effstats.disco.select_mrmr : greedy selection built on it.

    References
    ----------
    .. [1] Ross, B. C. (2014). Mutual information between discrete and continuous data sets. *PLoS ONE* 9(2),
       e87357.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import mutual_information_relevance
    >>> rng = np.random.default_rng(0)
    >>> ability = np.sort(rng.uniform(size=40))
    >>> informative = (ability > 0.5).astype(float)      # right exactly for the better half
    >>> noise = rng.integers(0, 2, 40).astype(float)
    >>> mi = mutual_information_relevance(np.column_stack([informative, noise]), ability)
    >>> bool(mi[0] > 0.5 > mi[1])
    True
    """
    x = check_unit_interval(responses, "responses", ndim=2)
    y = check_array(scores, "scores", ndim=1, shape=(x.shape[0],))
    k = check_positive_int(n_neighbors, "n_neighbors")
    if x.shape[0] < k + 2:  # a neighbour count needs k others of the model's class and one beyond
        raise ValueError(f"n_neighbors: the relevance estimate with n_neighbors={k} needs at least {k + 2} models, "
                         f"responses has {x.shape[0]} (lower n_neighbors or add models)")
    return _ross_mi(x, y, k) if _is_binary(x) else _gaussian_mi(x, y)


def select_mrmr(responses: Any, n_items: int, *, scores: Any = None, scheme: str = "quotient",
                n_neighbors: int = 3) -> np.ndarray:
    """Choose items by minimum redundancy and maximum relevance (mRMR), in the order they are chosen.

    The first item maximises the relevance ``I(item; score)``; each next one maximises relevance against the
    mean redundancy ``I(item; chosen item)`` over the items chosen so far: their quotient (``"quotient"``, MIQ)
    or difference (``"difference"``, MID).

    Parameters
    ----------
    responses : array-like of shape (n_models, n_items_total)
        The source models' correctness (0/1) or graded scores on every item; no missing values.
    n_items : int
        Number of items to choose.
    scores : array-like of shape (n_models,), optional
        The models' full-benchmark scores; their mean response by default.
    scheme : {"quotient", "difference"}, default="quotient"
        How relevance and redundancy are combined.
    n_neighbors : int, default=3
        Neighbours of the relevance estimator for 0/1 responses.

    Returns
    -------
    numpy.ndarray of shape (n_items,)
        Item positions, first chosen first.

    Notes
    -----
    For 0/1 responses relevance is Ross's estimator and redundancy the plug-in mutual information of two
    binary variables, as in the authors' code. For graded responses both are the Gaussian value
    ``-log(1 - r²) / 2``, which costs one matrix product per chosen item; the authors' code uses
    nearest-neighbour estimators there.

    See Also
    --------
    effstats.disco.MRMR : the estimator that regresses scores on the chosen items.
    effstats.disco.mutual_information_relevance : the relevance of every item.

    References
    ----------
    .. [1] Peng, H., Long, F., & Ding, C. (2005). Feature selection based on mutual information: criteria of
       max-dependency, max-relevance, and min-redundancy. *IEEE Transactions on Pattern Analysis and Machine
       Intelligence* 27(8), 1226–1238.
    .. [2] Bowyer, S., Locatelli, A., & Cao, K. (2026). Efficient Benchmarking Is Just Feature Selection and
       Multiple Regression. arXiv:2605.25773.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import select_mrmr
    >>> rm = simulate_responses(30, 200, rng=0)
    >>> chosen = select_mrmr(rm.values.astype(float), 5)
    >>> chosen.shape, len(set(chosen.tolist()))
    ((5,), 5)
    """
    x = check_unit_interval(responses, "responses", ndim=2)
    m, n = x.shape
    k = check_item_count(n_items, "n_items", "responses", (m, n))
    y = x.mean(axis=1) if scores is None else check_array(scores, "scores", ndim=1, shape=(m,))
    scheme = check_option(str(scheme).lower(), "scheme", _SCHEMES)
    n_neighbors = check_positive_int(n_neighbors, "n_neighbors")
    # Protocols select on the same source matrix many times (seeds on a fixed split, mRMR with several regressors,
    # budgets): the greedy order of k items is the first k of a longer one, so a cached order is served or extended.
    data = (x.shape, *(hashlib.sha1(np.ascontiguousarray(a, dtype=float)).hexdigest() for a in (x, y)))
    state = _MRMR_CACHE.get(data + (scheme, n_neighbors))
    if state is None:
        relevance = _MRMR_CACHE.get(data + (n_neighbors,))
        if relevance is None:
            relevance = mutual_information_relevance(x, y, n_neighbors=n_neighbors)
            _cache_put(data + (n_neighbors,), relevance)
        first = int(np.argmax(relevance))
        free = np.ones(n, dtype=bool)
        free[first] = False
        state = {"relevance": relevance, "chosen": [first], "total": np.zeros(n), "free": free}
    _cache_put(data + (scheme, n_neighbors), state)
    relevance, chosen, total, free = state["relevance"], state["chosen"], state["total"], state["free"]
    binary = _is_binary(x)
    # Between binary columns the redundancy depends on the counts of ones (of each, and shared) alone: with fewer
    # count triples than the item × step values of the loop, it is looked up in a table of every triple.
    table = _redundancy_table(m) if binary and (m + 1) ** 3 < min(4_000_000, (k - len(chosen)) * n) else None
    if binary:
        p1, ones = x.mean(axis=0), x.sum(axis=0).astype(np.intp)
    for step in range(len(chosen), k):
        v = x[:, chosen[-1]]
        if table is not None:
            total += table[ones[chosen[-1]]][ones, (x.T @ v).astype(np.intp)]  # sums of ones: exact
        else:
            total += _binary_mi(x, v, p1) if binary else _gaussian_mi(x, v)
        mean_red = total / step
        crit = relevance / (mean_red + 1e-10) if scheme == "quotient" else relevance - mean_red
        crit[~free] = -np.inf
        nxt = int(np.argmax(crit))
        chosen.append(nxt)
        free[nxt] = False
    return np.asarray(chosen[:k])


# Recent relevances and greedy states of select_mrmr, keyed by the data's digest and the settings.
_MRMR_CACHE: "OrderedDict[tuple, Any]" = OrderedDict()


def _cache_put(key: tuple, value: Any) -> None:
    _MRMR_CACHE[key] = value
    _MRMR_CACHE.move_to_end(key)
    if len(_MRMR_CACHE) > 32:  # each entry holds a few arrays of n_items values
        _MRMR_CACHE.popitem(last=False)


def _alphas(binary: bool) -> np.ndarray:
    # the authors' grids: 0/1 responses 0.1-10 (5 values), graded 0.01-100 (9 values)
    return np.logspace(-1, 1, 5) if binary else np.logspace(-2, 2, 9)


def _regression(kind: str, degree: int, binary: bool, x: np.ndarray, y: np.ndarray) -> Any:
    """The fitted ridge (efficient leave-one-out over the penalties) or polynomial kernel ridge regression (the
    penalty with the smallest leave-one-out squared error, the first of equals, then refitted on all rows)."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import RidgeCV
    from sklearn.metrics.pairwise import polynomial_kernel

    alphas = _alphas(binary)
    if kind == "ridge":
        return RidgeCV(alphas=alphas).fit(x, y)
    # Kernel ridge is a linear smoother, ŷ = K (K + αI)⁻¹ y, so its leave-one-out residuals are exact in closed
    # form, c_i / [(K + αI)⁻¹]_ii with c = (K + αI)⁻¹ y (the fits a grid search would make one row out at a time):
    # one eigendecomposition of K serves every α. K is KernelRidge's own (gamma = 1 / n_features).
    lam, q = np.linalg.eigh(polynomial_kernel(x, degree=degree, coef0=1))
    inv = 1.0 / (lam[None, :] + alphas[:, None])  # (alphas, rows)
    coef = (inv * (q.T @ y)) @ q.T  # (alphas, rows): (K + αI)⁻¹ y
    loo = np.mean((coef / (inv @ (q**2).T)) ** 2, axis=1)
    best = float(alphas[int(np.argmin(loo))])
    return KernelRidge(alpha=best, kernel="poly", degree=degree, coef0=1).fit(x, y)


class _RegressionOnItems(_SubsetEstimator):
    """Shared fit/predict: a (kernel) ridge regression of the source scores on their responses to the chosen items."""

    def _fit_regression(self, src: Any, scores: np.ndarray, x: np.ndarray) -> None:
        kind = check_option(str(self.regressor).lower(), "regressor", _REGRESSORS)
        degree = check_positive_int(self.degree, "degree", maximum=10)
        binary = _is_binary(x[:, self.selected_])
        self._fill = x[:, self.selected_].mean(axis=0)
        if src.n_models < 3:
            raise ValueError(f"source_outputs: the regression's penalty is chosen by cross-validation over the "
                             f"source models and needs at least 3, got {src.n_models}")
        self.regressor_ = _regression(kind, degree, binary, x[:, self.selected_], scores)
        self.alpha_ = float(self.regressor_.alpha_ if kind == "ridge" else self.regressor_.alpha)
        self._bounds = (0.0, 1.0) if scores.min() >= 0 and scores.max() <= 1 else (-np.inf, np.inf)

    def _predict(self, o: Any) -> np.ndarray:
        y = _impute(o.correctness("target_outputs"), o.missing, self._fill)
        return np.clip(self.regressor_.predict(y), *self._bounds)


def _source_matrix(src: Any) -> np.ndarray:
    """Source responses with a missing cell replaced by its item's mean over the models that answered it."""
    x = src.correctness("source_outputs")
    if src.missing is None:
        return x
    fill = np.nan_to_num(src.item_means("source_outputs"), nan=0.0)
    return _impute(x, src.missing, fill)


class MRMR(_RegressionOnItems):
    """mRMR item selection and a (kernel) ridge regression of full-benchmark scores on the chosen items.

    Items are chosen by :func:`effstats.disco.select_mrmr` on the source models' responses (relevance to
    their full-benchmark scores, redundancy among the chosen items); a polynomial kernel ridge regression
    (``regressor="kernel_ridge"``, degree ``degree``, ``coef0=1``, penalty by leave-one-out cross-validation) or a
    ridge regression (``"ridge"``, penalty by efficient leave-one-out) maps a model's responses on them to its
    score. Selection is deterministic: there is no ``random_state``.

    Parameters
    ----------
    n_items : int, default=100
        Number of items to choose.
    scheme : {"quotient", "difference"}, default="quotient"
        mRMR's criterion: relevance divided by (MIQ) or minus (MID) the mean redundancy.
    regressor : {"ridge", "kernel_ridge"}, default="ridge"
        The regression from responses on the chosen items to the score.
    degree : int, default=2
        Degree of the polynomial kernel.
    n_neighbors : int, default=3
        Neighbours of the relevance estimator for 0/1 responses.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    selected_ : numpy.ndarray
        Positions of the chosen items, ascending (the order of a bare target array's columns).
    selection_order_ : numpy.ndarray
        The same items in the order mRMR chose them.
    regressor_ : estimator
        The fitted regression.
    alpha_ : float
        The penalty cross-validation chose.

    Notes
    -----
    The regression extrapolates poorly to targets unlike every source model (e.g. better than all of them);
    :class:`effstats.disco.AIPW` stays design-unbiased there. Missing source cells are replaced by their item's
    mean before selection and regression; a target's missing cells likewise.

    See Also
    --------
    effstats.disco.RandomLearn : the same regression on random items.
    effstats.disco.AIPW : random items with a regression correction that stays unbiased.
    effstats.disco.DISCO : disagreement-based selection with signature regression.

    References
    ----------
    .. [1] Bowyer, S., Locatelli, A., & Cao, K. (2026). Efficient Benchmarking Is Just Feature Selection and
       Multiple Regression. arXiv:2605.25773.
    .. [2] Peng, H., Long, F., & Ding, C. (2005). Feature selection based on mutual information: criteria of
       max-dependency, max-relevance, and min-redundancy. *IEEE Transactions on Pattern Analysis and Machine
       Intelligence* 27(8), 1226–1238.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import MRMR
    >>> rm = simulate_responses(60, 400, rng=0)
    >>> src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 60))
    >>> est = MRMR(n_items=20).fit(src)
    >>> est.selected_.shape
    (20,)
    >>> est.predict(tgt)[:3].round(2)
    array([0.52, 0.26, 0.55])
    >>> tgt.values.mean(axis=1)[:3].round(2)   # their accuracy on all 400 items
    array([0.58, 0.29, 0.5 ])
    """

    def __init__(self, n_items: int = 100, *, scheme: str = "quotient", regressor: str = "ridge",
                 degree: int = 2, n_neighbors: int = 3) -> None:
        self.n_items = n_items
        self.scheme = scheme
        self.regressor = regressor
        self.degree = degree
        self.n_neighbors = n_neighbors

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "MRMR":
        """Choose the items and fit the regression.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array of shape (n_source, n_items_total)
            The source models' outputs on all items (correctness, graded scores, or class ids / probabilities
            with ``labels``).
        source_scores : array-like of shape (n_source,), optional
            Full-benchmark scores; each model's mean over the items by default.
        labels : array-like of shape (n_items_total,), optional
            True classes, for class ids or probabilities.

        Returns
        -------
        self : MRMR
        """
        src, scores = self._fit_source(source_outputs, source_scores, labels)
        k = check_positive_int(self.n_neighbors, "n_neighbors")
        if src.n_models < k + 2:
            raise ValueError(f"n_neighbors: mRMR's relevance estimate with n_neighbors={k} needs at least {k + 2} "
                             f"source models, source_outputs has {src.n_models} (lower n_neighbors or add models)")
        x = _source_matrix(src)
        order = select_mrmr(x, self.n_items, scores=scores, scheme=self.scheme, n_neighbors=self.n_neighbors)
        if self._answered is not None:  # never an item no source model answered
            keep = np.isin(order, self._answered)
            if not keep.all():
                rest = select_mrmr(x[:, self._answered], self.n_items, scores=scores, scheme=self.scheme,
                                   n_neighbors=self.n_neighbors)
                order = self._answered[rest]
        self.selection_order_ = order
        self._set_selected(order)
        self._fit_regression(src, scores, x)
        return self


class RandomLearn(_RegressionOnItems):
    """Random items and a (kernel) ridge regression of full-benchmark scores on them ("Random-Sampling-Learn").

    ``n_items`` items drawn uniformly at random (:func:`effstats.disco.select_random`, the same draw as
    :class:`effstats.disco.RandomDirect` for the same ``random_state``); a ridge regression (default; penalty by
    efficient leave-one-out over the source models) or a polynomial kernel ridge regression maps a model's
    responses on them to its score.

    Parameters
    ----------
    n_items : int, default=100
        Number of random items.
    regressor : {"ridge", "kernel_ridge"}, default="ridge"
        The regression from responses to score.
    degree : int, default=2
        Degree of the polynomial kernel.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=None
        Seed of the item draw.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    selected_ : numpy.ndarray
        Positions of the drawn items, ascending.
    regressor_ : estimator
        The fitted regression.
    alpha_ : float
        The penalty cross-validation chose.

    See Also
    --------
    effstats.disco.MRMR : the same regression on mRMR-chosen items.
    effstats.disco.RandomDirect : the plain mean of the same random items.
    effstats.disco.AIPW : random items with a design-unbiased regression correction.

    References
    ----------
    .. [1] Zhang, G., Dorner, F. E., & Hardt, M. (2025). How Benchmark Prediction from Fewer Data Misses the
       Mark. arXiv:2506.07673.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import RandomLearn
    >>> rm = simulate_responses(60, 400, rng=0)
    >>> src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 60))
    >>> est = RandomLearn(n_items=20, random_state=0).fit(src)
    >>> est.predict(tgt)[:3].round(2)
    array([0.63, 0.36, 0.46])
    >>> tgt.values.mean(axis=1)[:3].round(2)   # their accuracy on all 400 items
    array([0.58, 0.29, 0.5 ])
    """

    def __init__(self, n_items: int = 100, *, regressor: str = "ridge", degree: int = 2,
                 random_state: Any = None) -> None:
        self.n_items = n_items
        self.regressor = regressor
        self.degree = degree
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "RandomLearn":
        """Draw the items and fit the regression.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array of shape (n_source, n_items_total)
            The source models' outputs on all items.
        source_scores : array-like of shape (n_source,), optional
            Full-benchmark scores; each model's mean over the items by default.
        labels : array-like of shape (n_items_total,), optional
            True classes, for class ids or probabilities.

        Returns
        -------
        self : RandomLearn
        """
        src, scores = self._fit_source(source_outputs, source_scores, labels)
        rng = check_rng(self.random_state, "random_state")
        self._set_selected(self._select_answered(lambda n, g: select_random(n, self.n_items, rng=rng), src))
        self._fit_regression(src, scores, _source_matrix(src))
        return self
