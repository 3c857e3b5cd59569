"""Baselines in DISCO's protocol: random + direct, anchor points, SSEPY-style strata, Sort & Search.

References
----------
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (the design-based variances below).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .._outputs import _impute, _item_groups
from .._subset import _collapsed_strata, _collapsed_weights, _SubsetEstimator, _weighted_anchors
from .._validation import check_option, check_positive_int, check_rng, is_zero_one
from .._subset import _first_per_group
from ._aipw import _stratified_variance
from ._selection import select_random


_FIT_DOC = """Select the items from the source models' outputs.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array
            The source models' outputs on all items: correctness (bool, float or integer 0/1), class
            probabilities, or class ids with ``labels``.
        source_scores : array of shape (n_source,), optional
            Unused (kept for the protocol).
        labels : int array of shape (n_items_total,), optional
            True classes, for class ids or probabilities; an integer array given with ``labels`` is class ids.

        Returns
        -------
        self : {cls}
            The fitted estimator.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import {cls}
        >>> est = {cls}(n_items=20{extra}).fit(simulate_responses(30, 200, rng=1))
        >>> len(est.selected_) <= 20
        True
        """


def _fit_doc(extra: str = "") -> Any:
    """Class decorator: the baseline's ``fit`` gets the docstring every baseline shares (``_FIT_DOC``)."""

    def decorate(cls: Any) -> Any:
        cls.fit.__doc__ = _FIT_DOC.format(cls=cls.__name__, extra=extra)
        return cls

    return decorate


