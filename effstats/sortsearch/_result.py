"""What a search returns for new models (:class:`SearchResult`: thresholds, accuracies, intervals, predictions),
and the metrics of threshold predictions against the models' true responses."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._ordering import padded_prefix
from .._results import ConfidenceInterval
from .._validation import check_binary, masked_as_nan
from ..bitpack import PackedBinaryMatrix
from ..responses import ResponseMatrix
from ._inputs import _align_full, _check_rows, _is_dask, _sorted_row_blocks
from .estimate import design_df, korn_graubard_interval


@dataclass(frozen=True, eq=False, repr=False)
class SearchResult:
    """Sort & Search predictions for ``n_models`` new models (or new items, for ``insert_D``).

    The result protocol: ``statistic`` (= ``accuracy``, the estimate from the evaluated items), ``standard_error``,
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
        Accuracy estimate from the evaluated items (see :func:`effstats.sortsearch.estimate_accuracy`): design-based
        when they were drawn at random (``sampling="stratified"`` or ``"random"``), systematic on the cells' centres
        (``"uniform"``); exact when every item is evaluated.
    standard_error : float array (n_models,)
        Its standard error (successive-difference or SRS formula; not conservative, see
        :func:`effstats.sortsearch.estimate_accuracy`).
    design : str
        The design the interval rests on: ``"stratified"`` (one random item per equal cell of the order, the
        estimator's own selection with ``sampling="stratified"``: the interval holds for each model),
        ``"systematic"`` (one fixed item per equal cell: the cells' centres of ``sampling="uniform"``, or items
        passed that way; it holds on average over models, not for each one) or ``"srs"`` (a random or arbitrary
        sample). ``"stratified"`` and ``"systematic"`` share the estimate and its successive-difference variance.
    estimator : str
        ``"stratified"`` or ``"difference"``.
    model_ids, item_ids : Index or None
        Ids of the new models (labelled input) and of all items (estimator fitted on labelled items).
    n_missing : int
        Missing cells in the sort models' matrix the estimator was fitted on (its ``n_missing_``).
    n_missing_target : int
        Missing cells in the new models' responses on the evaluated items (each model is estimated from the
        items it has; see :meth:`effstats.sortsearch.SortSearch.predict`).
    minority : int array (n_models,) or None
        The fewer of each model's right and wrong responses among its evaluated items; with one item per cell, at
        most 2 bound the interval's effective size (see :func:`effstats.sortsearch.korn_graubard_interval`).
    n_observed : int array (n_models,) or None
        Each model's evaluated items with a response, the sample size of its interval (None: all ``budget`` of
        them); a model missing some of them has no exact interval even when every item was evaluated.

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
    SearchResult(n_models=10, budget=20, n_items=200, accuracy=0.100..0.650, design='systematic', ...)
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
    minority: np.ndarray | None = field(default=None, repr=False)
    n_observed: np.ndarray | None = field(default=None, repr=False)

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
        """Accuracy estimate per model from the evaluated items (= ``statistic``), float array (n_models,)."""
        return self.statistic

    @property
    def predicted_accuracy(self) -> np.ndarray:
        """Accuracy of the predicted "ones then zeros" vector, ``k / n`` per model (the paper's estimate: biased by
        the aleatoric errors, and not exact even with every item evaluated)."""
        return self.thresholds / self.n_items

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Korn-Graubard (Clopper-Pearson at the effective sample size) interval for each model's accuracy.

        With one item per cell (``design="systematic"``), a model with one or two wrong (or right) evaluated items
        gets an effective size of at most a simple random sample's, ``budget / (1 - budget / n_items)``
        (``minority``).

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, ndarrays of shape (n_models,); a point interval when every item is evaluated and
            answered.

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
        (array([0.014, 0.35 , 0.257]), array([0.302, 0.65 , 0.654]))
        """
        few = self.minority if self.design in ("systematic", "stratified") else None
        if self.n_observed is None:
            return korn_graubard_interval(self.statistic, self.standard_error, self.budget, self.n_items,
                                          confidence_level, df=design_df(self.design, self.budget), minority=few)
        low, high = np.empty(len(self.statistic)), np.empty(len(self.statistic))
        for b in np.unique(self.n_observed):  # one call per sample size: the models with missing cells are few
            rows = self.n_observed == b
            low[rows], high[rows] = korn_graubard_interval(
                self.statistic[rows], self.standard_error[rows], int(b), self.n_items, confidence_level,
                df=design_df(self.design, int(b)), minority=None if few is None else few[rows])
        return ConfidenceInterval(low, high)

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
            Columns ``accuracy`` (the estimate from the evaluated items), ``standard_error``, ``low``, ``high``,
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
        sim30           0.1  0.014  0.302          0
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
        >>> pred.shape, bool(pred[1].sum() == res.thresholds[1])
        ((10, 200), True)
        """
        k = self.thresholds if rows is None else self.thresholds[_check_rows(rows, len(self.thresholds),
                                                                             self.model_ids)]
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
        return _predictions_frame(self.correctness(rows), rows, self._index(), self.model_ids, self.item_ids)

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """Sample-level metrics against the full true responses, without materialising the predictions.

        Parameters
        ----------
        true_responses : array-like (n_models, n_items), ResponseMatrix, DataFrame, PackedBinaryMatrix or Dask array
            The new models' true 0/1 correctness on every item. Labelled columns are aligned to the fitted items
            by id.

        Returns
        -------
        DataFrame
            One row per model: ``mae`` (E, Eq. 2), ``e_agg``, ``kappa`` (Cohen's kappa, Eq. 4), ``aleatoric``
            (E(a, y*), y* = DP-search on all n items), ``epistemic`` (||y* - y|| / n), ``kappa_aleatoric``,
            ``kappa_epistemic``, ``predicted_accuracy`` (of the predicted vector, k / n), ``accuracy_true``,
            ``best_threshold`` (k*), ``accuracy_estimate`` (the estimate from the evaluated items, this result's
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
        labelled = isinstance(true_responses, (ResponseMatrix, pd.DataFrame, PackedBinaryMatrix))
        if not labelled and not _is_dask(true_responses):
            true_responses = check_binary(true_responses, "true_responses", ndim=2)
        true_responses = _align_full(true_responses, self.item_ids, "true_responses", self.n_items)
        ev = _evaluate_thresholds(true_responses, self.order, self.thresholds[None, :])[0]
        ev = ev.assign(accuracy_estimate=self.statistic, standard_error=self.standard_error)
        if self.model_ids is not None:
            ev.index = self.model_ids
        return ev


def _predictions_frame(correctness: np.ndarray, rows: Any, index: pd.Index, model_ids: pd.Index | None,
                       item_ids: pd.Index | None) -> pd.DataFrame:
    """A result's ``predictions(rows)``: its ``correctness(rows)`` labelled by the rows' entries of the models'
    ``index`` and by the item ids (positions when unknown)."""
    idx = index if rows is None else index[_check_rows(rows, len(index), model_ids)]
    cols = item_ids if item_ids is not None else pd.RangeIndex(correctness.shape[1], name="item")
    return pd.DataFrame(correctness, index=idx, columns=cols)


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
    parts = [_threshold_stats(blk, K[:, s : s + blk.shape[0]]) for s,
             blk in _sorted_row_blocks(true_responses, order, "true_responses")]
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
        raise ValueError("responses: the new models' full responses have missing cells (NaN / not evaluated); simulate "
                         "and "
                         "budget_curve need complete responses; for models evaluated on some items only, call "
                         "predict(responses_on_those_items, items=...)")


def _has_missing_cells(responses: Any) -> bool:
    """Whether a ResponseMatrix (missing mask), DataFrame, float array (NaN) or masked array has missing cells."""
    responses = masked_as_nan(responses)
    if isinstance(responses, ResponseMatrix):
        return responses.missing is not None and bool(responses.missing.any())
    if isinstance(responses, pd.DataFrame):
        return bool(responses.isna().to_numpy().any())
    if isinstance(responses, np.ndarray) and responses.dtype.kind == "f":
        return bool(np.isnan(responses).any())
    return False
