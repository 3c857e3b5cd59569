"""The CopyNearest&Expand baseline (Sect. 4.2 of Prabhu, Udandarao et al., 2024): a new model's correctness on
the items not evaluated is copied from the source models nearest to it on the items evaluated."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from .._results import ConfidenceInterval
from .._validation import check_binary, check_rng, frame_values, masked_as_nan, warn_missing_cells
from ..bitpack import PackedBinaryMatrix
from ..exceptions import check_is_fitted
from ..responses import ResponseMatrix
from ._inputs import (_align_full, _aligned_responses, _binary, _check_rows, _ids, _is_dask, _item_indices,
                      _simulate_selection, check_answered, check_unique_ids)
from ._positions import random_positions
from ._result import _has_missing_cells, _predictions_frame


def _dense_source(responses: Any, name: str = "responses") -> np.ndarray:
    if _has_missing_cells(responses):
        raise ValueError(f"{name}: the matrix has missing cells (NaN / not evaluated); complete responses are needed "
                         "here")
    a = _binary(responses, name)
    if _is_dask(a):
        a = check_binary(a.compute(), name)
    return a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)


def _evaluate_predicted(true_responses: Any, predicted: np.ndarray, item_ids: pd.Index | None, statistic: np.ndarray,
                        standard_error: np.ndarray, index: pd.Index) -> pd.DataFrame:
    """A result's ``evaluate``: :func:`effstats.metrics.sample_metrics` of its ``predicted`` matrix (n_models,
    n_items) against the full true responses (labelled columns aligned to the fitted ``item_ids``), with the
    design-based estimate and its standard error, indexed by the models' ``index``."""
    from ..metrics import sample_metrics

    a = _dense_source(_align_full(true_responses, item_ids, "true_responses", predicted.shape[1]), "true_responses")
    if a.shape != predicted.shape:
        raise ValueError(f"true_responses: expected shape {predicted.shape}, got {a.shape}")
    ev = sample_metrics(a, predicted).assign(accuracy_estimate=statistic, standard_error=standard_error)
    ev.index = index
    return ev