@_fit_doc()
class RandomDirect(_SubsetEstimator):
    """Baseline: k uniformly random items (optionally stratified) and the target's accuracy on them.

    The estimate is the target's mean on the drawn items; ``predict_interval`` gives the design-based
    interval of a simple random sample without replacement (Wilson's score interval on 0/1 correctness, at the
    finite-population-corrected sample size; Student's t on ``k - 1`` degrees of freedom for graded scores).

    Parameters
    ----------
    n_items : int, default=100
        Items drawn, at most the number of items.
    stratify : str, array of shape (n_items_total,), or None, default=None
        Item groups (a column of the source ``items`` table, or an array): equal numbers of items per group.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the draw.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` (class attribute): the interval comes from the random draw of the items, so it holds for every
        model, also one outside the source models' range.
    selected_ : ndarray of int, shape (n_items,)
        Drawn item positions, ascending.
    selected_ids_ : Index or None
        Their ids, when fitted on labelled outputs.
    n_items_total_ : int
        Items in the source outputs.
    n_missing_ : int
        Missing cells in the source outputs.

    See Also
    --------
    effstats.disco.AIPW : the same items with a regression correction from the source models.
    effstats.disco.StratifiedHT : strata on the source models' difficulty.
    effstats.disco.DISCO : a model of the score from the outputs on the items.

    Notes
    -----
    A target whose drawn 0/1 responses are all alike (every one right, or every one wrong) gets the exact
    (hypergeometric) interval of its count instead of Wilson's, which is narrower than exact near a census and
    there covers less than it claims: at 120 of 400 items every one right, [0.975, 1] against Wilson's
    [0.978, 1] (Buonaccorsi 1987). With ``stratify`` (equal numbers per group, a stratified simple random
    sample) it is the exact interval of such a sample all alike: the worst placement of the wrong items among
    the groups (as :class:`effstats.disco.StratifiedAIPW`'s); one to five minority responses (wrong items of a
    target mostly right) get at least the limit of their worst placement on the side towards all alike.

    Missing cells: items no source model answered are never drawn; a target without outputs on some drawn items
    is estimated by its mean over the others (a smaller simple random sample when the cells are missing at
    random), with the standard error and Wilson interval at that smaller size; with ``stratify``, a group where a
    target has no output on any drawn item is collapsed with its nearest group in the groups' sorted order that has
    one (the lower, when two are equally near): that group's mean counts with both groups' shares of the drawn
    items, with a ``UserWarning`` naming the targets, the group, its neighbour and its items (its missing results
    are assumed like the neighbour's answered ones).

    References
    ----------
    .. [1] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley, Thm 2.2.
    .. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. *Journal
       of the American Statistical Association* 22(158), 209–212.
    .. [3] Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
       American Statistician* 41(3), 215–218.

    Examples
    --------
    >>> from effstats.disco import RandomDirect
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = RandomDirect(n_items=30, random_state=0).fit(src)
    >>> est.predict(tgt)[:3].round(3)
    array([0.3  , 0.333, 0.533])
    >>> ci = est.predict_interval(tgt).confidence_interval(0.9)
    >>> ci.low[:3].round(3), ci.high[:3].round(3)
    (array([0.189, 0.216, 0.394]), array([0.441, 0.476, 0.668]))
    """

    def __init__(self, n_items: int = 100, stratify: Any = None, random_state: Any = None) -> None:
        self.n_items = n_items
        self.stratify = stratify
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "RandomDirect":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        groups = _item_groups(self.stratify, src)
        rng = check_rng(self.random_state, "random_state")
        self._set_selected(self._select_answered(
            lambda n, g: select_random(n, self.n_items, groups=g, rng=rng), src, groups))
        # the groups of the items some source model answered (the population drawn from): their sizes and the
        # drawn items' groups, for the exact interval of a stratified draw all alike
        pop = np.arange(src.n_items) if self._answered is None else self._answered
        codes = np.zeros(src.n_items, dtype=int)
        if groups is not None:
            codes[pop] = pd.factorize(pd.Series(groups[pop]), sort=True)[0]
        self._strata = (np.bincount(codes[pop]), codes[self.selected_])
        return self

    interval_kind = "design"
    # random items need no differences between the source models: it stays usable on a task every source model
    # gets right (or wrong) throughout
    _needs_contrast = False

    def _selected_strata(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self._strata if len(self._strata[0]) > 1 else None

    def _predict(self, o) -> np.ndarray:
        mean = o.model_means("target_outputs")
        design = self._selected_strata()
        if o.missing is None or design is None:
            return mean
        # a group without an observed item: its drawn share of the mean goes to its nearest group's (collapsed
        # strata, class Notes)
        h_sel = design[1]
        onehot = np.eye(len(design[0]))[h_sel]
        obs = ~o.missing
        n_h = obs.astype(float) @ onehot
        drawn = onehot.sum(axis=0)
        empty = ((n_h == 0) & (drawn > 0)).any(axis=1)
        if not empty.any():
            return mean
        w = _collapsed_weights(drawn / drawn.sum(), (n_h > 0) | (drawn == 0))
        y = np.where(obs, o.correctness("target_outputs"), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            collapsed = (w * np.nan_to_num((y @ onehot) / n_h)).sum(axis=1)
        return np.where(empty, collapsed, mean)

    def _design_se(self, o) -> np.ndarray:
        """Standard error of a k-item simple random sample mean from N items: ``sqrt(s²/k · (1 − k/N))``
        (Cochran 1977, Thm 2.2; ``s²`` the target's sample variance on the k items). With stratified
        selection the strata get equal numbers, so this is an approximation there."""
        y = o.correctness("target_outputs")
        k, n = y.shape[1], self.n_items_total_
        if o.missing is not None:  # each target's observed items: a sample of k_m items
            obs = ~o.missing
            k = obs.sum(axis=1)
            dev = np.where(obs, y - o.model_means("target_outputs")[:, None], 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                s2 = np.where(k > 1, (dev**2).sum(axis=1) / (k - 1), 0.25)
            return np.sqrt(s2 / k * (1 - k / n))
        s2 = y.var(axis=1, ddof=1) if k > 1 else np.full(len(y), 0.25)
        return np.sqrt(s2 / k * (1 - k / n))

    def _design_df(self, o) -> np.ndarray:
        """Degrees of freedom of the sample variance, ``k - 1`` per target (k its observed drawn items): Student's t
        for graded scores (0/1 correctness takes Wilson's interval); infinite for one item, whose variance is the
        bound 1/4, not an estimate."""
        k = np.full(o.n_models, float(o.n_items)) if o.missing is None else (~o.missing).sum(axis=1).astype(float)
        return np.where(k > 1, k - 1, np.inf)

    def _design_srs(self, o) -> tuple[np.ndarray, np.ndarray]:
        """Observed drawn items per target and group, and the groups' sizes, shape (n_target, n_groups) (one group
        without ``stratify``): a target's 0/1 responses all alike get the exact interval of a stratified simple
        random sample all alike, the hypergeometric one of its count without ``stratify`` (class Notes)."""
        sizes, h_sel = self._strata
        seen = np.ones((o.n_models, o.n_items), bool) if o.missing is None else ~o.missing
        k_h = seen.astype(float) @ np.eye(len(sizes))[h_sel]
        return k_h, np.broadcast_to(sizes.astype(float), k_h.shape)

    def _design_n(self, o, minority) -> np.ndarray:
        """Finite-population-corrected sample size ``k / (1 − k/N)`` per target, for Wilson's interval on 0/1
        correctness (inf when every item was sampled); k counts the target's observed selected items."""
        n = self.n_items_total_
        if o.missing is not None:
            k = (~o.missing).sum(axis=1).astype(float)
            with np.errstate(divide="ignore"):
                return np.where(k < n, k / (1 - k / n), np.inf)
        k = len(self.selected_)
        return np.full(o.correctness("target_outputs").shape[0], k / (1 - k / n) if k < n else np.inf)


@_fit_doc()
class AnchorCorr(_SubsetEstimator):
    """Anchor-corr (Vivek et al. 2024; Polo et al. 2024): cluster items by source-model correctness.

    Items are embedded by their correctness vector over the source models and clustered with k-means
    into ``n_items`` clusters; the item nearest each centroid is the anchor and the estimate is the
    weighted sum ``Σ_k w_k s_k`` with ``w_k`` the cluster's share of items (the tinyBenchmarks
    reference implementation). Two centroids may share a nearest item; its weights then add up.

    Parameters
    ----------
    n_items : int, default=100
        Clusters (anchors), at most the number of items.
    random_state : int, RandomState, Generator or None, default=None
        Seeds k-means.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    selected_ : ndarray of int
        Anchor item positions, ascending (fewer than ``n_items`` when centroids share a nearest item).
    selected_ids_ : Index or None
        Their ids, when fitted on labelled outputs.
    weights_ : ndarray
        Share of the items each anchor represents (one per selected item); they sum to 1.
    anchor_means_ : ndarray
        The source models' mean on each anchor (over those that answered it), in ``selected_`` order; it stands in
        for a target's missing output there.
    n_items_total_ : int
        Items in the source outputs.
    n_missing_ : int
        Missing cells in the source outputs.

    See Also
    --------
    effstats.irt.TinyBenchmarks : the same anchors with IRT estimates (p-IRT, gp-IRT).
    effstats.disco.RandomDirect : random items and their plain mean.
    effstats.disco.DISCO : items chosen by the source models' disagreement.

    Notes
    -----
    Missing cells: a source model's missing entry in an item's correctness vector is the item's mean over the
    models that answered it; items no source model answered are not clustered (the weights are shares of the
    answered items). A target's missing anchor is imputed by the source models' observed mean on it.

    References
    ----------
    .. [1] Vivek, R., Ethayarajh, K., Yang, D. & Kiela, D. (2024). Anchor points: benchmarking models with much
       fewer examples. *Proceedings of EACL 2024*, arXiv:2309.08638.
    .. [2] Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. & Yurochkin, M. (2024). tinyBenchmarks:
       evaluating LLMs with fewer examples. *Proceedings of the 41st International Conference on Machine
       Learning (ICML)*, arXiv:2402.14992.

    Examples
    --------
    >>> from effstats.disco import AnchorCorr
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = AnchorCorr(n_items=30, random_state=0).fit(src)
    >>> est.predict(tgt)[:3].round(3)
    array([0.27 , 0.443, 0.52 ])
    >>> float(est.weights_.sum())
    1.0
    """

    def __init__(self, n_items: int = 100, random_state: Any = None) -> None:
        self.n_items = n_items
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "AnchorCorr":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        means = src.item_means("source_outputs")
        X = _impute(src.correctness("source_outputs"), src.missing, means).T
        rng = check_rng(self.random_state, "random_state")
        anchors = self._select_answered(lambda n, g: self._anchors(X if n == len(X) else X[self._answered], rng), src)
        self._set_selected(anchors)
        self.anchor_means_ = means[self.selected_]
        return self

    def _anchors(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        anchors, self.weights_ = _weighted_anchors(X, self.n_items, rng)
        return anchors

    def _predict(self, o) -> np.ndarray:
        return _impute(o.correctness("target_outputs"), o.missing, self.anchor_means_) @ self.weights_


def _kmeans_1d(x: np.ndarray, k: int, n_iter: int = 100) -> np.ndarray:
    """Deterministic 1-D k-means (Lloyd from quantile starts); labels 0..h-1 ordered by centre, empty ones dropped."""
    centres = np.unique(np.quantile(x, (np.arange(k) + 0.5) / k))
    for _ in range(n_iter):
        cuts = (centres[1:] + centres[:-1]) / 2  # 1-D Voronoi cells are intervals
        lab = np.searchsorted(cuts, x)
        cnt = np.bincount(lab, minlength=len(centres))
        new = np.bincount(lab, weights=x, minlength=len(centres))[cnt > 0] / cnt[cnt > 0]
        if new.shape == centres.shape and np.allclose(new, centres):
            break
        centres = np.unique(new)
    return np.unique(np.searchsorted((centres[1:] + centres[:-1]) / 2, x), return_inverse=True)[1]


def _modal_share(p: np.ndarray, missing: np.ndarray | None = None) -> np.ndarray:
    """Share of the rows (models) that give each column's (item's) most frequent value: (M, n) -> (n,).

    The longest run of equal values in each sorted column, vectorised over columns (scipy.stats.mode loops over
    them in Python). With ``missing``, among the models
    that answered (missing cells sort first as -1 and are not counted)."""
    if missing is not None:
        p = np.where(missing, -1, p)
    s = np.sort(p, axis=0)
    m = s.shape[0]
    rows = np.arange(m)[:, None]
    start = np.ones(s.shape, bool)
    start[1:] = s[1:] != s[:-1]
    run_start = np.maximum.accumulate(np.where(start, rows, 0), axis=0)
    run = rows - run_start + 1
    if missing is None:
        return run.max(axis=0) / m
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(s >= 0, run, 0).max(axis=0) / (~missing).sum(axis=0)


@_fit_doc(", n_strata=4")
class StratifiedHT(_SubsetEstimator):
    """SSEPY-style estimate (Fogliato et al. 2024): k-means strata on difficulty, Horvitz–Thompson sum.

    Items are stratified by (deterministic, 1-D) k-means on a difficulty proxy computed from the **source** models (mean
    confidence = max class probability; with class ids only, the share of models voting for the modal
    class; with correctness only, the mean correctness), so the target needs outputs on the sampled
    items alone. SSEPY proper uses the target model's own confidence on every item, which presumes a
    full inference pass. ``n_items`` are drawn proportionally to stratum size (at least two each, so that every
    stratum has a within-stratum variance) without replacement; the estimate ``Σ_h (N_h / N) · mean of the sampled
    items in h`` is the Horvitz–Thompson estimator with inclusion probabilities ``n_h / N_h``.

    Parameters
    ----------
    n_items : int, default=100
        Items drawn, at most the number of items.
    n_strata : int or None, default=None
        Strata (k-means clusters of the difficulty proxy), at most ``n_items``; ``min(n_strata, n_items // 2)``
        are used, so that every stratum holds two sampled items (as :class:`effstats.disco.StratifiedAIPW`), and
        empty clusters are dropped. None: ``min(10, n_items // 2)``, at least 1.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the draws within strata.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` (class attribute): the interval comes from the random draw of the items, so it holds for every
        model, also one outside the source models' range.
    selected_ : ndarray of int, shape (n_items,)
        Drawn item positions, ascending.
    selected_ids_ : Index or None
        Their ids, when fitted on labelled outputs.
    strata_ : ndarray of int, shape (n_items_total,)
        Stratum of every item, ordered from hard to easy by the proxy (-1: no source model answered it).
    stratum_sizes_ : ndarray of int, shape (n_strata_kept,)
        Items per stratum, ``N_h``.
    weights_ : ndarray of shape (n_items,)
        Horvitz–Thompson weight ``1 / (N π_i)`` of each drawn item (in ``selected_`` order).
    n_items_total_ : int
        Items in the source outputs.

    See Also
    --------
    effstats.disco.RandomDirect : one stratum, the plain mean.
    effstats.disco.AIPW : random items with a regression correction from the source models.
    effstats.sortsearch.SortSearch : strata along the source models' difficulty order (``estimator="stratified"``).

    Notes
    -----
    Missing cells: the difficulty proxy of an item is the mean over the source models that answered it; items no
    source model answered belong to no stratum and are never drawn (the estimate is then of the mean over the
    answered items). Within a stratum the mean is over its observed items. A stratum where a target has no output
    on any drawn item is collapsed, for that target, with its nearest stratum in the difficulty order that has one
    (the harder, when two are equally near; Cochran 1977, Sect. 5A.12 collapsed strata): that stratum's mean counts
    with both weights, and its variance term is :math:`(W_h + W_{h'})^2 s_{h'}^2 / n_{h'} (1 - n_{h'} / (N_h +
    N_{h'}))`, with a ``UserWarning`` naming the targets, the stratum, its neighbour and its items (its missing
    results are assumed like the neighbour's answered ones).

    Variance: Cochran's (1977, Thm 5.3) :math:`\\sum_h W_h^2 s_h^2 / n_h (1 - n_h / N_h)` over the target's
    observed sampled items. A stratum with fewer than two of them (a missing result; a census stratum of one item
    has no sampling error) is collapsed, for the variance, with its nearest stratum that has two (Cochran 1977,
    Sect. 5A.12): their items make one stratum of their summed weight, whose variance includes the difference
    between their means, so the collapsed estimate errs on the large side. A stratum of one sampled item would give
    none at all, and one sampled item a stratum a standard error of 0.

    Interval: on graded scores :math:`\\hat\\theta \\pm t_{\\nu}\\,\\widehat{\\mathrm{se}}` with Satterthwaite's
    effective degrees of freedom :math:`\\nu` of the strata's variance terms (Cochran 1977, Sect. 5.4; as
    :class:`effstats.disco.StratifiedAIPW`): with two or three items a stratum, each term's variance estimate has
    one or two degrees of freedom, and the normal quantile's interval is too short. Graded scores in a known range
    (the source models' scores in [0, 1]) whose sampled items are within an item's worth of alike inside every
    stratum sampled short of a census (the sum :math:`a` of their absolute deviations from each stratum's median
    below the range's width) have not shown the strata's spread: two items a stratum, both near 0, say nothing of a
    few items near 1 in the stratum, and the standard error is near 0. Their interval is at least :math:`\\hat\\theta
    \\pm z\\,(1 - a) (N'/N)\\, d / z_{0.975}`, with :math:`d` the distance from those strata's mean to the farther
    end of Wilson's 95 % interval at their simple random sample's size :math:`k' / (1 - k'/N')` (:math:`k'` of
    their :math:`N'` items sampled): the interval of scores at the range's bounds, the widest of that mean, as 0/1
    responses alike within every stratum get Wilson's interval at the sample's size (``SubsetPrediction.floor``).
    On AlpacaEval's graded win probabilities (``benchmarks/stratified_graded_coverage.py``: each of 56 models a
    target of 200 draws, the others' folds the sources), 10 and 20 items of each of its five datasets, two a
    stratum, are covered 0.991 to 0.999 of the time, each model at least 0.89, by intervals 2 to 13 % wider than
    the t interval alone, which covers 0.93 to 0.98, one model 0.70 (a model at 0.035 on the oasst dataset, its few
    high scores in two strata: 0.77 against 1.00); 50 and 100 of all 805 items 0.98 and 0.96 (0.97 and 0.96), 1 %
    wider. On 0/1 responses, Wilson's interval at Korn & Graubard's (1998) effective size, the design effect's
    :math:`\\hat p (1 - \\hat p) / \\widehat{\\mathrm{se}}^2` times :math:`(z_{0.975} / t_{\\nu, 0.975})^2`; a
    target whose drawn responses are all alike gets the exact interval of a stratified simple random sample all
    alike, the worst placement of its wrong items among the strata (as :class:`effstats.disco.StratifiedAIPW`'s),
    wider than Wilson's at :math:`n / (1 - n/N)`, and one with one to five minority responses at least the limit of
    their worst placement on the side towards all alike (as :class:`effstats.disco.StratifiedAIPW`'s).

    References
    ----------
    .. [1] Fogliato, R., Patil, P., Monfort, M. & Perona, P. (2024). A framework for efficient model evaluation
       through stratification, sampling, and estimation. *European Conference on Computer Vision (ECCV)*,
       140–158. Springer.
    .. [2] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley, Thm 5.3, Sect. 5.4 (effective degrees of
       freedom), Sect. 5A.12 (collapsed strata).
    .. [3] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number
       of positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.

    Examples
    --------
    >>> from effstats.disco import StratifiedHT
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = StratifiedHT(n_items=30, n_strata=5, random_state=0).fit(src)
    >>> est.stratum_sizes_
    array([59, 71, 61, 61, 48])
    >>> est.predict(tgt)[:3].round(3)
    array([0.401, 0.564, 0.4  ])
    """

    def __init__(self, n_items: int = 100, n_strata: int | None = None, random_state: Any = None) -> None:
        self.n_items = n_items
        self.n_strata = n_strata
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "StratifiedHT":
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        rng = check_rng(self.random_state, "random_state")
        # two sampled items a stratum at the least: a stratum's variance needs two
        given = 10 if self.n_strata is None else check_positive_int(self.n_strata, "n_strata", maximum=self.n_items)
        h = min(given, max(1, self.n_items // 2))
        miss = src.missing
        if src.proba is not None:
            conf = src.proba.max(axis=2)
            conf = conf.mean(axis=0) if miss is None else np.where(miss, 0.0, conf).sum(axis=0) / (~miss).sum(axis=0)
        elif src.pred is not None:
            p = src.pred if src.pred.ndim == 2 else src.pred[..., 0]
            conf = _modal_share(p, miss)
        else:
            conf = src.item_means("source_outputs")
        answered = self._answered
        if answered is None:
            strata = _kmeans_1d(conf, h)
        else:  # unanswered items: stratum -1, never drawn
            strata = np.full(src.n_items, -1)
            strata[answered] = _kmeans_1d(conf[answered], h)
        h = strata.max() + 1
        sizes = np.bincount(strata[strata >= 0], minlength=h)
        # proportional allocation with at least two items per stratum (one, a census, in a stratum of one item):
        # a stratum's variance needs two; largest remainders
        floor = np.minimum(sizes, 2)
        raw = self.n_items * sizes / sizes.sum()
        alloc = np.minimum(np.maximum(np.floor(raw).astype(int), floor), sizes)
        while alloc.sum() < self.n_items:
            gap = np.where(alloc < sizes, raw - alloc, -np.inf)
            alloc[np.argmax(gap)] += 1
        while alloc.sum() > self.n_items:
            gap = np.where(alloc > floor, alloc - raw, -np.inf)
            alloc[np.argmax(gap)] -= 1
        key = rng.random(src.n_items)
        if answered is None:
            chosen = np.sort(_first_per_group(np.lexsort((key, strata)), strata, sizes, alloc))
        else:
            chosen = np.sort(answered[_first_per_group(np.lexsort((key[answered], strata[answered])), strata[answered],
                                                       sizes, alloc)])
        self.strata_ = strata
        self.stratum_sizes_ = sizes
        self.weights_ = (sizes / sizes.sum() / alloc)[strata[chosen]]  # 1 / (N π_i)
        self._set_selected(chosen)
        return self

    interval_kind = "design"

    def _selected_strata(self) -> tuple[np.ndarray, np.ndarray] | None:
        return (self.stratum_sizes_, self.strata_[self.selected_]) if len(self.stratum_sizes_) > 1 else None

    def _observed_strata(self, o) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(y with 0 at missing cells (T, k), one-hot strata of the selected items (k, H), observed items per target
        and stratum n_h (T, H), stratum weights per target (T, H): empty strata collapsed into the nearest one)."""
        y = o.correctness("target_outputs")
        obs = ~o.missing
        sizes = self.stratum_sizes_
        onehot = np.eye(len(sizes))[self.strata_[self.selected_]]
        n_h = obs.astype(float) @ onehot
        w = _collapsed_weights(sizes / sizes.sum(), (n_h > 0) | (onehot.sum(axis=0) == 0))
        return np.where(obs, y, 0.0), onehot, n_h, w

    def _predict(self, o) -> np.ndarray:
        # the weights sum to one up to rounding: a target right on every item would get 1 + 2e-16
        if o.missing is not None:
            y, onehot, n_h, w = self._observed_strata(o)
            est = (w * (y @ onehot) / np.maximum(n_h, 1)).sum(axis=1)
            est = np.where(n_h.sum(axis=1) > 0, est, np.nan)  # NaN: nothing observed (refused for users' targets)
            full = ~o.missing.any(axis=1)  # complete targets: the complete-data formula, to the last bit
            return np.clip(np.where(full, o.correctness("target_outputs") @ self.weights_, est), 0.0, 1.0)
        return np.clip(o.correctness("target_outputs") @ self.weights_, 0.0, 1.0)

    def _variance(self, o) -> tuple[np.ndarray, np.ndarray]:
        """Standard errors and Satterthwaite's degrees of freedom per target (class Notes): Cochran's (1977, Thm 5.3)
        stratified variance ``Σ_h W_h² s_h²/n_h (1 − n_h/N_h)`` over the target's observed sampled items, a stratum
        with fewer than two of them (short of a census) collapsed with its nearest stratum that has two."""
        last = getattr(self, "_last_variance", None)
        if last is not None and last[0] is o:  # predict_interval asks for both on the same outputs
            return last[1]
        y = o.correctness("target_outputs")
        sizes = self.stratum_sizes_.astype(float)
        h_sel = self.strata_[self.selected_]
        miss = np.zeros(y.shape, bool) if o.missing is None else o.missing
        se, df = np.zeros(len(y)), np.ones(len(y))
        lo, hi = self._score_bounds()
        # a floor from the scores' range (graded scores in a known range only: 0/1 scores have Korn and Graubard's
        # effective size, unbounded ones no worst case)
        graded = ~is_zero_one(y, axis=1) & np.isfinite(lo) & np.isfinite(hi)
        floor = np.zeros(len(y))
        patterns, inv = np.unique(miss, axis=0, return_inverse=True)
        for p, pattern in enumerate(patterns):  # targets missing the same items share their strata
            rows, idx = np.flatnonzero(inv.ravel() == p), np.flatnonzero(~pattern)
            if len(idx) == 0:
                continue
            n_h = np.bincount(h_sel[idx], minlength=len(sizes))
            # one observed item gives no within-stratum variance and none gives no mean: such a stratum joins its
            # nearest stratum with two (Cochran 1977, Sect. 5A.12; a census stratum has no sampling error); with
            # none such, the sample is one stratum
            present = (n_h >= 2) | (n_h == sizes)
            to = _collapsed_strata(present[None])[0] if present.any() else np.zeros(len(sizes), int)
            merged = np.bincount(to, weights=sizes, minlength=len(sizes))
            h = to[h_sel[idx]]
            var, nu = _stratified_variance(y[np.ix_(rows, idx)], np.eye(len(sizes))[h],
                                           np.bincount(h, minlength=len(sizes)).astype(float), merged,
                                           merged / sizes.sum(), with_df=True)
            se[rows], df[rows] = np.sqrt(var), nu
            if graded[rows].any():
                g = rows[graded[rows]]
                floor[g] = self._bounded_floor(y[np.ix_(g, idx)], h, merged)
        self._last_variance = (o, (se, df), floor)
        return se, df

    def _bounded_floor(self, y: np.ndarray, h: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The floor of the interval of graded scores in a known range ``[lo, hi]``, as a standard error on the
        normal quantile, per target row of ``y`` (T, k): observed sampled items in (collapsed) strata ``h`` (k,)
        of ``sizes`` (H,) (class Notes).

        Over the strata sampled short of a census, ``k'`` of their ``N'`` items sampled, with their stratified mean
        ``m`` and the sampled scores' spread ``a``, the sum of absolute deviations from each stratum's median in
        units of ``hi - lo`` (0: the sampled scores alike within every stratum): ``(1 - min(a, 1)) (N'/N) d / z``,
        with ``d`` the distance from ``m`` to the farther end of Wilson's 95 % interval at ``m`` and the simple
        random sample's size ``k' / (1 - k'/N')``, the interval of scores at the bounds (the widest of mean ``m``)
        when the strata's spread is unseen. 0 with fewer than two such items."""
        lo, hi = self._score_bounds()
        n_h = np.bincount(h, minlength=len(sizes)).astype(float)
        sampled = (n_h > 0) & (n_h < sizes)
        k = n_h[sampled].sum()
        if k < 2:
            return np.zeros(len(y))
        big = sizes[sampled].sum()
        spread, mean = np.zeros(len(y)), np.zeros(len(y))
        for g in np.flatnonzero(sampled):
            cols = y[:, h == g]
            spread += np.abs(cols - np.median(cols, axis=1, keepdims=True)).sum(axis=1)
            mean += sizes[g] / big * cols.mean(axis=1)
        m = np.clip((mean - lo) / (hi - lo), 0.0, 1.0)
        z = special.ndtri(0.975)
        n = k / (1 - k / big)
        centre = (m + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(m * (1 - m) / n + z**2 / (4 * n**2))
        far = np.maximum(centre + half - m, m - centre + half)
        se = (1 - np.minimum(spread / (hi - lo), 1.0)) * big / sizes.sum() * far * (hi - lo) / z
        return se

    def _design_se(self, o) -> np.ndarray:
        """Stratified-sampling standard error (:meth:`_variance`)."""
        return self._variance(o)[0]

    def _design_floor(self, o) -> np.ndarray:
        """Graded targets' floor of the interval's half-width over the normal quantile (:meth:`_bounded_floor`; 0
        for 0/1 targets and where none applies)."""
        self._variance(o)
        return self._last_variance[2]

    def _design_df(self, o) -> np.ndarray:
        """Satterthwaite's effective degrees of freedom of the stratified variance (Cochran 1977, Sect. 5.4)."""
        return self._variance(o)[1]

    def _design_srs(self, o) -> tuple[np.ndarray, np.ndarray]:
        """Observed drawn items per target and stratum, and the strata's sizes, shape (n_target, n_strata): a
        target's 0/1 responses all alike get the exact interval of a stratified simple random sample all alike (the
        worst placement of its wrong items among the strata; a stratum it has no output in may hold any number),
        not Wilson's at ``k / (1 - k/N)``, which is narrower."""
        sizes = self.stratum_sizes_
        seen = np.ones((o.n_models, o.n_items), bool) if o.missing is None else ~o.missing
        k_h = seen.astype(float) @ np.eye(len(sizes))[self.strata_[self.selected_]]
        return k_h, np.broadcast_to(sizes.astype(float), k_h.shape)

    def _design_n(self, o, minority) -> np.ndarray:
        """Effective sample size for Wilson's interval on 0/1 correctness: ``p̂(1 − p̂) / se²`` (the design effect
        of Korn & Graubard 1998); when that is undefined (p̂ ∈ {0, 1} or se = 0, e.g. every sampled item right)
        the simple-random-sample size ``k / (1 − k/N)``. Wilson's interval at this size keeps its width where the
        Wald interval collapses (an accurate model right on every sampled item of a stratum).

        Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.
        """
        y = o.correctness("target_outputs")
        n = self.n_items_total_
        p = self._predict(o)
        se, df = self._variance(o)
        k = np.full(len(p), y.shape[1]) if o.missing is None else (~o.missing).sum(axis=1)
        with np.errstate(divide="ignore"):
            srs = np.where(k < n, k / (1 - k / n), np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            # Satterthwaite's degrees of freedom at the 95 % level, as StratifiedAIPW's (Korn & Graubard 1998)
            kish = p * (1 - p) / se**2 * (special.ndtri(0.975) / special.stdtrit(np.maximum(df, 1.0), 0.975)) ** 2
        return np.where((se > 0) & (p > 0) & (p < 1), kish, srs)


@_fit_doc()
class SortSearchDirect(_SubsetEstimator):
    """Lifelong-Benchmark baseline (Prabhu et al. 2024) in the same protocol, via :mod:`effstats.sortsearch`.

    Items are sorted by source-model correctness ("uniform correctness" selection: ``n_items`` positions
    spread uniformly over the easy→hard order); a target's accuracy is the DP-search threshold's share of
    items predicted correct (``predicted_accuracy``, the "weighted sum" of Table 3 of Rubinstein et al. 2025).
    Needs binary correctness.

    Parameters
    ----------
    n_items : int, default=100
        Items evaluated, at most the number of items.
    sort : {"sum", "confidence", "recursive"}, default="sum"
        The order of the items (see :class:`effstats.sortsearch.SortSearch`), in any case.
    random_state : int, RandomState, Generator or None, default=None
        Passed to :class:`effstats.sortsearch.SortSearch`.

    Attributes
    ----------
    interval_kind : str
        ``"conformal"`` (class attribute): the interval comes from the cross-validated residuals of the source
        models, so it holds for models like them, not necessarily for one outside their range.
    sortsearch_ : effstats.sortsearch.SortSearch
        The fitted Sort & Search.
    selected_ : ndarray of int, shape (n_items,)
        Evaluated item positions, ascending.
    selected_ids_ : Index or None
        Their ids, when fitted on labelled outputs.

    See Also
    --------
    effstats.sortsearch.SortSearch : Sort & Search with its design-based estimate and interval.
    effstats.disco.RandomDirect : random items and their plain mean.

    Notes
    -----
    Missing cells: the order is by the fraction correct among the source models that answered each item, and
    items no source model answered are never selected (:class:`~effstats.sortsearch.SortSearch`'s
    ``missing="observed"``); a target's threshold is searched over the selected items it has outputs on.

    References
    ----------
    .. [1] Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. & Albanie, S. (2024). Efficient Lifelong
       Model Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems
       (NeurIPS)* 37.
    .. [2] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.disco import SortSearchDirect
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(40, 300, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> est = SortSearchDirect(n_items=30).fit(src)
    >>> est.predict(tgt)[:3].round(3)
    array([0.1  , 0.3  , 0.433])
    """

    def __init__(self, n_items: int = 100, sort: str = "sum", random_state: Any = None) -> None:
        self.n_items = n_items
        self.sort = sort
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "SortSearchDirect":
        from ..sortsearch import SORTS, SortSearch

        sort = check_option(self.sort, "sort", SORTS, ignore_case=True)
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        y = src.correctness("source_outputs")
        if not is_zero_one(y):
            raise ValueError("source_outputs: Sort & Search needs binary correctness")
        # missing cells as NaN: the order is by the fraction correct among the models that answered
        y = y.astype(bool) if src.missing is None else np.where(src.missing, np.nan, y)
        self.sortsearch_ = SortSearch(sort=sort, random_state=self.random_state).fit(y)
        self._set_selected(self.sortsearch_.select(self.n_items))
        return self

    def _predict(self, o) -> np.ndarray:
        y = o.correctness("target_outputs")
        if not is_zero_one(y):
            raise ValueError("target_outputs: Sort & Search needs binary correctness on the selected items")
        if o.missing is not None:  # DP search over each target's observed selected items
            y = np.where(o.missing, np.nan, y)
            with warnings.catch_warnings():  # reported by _target
                warnings.filterwarnings("ignore", message="responses: .*missing", category=UserWarning)
                res = self.sortsearch_.predict(y, items=self.selected_)
            return np.asarray(res.predicted_accuracy, dtype=float)
        y = y.astype(bool)
        # the S&S estimate of Prabhu et al.: the accuracy of the DP-search prediction vector (k / n), not the
        # design-based estimate from the evaluated items that SearchResult.accuracy holds
        return np.asarray(self.sortsearch_.predict(y, items=self.selected_).predicted_accuracy, dtype=float)
