"""Search: DP-search (Theorem 3.1), which sorted positions to evaluate, the :class:`SearchResult` and the
:class:`SortSearch` estimator (``insert_M``, new models)."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._ordering import dp_packed, dp_rows, padded_prefix
from .._results import ConfidenceInterval
from .._subset import _check_position_ids
from .._validation import check_array, check_binary, check_option, check_positive_int, check_rng, warn_missing_cells
from ..bitpack import PackedBinaryMatrix
from ..exceptions import check_is_fitted
from ..responses import ResponseMatrix
from ._inputs import (
    _aligned_responses,
    _binary,
    _binary_sums,
    _check_budget,
    _confidence_sums,
    _ids,
    _is_dask,
    _item_indices,
    _list_ids,
    _observed_sums,
    _sorted_row_blocks,
    _take_columns,
)
from .estimate import _estimate_accuracy, _estimate_with_missing, cell_boundaries, cell_edges, design_df, design_of, korn_graubard_interval
from .sort import _order_from_scores, recursive_sort

__all__ = [
    "dp_search",
    "uniform_positions",
    "stratified_positions",
    "random_positions",
    "listing_uniform_positions",
    "SearchResult",
    "SortSearch",
]


def dp_search(sorted_responses: Any) -> np.ndarray | int:
    """DP-search (Theorem 3.1): the best "ones then zeros" prediction for responses in sorted order.

    For a row ``b`` (already permuted easiest first) the error of ``y = [1_k, 0_(n-k)]`` is
    ``|b| - C(k)`` with ``C(k) = sum_{j<k} (2 b_j - 1)``, so the exact global minimiser is ``argmax_k C(k)``
    over ``k = 0..n``, found with one prefix sum (O(n)). Ties go to the smallest ``k``.

    Parameters
    ----------
    sorted_responses : array-like of shape (n,) or (n_models, n), or a 2-D Dask array (chunked by rows)
        0/1 (or bool) correctness with the columns already in sorted order, easiest first.

    Returns
    -------
    k : int or ndarray of shape (n_models,), int64
        Number of leading items predicted correct (the paper's threshold fraction is ``k / n``).

    See Also
    --------
    effstats.sortsearch.sort_by_sum : an order to sort the columns by.
    effstats.sortsearch.SortSearch : DP-search on the evaluated items of new models.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sortsearch import dp_search
    >>> dp_search(np.array([1, 1, 0, 1, 0, 0]))  # [1, 1, 1, 1, 0, 0] errs once, as [1, 1, 0, 0, 0, 0] does
    2
    >>> dp_search(np.array([[1, 1, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0]]))
    array([2, 0])
    """
    if _is_dask(sorted_responses):
        x = sorted_responses
        if x.ndim != 2 or 0 in x.shape:
            raise ValueError(f"sorted_responses: expected a non-empty 2-D array, got shape {x.shape}")
        x = x.rechunk({1: -1})

        def block(b: np.ndarray) -> np.ndarray:
            return dp_rows(check_binary(b, "sorted_responses", ndim=2))

        return x.map_blocks(block, drop_axis=1, dtype=np.int64).compute()
    r = check_binary(sorted_responses, "sorted_responses", ndim=(1, 2))
    if r.ndim == 1:
        return int(dp_rows(r[None])[0])
    return dp_rows(r)


def _by_row_chunks(fn: Callable[..., Any], r: np.ndarray, min_cells: int = 2**22) -> Any:
    """``fn(r)`` on row chunks in threads (numpy releases the GIL in cumsum / argmax / products), results
    concatenated; one call when ``r`` is small. ``fn`` returns an array or a tuple of arrays (rows first)."""
    n_threads = min(os.cpu_count() or 1, len(r))
    if n_threads < 2 or r.size < min_cells:
        return fn(r)
    bounds = np.linspace(0, len(r), n_threads + 1).astype(int)
    with ThreadPoolExecutor(n_threads) as ex:
        parts = list(ex.map(lambda i: fn(r[bounds[i] : bounds[i + 1]]), range(n_threads)))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p) for p in zip(*parts))
    return np.concatenate(parts)


# ---------------------------------------------------------------------------------------------- sampling
def uniform_positions(n: int, budget: int) -> np.ndarray:
    """``budget`` sorted positions spread evenly over the whole ranked list of ``n`` items.

    Position ``j`` is the centre of the ``j``-th of ``budget`` equal cells, ``floor((j + 1/2) n / budget)``:
    exactly ``budget`` distinct positions for every ``1 <= budget <= n``, from the easiest cell to the hardest,
    and all ``n`` positions at ``budget = n``. (The paper's listing,
    :func:`effstats.sortsearch.listing_uniform_positions`, steps by ``n // budget`` from 0 and so returns the wrong
    count and, above ``n / 2``, only the easiest items.)

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.stratified_positions : one random position per cell.
    effstats.sortsearch.random_positions : a simple random sample of positions.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.sortsearch import uniform_positions
    >>> uniform_positions(10, 3)  # centres of the cells [0, 3), [3, 6), [6, 10)
    array([1, 5, 8])
    """
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    j = np.arange(budget, dtype=np.int64)
    return ((2 * j + 1) * n) // (2 * budget)


def stratified_positions(n: int, budget: int, rng: Any = None) -> np.ndarray:
    """One position drawn at random inside each of ``budget`` equal cells of the sorted order.

    A stratified sample with one unit per stratum: the randomised version of
    :func:`effstats.sortsearch.uniform_positions`, under which the stratified mean is unbiased for every model.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].
    rng : None, int or numpy.random.Generator, default=None
        Random source.

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions, one in each cell.

    See Also
    --------
    effstats.sortsearch.uniform_positions : the cell centres.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (Ch. 5, stratified random sampling).

    Examples
    --------
    >>> from effstats.sortsearch import stratified_positions
    >>> stratified_positions(10, 3, rng=0)  # one in each of [0, 3), [3, 6), [6, 10)
    array([2, 4, 8])
    """
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    e = cell_edges(n, budget)
    return e[:-1] + check_rng(rng).integers(0, np.diff(e))


def random_positions(n: int, budget: int, rng: Any = None) -> np.ndarray:
    """``budget`` distinct positions drawn uniformly at random without replacement.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].
    rng : None, int or numpy.random.Generator, default=None
        Random source.

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.stratified_positions : one random position per equal cell.

    Examples
    --------
    >>> from effstats.sortsearch import random_positions
    >>> random_positions(10, 3, rng=0)
    array([5, 6, 9])
    """
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    return np.sort(check_rng(rng).choice(n, size=budget, replace=False)).astype(np.int64)


def listing_uniform_positions(n: int, budget: int) -> np.ndarray:
    """The paper's App. D ``uniform_sampling`` verbatim (``np.arange(0, n, n // budget)[1:]``), for comparison only.

    It returns ``ceil(n / (n // budget)) - 1`` positions, often not ``budget`` (4 for a budget of 5 of 10 items, 9 for
    a budget of 6), and above ``n / 2`` only the easiest items;
    :func:`effstats.sortsearch.uniform_positions` is the sampling to use.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Requested number of positions, in [1, n].

    Returns
    -------
    positions : ndarray, int
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.uniform_positions : exactly ``budget`` cell centres.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.sortsearch import listing_uniform_positions, uniform_positions
    >>> listing_uniform_positions(10, 4), uniform_positions(10, 4)
    (array([2, 4, 6, 8]), array([1, 3, 6, 8]))
    """
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    return np.arange(0, n, n // budget)[1:]


# ---------------------------------------------------------------------------------------------- results
def _align_full(x: Any, item_ids: pd.Index | None, name: str, n_items: int) -> Any:
    """A labelled full matrix (ResponseMatrix / DataFrame) with its columns reordered to the ``n_items`` fitted items
    (by id); arrays unchanged (positional). Fitted without ids (``item_ids`` None), integer column labels are item
    positions and other labels are refused."""
    cols = _ids(x, 1)
    if cols is None:
        return x
    _check_position_ids(cols, item_ids, "labelled columns", name)
    if item_ids is None:
        item_ids = pd.RangeIndex(n_items)
    if cols.equals(item_ids):
        return x
    missing, unseen = item_ids.difference(cols, sort=False), cols.difference(item_ids, sort=False)
    if len(missing) or len(unseen) or cols.has_duplicates:
        parts = [f"missing items {_list_ids(missing)}"] if len(missing) else []
        parts += [f"unseen items {_list_ids(unseen)}"] if len(unseen) else []
        parts += ["duplicated item columns"] if cols.has_duplicates else []
        raise ValueError(f"{name}: columns must be the {len(item_ids)} fitted items (any order); " + "; ".join(parts))
    take = cols.get_indexer(item_ids)
    return x.subset(items=take) if isinstance(x, ResponseMatrix) else x.iloc[:, take]


def _check_rows(rows: Any, n_rows: int, ids: pd.Index | None = None) -> np.ndarray:
    """Row selector: integer positions in [-n_rows, n_rows) (1-D or a scalar), a bool mask of length n_rows, or, when
    the models have ids, non-integer model ids (integers are always positions)."""
    r = np.asarray(rows)
    if ids is not None and r.size and r.ndim <= 1 and r.dtype != bool and not np.issubdtype(r.dtype, np.number):
        r1 = np.atleast_1d(r)
        pos = ids.get_indexer(r1)
        if (pos < 0).any():
            raise ValueError(f"rows: model ids not among the results' models: {_list_ids(r1[pos < 0])}")
        return pos.astype(np.int64)
    r = np.asarray(rows)
    if r.dtype == bool:
        if r.shape != (n_rows,):
            raise ValueError(f"rows: a boolean mask needs shape ({n_rows},), got {r.shape}")
        return np.flatnonzero(r)
    if r.size == 0:
        return np.zeros(0, np.int64)
    if r.ndim > 1 or not np.issubdtype(r.dtype, np.integer):
        raise ValueError(f"rows: expected integer model positions (1-D) or a boolean mask, got {r.dtype} with shape {r.shape}")
    r = np.atleast_1d(r)
    if r.min() < -n_rows or r.max() >= n_rows:
        raise ValueError(f"rows: positions must be in [{-n_rows}, {n_rows - 1}], got range [{r.min()}, {r.max()}]")
    return r


@dataclass(frozen=True, eq=False, repr=False)
class SearchResult:
    """Sort & Search predictions for ``n_models`` new models (or new items, for ``insert_D``).

    The result protocol: ``statistic`` (= ``accuracy``, the design-based estimate), ``standard_error``,
    ``confidence_interval(confidence_level)`` and ``to_frame()``.

    Attributes
    ----------
    thresholds : int array (n_models,)
        ``k``: the first ``k`` items of ``order`` are predicted correct, the rest wrong.
    sample_thresholds : int array (n_models,)
        DP-search thresholds over the evaluated items (``0..budget``).
    order : int array (n_items,)
        The sort order (easiest first) the predictions follow: the estimator's ``order_``, shared (read-only),
        not copied.
    positions : int array (budget,)
        Sorted positions of the evaluated items.
    statistic : float array (n_models,)
        Design-based accuracy estimate from the evaluated items (see :func:`effstats.sortsearch.estimate_accuracy`);
        exact when every item is evaluated.
    standard_error : float array (n_models,)
        Its standard error (successive-difference or SRS formula; not conservative, see
        :func:`effstats.sortsearch.estimate_accuracy`).
    design : str
        ``"systematic"`` (one item per equal cell of the order) or ``"srs"`` (a random or arbitrary sample).
    estimator : str
        ``"stratified"`` or ``"difference"``.
    model_ids, item_ids : Index or None
        Ids of the new models (labelled input) and of all items (estimator fitted on labelled items).
    n_missing : int
        Missing cells in the sort models' matrix the estimator was fitted on (its ``n_missing_``).
    n_missing_target : int
        Missing cells in the new models' responses on the evaluated items (each model is estimated from the
        items it has; see :meth:`effstats.sortsearch.SortSearch.predict`).

    See Also
    --------
    effstats.sortsearch.SortSearch : the estimator whose ``predict`` returns this.
    effstats.sortsearch.HybridResult : the per-item predictions of :class:`effstats.sortsearch.HybridSearch`.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import SortSearch
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> res = SortSearch().fit(src).simulate(new, 20)
    >>> res
    SearchResult(n_models=10, budget=20, n_items=200, accuracy=0.100..0.650, design='systematic', estimator='stratified'); see .to_frame()
    >>> res.accuracy[:3].round(2), res.predicted_accuracy[:3].round(2)
    (array([0.1 , 0.5 , 0.45]), array([0.  , 0.65, 0.4 ]))
    """

    thresholds: np.ndarray
    sample_thresholds: np.ndarray
    order: np.ndarray = field(repr=False)
    positions: np.ndarray = field(repr=False)
    statistic: np.ndarray = field(repr=False)
    standard_error: np.ndarray = field(repr=False)
    design: str = "systematic"
    estimator: str = "stratified"
    model_ids: pd.Index | None = field(default=None, repr=False)
    item_ids: pd.Index | None = field(default=None, repr=False)
    n_missing: int = 0
    n_missing_target: int = 0

    def __repr__(self) -> str:
        acc = self.statistic
        rng = f"{acc.min():.3f}..{acc.max():.3f}" if len(acc) else "-"
        return (f"SearchResult(n_models={len(self.thresholds)}, budget={self.budget}, n_items={self.n_items}, "
                f"accuracy={rng}, design={self.design!r}, estimator={self.estimator!r}); see .to_frame()")

    @property
    def n_items(self) -> int:
        """Number of items the predictions cover (the length of ``order``)."""
        return len(self.order)

    @property
    def budget(self) -> int:
        """Number of evaluated items (the length of ``positions``)."""
        return len(self.positions)

    @property
    def items(self) -> np.ndarray:
        """The evaluated items in ascending item order (the column order of :meth:`SortSearch.predict`'s arrays): ids
        when the estimator was fitted on ids, else indices. ``order[positions]`` lists them easiest first."""
        idx = np.sort(self.order[self.positions])
        return idx if self.item_ids is None else self.item_ids.to_numpy()[idx]

    @property
    def accuracy(self) -> np.ndarray:
        """Design-based accuracy estimate per model (= ``statistic``), float array (n_models,)."""
        return self.statistic

    @property
    def predicted_accuracy(self) -> np.ndarray:
        """Accuracy of the predicted "ones then zeros" vector, ``k / n`` per model (the paper's estimate: biased by
        the aleatoric errors, and not exact even with every item evaluated)."""
        return self.thresholds / self.n_items

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Korn-Graubard (Clopper-Pearson at the effective sample size) interval for each model's accuracy.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, ndarrays of shape (n_models,); a point interval when every item is evaluated.

        See Also
        --------
        effstats.sortsearch.korn_graubard_interval : the interval for any estimate and standard error.

        References
        ----------
        Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> ci = SortSearch().fit(src).simulate(new, 20).confidence_interval(0.95)
        >>> ci.low[:3].round(3), ci.high[:3].round(3)
        (array([0.027, 0.35 , 0.257]), array([0.239, 0.65 , 0.654]))
        """
        return korn_graubard_interval(self.statistic, self.standard_error, self.budget, self.n_items, confidence_level,
                                      df=design_df(self.design, self.budget))

    def _index(self) -> pd.Index:
        return self.model_ids if self.model_ids is not None else pd.RangeIndex(len(self.thresholds), name="model")

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The results as a table, one row per model.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the ``low`` / ``high`` interval.

        Returns
        -------
        DataFrame
            Columns ``accuracy`` (the design-based estimate), ``standard_error``, ``low``, ``high``,
            ``predicted_accuracy`` (``k / n``) and ``threshold``; indexed by model id when known.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> frame = SortSearch().fit(src).simulate(new, 20).to_frame()
        >>> frame[["accuracy", "low", "high", "threshold"]].head(2).round(3)
                   accuracy    low   high  threshold
        model_ids
        sim30           0.1  0.027  0.239          0
        sim31           0.5  0.350  0.650        130
        """
        ci = self.confidence_interval(confidence_level)
        return pd.DataFrame(
            {
                "accuracy": self.statistic,
                "standard_error": self.standard_error,
                "low": ci.low,
                "high": ci.high,
                "predicted_accuracy": self.predicted_accuracy,
                "threshold": self.thresholds,
            },
            index=self._index(),
        )

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted per-item correctness in the original item order.

        Parameters
        ----------
        rows : int, array-like of int or bool, or model ids, optional
            Models to return (positions, a boolean mask, or model ids when known); all by default, which costs
            ``n_models * n_items`` bytes.

        Returns
        -------
        ndarray of shape (n_rows, n_items), bool
            "Ones then zeros" along ``order``: the first ``thresholds[i]`` items of the order are predicted correct.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = SortSearch().fit(src).simulate(new, 20)
        >>> pred = res.correctness()
        >>> pred.shape, int(pred[1].sum()) == res.thresholds[1]
        ((10, 200), True)
        """
        k = self.thresholds if rows is None else self.thresholds[_check_rows(rows, len(self.thresholds), self.model_ids)]
        k = np.atleast_1d(k)
        out = np.empty((len(k), self.n_items), bool)
        out[:, self.order] = np.arange(self.n_items)[None, :] < k[:, None]
        return out

    def predictions(self, rows: Any = None) -> pd.DataFrame:
        """Per-item predicted correctness as a labelled DataFrame (models × items, ids where known).

        Parameters
        ----------
        rows : int, array-like of int or bool, or model ids, optional
            Models to return, as in :meth:`effstats.sortsearch.SearchResult.correctness`.

        Returns
        -------
        DataFrame of shape (n_rows, n_items), bool

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = SortSearch().fit(src).simulate(new, 20)
        >>> res.predictions(["sim31"]).shape
        (1, 200)
        """
        idx = self._index() if rows is None else self._index()[_check_rows(rows, len(self.thresholds), self.model_ids)]
        cols = self.item_ids if self.item_ids is not None else pd.RangeIndex(self.n_items, name="item")
        return pd.DataFrame(self.correctness(rows), index=idx, columns=cols)

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """Sample-level metrics against the full true responses, without materialising the predictions.

        Parameters
        ----------
        true_responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
            The new models' true 0/1 correctness on every item. Labelled columns are aligned to the fitted items
            by id.

        Returns
        -------
        DataFrame
            One row per model: ``mae`` (E, Eq. 2), ``e_agg``, ``kappa`` (Cohen's kappa, Eq. 4), ``aleatoric``
            (E(a, y*), y* = DP-search on all n items), ``epistemic`` (||y* - y|| / n), ``kappa_aleatoric``,
            ``kappa_epistemic``, ``predicted_accuracy`` (of the predicted vector, k / n), ``accuracy_true``,
            ``best_threshold`` (k*), ``accuracy_estimate`` (the design-based estimate, this result's
            ``accuracy``) and ``standard_error``. Indexed by model id when the new models' ids are known.

        See Also
        --------
        effstats.metrics.sample_metrics : the same metrics for any predicted matrix.

        References
        ----------
        Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
        Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
        arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
        Progress").

        Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
        Measurement* 20(1), 37-46.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = SortSearch().fit(src).simulate(new, 20)
        >>> res.evaluate(new)[["mae", "e_agg", "kappa"]].head(2).round(3)
                     mae  e_agg  kappa
        model_ids
        sim30      0.275  0.275  0.000
        sim31      0.345  0.185  0.324
        """
        if not isinstance(true_responses, (ResponseMatrix, pd.DataFrame, PackedBinaryMatrix)) and not _is_dask(true_responses):
            true_responses = check_binary(true_responses, "true_responses", ndim=2)
        true_responses = _align_full(true_responses, self.item_ids, "true_responses", self.n_items)
        ev = _evaluate_thresholds(true_responses, self.order, self.thresholds[None, :])[0]
        ev = ev.assign(accuracy_estimate=self.statistic, standard_error=self.standard_error)
        if self.model_ids is not None:
            ev.index = self.model_ids
        return ev


def _evaluate_thresholds(true_responses: Any, order: np.ndarray, K: np.ndarray) -> list[pd.DataFrame]:
    """Metrics of threshold predictions ``K`` (n_sets, n_models) against the true responses in one pass over them.

    Each row block of the truth is permuted and prefix-summed once, then read at every set of thresholds.
    """
    from .._shared import _kappa_from_rates

    n = len(order)
    n_models = K.shape[1]
    shape = tuple(true_responses.shape) if hasattr(true_responses, "shape") else np.shape(true_responses)
    if len(shape) != 2 or shape[0] != n_models:
        raise ValueError(f"true_responses: expected shape ({n_models}, {n}), got {shape}")
    parts = [_threshold_stats(blk, K[:, s : s + blk.shape[0]]) for s, blk in _sorted_row_blocks(true_responses, order, "true_responses")]
    ones, best, err_best = (np.concatenate([p[i] for p in parts]) for i in range(3))
    errs = np.concatenate([p[3] for p in parts], axis=1)
    pa, ps, ale = ones / n, best / n, err_best / n
    out = []
    for k, err in zip(K, errs):
        py, mae = k / n, err / n
        epi = np.abs(k - best) / n
        out.append(
            pd.DataFrame(
                {
                    "mae": mae,
                    "e_agg": np.abs(k - ones) / n,
                    "kappa": _kappa_from_rates(mae, pa, py),
                    "aleatoric": ale,
                    "epistemic": epi,
                    "kappa_aleatoric": _kappa_from_rates(ale, pa, ps),
                    "kappa_epistemic": _kappa_from_rates(epi, ps, py),
                    "predicted_accuracy": py,
                    "accuracy_true": pa,
                    "best_threshold": best,
                }
            )
        )
    return out


def _threshold_stats(b: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per sorted row of ``b`` (rows, n): number of ones, DP-optimal threshold, its error, and the error at every
    threshold set ``K`` (n_sets, rows) -> (n_sets, rows)."""
    c = padded_prefix(b)
    ones = b.sum(axis=1, dtype=np.int64)
    rows = np.arange(b.shape[0])
    best = c.argmax(axis=1)
    return ones, best.astype(np.int64), ones - c[rows, best], ones[None, :] - c[rows[None, :], K]


# ---------------------------------------------------------------------------------------------- estimator
def _refuse_missing_truth(x: Any) -> None:
    """simulate / budget_curve need every response of the new models: say what to do with partial ones."""
    if _has_missing_cells(x):
        raise ValueError("responses: the new models' full responses have missing cells (NaN / not evaluated); simulate and "
                         "budget_curve need complete responses; for models evaluated on some items only, call "
                         "predict(responses_on_those_items, items=...)")


def _has_missing_cells(responses: Any) -> bool:
    """Whether a ResponseMatrix (missing mask), DataFrame or float array has missing (NaN) cells."""
    if isinstance(responses, ResponseMatrix):
        return responses.missing is not None and bool(responses.missing.any())
    if isinstance(responses, pd.DataFrame):
        return bool(responses.isna().to_numpy().any())
    if isinstance(responses, np.ndarray) and responses.dtype.kind == "f":
        return bool(np.isnan(responses).any())
    return False


def _check_budgets(budgets: Any, n: int) -> list[int]:
    """A non-empty sequence of budgets, each an int in [1, n] (bools and scalars refused)."""
    if isinstance(budgets, (str, bytes)) or np.ndim(budgets) != 1 or len(budgets) == 0:
        raise ValueError(f"budgets: expected a non-empty 1-D sequence of integers in [1, {n}], got {budgets!r}")
    return [_check_budget(b.item() if isinstance(b, np.generic) and not isinstance(b, np.bool_) else b, n, "budgets") for b in budgets]


_SORTS = ("sum", "confidence", "recursive")
_SAMPLINGS = ("uniform", "stratified", "random")
_ESTIMATORS = ("stratified", "difference")
_MISSING = ("raise", "observed")


class SortSearch(BaseEstimator):
    """Sort & Search for new models (``insert_M``) of Prabhu et al. (2024), scikit-learn style.

    ``fit(sort_responses)`` learns the item order; ``select(budget)`` names the items to evaluate a new model
    on; ``predict(responses_on_selected)`` returns per-item predicted correctness and a design-based accuracy
    estimate with its standard error for one or many new models (:class:`SearchResult`). ``evaluate(fn, budget)``
    runs the whole protocol with a callable that evaluates a real model on the requested items only.

    Items by id: fitted on a :class:`~effstats.responses.ResponseMatrix` or a DataFrame (models × item columns),
    ``select`` returns item ids, ``predict`` takes a ResponseMatrix / DataFrame whose columns include the selected
    items in any order (aligned by id; a missing one is refused, listing the ids), and ``simulate`` /
    ``budget_curve`` / ``SearchResult.evaluate`` align full matrices by id. Fitted on arrays, labelled columns
    must be integer item positions (aligned as such; other labels are refused). Plain arrays are positional:
    ``select`` returns its items in ascending item order (not easiest first), so ``new[:, est.select(b)]`` and
    ``new[:, np.sort(est.select(b))]`` are the same array, and a full-width array (all items) is accepted too.

    Two accuracies: ``SearchResult.accuracy`` (= ``statistic``, with ``standard_error`` and
    ``confidence_interval``) is the design-based estimate from the evaluated items, exact when every item is
    evaluated: read this one. ``SearchResult.predicted_accuracy`` is ``k / n``, the accuracy of the predicted
    "ones then zeros" vector (the paper's figure, biased by the aleatoric errors). Frames from ``evaluate`` /
    ``budget_curve`` call them ``accuracy_estimate`` and ``predicted_accuracy``, beside ``accuracy_true``.

    Parameters
    ----------
    sort : {"sum", "confidence", "recursive"}, default="sum"
        Algorithms 1, 2 and 3 of Prabhu et al. (2024); names in any case. ``"confidence"`` needs true-class
        probabilities.
    sampling : {"uniform", "stratified", "random"}, default="uniform"
        Names in any case. Cell centres of ``budget`` equal cells of the order (the paper's uniform sampling: deterministic, so the
        estimate's unbiasedness and interval coverage hold over models, not for each model), one random item per
        cell (a stratified random sample: unbiased for every model), or a simple random sample.
    depth : int, default=2
        Recursion depth for ``sort="recursive"``, at least 1 (2 = the paper's two-stage sort).
    estimator : {"stratified", "difference"}, default="stratified"
        Names in any case. Accuracy estimate from the evaluated items: the stratified mean, or the cross-fitted model-assisted
        difference estimator whose working model is calibrated to the S&S prediction of the other half of the
        sample (:func:`effstats.sortsearch.estimate_accuracy`). Both are unbiased under the random designs; the difference
        estimator lowers the variance only under ``sampling="random"`` (s.d. 0.066 vs 0.077 at 32 items on IRT
        test data) and matches the stratified mean under the stratified designs.
    missing : {"observed", "raise"}, default="observed"
        Names in any case. Sort matrices with missing cells (models not evaluated on every item: a ResponseMatrix with a ``missing``
        mask, NaN in a DataFrame or float array). ``"observed"`` orders items by the fraction of the models *that
        answered them* answering correctly (ties: more correct answers first, then item index); items no sort
        model answered go last and are never selected, so the estimate is of the accuracy over the answered
        items (``n_answered_``). Works with ``sort="sum"``; the other sorts need a complete matrix. A complete
        matrix takes the plain sum order whatever this is (identical results). ``"raise"`` refuses missing
        cells.
    random_state : None, int or Generator, default=None
        For ``sampling="stratified"`` / ``"random"``.

    Attributes
    ----------
    order_ : int array (n_items,)
        Item indices easiest first (read-only; every SearchResult shares it).
    scores_ : array (n_items,)
        Per-item sums (correct counts, or summed confidences), updated by :meth:`insert`.
    n_observed_ : int array (n_items,)
        Models behind each item's score (``n_models_`` everywhere when the matrix is complete).
    n_missing_ : int
        Missing cells of the sort matrix.
    n_answered_ : int
        Items some sort model answered: the first ``n_answered_`` of ``order_``, the only ones selected.
    rank_ : int array (n_items,)
        Position of each item in ``order_``.
    n_items_, n_models_ : int
    item_ids_ : Index or None
        Item ids when fitted on a ResponseMatrix or DataFrame.
    selected_ : int array (budget,) or None
        Positions (indices) of the last selection, in ascending item order.

    See Also
    --------
    effstats.sortsearch.HybridSearch : the per-item predictor effstats recommends (Sort & Search corrected by the
        nearest source models, the mix cross-validated; never worse than Sort & Search in the comparisons of its
        docstring); its ``accuracy`` is this estimator's.
    effstats.sortsearch.SampleInserter : the same algorithm for new items (``insert_D``).
    effstats.sortsearch.CopyNearestExpand : the paper's CopyNearest&Expand baseline.
    effstats.disco.SortSearchDirect : Sort & Search in the subset-estimator interface, for protocol comparisons.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import SortSearch
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = SortSearch().fit(src)  # learn the easy-to-hard order from 30 models
    >>> items = est.select(20)  # evaluate the new models on these 20 items only
    >>> res = est.predict(new.subset(items=list(items)))
    >>> res.to_frame()[["accuracy", "low", "high"]].head(3).round(3)
               accuracy    low   high
    model_ids
    sim30          0.10  0.027  0.239
    sim31          0.50  0.350  0.650
    sim32          0.45  0.257  0.654
    """

    _axis = 0  # sums over models -> one score per item

    def __init__(
        self,
        sort: str = "sum",
        sampling: str = "uniform",
        depth: int = 2,
        estimator: str = "stratified",
        missing: str = "observed",
        random_state: Any = None,
    ) -> None:
        self.sort = sort
        self.sampling = sampling
        self.depth = depth
        self.estimator = estimator
        self.missing = missing
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    def _oriented(self, x: Any) -> Any:
        return x

    def _labelled_oriented(self, x: Any) -> Any:
        """Labelled responses with the selected units as columns (models × items here)."""
        return x

    def _has_missing(self, responses: Any) -> bool:
        return _has_missing_cells(responses)

    def fit(self, responses: Any, y: Any = None) -> "SortSearch":
        """Learn the item order from the sort models' responses.

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
            The sort models' 0/1 correctness (a DataFrame: models × item columns). With ``sort="confidence"``: a
            ResponseMatrix with probabilities, or true-class probabilities in [0, 1].
        y : None
            Ignored.

        Returns
        -------
        self : SortSearch
            The fitted estimator.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = SortSearch(sort="Recursive").fit(src)  # option names in any case
        >>> est.order_[:5], est.n_items_
        (array([198,  68,  98,  29, 119]), 200)
        """
        # names in any case; the fitted estimator works with the canonical spelling (the parameters stay as given)
        self._sort = check_option(self.sort, "sort", _SORTS, ignore_case=True)
        self._sampling = check_option(self.sampling, "sampling", _SAMPLINGS, ignore_case=True)
        self._estimator = check_option(self.estimator, "estimator", _ESTIMATORS, ignore_case=True)
        missing_rule = check_option(self.missing, "missing", _MISSING, ignore_case=True)
        check_positive_int(self.depth, "depth")
        self.rng_ = check_rng(self.random_state, "random_state")
        ax = self._axis
        if not isinstance(responses, (ResponseMatrix, pd.DataFrame, PackedBinaryMatrix)) and not _is_dask(responses):
            # plain arrays / lists: shape and type checked here, values by the sort below
            responses = check_array(responses, "responses", ndim=2, dtype=None, allow_nan=True)
        shape = responses.shape
        n_models, n_items = (shape[0], shape[1]) if ax == 0 else (shape[1], shape[0])
        observed = None
        n_missing, n_answered = 0, n_items
        has_missing = self._has_missing(responses)
        if missing_rule == "raise" and has_missing:
            raise ValueError("responses: the sort models' matrix has missing cells (NaN / not evaluated); pass missing='observed' "
                             "to order items by the models that answered them (sort='sum'), or complete the matrix")
        if has_missing:
            if self._sort != "sum":
                raise ValueError(f"responses: the sort models' matrix has missing cells (NaN / not evaluated) and sort={self._sort!r} "
                                 "needs a complete matrix; use sort='sum' (items ordered by the fraction correct among the "
                                 "models that answered them), or complete the matrix")
            if isinstance(responses, ResponseMatrix):
                rm = responses
            else:
                vals = np.asarray(responses.to_numpy(float) if isinstance(responses, pd.DataFrame) else responses, float)
                empty = np.isnan(vals).all(axis=1 - ax)
                if empty.any():
                    raise ValueError(f"responses: {'models' if ax == 0 else 'items'} at positions {_list_ids(np.flatnonzero(empty))} "
                                     "have no response (all NaN); drop them")
                rm = ResponseMatrix(vals, nan_as_missing=True)
            if ax == 1:
                rm = rm.T
            scores, observed = _observed_sums(rm, 0, "responses")
            n_missing, answered = int(rm.missing.sum()), observed > 0
            n_answered = int(answered.sum())
            # unanswered items: fraction -1, after every answered item
            frac = np.where(answered, scores / np.maximum(observed, 1), -1.0)
            order = np.lexsort((np.arange(n_items), -scores, -frac))  # fraction, then count, then index
        elif self._sort == "confidence":
            scores = _confidence_sums(responses, ax, "responses")
            order = _order_from_scores(scores)
        elif self._sort == "sum":
            scores = _binary_sums(responses, ax, "responses")
            order = _order_from_scores(scores)
        else:
            a = _binary(responses, "responses")
            if _is_dask(a):
                raise ValueError("responses: sort='recursive' needs the matrix in memory, not a Dask array")
            if ax == 1:
                a = (a.to_dense() if isinstance(a, PackedBinaryMatrix) else a).T
            order = recursive_sort(a, self.depth)
            scores = _binary_sums(a, 0, "responses")
        self.n_models_, self.n_items_ = n_models, n_items
        self.n_missing_, self.n_answered_ = n_missing, n_answered
        warn_missing_cells("responses", n_missing, n_models * n_items,
                           "items are ordered by the fraction correct among the models that answered them")
        order = np.asarray(order, np.int64)
        order.flags.writeable = False  # shared with every SearchResult
        self.order_ = order
        self.scores_ = np.asarray(scores)
        self.n_observed_ = np.full(n_items, n_models, np.int64) if observed is None else observed
        self.rank_ = np.empty_like(self.order_)
        self.rank_[self.order_] = np.arange(self.n_items_)
        self.item_ids_ = _ids(responses, 1 if ax == 0 else 0)
        if self.item_ids_ is not None and self.item_ids_.has_duplicates:
            raise ValueError(f"responses: duplicated item ids {_list_ids(self.item_ids_[self.item_ids_.duplicated()].unique())}; "
                             "items are matched by id, so every id must be unique")
        self.selected_ = None
        return self

    # ---------------------------------------------------------------- select / predict
    def _labels(self, idx: np.ndarray) -> np.ndarray:
        return idx.copy() if self.item_ids_ is None else self.item_ids_.to_numpy()[idx]

    def select(self, budget: int) -> np.ndarray:
        """The ``budget`` items to evaluate, in ascending item order: item ids when fitted on ids, else indices.

        Remembered (as positions) in ``selected_`` for :meth:`effstats.sortsearch.SortSearch.predict`, whose arrays
        hold these items in this order (``rank_[selected_]`` gives their places in the easy-to-hard order).

        Parameters
        ----------
        budget : int
            Number of items, in [1, n_items].

        Returns
        -------
        items : ndarray of shape (budget,)
            Item ids when fitted on ids, else item indices.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> SortSearch().fit(src).select(5)
        array(['i40', 'i44', 'i71', 'i185', 'i186'], dtype=object)
        """
        check_is_fitted(self, "order_")
        n = self.n_answered_  # items no sort model answered (last in the order) are never selected
        if self._sampling == "uniform":
            pos = uniform_positions(n, budget)
        elif self._sampling == "stratified":
            pos = stratified_positions(n, budget, self.rng_)
        else:
            pos = random_positions(n, budget, self.rng_)
        # ascending item order: the one natural column order of an array on them (predict sorts by position)
        self.selected_ = np.sort(self.order_[pos])
        return self._labels(self.selected_)

    def _positions(self, items: Any) -> tuple[np.ndarray, str]:
        """Sorted positions of ``items`` and their design: the estimator's sampling design when they are the last
        selection (however they are passed), else ``design_of`` (one item per cell or not)."""
        it = _item_indices(items, self.selected_, self.n_items_, self.item_ids_)
        if len(np.unique(it)) != len(it):
            raise ValueError("items: must be distinct")
        pos = self.rank_[it]
        if (pos >= self.n_answered_).any():
            raise ValueError(f"items: {_list_ids(self._labels(it[pos >= self.n_answered_]))} were answered by no sort model; "
                             "their difficulty is unknown, so they cannot stand for a part of the order")
        sel = self.selected_
        if sel is not None and len(sel) == len(it) and np.array_equal(np.sort(sel), np.sort(it)):
            return pos, "srs" if self._sampling == "random" else "systematic"
        return pos, design_of(np.sort(pos), self.n_answered_)

    def _easiness_sorted(self) -> np.ndarray:
        return (self.scores_ / self.n_observed_)[self.order_]

    def predict(self, responses: Any, items: Any = None) -> SearchResult:
        """Predict correctness on all items, and estimate accuracy, from responses on the selected ones.

        Parameters
        ----------
        responses : bool array (budget,) or (n_models, budget), ResponseMatrix, DataFrame, Series or Dask array
            Arrays: columns in the order of ``items`` (the last :meth:`select`'s items are in ascending item
            order), or all ``n_items`` fitted items (their selected columns are read). Labelled input: columns
            are item ids in any order, aligned by id (other items are ignored; a missing selected item raises
            ValueError listing the ids); fitted on arrays, the ids must be integer item positions.
            Missing cells (NaN, a ResponseMatrix's mask): each model is estimated from the items it has (its DP
            search over its observed items, the stratified mean with an empty cell merged into its nearest
            observed neighbour along the order), with one ``UserWarning`` naming the items concerned; a model
            without any response on the items is refused.
        items : array-like of shape (budget,), optional
            Item ids (or indices) the columns refer to (default: the last
            :meth:`effstats.sortsearch.SortSearch.select`); any distinct items work.

        Returns
        -------
        SearchResult
            Per-item predictions and the design-based accuracy estimates.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = SortSearch().fit(src)
        >>> items = est.select(20)
        >>> res = est.predict(new.values[:, new.item_ids.get_indexer(items)])  # columns in the order of items
        >>> res.accuracy[:3].round(2)
        array([0.1 , 0.5 , 0.45])
        """
        check_is_fitted(self, "order_")
        pos, design = self._positions(items)
        r, model_ids, miss = _aligned_responses(self._labelled_oriented(responses), self.order_[pos], self.item_ids_,
                                                self.n_items_)
        if np.any(np.diff(pos) < 0):  # columns must follow the sort order (select() already does)
            srt = np.argsort(pos, kind="stable")
            r = r[:, srt]
            pos = pos[srt]
            miss = None if miss is None else miss[:, srt]
        n = self.n_answered_
        if miss is not None:
            return self._predict_missing(r, miss, pos, design, model_ids)
        if self._estimator == "difference":
            t = _by_row_chunks(dp_rows, r)
            es, nm = self._easiness_sorted(), float(np.mean(self.n_observed_))
            est, se = _by_row_chunks(lambda x: _estimate_accuracy(x, pos, n, design, easiness_sorted=es[:n], n_models=nm), r)
        else:
            def search_and_estimate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                p = np.packbits(x, axis=1)  # packed once for the threshold and the estimate
                return (dp_packed(p, x.shape[1]), *_estimate_accuracy(x, pos, n, design, packed=p))

            t, est, se = _by_row_chunks(search_and_estimate, r)
        k = cell_boundaries(pos, n)[t]
        return SearchResult(thresholds=k, sample_thresholds=t, order=self.order_, positions=pos, statistic=est,
                            standard_error=se, design=design, estimator=self._estimator, model_ids=model_ids,
                            item_ids=self.item_ids_, n_missing=self.n_missing_)

    def _predict_missing(self, r: np.ndarray, miss: np.ndarray, pos: np.ndarray, design: str,
                         model_ids: pd.Index | None) -> SearchResult:
        """:meth:`predict` for new models without responses on some evaluated items (``miss``, columns in sorted
        order): one warning naming those items; each model's DP search runs over its observed items (the threshold
        lands halfway between observed neighbours) and its estimate is the stratified mean with empty cells merged
        into their nearest observed neighbour along the order (SRS: the mean over the observed items); the
        difference estimator falls back to that mean for these models."""
        import warnings

        empty = miss.all(axis=1)
        if empty.any():
            who = model_ids[empty] if model_ids is not None else np.flatnonzero(empty)
            raise ValueError(f"responses: {'models' if model_ids is not None else 'rows'} {_list_ids(who)} have no "
                             f"response on any of the {len(pos)} evaluated items; evaluate them on some of the selected items")
        cols = np.flatnonzero(miss.any(axis=0))
        warnings.warn(f"responses: {int(miss.sum())} cells missing on {len(cols)} of the {len(pos)} evaluated items "
                      f"{_list_ids(self._labels(self.order_[pos[cols]]))}; each model is estimated from the items it has",
                      UserWarning, stacklevel=3)
        n = self.n_answered_
        full = ~miss.any(axis=1)
        t = np.empty(len(r), np.int64)
        k = np.empty(len(r), np.int64)
        est, se = np.empty(len(r)), np.empty(len(r))
        if full.any():
            res = self.predict(r[full], self._labels(self.order_[pos]))
            t[full], k[full], est[full], se[full] = res.sample_thresholds, res.thresholds, res.statistic, res.standard_error
        part = np.flatnonzero(~full)
        est[part], se[part] = _estimate_with_missing(r[part], miss[part], pos, n, design)
        for i in part:  # DP search over each model's own observed items
            o = ~miss[i]
            t[i] = int(dp_rows(r[i, o][None])[0])
            k[i] = cell_boundaries(pos[o], n)[t[i]]
        return SearchResult(thresholds=k, sample_thresholds=t, order=self.order_, positions=pos, statistic=est,
                            standard_error=se, design=design, estimator=self._estimator, model_ids=model_ids,
                            item_ids=self.item_ids_, n_missing=self.n_missing_, n_missing_target=int(miss.sum()))

    def evaluate(self, evaluate_fn: Callable[[np.ndarray], Any], budget: int) -> SearchResult:
        """Select ``budget`` items, call ``evaluate_fn(items)`` once, and predict.

        Parameters
        ----------
        evaluate_fn : callable
            Receives the selected items (ids when fitted on ids, else indices) and returns the correctness of one
            model, shape (budget,), or of several, shape (n_models, budget), in that order (or a labelled
            DataFrame / Series); only those items are ever evaluated.
        budget : int
            Number of items, in [1, n_items].

        Returns
        -------
        SearchResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = SortSearch().fit(src)
        >>> truth = new.to_frame().iloc[1]  # stands for running a model on the requested items
        >>> res = est.evaluate(lambda items: truth[items].to_numpy(), 20)
        >>> float(res.accuracy[0].round(2))
        0.5
        """
        if not callable(evaluate_fn):
            raise ValueError(f"evaluate_fn: expected a callable items -> correctness, got {type(evaluate_fn).__name__}")
        items = self.select(budget)
        out = evaluate_fn(items.copy())
        try:
            return self.predict(out, items)
        except ValueError as exc:
            raise ValueError(f"evaluate_fn: returned correctness that does not fit the {len(items)} selected items: {exc}") from None

    def simulate(self, responses: Any, budget: int) -> SearchResult:
        """The protocol on models whose full responses are known (experiments): select, take those columns, predict.

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
            The new models' full 0/1 correctness. Labelled columns are aligned to the fitted items by id (fitted on
            arrays: integer column labels are item positions, other labels are refused); only the selected
            columns are read.
        budget : int
            Number of items, in [1, n_items].

        Returns
        -------
        SearchResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = SortSearch().fit(src).simulate(new, 20)
        >>> res.budget, res.n_items
        (20, 200)
        """
        check_is_fitted(self, "order_")
        x = _align_full(self._oriented(responses), self.item_ids_, "responses", self.n_items_)
        model_ids = _ids(x, 0)
        _refuse_missing_truth(x)
        return self._simulate(_binary(x, "responses"), budget, model_ids)

    def _simulate(self, a: Any, budget: int, model_ids: pd.Index | None = None) -> SearchResult:
        """:meth:`simulate` on an already checked, oriented matrix."""
        if a.shape[1] != self.n_items_:
            raise ValueError(f"responses: expected {self.n_items_} items (columns), got {a.shape[1]}")
        self.select(budget)
        idx = self.selected_
        res = self.predict(_take_columns(a, idx, "responses"), None)
        if model_ids is not None:
            object.__setattr__(res, "model_ids", model_ids)
        return res

    def budget_curve(self, responses: Any, budgets: Any) -> pd.DataFrame:
        """:meth:`simulate` at every budget and its metrics, reading the full truth once (experiments).

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
            The new models' full 0/1 correctness.
        budgets : sequence of int
            Budgets, each in [1, n_items].

        Returns
        -------
        DataFrame
            One row per budget × model: ``budget``, ``model`` (model id for labelled input, else row position) and
            the columns of :meth:`effstats.sortsearch.SearchResult.evaluate`.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> curve = SortSearch().fit(src).budget_curve(new, [10, 50, 200])
        >>> curve.groupby("budget")["mae"].mean().round(3)
        budget
        10     0.406
        50     0.310
        200    0.288
        Name: mae, dtype: float64
        """
        check_is_fitted(self, "order_")
        budgets = _check_budgets(budgets, self.n_items_)
        x = _align_full(self._oriented(responses), self.item_ids_, "responses", self.n_items_)
        _refuse_missing_truth(x)
        a = _binary(x, "responses")  # checked once, not once per budget
        ids = _ids(x, 0)
        models = np.arange(a.shape[0]) if ids is None else ids.to_numpy()
        res = [self._simulate(a, b) for b in budgets]
        K = np.stack([r.thresholds for r in res])
        frames = _evaluate_thresholds(a, self.order_, K)
        return pd.concat(
            [f.assign(accuracy_estimate=r.statistic, standard_error=r.standard_error, budget=b, model=models)
             for b, f, r in zip(budgets, frames, res)],
            ignore_index=True,
        )

    def score(self, responses: Any, y: Any = None, *, budget: int | None = None) -> float:
        """Minus the mean sample-level MAE of :meth:`effstats.sortsearch.SortSearch.simulate` (higher is better).

        As scikit-learn scorers read it.

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' full 0/1 correctness.
        y : None
            Ignored.
        budget : int, optional
            Number of items; defaults to the size of the last selection.

        Returns
        -------
        score : float

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> round(SortSearch().fit(src).score(new, budget=50), 3)
        -0.309
        """
        check_is_fitted(self, "order_")
        if budget is None:
            if self.selected_ is None:
                raise ValueError("budget: no selection yet; pass budget or call select(budget) first")
            budget = len(self.selected_)
        res = self.simulate(responses, budget)
        x = _align_full(self._oriented(responses), self.item_ids_, "responses", self.n_items_)
        return -float(_evaluate_thresholds(x, self.order_, res.thresholds[None, :])[0]["mae"].mean())

    def insert(self, responses: Any, items: Any = None) -> SearchResult:
        """``insert_M`` without re-sorting: predict, then add the predictions to ``scores_`` (a ``partial_fit``).

        ``order_`` is never changed here. With complete sort data (``missing="raise"``) this loses nothing:
        predictions are "ones then zeros" in the current order, so adding them keeps the scores non-increasing
        along ``order_``, re-sorting the enlarged matrix gives the same sorted scores (only tied items can swap),
        and serial insertions do not accumulate error (App. G). With ``missing="observed"`` the order is by the
        fraction ``scores_ / n_observed_``, and adding the same count to every item's denominator can reorder items
        observed by different numbers of models: ``order_`` is then stale after insertions (refit to re-sort).

        Parameters
        ----------
        responses, items
            As for :meth:`effstats.sortsearch.SortSearch.predict`.

        Returns
        -------
        SearchResult
            The new models' predictions, whose counts are now part of ``scores_``.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import SortSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = SortSearch().fit(src)
        >>> items = est.select(20)
        >>> res = est.insert(new.subset(items=list(items)))
        >>> est.n_models_
        40
        """
        res = self.predict(responses, items)
        # models predicting position p correct: those with threshold > p
        add = np.cumsum(np.bincount(res.thresholds, minlength=self.n_items_ + 1)[::-1])[::-1][1:]
        self.scores_ = self.scores_ + add[self.rank_]
        self.n_models_ += len(res.thresholds)
        self.n_observed_ = self.n_observed_ + len(res.thresholds)
        return res

    insert_models = insert
