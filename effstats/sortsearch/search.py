"""Search: DP-search (Theorem 3.1) and the :class:`SortSearch` estimator (``insert_M``, new models).

Which sorted positions to evaluate lives in ``_positions.py``, what a search returns (:class:`SearchResult`) in
``_result.py``; both are re-exported here and from :mod:`effstats.sortsearch`."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._ordering import dp_packed, dp_rows
from .._validation import (check_array, check_binary, check_option, check_positive_int, check_rng,
                           frame_values, masked_as_nan, warn_missing_cells)
from ..bitpack import PackedBinaryMatrix
from ..exceptions import check_is_fitted
from ..responses import ResponseMatrix
from ._inputs import (
    _align_full,
    _aligned_responses,
    _binary,
    _binary_sums,
    _check_budget,
    check_answered,
    check_unique_ids,
    _confidence_sums,
    _ids,
    _is_dask,
    _item_indices,
    _list_ids,
    _observed_sums,
    _refuse_graded,
    _simulate_selection,
)
from ._positions import listing_uniform_positions, random_positions, stratified_positions, uniform_positions
from ._result import SearchResult, _evaluate_thresholds, _has_missing_cells, _refuse_missing_truth
from .estimate import _estimate_accuracy, _estimate_with_missing, cell_boundaries, design_of
from .sort import SORTS, _order_from_scores, recursive_sort

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

    The number of leading items to predict correct is the exact minimiser of the prediction's errors over every
    threshold (Notes), found with one prefix sum (O(n)). Ties go to the smallest ``k``.

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

    Notes
    -----
    For a row :math:`b` (already permuted easiest first) the prediction :math:`y = (1_k, 0_{n-k})` errs on

    .. math::

        \\lVert b - y \\rVert_1 = |b| - C(k), \\qquad C(k) = \\sum_{j < k} (2 b_j - 1),

    so the exact global minimiser is :math:`\\arg\\max_{0 \\le k \\le n} C(k)`, found with one prefix sum.

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





def _check_budgets(budgets: Any, n: int) -> list[int]:
    """A non-empty sequence of budgets, each an int in [1, n] (bools and scalars refused)."""
    if isinstance(budgets, (str, bytes)) or np.ndim(budgets) != 1 or len(budgets) == 0:
        raise ValueError(f"budgets: expected a non-empty 1-D sequence of integers in [1, {n}], got {budgets!r}")
    return [_check_budget(b.item() if isinstance(b, np.generic) and not isinstance(b, np.bool_) else b, n,
                          "budgets") for b in budgets]


_SAMPLINGS = ("uniform", "stratified", "random")
_ESTIMATORS = ("stratified", "difference")
_MISSING = ("raise", "observed")


class SortSearch(BaseEstimator):
    """Sort & Search for new models (the paper's ``insert_M``) of Prabhu et al. (2024), scikit-learn style.

    ``fit(sort_responses)`` learns the item order; ``select(budget)`` names the items to evaluate a new model
    on; ``predict(responses_on_selected)`` returns per-item predicted correctness and an accuracy estimate from the
    evaluated items with its standard error for one or many new models (:class:`SearchResult`): design-based when
    the items are drawn at random (``sampling="stratified"`` or ``"random"``), systematic on the cells' centres of
    the default ``sampling="uniform"``. ``evaluate(fn, budget)``
    runs the whole protocol with a callable that evaluates a real model on the requested items only.

    Items by id: fitted on a :class:`~effstats.responses.ResponseMatrix` or a DataFrame (models × item columns),
    ``select`` returns item ids, ``predict`` takes a ResponseMatrix / DataFrame whose columns include the selected
    items in any order (aligned by id; a missing one is refused, listing the ids), and ``simulate`` /
    ``budget_curve`` / ``SearchResult.evaluate`` align full matrices by id. Fitted on arrays, labelled columns
    must be integer item positions (aligned as such; other labels are refused). Plain arrays are positional:
    ``select`` returns its items in ascending item order (not easiest first), so ``new[:, est.select(b)]`` and
    ``new[:, np.sort(est.select(b))]`` are the same array, and a full-width array (all items) is accepted too.

    Two accuracies: ``SearchResult.accuracy`` (= ``statistic``, with ``standard_error`` and
    ``confidence_interval``) is the ``estimator``'s estimate from the evaluated items (design-based or
    systematic by ``sampling``), exact when every item is evaluated: read this one.
    ``SearchResult.predicted_accuracy`` is ``k / n``, the accuracy of the predicted "ones then zeros" vector (the
    paper's figure, biased by the aleatoric errors). Frames from ``evaluate`` /
    ``budget_curve`` call them ``accuracy_estimate`` and ``predicted_accuracy``, beside ``accuracy_true``.

    Parameters
    ----------
    sort : {"sum", "confidence", "recursive"}, default="sum"
        Algorithms 1, 2 and 3 of Prabhu et al. (2024); names in any case. ``"confidence"`` needs true-class
        probabilities.
    sampling : {"uniform", "stratified", "random"}, default="uniform"
        Names in any case. Cell centres of ``budget`` equal cells of the order (the paper's uniform sampling:
        deterministic, so the estimate's unbiasedness and interval coverage hold over models, not for each model), one
        random item per cell (a stratified random sample: unbiased for every model), or a simple random sample.
    depth : int, default=2
        Recursion depth for ``sort="recursive"``, at least 1 (2 = the paper's two-stage sort).
    estimator : {"stratified", "difference"}, default="stratified"
        Names in any case. Accuracy estimate from the evaluated items: the stratified mean, or the cross-fitted
        model-assisted difference estimator whose working model is calibrated to the S&S prediction of the other half of
        the sample (:func:`effstats.sortsearch.estimate_accuracy`). Both are unbiased under the random designs; the
        difference estimator lowers the variance only under ``sampling="random"`` (s.d. 0.066 vs 0.077 at 32 items on
        IRT test data) and matches the stratified mean under the stratified designs.
    missing : {"observed", "raise"}, default="observed"
        Names in any case. Sort matrices with missing cells (models not evaluated on every item: a ResponseMatrix with a
        ``missing`` mask, NaN in a DataFrame or float array). ``"observed"`` orders items by the fraction of the
        models *that answered them* answering correctly (ties: more correct answers first, then item index); items no
        sort model answered go last and are never selected, so the estimate is of the accuracy over the answered
        items (``n_answered_``). Works with ``sort="sum"``; the other sorts need a complete matrix. A complete
        matrix takes the plain sum order whatever this is (identical results). ``"raise"`` refuses missing
        cells.
    random_state : None, int, RandomState or Generator, default=None
        For ``sampling="stratified"`` / ``"random"``.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` under ``sampling="stratified"`` or ``"random"`` (random items: the interval holds for every
        model), ``"systematic"`` under ``"uniform"`` (deterministic items: it holds on average over models).
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
    sim30          0.10  0.014  0.302
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

    @property
    def interval_kind(self) -> str:
        """What the accuracy interval (``SearchResult.confidence_interval``) rests on, by ``sampling``.

        ``"design"`` under ``sampling="stratified"`` or ``"random"``: the items are drawn at random, so the
        interval holds for every model. ``"systematic"`` under ``"uniform"``: the cells' centres are chosen
        deterministically, so its coverage holds on average over models, not for each model.

        Returns
        -------
        str
            ``"design"`` or ``"systematic"``.

        Examples
        --------
        >>> from effstats.sortsearch import SortSearch
        >>> SortSearch().interval_kind, SortSearch(sampling="stratified").interval_kind
        ('systematic', 'design')
        """
        return "design" if str(self.sampling).lower() in ("stratified", "random") else "systematic"

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
        self._sort = check_option(self.sort, "sort", SORTS, ignore_case=True)
        self._sampling = check_option(self.sampling, "sampling", _SAMPLINGS, ignore_case=True)
        self._estimator = check_option(self.estimator, "estimator", _ESTIMATORS, ignore_case=True)
        missing_rule = check_option(self.missing, "missing", _MISSING, ignore_case=True)
        check_positive_int(self.depth, "depth")
        self.rng_ = check_rng(self.random_state, "random_state")
        ax = self._axis
        if isinstance(responses, ResponseMatrix) and self._sort != "confidence":
            _refuse_graded(responses, "responses")
        if not isinstance(responses, (ResponseMatrix, pd.DataFrame, PackedBinaryMatrix)) and not _is_dask(responses):
            # plain arrays / lists: shape and type checked here, values by the sort below
            responses = check_array(responses, "responses", ndim=2, dtype=None, allow_nan=True)
        shape = responses.shape
        n_models, n_items = (shape[0], shape[1]) if ax == 0 else (shape[1], shape[0])
        observed = None
        n_missing, n_answered = 0, n_items
        has_missing = self._has_missing(responses)
        if missing_rule == "raise" and has_missing:
            raise ValueError("responses: the sort models' matrix has missing cells (NaN / not evaluated); pass "
                             "missing='observed' "
                             "to order items by the models that answered them (sort='sum'), or complete the matrix")
        if has_missing:
            if self._sort != "sum":
                raise ValueError("responses: the sort models' matrix has missing cells (NaN / not evaluated) and "
                                 f"sort={self._sort!r} "
                                 "needs a complete matrix; use sort='sum' (items ordered by the fraction correct among "
                                 "the "
                                 "models that answered them), or complete the matrix")
            if isinstance(responses, ResponseMatrix):
                rm = responses
            else:
                vals = np.asarray(frame_values(responses) if isinstance(responses, pd.DataFrame)
                                  else masked_as_nan(responses), float)
                check_answered(np.isnan(vals), ax)
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
        check_unique_ids(self.item_ids_, "item" if ax == 0 else "model")
        if ax == 1:  # the items of a SampleInserter: the columns its insertions are matched by
            check_unique_ids(_ids(responses, 1))
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
            raise ValueError(f"items: {_list_ids(self._labels(it[pos >= self.n_answered_]))} were answered by no sort "
                             "model; "
                             "their difficulty is unknown, so they cannot stand for a part of the order")
        sel = self.selected_
        if sel is not None and len(sel) == len(it) and np.array_equal(np.sort(sel), np.sort(it)):
            return pos, {"random": "srs", "stratified": "stratified"}.get(self._sampling, "systematic")
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
            Per-item predictions and the accuracy estimates from the evaluated items (design-based or systematic,
            as ``SearchResult.design`` says).

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
        # one random item per cell ("stratified", the result's design) has the one-item-per-cell estimator and
        # variance of the cell centres ("systematic"); the two differ in what the interval rests on (class Notes)
        formula = "systematic" if design == "stratified" else design
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
            est, se = _by_row_chunks(lambda x: _estimate_accuracy(x, pos, n, formula, easiness_sorted=es[:n],
                                                                  n_models=nm), r)
        else:
            def search_and_estimate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                p = np.packbits(x, axis=1)  # packed once for the threshold and the estimate
                return (dp_packed(p, x.shape[1]), *_estimate_accuracy(x, pos, n, formula, packed=p))

            t, est, se = _by_row_chunks(search_and_estimate, r)
        k = cell_boundaries(pos, n)[t]
        right = _by_row_chunks(lambda x: np.count_nonzero(x, axis=1), r)
        return SearchResult(thresholds=k, sample_thresholds=t, order=self.order_, positions=pos, statistic=est,
                            standard_error=se, design=design, estimator=self._estimator, model_ids=model_ids,
                            item_ids=self.item_ids_, n_missing=self.n_missing_,
                            minority=np.minimum(right, len(pos) - right))

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
                             f"response on any of the {len(pos)} evaluated items; evaluate them on some of the "
                             "selected items")
        cols = np.flatnonzero(miss.any(axis=0))
        warnings.warn(f"responses: {int(miss.sum())} cells missing on {len(cols)} of the {len(pos)} evaluated items "
                      f"{_list_ids(self._labels(self.order_[pos[cols]]))}; each model is estimated from the items it "
                      "has",
                      UserWarning, stacklevel=3)
        n = self.n_answered_
        full = ~miss.any(axis=1)
        t = np.empty(len(r), np.int64)
        k = np.empty(len(r), np.int64)
        est, se = np.empty(len(r)), np.empty(len(r))
        if full.any():
            res = self.predict(r[full], self._labels(self.order_[pos]))
            t[full], k[full] = res.sample_thresholds, res.thresholds
            est[full], se[full] = res.statistic, res.standard_error
        part = np.flatnonzero(~full)
        est[part], se[part] = _estimate_with_missing(r[part], miss[part], pos, n,
                                                     "systematic" if design == "stratified" else design)
        for i in part:  # DP search over each model's own observed items
            o = ~miss[i]
            t[i] = int(dp_rows(r[i, o][None])[0])
            k[i] = cell_boundaries(pos[o], n)[t[i]]
        right = np.count_nonzero(r.astype(bool) & ~miss, axis=1)
        seen = np.count_nonzero(~miss, axis=1)
        return SearchResult(thresholds=k, sample_thresholds=t, order=self.order_, positions=pos, statistic=est,
                            standard_error=se, design=design, estimator=self._estimator, model_ids=model_ids,
                            item_ids=self.item_ids_, n_missing=self.n_missing_, n_missing_target=int(miss.sum()),
                            minority=np.minimum(right, seen - right), n_observed=seen)

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
            raise ValueError(f"evaluate_fn: returned correctness that does not fit the {len(items)} selected items: "
                             f"{exc}") from None

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
        return _simulate_selection(self, _binary(x, "responses"), budget, model_ids)

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
        res = [_simulate_selection(self, a, b) for b in budgets]
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