def _source_with_missing(responses: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """The sort models' bool matrix and its missing-cell mask (None when complete). A missing cell holds the
    majority answer of the models that answered the item (wrong when none did), so copied predictions are the
    item's observed majority there; distances use the observed cells only (:func:`_distance`)."""
    if not _has_missing_cells(responses):
        return _dense_source(responses), None
    if isinstance(responses, ResponseMatrix) and responses.kind == "binary":
        miss, vals = responses.missing, None  # read as 0/1 when it was made: no second scan of its values
    elif isinstance(responses, ResponseMatrix):
        miss, vals = responses.missing, responses.values_with_nan()
    else:
        vals = (np.asarray(frame_values(responses), float) if isinstance(responses, pd.DataFrame)
                else np.asarray(masked_as_nan(responses), float))
        miss = np.isnan(vals)
    obs = ~miss
    filled = responses.values & obs if vals is None else check_binary(np.where(obs, vals, 0.0), "responses", ndim=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        majority = filled.sum(axis=0) / obs.sum(axis=0) > 0.5
    return np.where(obs, filled, majority[None, :]), miss


def _distance(r: np.ndarray, r_miss: np.ndarray | None, s: np.ndarray, s_miss: np.ndarray | None) -> np.ndarray:
    """Hamming distances between new rows ``r`` and source rows ``s`` on the same columns; with missing cells, the
    share of disagreements among the columns both answered (inf when they share none)."""
    if r_miss is None and s_miss is None:
        return _hamming(r, s)
    ro = np.ones(r.shape, np.float32) if r_miss is None else (~r_miss).astype(np.float32)
    so = np.ones(s.shape, np.float32) if s_miss is None else (~s_miss).astype(np.float32)
    r1, s1 = r * ro, s * so
    r0, s0 = (1 - r) * ro, (1 - s) * so
    both = ro @ so.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(both > 0, (r1 @ s0.T + r0 @ s1.T) / both, np.inf)


def _hamming(r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Hamming distances (n_new, n_source) between bool rows on the same columns, one matrix product
    (exact integers in float32 up to 2^24 columns)."""
    rf, sf = r.astype(np.float32), s.astype(np.float32)
    return rf.sum(1)[:, None] + sf.sum(1)[None, :] - 2 * (rf @ sf.T)


@dataclass(frozen=True, eq=False, repr=False)
class ExpandResult:
    """CopyNearest&Expand predictions: observed on the evaluated items, copied from the nearest sort model elsewhere.

    The result protocol as :class:`~effstats.sortsearch.SearchResult`: ``accuracy`` (= ``statistic``) is the
    design-based estimate from the evaluated items (a simple random sample), with ``standard_error`` and
    ``confidence_interval``; ``predicted_accuracy`` is the accuracy of the predicted vector.

    Attributes
    ----------
    item_index : int array (budget,)
        Indices of the evaluated items (:attr:`items` gives their ids when known, as ``SearchResult.items``).
    observed : bool array (n_models, budget)
    nearest : int array (n_models,)
        Index of the nearest sort model (Hamming distance on the evaluated items; ties to the lowest index).
    source : bool array (n_sort_models, n_items), the sort models' responses (shared, not copied).
    model_ids, item_ids, source_ids : Index or None
        Ids of the new models, of all items and of the sort models, when the inputs were labelled.
    missing : bool array (n_models, budget) or None
        New models' missing cells on the evaluated items (predicted as copied; the estimate uses the others).
    n_missing : int
        Missing cells of the sort models' matrix (their copied value is the item's observed majority).

    See Also
    --------
    effstats.sortsearch.CopyNearestExpand : the estimator that returns it.
    effstats.sortsearch.SearchResult : the Sort & Search result with the same protocol.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> from effstats.sortsearch import CopyNearestExpand
    >>> res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20)
    >>> res
    ExpandResult(n_models=10, budget=20, n_items=200, accuracy=0.150..0.850); see .to_frame()
    >>> res.to_frame()[["accuracy", "predicted_accuracy", "nearest"]].head(2).round(3)
               accuracy  predicted_accuracy nearest
    model_ids
    sim30          0.15               0.155   sim12
    sim31          0.40               0.450   sim20
    """

    item_index: np.ndarray
    observed: np.ndarray = field(repr=False)
    nearest: np.ndarray
    source: np.ndarray = field(repr=False)
    model_ids: pd.Index | None = field(default=None, repr=False)
    item_ids: pd.Index | None = field(default=None, repr=False)
    source_ids: pd.Index | None = field(default=None, repr=False)
    missing: np.ndarray | None = field(default=None, repr=False)
    n_missing: int = 0

    @property
    def n_missing_target(self) -> int:
        """Missing cells of the new models' responses on the evaluated items."""
        return 0 if self.missing is None else int(self.missing.sum())

    def _n_observed(self) -> np.ndarray | int:
        return self.observed.shape[1] if self.missing is None else (~self.missing).sum(axis=1)

    def __repr__(self) -> str:
        return (f"ExpandResult(n_models={len(self.nearest)}, budget={len(self.item_index)}, "
                f"n_items={self.source.shape[1]}, "
                f"accuracy={self.statistic.min():.3f}..{self.statistic.max():.3f}); see .to_frame()")

    @property
    def items(self) -> np.ndarray:
        """The evaluated items: ids when fitted on labelled items, else indices (as ``SearchResult.items``)."""
        return self.item_index.copy() if self.item_ids is None else self.item_ids.to_numpy()[self.item_index]

    def _index(self) -> pd.Index:
        return self.model_ids if self.model_ids is not None else pd.RangeIndex(len(self.nearest), name="model")

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted correctness: observed on the evaluated items, the nearest sort model's elsewhere.

        Parameters
        ----------
        rows : int, array-like of int or bool, or model ids, optional
            Models to return (positions, a boolean mask, or model ids when known); all by default.

        Returns
        -------
        ndarray of shape (n_rows, n_items), bool
            Items in the fitted order.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20)
        >>> res.correctness().shape, res.correctness([0, 1]).shape
        ((10, 200), (2, 200))
        """
        sel = slice(None) if rows is None else _check_rows(rows, len(self.nearest), self.model_ids)
        out = np.atleast_2d(self.source[self.nearest[sel]]).copy()
        if self.missing is None:
            out[:, self.item_index] = np.atleast_2d(self.observed[sel])
        else:
            cols = out[:, self.item_index]
            out[:, self.item_index] = np.where(np.atleast_2d(self.missing[sel]), cols,
                                               np.atleast_2d(self.observed[sel]))
        return out

    def predictions(self, rows: Any = None) -> pd.DataFrame:
        """Per-item predicted correctness as a labelled DataFrame (models × items, ids where known).

        Parameters
        ----------
        rows : int, array-like of int or bool, or model ids, optional
            Models to return, as in :meth:`effstats.sortsearch.ExpandResult.correctness`.

        Returns
        -------
        DataFrame of shape (n_rows, n_items), bool

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20)
        >>> res.predictions(["sim31"]).shape
        (1, 200)
        """
        return _predictions_frame(self.correctness(rows), rows, self._index(), self.model_ids, self.item_ids)

    @property
    def predicted_accuracy(self) -> np.ndarray:
        """Accuracy of the predicted vector per model (copied items + observed ones)."""
        if self.missing is not None:
            return self.correctness().mean(axis=1)
        copied = self.source.sum(axis=1)[self.nearest] - self.source[:, self.item_index].sum(axis=1)[self.nearest]
        return (copied + self.observed.sum(axis=1)) / self.source.shape[1]

    @property
    def statistic(self) -> np.ndarray:
        """Design-based accuracy estimate per model: the mean over the evaluated (simple random sample of) items
        (over the observed ones when some are missing: a smaller simple random sample)."""
        if self.missing is not None:
            return np.where(self.missing, False, self.observed).sum(axis=1) / self._n_observed()
        return self.observed.mean(axis=1)

    @property
    def accuracy(self) -> np.ndarray:
        """The design-based accuracy estimate (= ``statistic``), as ``SearchResult.accuracy``; the accuracy of the
        predicted vector is ``predicted_accuracy``."""
        return self.statistic

    @property
    def standard_error(self) -> np.ndarray:
        r"""Its standard error :math:`\sqrt{(1 - f) s^2 / b}` (simple random sampling without replacement,
        :math:`f = b / n`)."""
        b, n = self.observed.shape[1], self.source.shape[1]
        if self.missing is not None:
            b, p = self._n_observed(), self.statistic
            with np.errstate(invalid="ignore", divide="ignore"):  # binary: s² = b p (1 - p) / (b - 1)
                return np.where(b > 1, np.sqrt((1 - b / n) * p * (1 - p) / (b - 1)), np.sqrt(0.25 * (1 - b / n)))
        if b < 2:
            return np.full(len(self.nearest), np.sqrt(0.25 * (1 - b / n)))
        return np.sqrt((1 - b / n) * self.observed.var(axis=1, ddof=1) / b)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Korn-Graubard interval for each model's accuracy.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, ndarrays of shape (n_models,).

        See Also
        --------
        effstats.sortsearch.korn_graubard_interval : the interval.

        References
        ----------
        Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> ci = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20).confidence_interval()
        >>> ci.low[:2].round(3), ci.high[:2].round(3)
        (array([0.037, 0.197]), array([0.36 , 0.632]))
        """
        from .estimate import korn_graubard_interval

        return korn_graubard_interval(self.statistic, self.standard_error, self.observed.shape[1], self.source.shape[1],
                                      confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The results as a table, one row per model.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the ``low`` / ``high`` interval.

        Returns
        -------
        DataFrame
            ``accuracy`` (estimate), ``standard_error``, ``low``, ``high``, ``predicted_accuracy`` and ``nearest``
            (the sort model's id when known, else its index).

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> CopyNearestExpand(random_state=0).fit(src).simulate(new, 20).to_frame().shape
        (10, 6)
        """
        ci = self.confidence_interval(confidence_level)
        nearest = self.nearest if self.source_ids is None else self.source_ids.to_numpy()[self.nearest]
        return pd.DataFrame({"accuracy": self.statistic, "standard_error": self.standard_error, "low": ci.low,
                             "high": ci.high,
                             "predicted_accuracy": self.predicted_accuracy, "nearest": nearest}, index=self._index())

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """Sample-level metrics against the full true responses.

        Parameters
        ----------
        true_responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' true 0/1 correctness; labelled columns are aligned to the fitted items by id.

        Returns
        -------
        DataFrame
            One row per model: ``mae``, ``e_agg``, ``e_rand``, ``kappa`` (Cohen's kappa), ``predicted_accuracy``,
            ``accuracy_true``, ``accuracy_estimate`` and ``standard_error``.

        See Also
        --------
        effstats.metrics.sample_metrics : the metrics.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20)
        >>> res.evaluate(new)[["mae", "kappa"]].head(2).round(3)
                     mae  kappa
        model_ids
        sim30      0.250  0.275
        sim31      0.355  0.285
        """
        return _evaluate_predicted(true_responses, self.correctness(), self.item_ids, self.statistic,
                                   self.standard_error, self._index())


class CopyNearestExpand(BaseEstimator):
    """The CopyNearest&Expand baseline (Sect. 4.2 of Prabhu et al., 2024): evaluate ``n'`` random items, copy the
    rest from the sort model that agrees most on them.

    Labelled inputs (a ResponseMatrix or a DataFrame with item columns) are aligned by item id, as in
    :class:`~effstats.sortsearch.SortSearch`: :meth:`select` then returns item ids, and the responses given to
    :meth:`predict` may carry the selected items in any order. Plain arrays are positional.

    Missing cells: in the sort models' matrix, the distance is the share of disagreements on the evaluated
    items both models answered, a copied missing cell is the item's majority answer among the models that
    answered it, and items no sort model answered are never selected; a new model's missing evaluated items are
    left out of its distances and of its estimate (the mean over its observed items), with a ``UserWarning``.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, default=None
        The random item selection.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` (class attribute): the interval comes from the random draw of the items, so it holds for every
        model, also one outside the source models' range.
    source_ : bool array (n_models, n_items)
    n_missing_ : int
        Missing cells of the sort models' matrix.
    item_ids_, model_ids_ : Index or None
        Item / sort-model ids of a labelled source.
    selected_ : int array (budget,) or None
        Indices of the last selection.

    See Also
    --------
    effstats.sortsearch.HybridSearch : the per-item predictor effstats recommends, which falls back to Sort &
        Search where copying does not help.
    effstats.sortsearch.SortSearch : Sort & Search.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> from effstats.sortsearch import CopyNearestExpand
    >>> est = CopyNearestExpand(random_state=0).fit(src)
    >>> items = est.select(20)
    >>> res = est.predict(new.subset(items=list(items)))
    >>> res.nearest[:4]  # the sort model each new model copies
    array([12, 20,  9,  7])
    """

    interval_kind = "design"

    def __init__(self, random_state: Any = None) -> None:
        self.random_state = random_state

    def fit(self, responses: Any, y: Any = None) -> "CopyNearestExpand":
        """Keep the sort models' responses (in memory) to copy from.

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The sort models' 0/1 correctness.
        y : None
            Ignored.

        Returns
        -------
        self : CopyNearestExpand

        Raises
        ------
        ValueError
            As :class:`effstats.sortsearch.SortSearch` refuses them: repeated item ids, or a model without any
            response (all NaN).

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> CopyNearestExpand(random_state=0).fit(src).source_.shape
        (30, 200)
        """
        check_unique_ids(_ids(responses, 1))
        self.source_, self._missing = _source_with_missing(responses)
        if self._missing is not None:  # as SortSearch: a model with no response has nothing to copy
            check_answered(self._missing)
        self.n_missing_ = 0 if self._missing is None else int(self._missing.sum())
        warn_missing_cells("responses", self.n_missing_, self.source_.size,
                           "distances use the items both models answered")
        self.n_items_ = self.source_.shape[1]
        self.item_ids_ = _ids(responses, 1)
        self.model_ids_ = _ids(responses, 0)
        self.rng_ = check_rng(self.random_state, "random_state")
        self.selected_ = None
        return self

    def select(self, budget: int) -> np.ndarray:
        """``budget`` random items, remembered as ``selected_``.

        Parameters
        ----------
        budget : int
            Number of items, in [1, n_items].

        Returns
        -------
        items : ndarray of shape (budget,)
            Increasing item indices, or their ids when fitted on ids.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> CopyNearestExpand(random_state=0).fit(src).select(5)
        array(['i53', 'i61', 'i101', 'i125', 'i166'], dtype=object)
        """
        check_is_fitted(self, "source_")
        if self._missing is None or not self._missing.all(axis=0).any():
            self.selected_ = random_positions(self.n_items_, budget, self.rng_)
        else:  # among the items some sort model answered
            answered = np.flatnonzero(~self._missing.all(axis=0))
            self.selected_ = answered[random_positions(len(answered), budget, self.rng_)]
        return self.selected_.copy() if self.item_ids_ is None else self.item_ids_.to_numpy()[self.selected_]

    def predict(self, responses: Any, items: Any = None) -> ExpandResult:
        """Copy each new model's nearest sort model, keeping its observed responses.

        Parameters
        ----------
        responses : array-like of shape (budget,) or (n_models, budget), ResponseMatrix, DataFrame or Series
            0/1 correctness on ``items``, columns in their order, or on all fitted items (n_models, n_items); a
            labelled input has those items among its columns in any order (aligned by id; fitted on arrays, the
            ids are integer item positions).
        items : array-like of shape (budget,), optional
            The evaluated items (default: the last selection, in ascending item order).

        Returns
        -------
        ExpandResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = CopyNearestExpand(random_state=0).fit(src)
        >>> items = est.select(20)
        >>> est.predict(new.subset(items=list(items))).accuracy[:2].round(2)
        array([0.15, 0.4 ])
        """
        check_is_fitted(self, "source_")
        items = _item_indices(items, self.selected_, self.n_items_, self.item_ids_)
        if len(np.unique(items)) != len(items):
            raise ValueError("items: must be distinct")
        r, model_ids, miss = _aligned_responses(responses, items, self.item_ids_, self.n_items_)
        if miss is not None:
            _warn_missing_target(miss, items if self.item_ids_ is None else self.item_ids_.to_numpy()[items])
        dist = _distance(r, miss, self.source_[:, items], None if self._missing is None else self._missing[:, items])
        return ExpandResult(item_index=items, observed=r, nearest=dist.argmin(axis=1), source=self.source_,
                            model_ids=model_ids,
                            item_ids=self.item_ids_, source_ids=self.model_ids_, missing=miss,
                            n_missing=self.n_missing_)

    def simulate(self, responses: Any, budget: int) -> ExpandResult:
        """Select, read those columns of the new models' full responses, predict (experiments).

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' full 0/1 correctness; labelled columns are aligned by id.
        budget : int
            Number of items, in [1, n_items].

        Returns
        -------
        ExpandResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 20)
        >>> res.accuracy[:2].round(2), res.predicted_accuracy[:2].round(3)
        (array([0.15, 0.4 ]), array([0.155, 0.45 ]))
        """
        check_is_fitted(self, "source_")
        x = _align_full(responses, self.item_ids_, "responses", self.n_items_)
        return _simulate_selection(self, _binary(x, "responses"), budget, _ids(x, 0))

    def score(self, responses: Any, y: Any = None, *, budget: int = 100) -> float:
        """Minus the mean MAE of :meth:`effstats.sortsearch.CopyNearestExpand.simulate` (higher is better).

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' full 0/1 correctness.
        y : None
            Ignored.
        budget : int, default=100
            Number of items, in [1, n_items].

        Returns
        -------
        score : float

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> from effstats.sortsearch import CopyNearestExpand
        >>> round(CopyNearestExpand(random_state=0).fit(src).score(new, budget=20), 3)
        -0.376
        """
        check_is_fitted(self, "source_")
        x = _align_full(responses, self.item_ids_, "responses", self.n_items_)
        return -float(self.simulate(x, budget).evaluate(x)["mae"].mean())


def _warn_missing_target(miss: np.ndarray, ids: np.ndarray) -> None:
    """One warning naming the evaluated items some new model lacks; a model lacking all of them is refused."""
    import warnings

    from ._inputs import _list_ids

    if miss.all(axis=1).any():
        raise ValueError(f"responses: rows {_list_ids(np.flatnonzero(miss.all(axis=1)))} have no response on any of "
                         "the "
                         f"{miss.shape[1]} evaluated items; evaluate them on some of the selected items")
    cols = np.flatnonzero(miss.any(axis=0))
    warnings.warn(f"responses: {int(miss.sum())} cells missing on {len(cols)} of the {miss.shape[1]} evaluated items "
                  f"{_list_ids(ids[cols])}; each model is estimated from the items it has", UserWarning, stacklevel=3)
