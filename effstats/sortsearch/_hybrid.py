""":class:`effstats.sortsearch.HybridSearch`: CopyNearest&Expand combined with Sort & Search, the combination
picked by cross-validation on the source models."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.model_selection import KFold

from .._results import ConfidenceInterval
from .._outputs import _some
from .._validation import check_option, check_positive_int, check_rng
from ..exceptions import check_is_fitted
from ._copy_nearest import _distance, _evaluate_predicted, _source_with_missing
from ._inputs import (_align_full, _aligned_responses, _binary, _check_budget, _check_int_in, _check_rows, _ids,
                      _item_indices, _simulate_selection)
from ._result import SearchResult, _predictions_frame
from .search import SortSearch

_SORTS = ("sum", "recursive")  # HybridSearch's sorts: the source models' 0/1 correctness, no confidences


def _hybrid_scores(ss_pred: np.ndarray, nn_mean: np.ndarray, weight: float, items: np.ndarray, observed: np.ndarray,
                   margin: float, missing: np.ndarray | None = None) -> np.ndarray:
    """Predicted correctness: ``weight · (mean of the nearest source models) + (1 - weight) · S&S > 1/2``, the
    evaluated ``items`` copied from ``observed`` (except its ``missing`` cells); a model whose nearest models' vote
    misclassifies more than ``margin`` more of its evaluated items than the S&S prediction does falls back to S&S
    (per-model guard)."""
    pred = weight * nn_mean + (1.0 - weight) * ss_pred > 0.5
    if weight > 0:
        if missing is None:
            err_nn = ((nn_mean[:, items] > 0.5) != observed).mean(axis=1)
            err_ss = (ss_pred[:, items] != observed).mean(axis=1)
        else:
            obs = ~missing
            err_nn = (((nn_mean[:, items] > 0.5) != observed) & obs).sum(axis=1) / obs.sum(axis=1)
            err_ss = ((ss_pred[:, items] != observed) & obs).sum(axis=1) / obs.sum(axis=1)
        fall = err_nn > err_ss + margin
        pred[fall] = ss_pred[fall]
    pred[:, items] = observed if missing is None else np.where(missing, pred[:, items], observed)
    return pred


@dataclass(frozen=True, eq=False, repr=False)
class HybridResult:
    """:class:`effstats.sortsearch.HybridSearch` predictions, with the Sort & Search result they started from.

    ``accuracy`` / ``statistic``, ``standard_error`` and ``confidence_interval`` are Sort & Search's estimate
    from the evaluated items (as in :class:`effstats.sortsearch.SearchResult`; the items are the cells' centres, so
    the interval is systematic: it holds on average over models); ``predicted`` holds the per-item predictions.

    Attributes
    ----------
    search : SearchResult
        The Sort & Search result on the same evaluated items.
    predicted : ndarray of shape (n_models, n_items), bool
        The hybrid per-item predictions (evaluated items as observed).
    n_neighbors : int
        Nearest source models averaged.
    weight : float
        Weight of their mean against the Sort & Search prediction.

    See Also
    --------
    effstats.sortsearch.HybridSearch : the estimator that returns it.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import HybridSearch
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> res = HybridSearch(budget=20, random_state=0).fit(src).simulate(new)
    >>> res
    HybridResult(n_models=10, budget=20, n_items=200, n_neighbors=3, weight=0.5); see .to_frame()
    >>> res.accuracy[:3].round(2), res.predicted_accuracy[:3].round(3)
    (array([0.1 , 0.5 , 0.45]), array([0.01 , 0.625, 0.4  ]))
    """

    search: SearchResult = field(repr=False)
    predicted: np.ndarray = field(repr=False)
    n_neighbors: int = 1
    weight: float = 0.0

    @property
    def n_missing(self) -> int:
        """Missing cells of the source (sort models') matrix."""
        return self.search.n_missing

    @property
    def n_missing_target(self) -> int:
        """Missing cells of the new models' responses on the evaluated items."""
        return self.search.n_missing_target

    @property
    def statistic(self) -> np.ndarray:
        """Accuracy estimate per model (Sort & Search's stratified mean of the evaluated items)."""
        return self.search.statistic

    accuracy = statistic

    @property
    def standard_error(self) -> np.ndarray:
        """Standard error of ``statistic``."""
        return self.search.standard_error

    @property
    def predicted_accuracy(self) -> np.ndarray:
        """Accuracy of the hybrid predicted vector per model."""
        return self.predicted.mean(axis=1)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Korn-Graubard interval for each model's accuracy, as
        :meth:`effstats.sortsearch.SearchResult.confidence_interval`.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, ndarrays of shape (n_models,).

        References
        ----------
        Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> ci = HybridSearch(budget=20, random_state=0).fit(src).simulate(new).confidence_interval()
        >>> ci.low[:2].round(3), ci.high[:2].round(3)
        (array([0.014, 0.35 ]), array([0.302, 0.65 ]))
        """
        return self.search.confidence_interval(confidence_level)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """The results as a table, one row per model, as :meth:`effstats.sortsearch.SearchResult.to_frame` with the
        hybrid prediction's ``predicted_accuracy``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the ``low`` / ``high`` interval.

        Returns
        -------
        DataFrame

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> frame = HybridSearch(budget=20, random_state=0).fit(src).simulate(new).to_frame()
        >>> frame["predicted_accuracy"].head(2).round(3).tolist()
        [0.01, 0.625]
        """
        return self.search.to_frame(confidence_level).assign(predicted_accuracy=self.predicted_accuracy)

    def __repr__(self) -> str:
        return (f"HybridResult(n_models={len(self.predicted)}, budget={self.search.budget}, "
                f"n_items={self.search.n_items}, "
                f"n_neighbors={self.n_neighbors}, weight={self.weight}); see .to_frame()")

    def correctness(self, rows: Any = None) -> np.ndarray:
        """Predicted correctness.

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
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> HybridSearch(budget=20, random_state=0).fit(src).simulate(new).correctness([0]).shape
        (1, 200)
        """
        return self.predicted if rows is None else np.atleast_2d(self.predicted[_check_rows(rows, len(self.predicted),
                                                                                            self.search.model_ids)])

    def predictions(self, rows: Any = None) -> pd.DataFrame:
        """Per-item predicted correctness as a labelled DataFrame (models × items, ids where known).

        Parameters
        ----------
        rows : int, array-like of int or bool, or model ids, optional
            Models to return, as in :meth:`effstats.sortsearch.HybridResult.correctness`.

        Returns
        -------
        DataFrame of shape (n_rows, n_items), bool

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> HybridSearch(budget=20, random_state=0).fit(src).simulate(new).predictions(["sim31"]).shape
        (1, 200)
        """
        sr = self.search
        return _predictions_frame(self.correctness(rows), rows, sr._index(), sr.model_ids, sr.item_ids)

    def evaluate(self, true_responses: Any) -> pd.DataFrame:
        """Sample-level metrics against the full true responses.

        Parameters
        ----------
        true_responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' true 0/1 correctness; labelled columns are aligned to the fitted items by id.

        Returns
        -------
        DataFrame
            One row per model: ``mae``, ``e_agg``, ``e_rand``, ``kappa`` (Cohen's kappa), ``predicted_accuracy``
            (of the predictions), ``accuracy_true``, ``accuracy_estimate`` (this result's ``accuracy``) and
            ``standard_error``.

        See Also
        --------
        effstats.metrics.sample_metrics : the metrics.

        References
        ----------
        Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and Psychological
        Measurement* 20(1), 37-46.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = HybridSearch(budget=20, random_state=0).fit(src).simulate(new)
        >>> round(float(res.evaluate(new)["mae"].mean()), 3)
        0.32
        """
        return _evaluate_predicted(true_responses, self.predicted, self.search.item_ids, self.statistic,
                                   self.standard_error, self.search._index())


class HybridSearch(BaseEstimator):
    r"""Sort & Search corrected by the nearest source models, with the mix chosen by cross-validation: the per-item
    predictor effstats recommends.

    For per-item predictions (which items a new model gets right) prefer it to
    :class:`effstats.sortsearch.SortSearch` and :class:`effstats.sortsearch.CopyNearestExpand`: it falls back to
    S&S where the nearest models do not help, so it matches or beats the better of the two. Per-item MAE at 100 items,
    mean of 3 random 20/10 model splits of CIFAR-10 (+ 10.1): HybridSearch 0.071, CopyNearest&Expand 0.073, Sort &
    Search 0.076; on unseen NLU data (about 90 public models × 83,000 items, 29 tasks) 0.137-0.154 against 0.138-0.160
    and 0.172-0.181 over budgets and tasks. Its ``accuracy`` is S&S's estimate from the same items.

    Items are selected as in Sort & Search (uniform positions on the sum order). For a new model, the S&S
    prediction :math:`s_i \in \{0, 1\}` (ones then zeros) and the mean correctness :math:`c_i` of its :math:`k`
    nearest source models (Hamming distance on the evaluated items) are combined as
    :math:`w c_i + (1 - w) s_i > 1/2`; evaluated items are copied as observed. :math:`w = 0` is Sort & Search,
    :math:`k = 1, w = 1` is CopyNearest&Expand on the S&S items, and :math:`(k, w)` is chosen by K-fold
    cross-validation over the *source* models alone (each fold plays the new models against the others), so on
    benchmarks whose models come in families the nearest models take over, and where they do not, S&S is kept.

    The weight is global, so without a guard a new model unlike every source model can be hurt: on ImageNet without
    the PyTorch ports (17 new / 50 source models, 16 items), the Fisher-vector model ``fv_16k`` (true accuracy
    0.267) got hybrid per-item errors of 0.324 / 0.466 / 0.475 against S&S's 0.153 / 0.159 / 0.267 in three of six
    splits holding it. ``fallback_margin`` gives such models the S&S prediction: in those six splits the mean MAE
    over the 17 models is 0.116 with it (0.131 without, S&S 0.127), and on the notebook's splits (ImageNet with /
    without ports, CIFAR-10, digits; 16-1,024 items) the mean hybrid MAE per benchmark with and without it differs
    by -0.0031 to +0.0002 (per split and budget -0.0097 to +0.0025). The ``accuracy`` (S&S's, from the
    evaluated items) is never affected.

    Parameters
    ----------
    budget : int, default=100
        Items evaluated per new model, in [1, n_items]; the setting is cross-validated at this budget at fit, and again
        (once, on the same folds) at any other budget that :meth:`select`, :meth:`simulate` or :meth:`predict` is used
        at (:meth:`cv_setting`), so a setting is never reused at a budget it was not chosen for.
    neighbors : sequence of int, default=(1, 3, 5, 10)
        Numbers of nearest source models to try, each at least 1.
    weights : sequence of float, default=(0.0, 0.25, 0.5, 0.75, 1.0)
        Weights in [0, 1] of the neighbours' mean to try.
    cv : int, default=5
        Folds over the source models, in [2, n_source].
    sort : {"sum", "recursive"}, default="sum"
        Sort & Search's item order (Algorithm 1 or 3); names in any case.
    fallback_margin : float in [0, 1] or None, default=0.1
        Per-model guard: a new model whose nearest source models' vote misclassifies more than this fraction more
        of its evaluated items than the S&S prediction does gets the S&S prediction (it resembles no source
        model). Applied in the cross-validation too. ``None`` disables it.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, default=None
        Fold assignment.

    Attributes
    ----------
    interval_kind : str
        ``"systematic"`` (class attribute): the accuracy interval is Sort & Search's on the cells' centres of the
        source models' order (``sampling="uniform"``, items chosen deterministically), so its coverage holds on
        average over models, not for each model.
    n_neighbors_ : int
        Neighbours of the setting chosen at ``budget`` (:meth:`effstats.sortsearch.HybridSearch.cv_setting`
        gives other budgets').
    weight_ : float
        Weight of the setting chosen at ``budget``.
    cv_results_ : DataFrame
        Columns ``n_neighbors``, ``weight``, ``mae``: the cross-validated MAE of every setting at ``budget``.
    search_ : SortSearch
        The Sort & Search estimator fitted on all source models.
    selected_ : int array (budget,) or None
        Positions (indices) of the last selection, in ascending item order (:meth:`select` returns their ids when
        fitted on ids).
    source_ : bool array (n_source, n_items)
    n_missing_ : int
        Missing cells of the source matrix. With missing cells the S&S order is by the observed fraction correct,
        distances are shares of disagreement on the items both models answered, a source's missing cell counts
        as the item's observed majority answer in the neighbours' mean, and the cross-validated error counts the
        held-out models' observed cells only.

    See Also
    --------
    effstats.sortsearch.SortSearch : Sort & Search alone (``weight = 0``), and the accuracy estimate.
    effstats.sortsearch.CopyNearestExpand : the copying baseline (``k = 1, w = 1`` on random items).

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import HybridSearch
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = HybridSearch(budget=20, random_state=0).fit(src)
    >>> est.n_neighbors_, est.weight_  # cross-validated on the 30 source models
    (3, 0.5)
    >>> res = est.simulate(new)
    >>> round(float(res.evaluate(new)["mae"].mean()), 3)  # Sort & Search alone: 0.332
    0.32
    """

    interval_kind = "systematic"

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
        self._sort = check_option(self.sort, "sort", _SORTS, ignore_case=True)
        _check_budget(self.budget, n_items)
        ks = [check_positive_int(k, "neighbors") for k in np.atleast_1d(np.asarray(self.neighbors,
                                                                                   dtype=object)).tolist()]
        if not ks:
            raise ValueError(f"neighbors: expected a non-empty sequence of integers >= 1, got {self.neighbors!r}")
        try:
            ws = np.atleast_1d(np.asarray(self.weights, float))
        except (TypeError, ValueError):
            raise ValueError(f"weights: expected a non-empty sequence of numbers in [0, 1], got "
                             f"{self.weights!r}") from None
        if ws.ndim != 1 or ws.size == 0 or np.isnan(ws).any() or (ws < 0).any() or (ws > 1).any():
            raise ValueError(f"weights: expected a non-empty sequence of numbers in [0, 1], got {self.weights!r}")
        if n_source < 2:  # cv's range [2, n_source] would be empty
            raise ValueError(f"source_outputs: HybridSearch needs at least 2 source models (its cross-validation "
                             f"folds are over them), got {n_source}")
        try:
            cv = _check_int_in(self.cv, "cv", 2, n_source)
        except ValueError as exc:  # the bound comes from the source models: say so, as cv may be at its default
            raise ValueError(f"{exc} (its cross-validation folds are over the {n_source} source models)") from None
        return ks, ws.tolist(), cv

    def _margin(self) -> float:
        m = self.fallback_margin
        if m is None:
            return np.inf
        if isinstance(m, bool) or not isinstance(m, (int, float, np.integer, np.floating)) or not 0 <= m <= 1:
            raise ValueError(f"fallback_margin: expected a number in [0, 1] or None, got {m!r}")
        return float(m)

    @staticmethod
    def _predict_all(ss: SortSearch, source: np.ndarray, r: np.ndarray, items: np.ndarray, k_max: int,
                     r_miss: np.ndarray | None = None,
                     s_miss: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, SearchResult]:
        """(S&S predictions (m, n) bool, nearest source rows sorted by distance (m, k_max), SearchResult)."""
        res = ss.predict(r if r_miss is None else np.where(r_miss, np.nan, r), items)
        dist = _distance(r, r_miss, source[:, items], None if s_miss is None else s_miss[:, items])
        nn = np.argsort(dist, axis=1, kind="stable")[:, :k_max]
        return res.correctness(), nn, res

    def fit(self, responses: Any, y: Any = None) -> "HybridSearch":
        """Fit the S&S order on all source models and cross-validate ``(n_neighbors, weight)`` over them.

        Parameters
        ----------
        responses : array-like of shape (n_source, n_items), ResponseMatrix or DataFrame
            The source models' 0/1 correctness (kept dense in memory).
        y : None
            Ignored.

        Returns
        -------
        self : HybridSearch

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = HybridSearch(budget=20, random_state=0).fit(src)
        >>> est.cv_results_.sort_values("mae").head(2).round(3)
            n_neighbors  weight    mae
        7             3    0.50  0.294
        13            5    0.75  0.295
        """
        src, miss = _source_with_missing(responses)
        ks, ws, cv = self._check_params(*src.shape)
        self._grid = (ks, ws, cv, self._margin(), int(check_rng(self.random_state, "random_state").integers(2**31)))
        self.source_, self._missing = src, miss
        self.n_missing_ = 0 if miss is None else int(miss.sum())
        self._settings = {}
        budget = _check_budget(self.budget, src.shape[1])  # an int (a 0-d array keys no setting)
        self.cv_results_ = self._cross_validate(budget)
        self.n_neighbors_, self.weight_ = self.cv_setting(budget)
        self.search_ = SortSearch(sort=self._sort).fit(responses)
        self.n_items_ = src.shape[1]
        self.selected_ = None
        return self

    def _cross_validate(self, budget: int) -> pd.DataFrame:
        """The cross-validated per-item MAE of every ``(n_neighbors, weight)`` at ``budget`` items (the same folds at
        every budget), and the best setting remembered for that budget."""
        import warnings

        src, miss = self.source_, self._missing
        ks, ws, cv, margin, seed = self._grid
        grid = [(k, w) for k in ks for w in ws]
        err = np.zeros(len(grid))
        for tr, va in KFold(cv, shuffle=True, random_state=seed).split(src):
            if miss is None:
                ss = SortSearch(sort=self._sort).fit(src[tr])
                m_tr = m_va = m_items = None
            else:  # the folds' S&S sees the gaps; the errors count the held-out models' observed cells only
                m_tr, m_va, m_items = _some(miss[tr]), _some(miss[va]), None
                ss = SortSearch(sort=self._sort).fit(src[tr] if m_tr is None else np.where(m_tr, np.nan, src[tr]))
            items = ss.select(budget)
            truth = src[va]
            if m_va is not None:
                m_items = _some(m_va[:, items])
            with warnings.catch_warnings():  # the held-out models' gaps were the fit's own input
                warnings.filterwarnings("ignore", message="responses: .*missing", category=UserWarning)
                ss_pred, nn, _ = self._predict_all(ss, src[tr], truth[:, items], items, min(max(ks), len(tr)), m_items,
                                                   m_tr)
            for kk in sorted(set(ks)):
                c = src[tr][nn[:, : min(kk, len(tr))]].mean(axis=1)  # (m, n) mean of the nearest source models
                for w in ws:
                    pred = _hybrid_scores(ss_pred, c, w, items, truth[:, items], margin, m_items)
                    if m_va is None:
                        err[grid.index((kk, w))] += (pred != truth).mean(axis=1).sum()
                    else:
                        obs = ~m_va
                        err[grid.index((kk, w))] += (((pred != truth) & obs).sum(axis=1) / obs.sum(axis=1)).sum()
        err /= len(src)
        # ties: the first, i.e. the fewest neighbours and the smallest weight (closest to S&S)
        best = int(np.argmin(err))
        self._settings[budget] = grid[best]
        return pd.DataFrame({"n_neighbors": [g[0] for g in grid], "weight": [g[1] for g in grid], "mae": err})

    def cv_setting(self, budget: int) -> tuple[int, float]:
        """The ``(n_neighbors, weight)`` cross-validated at ``budget`` evaluated items.

        At the fitted ``budget`` it is ``(n_neighbors_, weight_)``; at another budget the same folds are run again at
        that budget (once: the setting is remembered), since how much the nearest models' vote should count
        changes with the number of items it is computed from.

        Parameters
        ----------
        budget : int
            Number of evaluated items, in [1, n_items].

        Returns
        -------
        n_neighbors : int
        weight : float

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> HybridSearch(budget=20, random_state=0).fit(src).cv_setting(40)
        (5, 0.5)
        """
        check_is_fitted(self, "source_")
        n = self.source_.shape[1]
        budget = _check_budget(budget, n)
        if budget not in self._settings:
            self._cross_validate(budget)
        return self._settings[budget]

    def select(self, budget: int | None = None) -> np.ndarray:
        """The items to evaluate: those of Sort & Search, in ascending item order.

        A budget other than the fitted one gets its own cross-validated setting
        (:meth:`effstats.sortsearch.HybridSearch.cv_setting`).

        Parameters
        ----------
        budget : int, optional
            Number of items, in [1, n_items]; the fitted ``budget`` by default.

        Returns
        -------
        items : ndarray of shape (budget,)
            Item ids when fitted on ids, else indices.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> HybridSearch(budget=20, random_state=0).fit(src).select(5)
        array(['i40', 'i44', 'i71', 'i185', 'i186'], dtype=object)
        """
        check_is_fitted(self, "search_")
        items = self.search_.select(self.budget if budget is None else budget)
        self.selected_ = self.search_.selected_
        return items

    def predict(self, responses: Any, items: Any = None) -> HybridResult:
        """Predict from responses on the selected items, with the setting cross-validated at their number.

        Parameters
        ----------
        responses, items
            As for :meth:`effstats.sortsearch.SortSearch.predict`.

        Returns
        -------
        HybridResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> est = HybridSearch(budget=20, random_state=0).fit(src)
        >>> items = est.select()
        >>> res = est.predict(new.subset(items=list(items)))
        >>> res.n_neighbors, res.weight
        (3, 0.5)
        """
        check_is_fitted(self, "search_")
        ss = self.search_
        res = ss.predict(responses, items)
        idx = res.order[res.positions]
        n_neighbors, weight = self.cv_setting(len(idx))
        # the responses in sorted-position order are not kept by SearchResult: rebuild them from the input
        r, r_miss = _selected_responses_aligned(ss, responses, items, idx)
        k = min(n_neighbors, len(self.source_))
        dist = _distance(r, r_miss, self.source_[:, idx], None if self._missing is None else self._missing[:, idx])
        nn = np.argsort(dist, axis=1, kind="stable")[:, :k]
        pred = _hybrid_scores(res.correctness(), self.source_[nn].mean(axis=1), weight, idx, r, self._margin(), r_miss)
        return HybridResult(search=res, predicted=pred, n_neighbors=k, weight=weight)

    def simulate(self, responses: Any, budget: int | None = None) -> HybridResult:
        """Select, read those columns of the new models' full responses, predict (experiments).

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' full 0/1 correctness; labelled columns are aligned by id.
        budget : int, optional
            Number of items; the fitted ``budget`` by default.

        Returns
        -------
        HybridResult

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> res = HybridSearch(budget=20, random_state=0).fit(src).simulate(new)
        >>> res.search.budget, res.predicted.shape
        (20, (10, 200))
        """
        check_is_fitted(self, "search_")
        x = _align_full(responses, self.search_.item_ids_, "responses", self.n_items_)
        return _simulate_selection(self, _binary(x, "responses"), budget, _ids(x, 0))

    def score(self, responses: Any, y: Any = None) -> float:
        """Minus the mean MAE of :meth:`effstats.sortsearch.HybridSearch.simulate` (higher is better).

        Parameters
        ----------
        responses : array-like of shape (n_models, n_items), ResponseMatrix or DataFrame
            The new models' full 0/1 correctness.
        y : None
            Ignored.

        Returns
        -------
        score : float

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.sortsearch import HybridSearch
        >>> rm = simulate_responses(40, 200, rng=0)
        >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
        >>> round(HybridSearch(budget=20, random_state=0).fit(src).score(new), 3)
        -0.321
        """
        check_is_fitted(self, "search_")
        x = _align_full(responses, self.search_.item_ids_, "responses", self.n_items_)
        return -float(self.simulate(x).evaluate(x)["mae"].mean())


def _selected_responses_aligned(ss: SortSearch, responses: Any, items: Any,
                                idx_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The responses as bool (n_models, budget) with columns in the order of ``idx_sorted`` (item indices), and
    their missing-cell mask (None when complete)."""
    pos = _item_indices(items, ss.selected_, ss.n_items_, ss.item_ids_)
    r, _, miss = _aligned_responses(responses, pos, ss.item_ids_, ss.n_items_)
    where = {int(i): j for j, i in enumerate(pos)}
    cols = [where[int(i)] for i in idx_sorted]
    return r[:, cols], None if miss is None else miss[:, cols]
