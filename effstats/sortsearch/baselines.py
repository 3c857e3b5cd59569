"""The CopyNearest&Expand baseline (Sect. 4.2 of Prabhu, Udandarao et al.) and :class:`HybridSearch`, which
combines it with Sort & Search and picks the combination by cross-validation on the source models."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.model_selection import KFold

from .._results import ConfidenceInterval
from .._validation import check_binary, check_positive_int, check_rng
from ..bitpack import PackedBinaryMatrix
from ..exceptions import check_is_fitted
from ._inputs import _aligned_responses, _binary, _ids, _is_dask, _item_indices, _take_columns
from .search import SearchResult, SortSearch, _align_full, _check_rows, _has_missing_cells, random_positions

__all__ = ["ExpandResult", "CopyNearestExpand", "HybridResult", "HybridSearch"]


def _dense_source(responses: Any, name: str = "responses") -> np.ndarray:
    if _has_missing_cells(responses):
        raise ValueError(f"{name}: the matrix has missing cells (NaN / not evaluated); the nearest-model baselines need "
                         "complete responses: complete the matrix, or, for sort models with gaps, use "
                         "SortSearch(missing='observed'), which orders items by the models that answered them")
    a = _binary(responses, name)
    if _is_dask(a):
        a = check_binary(a.compute(), name)
    return a.to_dense() if isinstance(a, PackedBinaryMatrix) else np.asarray(a)


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
    """

    item_index: np.ndarray
    observed: np.ndarray = field(repr=False)
    nearest: np.ndarray
    source: np.ndarray = field(repr=False)
    model_ids: pd.Index | None = field(default=None, repr=False)
    item_ids: pd.Index | None = field(default=None, repr=False)
    source_ids: pd.Index | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return (f"ExpandResult(n_models={len(self.nearest)}, budget={len(self.item_index)}, n_items={self.source.shape[1]}, "
                f"accuracy={self.statistic.min():.3f}..{self.statistic.max():.3f}); see .to_frame()")

    @property
    def items(self) -> np.ndarray:
        """The evaluated items: ids when fitted on labelled items, else indices (as ``SearchResult.items``)."""
        return self.item_index.copy() if self.item_ids is None else self.item_ids.to_numpy()[self.item_index]

    def _index(self) -> pd.Index:
        return self.model_ids if self.model_ids is not None else pd.RangeIndex(len(self.nearest), name="model")

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted correctness, bool (n_rows, n_items), items in the fitted order."""
        sel = slice(None) if rows is None else _check_rows(rows, len(self.nearest), self.model_ids)
        out = np.atleast_2d(self.source[self.nearest[sel]]).copy()
        out[:, self.item_index] = np.atleast_2d(self.observed[sel])
        return out

    def predictions(self, rows: Any = None) -> pd.DataFrame:
        """Per-item predicted correctness as a labelled DataFrame (models × items, ids where known)."""
        idx = self._index() if rows is None else self._index()[_check_rows(rows, len(self.nearest), self.model_ids)]
        cols = self.item_ids if self.item_ids is not None else pd.RangeIndex(self.source.shape[1], name="item")
        return pd.DataFrame(self.correctness(rows), index=idx, columns=cols)

    @property
    def predicted_accuracy(self) -> np.ndarray:
        """Accuracy of the predicted vector per model (copied items + observed ones)."""
        copied = self.source.sum(axis=1)[self.nearest] - self.source[:, self.item_index].sum(axis=1)[self.nearest]
        return (copied + self.observed.sum(axis=1)) / self.source.shape[1]

    @property
    def statistic(self) -> np.ndarray:
        """Design-based accuracy estimate per model: the mean over the evaluated (simple random sample of) items."""
        return self.observed.mean(axis=1)

    @property
    def accuracy(self) -> np.ndarray:
        """The design-based accuracy estimate (= ``statistic``), as ``SearchResult.accuracy``; the accuracy of the
        predicted vector is ``predicted_accuracy``."""
        return self.statistic

    @property
    def standard_error(self) -> np.ndarray:
        """Its standard error ``sqrt((1 - f) s² / b)`` (simple random sampling without replacement, ``f = b / n``)."""
        b, n = self.observed.shape[1], self.source.shape[1]
        if b < 2:
            return np.full(len(self.nearest), np.sqrt(0.25 * (1 - b / n)))
        return np.sqrt((1 - b / n) * self.observed.var(axis=1, ddof=1) / b)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Korn-Graubard interval for each model's accuracy (see :mod:`effstats.sortsearch.estimate`)."""
        from .estimate import korn_graubard_interval

        return korn_graubard_interval(self.statistic, self.standard_error, self.observed.shape[1], self.source.shape[1], confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per model: ``accuracy`` (estimate), ``standard_error``, ``low``, ``high``, ``predicted_accuracy``,
        ``nearest`` (the sort model's id when known, else its index)."""
        ci = self.confidence_interval(confidence_level)
        nearest = self.nearest if self.source_ids is None else self.source_ids.to_numpy()[self.nearest]
        return pd.DataFrame({"accuracy": self.statistic, "standard_error": self.standard_error, "low": ci.low, "high": ci.high,
                             "predicted_accuracy": self.predicted_accuracy, "nearest": nearest}, index=self._index())

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """``mae``, ``e_agg``, ``e_rand``, ``kappa``, ``predicted_accuracy``, ``accuracy_true``, ``accuracy_estimate``,
        ``standard_error`` per model. Labelled columns are aligned to the fitted items by id."""
        from ..metrics import sample_metrics

        x = _align_full(true_responses, self.item_ids, "true_responses")
        a = _dense_source(x, "true_responses")
        if a.shape != (len(self.nearest), self.source.shape[1]):
            raise ValueError(f"true_responses: expected shape {(len(self.nearest), self.source.shape[1])}, got {a.shape}")
        ev = sample_metrics(a, self.correctness()).assign(accuracy_estimate=self.statistic, standard_error=self.standard_error)
        ev.index = self._index()
        return ev


class CopyNearestExpand(BaseEstimator):
    """The CopyNearest&Expand baseline (Sect. 4.2): evaluate ``n'`` random items, copy the rest from the
    sort model that agrees most on them.

    Labelled inputs (a ResponseMatrix or a DataFrame with item columns) are aligned by item id, as in
    :class:`~effstats.sortsearch.SortSearch`: :meth:`select` then returns item ids, and the responses given to
    :meth:`predict` may carry the selected items in any order. Plain arrays are positional.

    Parameters
    ----------
    random_state : None, int or Generator, default=None

    Attributes
    ----------
    source_ : bool array (n_models, n_items)
    item_ids_, model_ids_ : Index or None
        Item / sort-model ids of a labelled source.
    selected_ : int array (budget,) or None
        Indices of the last selection.
    """

    def __init__(self, random_state: Any = None) -> None:
        self.random_state = random_state

    def fit(self, responses: Any, y: Any = None) -> "CopyNearestExpand":
        """``responses``: the sort models' bool matrix (n_models, n_items), ResponseMatrix or DataFrame (kept in
        memory)."""
        self.source_ = _dense_source(responses)
        self.n_items_ = self.source_.shape[1]
        self.item_ids_ = _ids(responses, 1)
        self.model_ids_ = _ids(responses, 0)
        self.rng_ = check_rng(self.random_state, "random_state")
        self.selected_ = None
        return self

    def select(self, budget: int) -> np.ndarray:
        """``budget`` random items (increasing indices; their ids when fitted on ids), remembered as ``selected_``."""
        check_is_fitted(self, "source_")
        self.selected_ = random_positions(self.n_items_, budget, self.rng_)
        return self.selected_.copy() if self.item_ids_ is None else self.item_ids_.to_numpy()[self.selected_]

    def predict(self, responses: Any, items: Any = None) -> ExpandResult:
        """``responses``: bool (budget,) or (n_models, budget) on ``items`` (default: the last selection), columns in
        the order of ``items``; or a ResponseMatrix / DataFrame / Series whose columns are those items in any order
        (aligned by id)."""
        check_is_fitted(self, "source_")
        items = _item_indices(items, self.selected_, self.n_items_, self.item_ids_)
        if len(np.unique(items)) != len(items):
            raise ValueError("items: must be distinct")
        r, model_ids = _aligned_responses(responses, items, self.item_ids_)
        dist = _hamming(r, self.source_[:, items])
        return ExpandResult(item_index=items, observed=r, nearest=dist.argmin(axis=1), source=self.source_, model_ids=model_ids,
                            item_ids=self.item_ids_, source_ids=self.model_ids_)

    def simulate(self, responses: Any, budget: int) -> ExpandResult:
        """Select, read those columns of the new models' full responses (labelled columns aligned by id), predict."""
        check_is_fitted(self, "source_")
        x = _align_full(responses, self.item_ids_, "responses")
        a = _binary(x, "responses")
        if a.shape[1] != self.n_items_:
            raise ValueError(f"responses: expected {self.n_items_} items (columns), got {a.shape[1]}")
        self.select(budget)
        res = self.predict(_take_columns(a, self.selected_, "responses"), self.selected_)
        if _ids(x, 0) is not None:
            object.__setattr__(res, "model_ids", _ids(x, 0))
        return res

    def score(self, responses: Any, y: Any = None, *, budget: int = 100) -> float:
        """Minus the mean MAE of :meth:`simulate` at ``budget`` on the new models' full ``responses``."""
        check_is_fitted(self, "source_")
        x = _align_full(responses, self.item_ids_, "responses")
        return -float(self.simulate(x, budget).evaluate(x)["mae"].mean())


# ---------------------------------------------------------------------------------------------- hybrid
def _hybrid_scores(ss_pred: np.ndarray, nn_mean: np.ndarray, weight: float, items: np.ndarray, observed: np.ndarray,
                   margin: float) -> np.ndarray:
    """Predicted correctness: ``weight · (mean of the nearest source models) + (1 - weight) · S&S > 1/2``, the
    evaluated ``items`` copied from ``observed``; a model whose nearest models' vote misclassifies more than
    ``margin`` more of its evaluated items than the S&S prediction does falls back to S&S (per-model guard)."""
    pred = weight * nn_mean + (1.0 - weight) * ss_pred > 0.5
    if weight > 0:
        err_nn = ((nn_mean[:, items] > 0.5) != observed).mean(axis=1)
        err_ss = (ss_pred[:, items] != observed).mean(axis=1)
        fall = err_nn > err_ss + margin
        pred[fall] = ss_pred[fall]
    pred[:, items] = observed
    return pred


@dataclass(frozen=True, eq=False, repr=False)
class HybridResult:
    """:class:`HybridSearch` predictions, with the Sort & Search result they started from.

    ``accuracy`` / ``statistic``, ``standard_error`` and ``confidence_interval`` are the design-based estimate
    from the evaluated items (as in :class:`SearchResult`); ``predicted`` holds the per-item predictions.
    """

    search: SearchResult = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    n_neighbors: int = 1
    weight: float = 0.0

    @property
    def statistic(self) -> np.ndarray:
        return self.search.statistic

    accuracy = statistic

    @property
    def standard_error(self) -> np.ndarray:
        return self.search.standard_error

    @property
    def predicted_accuracy(self) -> np.ndarray:
        return self.predicted.mean(axis=1)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        return self.search.confidence_interval(confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        return self.search.to_frame(confidence_level).assign(predicted_accuracy=self.predicted_accuracy)

    def __repr__(self) -> str:
        return (f"HybridResult(n_models={len(self.predicted)}, budget={self.search.budget}, n_items={self.search.n_items}, "
                f"n_neighbors={self.n_neighbors}, weight={self.weight}); see .to_frame()")

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted correctness, bool (n_rows, n_items), items in the fitted order."""
        return self.predicted if rows is None else np.atleast_2d(self.predicted[_check_rows(rows, len(self.predicted), self.search.model_ids)])

    def predictions(self, rows: Any = None) -> pd.DataFrame:
        """Per-item predicted correctness as a labelled DataFrame (models × items, ids where known)."""
        sr = self.search
        idx = sr._index() if rows is None else sr._index()[_check_rows(rows, len(self.predicted), self.search.model_ids)]
        cols = sr.item_ids if sr.item_ids is not None else pd.RangeIndex(sr.n_items, name="item")
        return pd.DataFrame(self.correctness(rows), index=idx, columns=cols)

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """``mae``, ``e_agg``, ``e_rand``, ``kappa``, ``predicted_accuracy`` (of the predictions), ``accuracy_true``,
        ``accuracy_estimate`` (this result's ``accuracy``), ``standard_error`` per model. Labelled columns are aligned
        to the fitted items by id."""
        from ..metrics import sample_metrics

        a = _dense_source(_align_full(true_responses, self.search.item_ids, "true_responses"), "true_responses")
        if a.shape != self.predicted.shape:
            raise ValueError(f"true_responses: expected shape {self.predicted.shape}, got {a.shape}")
        ev = sample_metrics(a, self.predicted).assign(accuracy_estimate=self.statistic, standard_error=self.standard_error)
        ev.index = self.search._index()
        return ev


class HybridSearch(BaseEstimator):
    """Sort & Search corrected by the nearest source models, with the mix chosen by cross-validation.

    Items are selected as in Sort & Search (uniform positions on the sum order). For a new model, the S&S
    prediction ``s_i ∈ {0, 1}`` (ones then zeros) and the mean correctness ``c_i`` of its ``k`` nearest source models
    (Hamming distance on the evaluated items) are combined as ``w c_i + (1 - w) s_i > 1/2``; evaluated items are
    copied as observed. ``w = 0`` is Sort & Search, ``k = 1, w = 1`` is CopyNearest&Expand on the S&S items, and
    ``(k, w)`` is chosen by K-fold cross-validation over the *source* models alone (each fold plays the new
    models against the others), so on benchmarks whose models come in families the nearest models take over, and
    where they do not, S&S is kept.

    The weight is global, so without a guard a new model unlike every source model can be hurt: on ImageNet without
    the PyTorch ports (17 new / 50 source models, 16 items), the Fisher-vector model ``fv_16k`` (true accuracy
    0.267) got hybrid per-item errors of 0.324 / 0.466 / 0.475 against S&S's 0.153 / 0.159 / 0.267 in three of six
    splits holding it. ``fallback_margin`` gives such models the S&S prediction: in those six splits the mean MAE
    over the 17 models became 0.116 (hybrid without the guard 0.131, S&S 0.127), and on the notebook's splits
    (ImageNet with / without ports, CIFAR-10, digits; 16-1,024 items) the mean hybrid MAE per benchmark changed
    by -0.0031 to +0.0002 (per split and budget -0.0097 to +0.0025). The design-based ``accuracy`` (from the
    evaluated items) is never affected.

    Parameters
    ----------
    budget : int, default=100
        Items evaluated per new model (the setting is cross-validated at this budget).
    neighbors : sequence of int, default=(1, 3, 5, 10)
    weights : sequence of float in [0, 1], default=(0.0, 0.25, 0.5, 0.75, 1.0)
    cv : int, default=5
        Folds over the source models.
    sort : {"sum", "recursive"}, default="sum"
    fallback_margin : float in [0, 1] or None, default=0.1
        Per-model guard: a new model whose nearest source models' vote misclassifies more than this fraction more
        of its evaluated items than the S&S prediction does gets the S&S prediction (it resembles no source
        model). Applied in the cross-validation too. ``None`` disables it.
    random_state : None, int or Generator, default=None
        Fold assignment.

    Attributes
    ----------
    n_neighbors_, weight_ : the chosen setting
    cv_results_ : DataFrame (n_neighbors, weight, mae) of the cross-validated MAE of every setting
    search_ : the fitted :class:`SortSearch`
    source_ : bool array (n_source, n_items)
    """

    def __init__(self, budget: int = 100, neighbors: Any = (1, 3, 5, 10), weights: Any = (0.0, 0.25, 0.5, 0.75, 1.0),
                 cv: int = 5, sort: str = "sum", fallback_margin: float | None = 0.1, random_state: Any = None) -> None:
        self.budget = budget
        self.neighbors = neighbors
        self.weights = weights
        self.cv = cv
        self.sort = sort
        self.fallback_margin = fallback_margin
        self.random_state = random_state

    def _check_params(self, n_source: int, n_items: int) -> tuple[list[int], list[float], int]:
        check_positive_int(self.budget, "budget", maximum=n_items)
        ks = [check_positive_int(k, "neighbors") for k in np.atleast_1d(np.asarray(self.neighbors, dtype=object)).tolist()]
        if not ks:
            raise ValueError(f"neighbors: expected a non-empty sequence of integers >= 1, got {self.neighbors!r}")
        try:
            ws = np.atleast_1d(np.asarray(self.weights, float))
        except (TypeError, ValueError):
            raise ValueError(f"weights: expected a non-empty sequence of numbers in [0, 1], got {self.weights!r}") from None
        if ws.ndim != 1 or ws.size == 0 or np.isnan(ws).any() or (ws < 0).any() or (ws > 1).any():
            raise ValueError(f"weights: expected a non-empty sequence of numbers in [0, 1], got {self.weights!r}")
        cv = check_positive_int(self.cv, "cv")
        if cv < 2 or cv > n_source:
            raise ValueError(f"cv: expected an integer in [2, {n_source}] (folds over the source models), got {self.cv}")
        return ks, ws.tolist(), cv

    def _margin(self) -> float:
        m = self.fallback_margin
        if m is None:
            return np.inf
        if isinstance(m, bool) or not isinstance(m, (int, float, np.integer, np.floating)) or not 0 <= m <= 1:
            raise ValueError(f"fallback_margin: expected a number in [0, 1] or None, got {m!r}")
        return float(m)

    @staticmethod
    def _predict_all(ss: SortSearch, source: np.ndarray, r: np.ndarray, items: np.ndarray, k_max: int) -> tuple[np.ndarray, np.ndarray, SearchResult]:
        """(S&S predictions (m, n) bool, nearest source rows sorted by distance (m, k_max), SearchResult)."""
        res = ss.predict(r, items)
        dist = _hamming(r, source[:, items])
        nn = np.argsort(dist, axis=1, kind="stable")[:, :k_max]
        return res.correctness(), nn, res

    def fit(self, responses: Any, y: Any = None) -> "HybridSearch":
        """Fit the S&S order on all source models and cross-validate ``(n_neighbors, weight)`` over them.

        Parameters
        ----------
        responses : bool array (n_source, n_items), ResponseMatrix or DataFrame (kept dense in memory)
        """
        src = _dense_source(responses)
        ks, ws, cv = self._check_params(*src.shape)
        margin = self._margin()
        grid = [(k, w) for k in ks for w in ws]
        err = np.zeros(len(grid))
        folds = KFold(cv, shuffle=True, random_state=int(check_rng(self.random_state, "random_state").integers(2**31)))
        for tr, va in folds.split(src):
            ss = SortSearch(sort=self.sort).fit(src[tr])
            items = ss.select(self.budget)
            truth = src[va]
            ss_pred, nn, _ = self._predict_all(ss, src[tr], truth[:, items], items, min(max(ks), len(tr)))
            for kk in sorted(set(ks)):
                c = src[tr][nn[:, : min(kk, len(tr))]].mean(axis=1)  # (m, n) mean of the nearest source models
                for w in ws:
                    pred = _hybrid_scores(ss_pred, c, w, items, truth[:, items], margin)
                    err[grid.index((kk, w))] += (pred != truth).mean(axis=1).sum()
        err /= len(src)
        self.cv_results_ = pd.DataFrame({"n_neighbors": [g[0] for g in grid], "weight": [g[1] for g in grid], "mae": err})
        best = int(np.argmin(err))  # ties: the first, i.e. the fewest neighbours and the smallest weight (closest to S&S)
        self.n_neighbors_, self.weight_ = grid[best]
        self.source_ = src
        self.search_ = SortSearch(sort=self.sort).fit(responses)
        self.n_items_ = src.shape[1]
        self.selected_ = None
        return self

    def select(self, budget: int | None = None) -> np.ndarray:
        """The items to evaluate (those of Sort & Search at ``budget``, default the fitted ``budget``)."""
        check_is_fitted(self, "search_")
        self.selected_ = self.search_.select(self.budget if budget is None else budget)
        return self.selected_

    def predict(self, responses: Any, items: Any = None) -> HybridResult:
        """Predict from responses on the selected items (as :meth:`SortSearch.predict`)."""
        check_is_fitted(self, "search_")
        ss = self.search_
        res = ss.predict(responses, items)
        idx = res.order[res.positions]
        # the responses in sorted-position order are not kept by SearchResult: rebuild them from the input
        r = _selected_responses_aligned(ss, responses, items, idx)
        k = min(self.n_neighbors_, len(self.source_))
        dist = _hamming(r, self.source_[:, idx])
        nn = np.argsort(dist, axis=1, kind="stable")[:, :k]
        pred = _hybrid_scores(res.correctness(), self.source_[nn].mean(axis=1), self.weight_, idx, r, self._margin())
        return HybridResult(search=res, predicted=pred, n_neighbors=k, weight=self.weight_)

    def simulate(self, responses: Any, budget: int | None = None) -> HybridResult:
        """Select, read those columns of the new models' full responses, predict."""
        check_is_fitted(self, "search_")
        x = _align_full(responses, self.search_.item_ids_, "responses")
        a = _binary(x, "responses")
        if a.shape[1] != self.n_items_:
            raise ValueError(f"responses: expected {self.n_items_} items (columns), got {a.shape[1]}")
        self.select(budget)
        res = self.predict(_take_columns(a, self.search_.selected_, "responses"), self.search_.selected_)
        if _ids(x, 0) is not None:
            object.__setattr__(res.search, "model_ids", _ids(x, 0))
        return res

    def score(self, responses: Any, y: Any = None) -> float:
        """Minus the mean MAE of :meth:`simulate` on the new models' full ``responses``."""
        check_is_fitted(self, "search_")
        x = _align_full(responses, self.search_.item_ids_, "responses")
        return -float(self.simulate(x).evaluate(x)["mae"].mean())


def _selected_responses_aligned(ss: SortSearch, responses: Any, items: Any, idx_sorted: np.ndarray) -> np.ndarray:
    """The responses as bool (n_models, budget) with columns in the order of ``idx_sorted`` (item indices)."""
    from ._inputs import _aligned_responses

    pos = _item_indices(items, ss.selected_, ss.n_items_, ss.item_ids_)
    r, _ = _aligned_responses(responses, pos, ss.item_ids_)
    where = {int(i): j for j, i in enumerate(pos)}
    return r[:, [where[int(i)] for i in idx_sorted]]
