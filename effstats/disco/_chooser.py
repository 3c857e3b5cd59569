"""Choose a subset estimator for a budget by cross-validation over the source models only."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone

from .._results import ConfidenceInterval
from .._outputs import _fold, _quiet_missing
from .._subset import _flagged_names, _SubsetEstimator
from .._subset_results import SubsetPrediction
from .._shared import _name_list, _plain
from .._validation import check_array, check_flag, check_positive_int, check_rng, is_zero_one
from ..exceptions import InputTypeError, check_is_fitted
from ._baselines import SortSearchDirect

__all__ = ["MethodChooser", "default_candidates", "with_fallback", "fallback_candidate", "FallbackPrediction"]


def default_candidates(n_items: int = 100, *, binary: bool = True, probabilities: bool = False, irt: bool = True,
                       random_items: bool = False) -> dict[str, Any]:
    """The candidate estimators of :class:`MethodChooser` (unfitted), named as in the comparison tables.

    Random + direct, AIPW (random items with a cross-fitted ridge correction), stratified AIPW (random items
    within strata of the sources' difficulty order, corrected within strata by a cross-fitted logistic model on
    item features, :class:`effstats.disco.StratifiedAIPW`; from two items), random + ridge (Random-Sampling-Learn:
    a ridge regression of the score on random items, :class:`effstats.disco.RandomLearn`), SSEPY-style strata,
    anchor-corr (weighted sum), DISCO's defaults (random items, the ridge
    difference estimate), DISCO with PDS selection (kNN and RF on correctness or probability signatures, the
    paper's), and, for binary correctness, tinyBenchmarks' anchor-corr + gp-IRT (``irt=True``; 1-D IRT) and Sort &
    Search. The Sort & Search candidate reports Sort & Search's design-based accuracy from the evaluated items
    (``SearchResult.accuracy``, one random item per cell of the easy→hard order, with its design-based interval),
    not the accuracy ``k / n`` of the predicted "ones then zeros" vector, which the package's own Sort & Search
    results advise against reading.

    Parameters
    ----------
    n_items : int, default=100
        Budget of every candidate.
    binary : bool, default=True
        The outputs are 0/1 correctness: adds Sort & Search and, with ``irt``, tinyBenchmarks.
    probabilities : bool, default=False
        The outputs are class probabilities: DISCO's signatures use them.
    irt : bool, default=True
        Include tinyBenchmarks' anchor-corr + gp-IRT (binary outputs only).
    random_items : bool, default=False
        Only the candidates that draw their items at random, uniformly or within strata (random + direct, AIPW,
        stratified AIPW, random + ridge, SSEPY strata, DISCO's defaults, Sort & Search): a design-based estimate
        on the same items
        then exists for every target, also one better than every reference model, which the chooser's
        per-target fallback uses. Candidates that choose items from the reference models (anchor points, PDS,
        tinyBenchmarks) can be far off for such a target with nothing to fall back on. ``effstats select
        --method auto`` uses this set.

    Returns
    -------
    dict of str to estimator

    See Also
    --------
    effstats.disco.MethodChooser : picks among them.

    Examples
    --------
    >>> from effstats.disco import default_candidates
    >>> sorted(default_candidates(50, irt=False))  # doctest: +NORMALIZE_WHITESPACE
    ['AIPW + ridge', 'DISCO PDS + RF', 'DISCO PDS + kNN', 'DISCO difference + ridge', 'SSEPY strata + HT',
     'Sort & Search', 'anchor-corr + weighted', 'random + direct', 'random + ridge', 'stratified AIPW + logistic']
    >>> sorted(default_candidates(50, random_items=True))  # doctest: +NORMALIZE_WHITESPACE
    ['AIPW + ridge', 'DISCO difference + ridge', 'SSEPY strata + HT', 'Sort & Search', 'random + direct',
     'random + ridge', 'stratified AIPW + logistic']
    """
    n_items = check_positive_int(n_items, "n_items")
    binary, probabilities, irt = (check_flag(binary, "binary"), check_flag(probabilities, "probabilities"),
                                  check_flag(irt, "irt"))
    random_items = check_flag(random_items, "random_items")
    from ._aipw import AIPW
    from ._baselines import AnchorCorr, RandomDirect, StratifiedHT
    from ._estimator import DISCO
    from ._mrmr import RandomLearn
    from ._stratified_aipw import StratifiedAIPW

    sig = "probabilities" if probabilities else "auto"
    out: dict[str, Any] = {
        "random + direct": RandomDirect(n_items),
        # cross-fitting: no more folds than sampled items
        "AIPW + ridge": AIPW(n_items, n_folds=min(5, n_items)),
        # two items at least: a stratum's variance needs two, cross-fitting two folds
        **({"stratified AIPW + logistic": StratifiedAIPW(n_items, n_folds=min(5, n_items))} if n_items >= 2 else {}),
        "random + ridge": RandomLearn(n_items),
        "SSEPY strata + HT": StratifiedHT(n_items),
        "anchor-corr + weighted": AnchorCorr(n_items),
        "DISCO difference + ridge": DISCO(n_items, signature=sig),
        "DISCO PDS + kNN": DISCO(n_items, selection="pds", predictor="knn", estimate="signature", signature=sig),
        "DISCO PDS + RF": DISCO(n_items, selection="pds", predictor="rf", estimate="signature", signature=sig),
    }
    if binary:
        if irt:
            from ..irt import TinyBenchmarks  # lazy: effstats.irt imports this package

            # 1-D IRT (marginal ML): the dimension validation over 2/5/10/15 dimensions costs 4 multidimensional
            # fits (the folds keep the chosen dimension) and a multidimensional fit per fold; pass candidates=...
            # with TinyBenchmarks(n_dims="validate") to use it
            out["anchor-corr + gp-IRT"] = TinyBenchmarks(n_items, "anchor-corr", "gp-irt", n_dims=1)
        out["Sort & Search"] = _SortSearchDesign(n_items)
    if random_items:
        for name in ("anchor-corr + weighted", "DISCO PDS + kNN", "DISCO PDS + RF", "anchor-corr + gp-IRT"):
            out.pop(name, None)
    return out


class _SortSearchDesign(SortSearchDirect):
    """Sort & Search in the subset protocol with its design-based accuracy (the chooser's "Sort & Search").

    Items are sorted easy→hard by source-model correctness and one item is drawn at random from each of
    ``n_items`` equal cells of that order (:class:`~effstats.sortsearch.SortSearch` with ``sampling="stratified"``);
    a target's accuracy is the stratified mean of its evaluated items (``SearchResult.accuracy``: unbiased for
    every model under this design), with its design-based standard error and an interval at the design's effective
    sample size. :class:`SortSearchDirect` reports ``predicted_accuracy`` (``k / n`` of the DP-search prediction,
    the paper's figure) instead. Parameters as :class:`SortSearchDirect`; ``random_state`` draws the items.
    """

    interval_kind = "design"

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "_SortSearchDesign":
        from ..sortsearch import SortSearch

        src, _ = self._fit_source(source_outputs, source_scores, labels)
        y = src.correctness("source_outputs")
        if not is_zero_one(y):
            raise ValueError("source_outputs: Sort & Search needs binary correctness")
        y = y.astype(bool) if src.missing is None else np.where(src.missing, np.nan, y)
        self.sortsearch_ = SortSearch(sort=self.sort, sampling="stratified", random_state=self.random_state).fit(y)
        self._set_selected(self.sortsearch_.select(self.n_items))
        return self

    def _result(self, o):
        y = o.correctness("target_outputs")
        if not is_zero_one(y):
            raise ValueError("target_outputs: Sort & Search needs binary correctness on the selected items")
        y = y.astype(bool) if o.missing is None else np.where(o.missing, np.nan, y)
        with warnings.catch_warnings():  # missing target cells were reported by _target
            warnings.filterwarnings("ignore", message="responses: .*missing", category=UserWarning)
            return self.sortsearch_.predict(y, items=self.selected_)

    def _predict(self, o) -> np.ndarray:
        return np.asarray(self._result(o).accuracy, dtype=float)

    def _design_se(self, o) -> np.ndarray:
        return np.asarray(self._result(o).standard_error, dtype=float)

    def _design_n(self, o, minority) -> np.ndarray:
        """Effective sample size ``p̂(1 − p̂) / se²`` for Wilson's interval (Korn & Graubard 1998, as
        ``SearchResult.confidence_interval``); where undefined (p̂ ∈ {0, 1} or se = 0) the simple-random-sample
        size ``k / (1 − k/N)``, which also bounds it where one or two evaluated items differ from the rest (as
        :func:`~effstats.sortsearch.korn_graubard_interval` with ``minority``)."""
        r = self._result(o)
        p, se = np.asarray(r.accuracy, float), np.asarray(r.standard_error, float)
        k = (~o.missing).sum(axis=1) if o.missing is not None else np.full(len(p), len(self.selected_))
        n = self.n_items_total_
        with np.errstate(divide="ignore", invalid="ignore"):
            srs = np.where(k < n, k / (1 - k / n), np.inf)
            kish = p * (1 - p) / se**2
            kish = np.where(r.minority <= 2, np.minimum(kish, srs), kish)
        return np.where((se > 0) & (p > 0) & (p < 1), kish, srs)


class MethodChooser(_SubsetEstimator):
    """Pick the subset estimator with the smallest cross-validated error on the source models, for one budget.

    Every candidate (selection × predictor, tinyBenchmarks/IRT, Sort & Search, random + direct, ...) is fitted on
    the source models and cross-validated over them (``n_splits`` folds of source models; each fold refits the
    whole pipeline, selection included, and predicts the held-out sources' full-benchmark scores). No target
    model is used. The winner's cross-validated MAE is the expected error; its CV residuals also make the
    prediction intervals (:meth:`predict_interval`).

    Out of range: the model a user scores is often better than every source, where a learned estimator
    extrapolates (Zhang, Dorner & Hardt 2025). With ``extrapolation=True`` each candidate is also fitted on all
    but the best sources (the top tenth by score, at least two) and predicts those: ``top_mae``. The choice
    minimises the worse of the two errors, ``max(cv_mae, top_mae)``, so a candidate that is accurate in range
    but breaks on better models is not picked.

    Per target: a target outside the sources' range on the chosen items (``SubsetPrediction.out_of_range``), or
    whose estimate lies beyond the source models' scores (``score_range_``, the check ``effstats select --method
    auto`` applies, :func:`with_fallback`'s ``score_range``), gets, when the chosen candidate is model-based and a
    design-unbiased candidate (stratified AIPW, else AIPW, else random + direct; :func:`fallback_candidate`) drew
    the same random items, that candidate's estimate and interval instead (``fallback_``); the others keep the
    chosen candidate's. One ``UserWarning`` names the targets the
    fallback answers, and the result says per target which candidate made its number (``estimator``, a ``to_frame``
    column) and its interval kind (``interval_kinds``; ``method`` is ``"mixed"`` when both kinds occur).

    One-standard-error rule: a trusted ``reference`` method (by default stratified AIPW, the design-based estimator
    with the narrowest intervals, else random + direct) is kept unless the best candidate beats it by more than
    :math:`z` standard errors of their paired difference in absolute error over the held-out sources (Hastie,
    Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed., Springer 2009, Sect. 7.10), so the
    choice is never worse than the reference by more than CV noise. The best of :math:`K - 1` challengers is the
    smallest of :math:`K - 1` noisy errors (the winner's curse): :math:`z = \\Phi^{-1}(1 - \\Phi(-1) / (K - 1))`
    (Bonferroni) keeps the one-standard-error rule's chance of leaving an equally good reference, 16 %, whatever
    the number of candidates; one challenger gets :math:`z = 1`, the six of ``default_candidates(random_items=True)``
    :math:`z = 1.94`.

    Parameters
    ----------
    candidates : dict of name -> estimator, default=None
        Unfitted subset estimators; ``None``: :func:`default_candidates` for the source outputs' kind.
    n_items : int, default=100
        Budget; set on every candidate that has an ``n_items`` parameter.
    n_splits : int, default=5
        Folds of source models.
    reference : str or None, default="default"
        Candidate kept unless beaten by more than :math:`z` standard errors (``None``: plain argmin);
        ``"default"``: ``"stratified AIPW + logistic"`` when among the candidates, else ``"random + direct"`` when
        among them, else None.
    extrapolation : bool, default=True
        Also score every candidate on the best sources held out (``top_mae``) and choose by the worse of the two
        errors.
    random_state : int, RandomState, Generator or None
        Seeds the candidates. Every candidate with a ``random_state`` parameter gets the same derived integer,
        ``candidate_random_state_`` = ``np.random.default_rng(random_state).integers(2**31 - 1)`` (None stays None),
        not ``random_state`` itself: the chooser's DISCO equals ``DISCO(..., random_state=ch.candidate_random_state_)``,
        which :func:`effstats.workflow.select` relies on to refit the chosen candidate alone. The folds are the same
        for every candidate (a paired comparison) and do not depend on it.

    Notes
    -----
    Intervals (:meth:`predict_interval`) are the chosen candidate's own: design-based for random + direct, AIPW,
    stratified AIPW, the SSEPY strata and Sort & Search (the candidates whose ``interval_kind`` is ``"design"``);
    normalised conformal for DISCO's defaults (scaled per model by the standard error of its mean on the selected
    items); plain conformal (one cross-validated residual quantile for every target) for the others (random +
    ridge, anchor points, DISCO's PDS configurations, tinyBenchmarks).

    Attributes
    ----------
    interval_kind : str
        ``"chosen"`` (class attribute): the interval is the chosen candidate's (``best_estimator_.interval_kind``),
        and the design-based fallback's (``fallback_``) for targets outside the source models' range.
    best_ : str
    reference_ : str or None
        The candidate kept unless clearly beaten (``reference`` resolved).
    best_estimator_ : fitted estimator
    estimators_ : dict of name -> fitted estimator (each with its cached CV predictions)
    cv_results_ : DataFrame
        One row per candidate: cv_mae, cv_mae_se, cv_spearman, and with ``extrapolation`` top_mae and top_mae_se
        (the best sources held out: a tenth of the sources, so a noisy number) and criterion (the larger of cv_mae
        and top_mae).
    expected_error_ : float
        The winner's cross-validated MAE (percentage points).
    fallback_ : str or None
        The design-unbiased candidate used for out-of-range targets (None: no candidate drew the chosen one's
        items, or the chosen one is design-based).
    candidate_random_state_ : int or None
        The ``random_state`` every candidate was fitted with.
    score_range_ : (float, float)
        The smallest and largest source score: a target whose chosen estimate lies beyond them gets the fallback's.
    selected_ : the winner's selected items

    See Also
    --------
    effstats.disco.default_candidates : the default candidates.
    effstats.disco.compare_methods : every candidate and the chooser scored on target models.

    References
    ----------
    .. [1] Zhang, G., Dorner, F. E., & Hardt, M. (2025). How Benchmark Prediction from Fewer Data Misses the Mark.
       *Advances in Neural Information Processing Systems* (NeurIPS 2025), arXiv:2506.07673.
    .. [2] Hastie, T., Tibshirani, R., & Friedman, J. (2009). *The Elements of Statistical Learning*, 2nd ed.,
       Springer, Sect. 7.10.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import MethodChooser, RandomDirect, RandomLearn
    >>> rm = simulate_responses(60, 400, rng=0)
    >>> src = rm.subset(models=range(50))
    >>> cands = {"random + direct": RandomDirect(40), "random + ridge": RandomLearn(40)}
    >>> ch = MethodChooser(cands, n_items=40, random_state=0).fit(src)
    >>> ch.cv_results_[["cv_mae", "top_mae"]].round(2)   # the ridge wins in range, loses on the best sources
                     cv_mae  top_mae
    method
    random + direct    7.74     5.85
    random + ridge     6.25    10.15
    >>> ch.best_
    'random + direct'
    """

    interval_kind = "chosen"

    def __init__(
        self,
        candidates: Mapping[str, Any] | None = None,
        n_items: int = 100,
        n_splits: int = 5,
        reference: str | None = "default",
        extrapolation: bool = True,
        random_state: Any = None,
    ) -> None:
        self.candidates = candidates
        self.n_items = n_items
        self.n_splits = n_splits
        self.reference = reference
        self.extrapolation = extrapolation
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None,
            progress: bool = False) -> "MethodChooser":
        """Score every candidate by cross-validation over the source models and refit the best on all of them.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array
            The source models' outputs on all items (probabilities, class ids with ``labels``, or correctness /
            graded scores in [0, 1]).
        source_scores : array of shape (n_source,), optional
            The sources' benchmark scores (default: their mean correctness).
        labels : array of shape (n_items_total,), optional
            True classes, for class ids or probabilities.
        progress : bool, default=False
            A text progress bar over candidates and folds.

        Returns
        -------
        self : MethodChooser
            The fitted chooser (``best_``, ``cv_results_``, ``best_estimator_``).

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import MethodChooser, RandomDirect
        >>> src = simulate_responses(30, 300, rng=0)
        >>> ch = MethodChooser({"random + direct": RandomDirect(30)}, n_items=30, random_state=0).fit(src)
        >>> ch.best_, ch.selected_.shape
        ('random + direct', (30,))
        """
        src, scores = self._fit_source(source_outputs, source_scores, labels)
        n_splits = check_positive_int(self.n_splits, "n_splits", minimum=2)
        cands = self.candidates
        if cands is None:
            # 0 at missing cells
            binary = src.labels is not None or (src.correct is not None
                                                and is_zero_one(src.correct))
            cands = default_candidates(self.n_items, binary=binary, probabilities=src.proba is not None)
        if not isinstance(cands, Mapping) or not cands:
            raise ValueError("candidates: expected a non-empty dict of name -> subset estimator")
        bad = [str(k) for k, v in cands.items() if not (hasattr(v, "get_params") and hasattr(v, "fit"))]
        if bad:
            raise InputTypeError(f"candidates: expected subset estimators as values, got "
                                 f"{type(cands[bad[0]]).__name__} for {_name_list(bad)}")
        reference = self.reference
        if isinstance(reference, str) and reference == "default":
            reference = next((r for r in ("stratified AIPW + logistic", "random + direct") if r in cands), None)
        elif reference is not None and reference not in cands:
            raise ValueError(f"reference: {reference!r} is not among the candidates {list(cands)}")
        seed = None if self.random_state is None else int(check_rng(self.random_state,
                                                                    "random_state").integers(2**31 - 1))
        self.candidate_random_state_ = seed
        cv_seed = 0  # the same folds for every candidate (paired comparison) and for their intervals
        items = list(cands.items())
        if progress:
            from tqdm import tqdm  # text bars: widget bars need a live front end (nbclient rejects their comms)

            items = tqdm(items, desc="candidates", leave=False)
        top = _top_sources(scores) if check_flag(self.extrapolation, "extrapolation") else None
        self.estimators_, rows, oof, top_pred = {}, [], {}, {}
        for name, cand in items:
            est = clone(cand)
            params = est.get_params()
            if "n_items" in params:
                est.set_params(n_items=self.n_items)
            if "random_state" in params:
                est.set_params(random_state=seed)
            with warnings.catch_warnings():  # missing source cells were reported once, by this fit
                _quiet_missing()
                est.fit(src, None if source_scores is None else scores)
            pred = est._cross_validated(n_splits, cv_seed)
            self.estimators_[name] = est
            oof[name] = pred
            err = 100 * np.abs(pred - scores)
            rho = stats.spearmanr(pred, scores)[0] if np.ptp(pred) > 0 and np.ptp(scores) > 0 else 0.0
            row = {"method": name, "cv_mae": err.mean(), "cv_mae_se": err.std(ddof=1) / np.sqrt(len(err)),
                   "cv_spearman": rho}
            if top is not None:
                top_pred[name] = _held_out_top(est, src, scores, top, source_scores is None)
                top_err = 100 * np.abs(top_pred[name] - scores[top])
                row["top_mae"] = float(top_err.mean())
                row["top_mae_se"] = float(top_err.std(ddof=1) / np.sqrt(len(top_err)))
            rows.append(row)
        res = pd.DataFrame(rows).set_index("method")
        res["criterion"] = res[["cv_mae", "top_mae"]].max(axis=1) if top is not None else res["cv_mae"]
        best = str(res["criterion"].idxmin())
        if reference is not None and best != reference:
            d = 100 * (np.abs(oof[reference] - scores) - np.abs(oof[best] - scores))
            if top is not None:
                d = np.concatenate([d, 100 * (np.abs(top_pred[reference] - scores[top])
                                              - np.abs(top_pred[best] - scores[top]))])
            z = stats.norm.isf(stats.norm.sf(1.0) / (len(cands) - 1))  # Bonferroni over the challengers
            if d.mean() <= z * d.std(ddof=1) / np.sqrt(len(d)):
                best = reference
        res["chosen"] = res.index == best
        self.cv_results_ = res
        self.best_ = best
        self.reference_ = reference
        self.best_estimator_ = self.estimators_[best]
        self.expected_error_ = float(res.loc[best, "cv_mae"])
        self.fallback_ = fallback_candidate(self.estimators_, best)
        self.score_range_ = (float(np.min(scores)), float(np.max(scores)))
        self._set_selected(self.best_estimator_.selected_)
        self.item_ids_ = self.best_estimator_.item_ids_
        self.selected_ids_ = self.best_estimator_.selected_ids_
        return self

    def predict(self, target_outputs: Any, *, items: Any = None) -> np.ndarray:
        """The chosen estimator's predictions (its selected items; see its ``predict``); for targets out of range
        (as in :meth:`predict_interval`) the fallback's when there is one.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame, Series or array
            The targets' outputs on the chosen estimator's selected items (``selected_``), aligned by item id as in
            :meth:`effstats.disco.AIPW.predict`.
        items : sequence, optional
            Item ids of the columns of an array ``target_outputs``.

        Returns
        -------
        ndarray of shape (n_target,)
            The estimated scores.
        """
        check_is_fitted(self, "best_estimator_")
        if self.fallback_ is not None:
            return self._interval(target_outputs, items, None, stacklevel=4).statistic
        if _takes_items(self.best_estimator_):
            return self.best_estimator_.predict(target_outputs, items=items)
        return self.best_estimator_.predict(target_outputs)

    def predict_interval(self, target_outputs: Any, *, items: Any = None,
                         n_splits: int | None = None) -> SubsetPrediction:
        """The chosen estimator's predictions with intervals; targets out of range get the fallback's (see
        ``fallback_``): outside the source models' range on the selected items, or with an estimate beyond their
        scores (``score_range_``).

        When some target falls back, one ``UserWarning`` names those targets and the result says per target which
        candidate made its number: ``estimator`` (``best_``, or ``fallback_`` followed by
        ``" (out-of-range fallback)"``), ``interval_kinds`` (``"conformal"`` or ``"design"``), and ``method`` is
        the kind shared by every target, or ``"mixed"``; :meth:`~effstats.disco.SubsetPrediction.to_frame` has the
        columns ``out_of_range`` and ``estimator``.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame, Series or array
            The targets' outputs, as for :meth:`predict`.
        items : sequence, optional
            Item ids of the columns of an array ``target_outputs``.
        n_splits : int, default=None
            Folds of the conformal intervals' cross-validation; None: the chooser's ``n_splits``.

        Returns
        -------
        SubsetPrediction
            One entry per target (a :class:`effstats.disco.FallbackPrediction` when some target falls back).
        """
        return self._interval(target_outputs, items, n_splits, stacklevel=4)

    def _interval(self, target_outputs: Any, items: Any, n_splits: int | None, stacklevel: int) -> SubsetPrediction:
        """``predict_interval``; ``stacklevel`` of the fallback's warning, counted from ``_with_fallback``."""
        check_is_fitted(self, "best_estimator_")
        k = self.n_splits if n_splits is None else n_splits
        if self.fallback_ is None:
            return self.best_estimator_.predict_interval(target_outputs, items=items, n_splits=k)
        return _with_fallback(
            lambda: self.best_estimator_.predict_interval(target_outputs, items=items, n_splits=k),
            lambda: (self.fallback_, self.estimators_[self.fallback_].predict_interval(target_outputs, items=items,
                                                                                       n_splits=k)),
            self.best_, stacklevel, score_range=self.score_range_)


FALLBACK_SUFFIX = " (out-of-range fallback)"


def with_fallback(chosen: Callable[[], SubsetPrediction],
                  fallback: Callable[[], tuple[str, SubsetPrediction] | None], chosen_name: str, *,
                  score_range: tuple[float, float] | None = None) -> SubsetPrediction:
    """One estimator's predictions, with a design-based estimator's for the targets it flags out of range.

    :class:`effstats.disco.MethodChooser` answers this way for its chosen candidate (see its ``fallback_``);
    this function does the same for any pair, for instance a model-based estimator refitted alone and the
    design-based candidate that drew the same random items (:func:`effstats.disco.fallback_candidate`).

    Parameters
    ----------
    chosen : callable
        Called without arguments, returns the chosen estimator's :class:`effstats.disco.SubsetPrediction` (its
        ``predict_interval``), whose ``out_of_range`` flags the targets outside the source models' range.
    fallback : callable
        Called without arguments, and only when some target is flagged (so a fit it needs is skipped otherwise):
        returns ``(name, prediction)``, a design-based estimator's prediction for the same targets on the same
        items, or None when there is no such estimator (the chosen one's predictions then stand).
    chosen_name : str
        The chosen estimator's name, for the warning and the result's ``estimator``.
    score_range : (float, float), optional
        The source models' lowest and highest full-benchmark scores. A target whose chosen estimate lies outside
        them is flagged too, though its results on the selected items lie within the source models': the chosen
        estimator extrapolates there as well (its estimate says the target is unlike every source model). None
        (default): only the chosen estimator's own flags count.

    Returns
    -------
    SubsetPrediction or FallbackPrediction
        ``chosen()``'s prediction when no target is flagged or ``fallback()`` returns None, else a
        :class:`effstats.disco.FallbackPrediction` holding both; its ``out_of_range`` flags the targets of either
        check.

    Warns
    -----
    UserWarning
        Naming the targets the fallback answers; the chosen estimator's own warning that they lie out of range
        is dropped (its estimate is not the one reported for them).

    See Also
    --------
    effstats.disco.MethodChooser.predict_interval : the chooser's predictions, made this way.

    Examples
    --------
    >>> import warnings
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AIPW, RandomLearn, with_fallback
    >>> rm = simulate_responses(60, 400, rng=0)
    >>> best = rm.accuracy().argsort().to_numpy()  # ascending: the targets are the five best models
    >>> src, tgt = rm.subset(models=best[:55]), rm.subset(models=best[55:])
    >>> ridge, aipw = RandomLearn(40, random_state=1).fit(src), AIPW(40, random_state=1).fit(src)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     p = with_fallback(lambda: ridge.predict_interval(tgt), lambda: ("AIPW", aipw.predict_interval(tgt)),
    ...                       "random + ridge")
    >>> p.out_of_range  # two lie outside the source models' range on the 40 items
    array([ True,  True, False, False, False])
    >>> p.estimator[:3]  # doctest: +NORMALIZE_WHITESPACE
    array(['AIPW (out-of-range fallback)', 'AIPW (out-of-range fallback)', 'random + ridge'], dtype=object)

    With ``score_range``, a target in range on the selected items whose estimate lies beyond the source models'
    scores falls back too:

    >>> import numpy as np
    >>> from effstats.disco import SubsetPrediction
    >>> ridge = SubsetPrediction(np.array([0.62, 0.83]), np.array([0.03, 0.03]), "conformal",
    ...                          out_of_range=np.array([False, False]))
    >>> aipw = SubsetPrediction(np.array([0.60, 0.78]), np.array([0.05, 0.04]), "design")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     p = with_fallback(lambda: ridge, lambda: ("AIPW", aipw), "ridge", score_range=(0.35, 0.80))
    >>> p.statistic, p.out_of_range
    (array([0.62, 0.78]), array([False,  True]))
    """
    if not callable(chosen):
        raise InputTypeError(f"chosen: expected a callable returning a SubsetPrediction, got {type(chosen).__name__}")
    if not callable(fallback):
        raise InputTypeError(f"fallback: expected a callable returning (name, SubsetPrediction) or None, got "
                             f"{type(fallback).__name__}")
    if not isinstance(chosen_name, str):
        raise InputTypeError(f"chosen_name: expected a str, got {type(chosen_name).__name__}")
    if score_range is not None:
        bounds = check_array(score_range, "score_range", ndim=1, shape=(2,))
        if not (0 <= bounds[0] <= bounds[1] <= 1):
            raise ValueError(f"score_range: expected (low, high) with 0 <= low <= high <= 1, got "
                             f"{_plain(list(bounds))}")
        score_range = (float(bounds[0]), float(bounds[1]))
    return _with_fallback(chosen, fallback, chosen_name, stacklevel=3, score_range=score_range)


def _with_fallback(chosen: Any, fallback: Any, chosen_name: str, stacklevel: int = 3,
                   score_range: tuple[float, float] | None = None) -> SubsetPrediction:
    """:func:`with_fallback` without its checks; ``stacklevel`` of the fallback's warning, counted from here."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = chosen()
    if not isinstance(p, SubsetPrediction):
        raise ValueError(f"chosen: expected it to return a SubsetPrediction, got {type(p).__name__}")
    own = np.zeros(len(p.statistic), bool) if p.out_of_range is None else np.asarray(p.out_of_range, bool)
    beyond = np.zeros_like(own)
    if score_range is not None:  # the same tolerance as the workflow's flag of an estimate beyond the scores
        est = np.asarray(p.statistic, float)
        beyond = (est < score_range[0] - 1e-12) | (est > score_range[1] + 1e-12)
    flags = own | beyond
    got = fallback() if flags.any() else None
    if got is not None and not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], SubsetPrediction)
                                and len(got[1].statistic) == len(p.statistic)):
        raise ValueError("fallback: expected it to return None or (name, SubsetPrediction) for the same targets, got "
                         f"{type(got).__name__}")
    for w in caught:  # where the fallback answers for the flagged targets, their extrapolation warning is moot
        if got is None or "outside the source models' range" not in str(w.message):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if got is None:
        return p
    name, q = str(got[0]), got[1]
    ids = p.model_ids if p.model_ids is not None else [f"target {j}" for j in range(len(flags))]
    shown = [str(m) for m, f in zip(ids, flags) if f]
    where = "on the selected items"
    if beyond.any():  # flagged by the score check (the chosen estimator's own flag may include it)
        where = (f"{'on the selected items or ' if own.any() else ''}of scores "
                 f"[{score_range[0]:.4f}, {score_range[1]:.4f}] (by their estimates)")
    warnings.warn(
        f"target_outputs: {len(shown)} target model(s) lie outside the source models' range {where} "
        f"({_flagged_names(shown)}): their estimates and intervals are {name}'s "
        f"(design-unbiased, on the same items), not {chosen_name}'s, which would extrapolate there",
        UserWarning, stacklevel=stacklevel)
    kinds = np.where(flags, q.method, p.method)
    return FallbackPrediction(
        np.where(flags, q.statistic, p.statistic), np.where(flags, q.standard_error, p.standard_error),
        str(kinds[0]) if len(set(kinds)) == 1 else "mixed", p.residuals, p.bounds, p.model_ids,
        n_missing=p.n_missing, n_missing_target=p.n_missing_target, out_of_range=flags, chosen=p, fallback=q,
        estimator=np.where(flags, name + FALLBACK_SUFFIX, chosen_name).astype(object),
        interval_kinds=kinds.astype(object), chosen_name=chosen_name, fallback_name=name)


@dataclass(frozen=True)
class FallbackPrediction(SubsetPrediction):
    """Predictions of a chosen estimator, with a design-based fallback's for the targets out of range.

    What :meth:`effstats.disco.MethodChooser.predict_interval` and :func:`effstats.disco.with_fallback` return
    when some target lies outside the source models' range on the selected items (``out_of_range``) and a
    design-based estimator drew the same items: those targets (``fell_back``) get the fallback's estimate and
    interval, the others keep the chosen estimator's. The attributes of
    :class:`effstats.disco.SubsetPrediction`, and:

    Attributes
    ----------
    chosen, fallback : SubsetPrediction
        The two estimators' predictions for every target.
    estimator : ndarray of object, shape (n_target,)
        The estimator that made each target's number: ``chosen_name``, or ``fallback_name`` followed by
        ``" (out-of-range fallback)"``.
    interval_kinds : ndarray of object, shape (n_target,)
        Each target's interval kind (``"conformal"`` or ``"design"``); ``method`` is their common kind, or
        ``"mixed"``.
    chosen_name, fallback_name : str
        The two estimators' names.
    fell_back : ndarray of bool, shape (n_target,)
        The targets whose estimate and interval are the fallback's.

    See Also
    --------
    effstats.disco.with_fallback : makes it.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from effstats.disco import SubsetPrediction, with_fallback
    >>> ridge = SubsetPrediction(np.array([0.62, 0.97]), np.array([0.03, 0.03]), "conformal",
    ...                          residuals=np.linspace(0.01, 0.05, 9), out_of_range=np.array([False, True]))
    >>> aipw = SubsetPrediction(np.array([0.60, 0.91]), np.array([0.05, 0.04]), "design")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     p = with_fallback(lambda: ridge, lambda: ("AIPW", aipw), "ridge")
    >>> p.statistic, p.fell_back, p.method
    (array([0.62, 0.91]), array([False,  True]), 'mixed')
    >>> p.to_frame(0.9)[["estimate", "low", "high", "estimator"]].round(3)
       estimate    low   high                     estimator
    0      0.62  0.570  0.670                         ridge
    1      0.91  0.844  0.976  AIPW (out-of-range fallback)
    """

    chosen: SubsetPrediction | None = field(default=None, repr=False)
    fallback: SubsetPrediction | None = field(default=None, repr=False)
    estimator: np.ndarray | None = None
    interval_kinds: np.ndarray | None = None
    chosen_name: str = ""
    fallback_name: str = ""

    @property
    def fell_back(self) -> np.ndarray:
        """Bool array of shape (n_target,): the targets whose estimate and interval are the fallback's."""
        return np.asarray(self.out_of_range, dtype=bool)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for each target's full-benchmark score: the fallback's for the targets out of range, the
        chosen estimator's for the others.

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, arrays of shape (n_target,).
        """
        a = self.chosen.confidence_interval(confidence_level)
        b = self.fallback.confidence_interval(confidence_level)
        m = self.fell_back
        return ConfidenceInterval(np.where(m, b.low, a.low), np.where(m, b.high, a.high))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """As :meth:`effstats.disco.SubsetPrediction.to_frame`, with the ``estimator`` of each target.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the ``low`` / ``high`` interval, in (0, 1).

        Returns
        -------
        DataFrame
            One row per target: estimate, standard_error, low, high, out_of_range and estimator.
        """
        out = super().to_frame(confidence_level)
        out["estimator"] = self.estimator
        return out


_PerTarget = FallbackPrediction  # the name results were pickled under


def fallback_candidate(estimators: Mapping[str, Any], best: str) -> str | None:
    """The design-based candidate that answers for ``best`` out of the source models' range.

    A fitted :class:`effstats.disco.StratifiedAIPW` that drew the same items as ``best``, else such an
    :class:`effstats.disco.AIPW`, else such a :class:`effstats.disco.RandomDirect`; None when ``best`` is
    design-based itself (``interval_kind == "design"``: its interval holds out of range) or no candidate drew its
    items.

    A design-based interval holds for the design that drew the items, so the fallback must have drawn exactly
    ``best``'s items (``selected_``): a StratifiedAIPW answers only for an estimator fitted on its stratified
    draw (a model-based estimator given its ``selected_``, e.g. ``DISCO(selection=...)``), never on uniformly
    random items, whose strata would be over- or under-represented. :class:`effstats.disco.MethodChooser`'s
    model-based candidates draw their items uniformly at random, so their fallback there is AIPW on the same
    items; where StratifiedAIPW beats them and AIPW in the chooser's cross-validation it is the pick itself, and
    answers every target, out of range too, with its own design-based interval.

    Parameters
    ----------
    estimators : dict of str to fitted subset estimator
        Candidates by name, ``best`` among them (as a fitted :class:`effstats.disco.MethodChooser`'s ``estimators_``).
    best : str
        The chosen candidate's name.

    Returns
    -------
    str or None
        The fallback's name.

    See Also
    --------
    effstats.disco.with_fallback : predictions with the fallback's for the targets out of range.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AIPW, RandomLearn, fallback_candidate
    >>> src = simulate_responses(30, 200, rng=0)
    >>> fitted = {"ridge": RandomLearn(20, random_state=1).fit(src), "aipw": AIPW(20, random_state=1).fit(src)}
    >>> fallback_candidate(fitted, "ridge"), fallback_candidate(fitted, "aipw")
    ('aipw', None)

    A StratifiedAIPW answers for an estimator on its own stratified items only:

    >>> from effstats.disco import DISCO, StratifiedAIPW
    >>> strat = StratifiedAIPW(20, random_state=1).fit(src)
    >>> fitted["stratified"] = strat
    >>> fitted["disco on strata"] = DISCO(20, selection=strat.selected_, random_state=1).fit(src)
    >>> fallback_candidate(fitted, "disco on strata"), fallback_candidate(fitted, "ridge")
    ('stratified', 'aipw')
    """
    if not isinstance(estimators, Mapping) or not estimators:
        raise ValueError(f"estimators: expected a non-empty dict of name -> fitted subset estimator, got "
                         f"{type(estimators).__name__}")
    unfitted = [str(k) for k, v in estimators.items() if getattr(v, "selected_", None) is None]
    if unfitted:
        raise ValueError(f"estimators: {_name_list(unfitted)} are not fitted subset estimators (no selected_)")
    if not isinstance(best, str) or best not in estimators:
        raise ValueError(f"best: expected one of the estimators' names {_name_list(list(estimators))}, got {best!r}")
    from ._aipw import AIPW
    from ._baselines import RandomDirect
    from ._stratified_aipw import StratifiedAIPW

    chosen = estimators[best]
    if getattr(chosen, "interval_kind", "conformal") == "design":
        return None
    # the narrowest interval first: strata and a regression correction, then the correction alone (benchmarks/
    # estimator_gain.py: StratifiedAIPW 0.47-0.98x the plain mean's MAE on ImageNet, CIFAR-10, digits and AlpacaEval,
    # AIPW 0.69-0.97x). Exact classes and identical items: each interval is valid for its own design's draw only
    for kind in (StratifiedAIPW, AIPW, RandomDirect):
        for name, est in estimators.items():
            if type(est) is kind and np.array_equal(est.selected_, chosen.selected_):
                return name
    return None


def _top_sources(scores: np.ndarray) -> np.ndarray | None:
    """Positions of the best tenth of the source models by score (at least 2), or None when fewer than 6
    sources would remain to fit on."""
    n_top = max(2, int(np.ceil(0.1 * len(scores))))
    if len(scores) - n_top < 6:
        return None
    return np.sort(np.argsort(-scores, kind="stable")[:n_top])


def _held_out_top(est: Any, src: Any, scores: np.ndarray, top: np.ndarray, default_scores: bool) -> np.ndarray:
    """``est`` refitted on the sources outside ``top`` and its predictions of the ``top`` sources' scores."""

    rest = np.setdiff1d(np.arange(len(scores)), top)
    e = clone(est)
    with warnings.catch_warnings():
        _quiet_missing()
        e.fit(_fold(src, rest), None if default_scores else scores[rest])
        pred = e.predict(_fold(src, top))
    return np.where(np.isnan(pred), scores[rest].mean(), pred)


def _takes_items(est: Any) -> bool:
    import inspect

    return "items" in inspect.signature(est.predict).parameters

