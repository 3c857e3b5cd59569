"""Stratified AIPW: stratified random items on the sources' difficulty order, corrected by an item-response model.

Two design-based gains at once: the items are drawn within strata of the source models' difficulty order (the
order Sort & Search sorts items by), and within each stratum a low-dimensional logistic model of the target's
response on item features from the sources (logit difficulty, the items' loadings on the sources' first
principal components) corrects the stratum's mean by cross-fitted residuals (the difference estimator of a
stratified sample; Cochran 1977, Sect. 5 and 7; prediction-powered inference, Angelopoulos et al. 2023).

References
----------
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (Ch. 5 stratified sampling, Sect. 5.4 Satterthwaite's
degrees of freedom, Ch. 7 regression and difference estimators).
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered inference.
*Science* 382(6671), 669–674.
Zrnic, T. & Candès, E. J. (2024). Cross-prediction-powered inference. *PNAS* 121(15), e2322083121.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .._outputs import _impute, _item_groups
from .._subset import _first_per_group
from .._validation import check_flag, check_option, check_positive, check_positive_int, check_rng
from ._aipw import AIPW, _check_folds, _deal_folds, _Fit
from ._logistic import penalised_logit

__all__ = ["StratifiedAIPW"]


class StratifiedAIPW(AIPW):
    r"""Stratified prediction-powered estimate of a target's benchmark score from a stratified random subset.

    Items are sorted by the source models' difficulty order and cut into ``n_strata`` strata of equal size;
    ``n_items`` are drawn at random within strata (proportional or Neyman allocation). A logistic model of the
    target's response on a few item features from the sources (the logit of the item's share of source models
    right, and its loadings on the sources' first ``n_components`` principal components) is fitted on the sampled
    items, cross-fitted over ``n_folds`` folds so that it never corrects an item it was fitted on, and predicted on
    every item; within each stratum the sampled items' residuals correct the model's mean (Notes). The estimate
    is design-unbiased whatever the target's distance from the sources; its interval is design-based (random
    items), with a t quantile on Satterthwaite's degrees of freedom (on 0/1 responses Korn & Graubard's
    Clopper-Pearson interval at the effective sample size, which also holds near 0 and 1), and holds for a target
    outside the sources' range too.

    Parameters
    ----------
    n_items : int, default=100
        Number of items evaluated, at least 2.
    n_strata : int or None, default=None
        Strata of equal size along the sources' difficulty order, at most ``n_items``; ``min(n_strata,
        n_items // 2)`` are used, so that every stratum holds two sampled items and a within-stratum variance.
        None: ``min(6, n_items // 2)``, which any ``n_items`` of at least 2 allows. Cochran (1977, Sect. 5A.8)
        finds little gain beyond six strata on one stratifying variable. With ``stratify``, the most strata of
        the difficulty order within one item group (Notes, "Item groups").
    stratify : str or array of shape (n_items_total,), default=None
        Item groups (a column of the source ``items`` table, such as the true class, or an array) to stratify on as
        well: the strata are cut along the difficulty order within each group, so that the groups' shares of the
        sample are their shares of the items and a target's differences between groups (a model weak on one
        class) leave no sampling error. At most ``n_items // 2`` groups (two sampled items each).
    allocation : {"mixed", "proportional", "neyman"}, default="mixed"
        Items per stratum. ``"proportional"``: in proportion to its size ``N_h``. ``"neyman"``: to
        ``N_h S_h``, with :math:`S_h` the source models' mean within-stratum standard deviation of their responses
        (a proxy: the target's is unknown before it is evaluated), which puts the items where the sources
        disagree. ``"mixed"``: a quarter of the budget by Neyman's rule and three quarters proportionally
        (``N_h (S_h + 3 \sum_g W_g S_g)``), which keeps much of Neyman's gain and at least three quarters of the
        proportional allocation in every stratum, for a target whose uncertain items are not the sources' (a model
        far better than every source, whose wrong answers lie where the sources agree). At least two items per
        stratum in every case.
    n_folds : int or None, default=None
        Folds of the sampled items for cross-fitting, in ``[2, n_items]`` (at least 3 with ``power_tuning``). None:
        ``min(5, n_items)``.
    n_components : int, default=1
        Principal components of the sources' responses whose item loadings join the logit difficulty as
        features (0: the difficulty alone), at most 8. On the public ImageNet, CIFAR-10, AlpacaEval and digits
        predictions two or three components gave no smaller error than one at 100 items.
    penalty : float, default=1.0
        L2 penalty on the logistic model's slopes (features standardised to unit variance); the intercept gets
        a hundredth of it, which keeps the fit finite when a training fold's responses are all 0 or all 1.
    power_tuning : bool, default=False
        Scale the model's predictions by ``lambda`` in [0, 1] chosen by cross-fitting within the training folds
        (PPI++; as :class:`effstats.disco.AIPW`).
    random_state : int, RandomState, Generator or None, default=None
        Draws the items, then the folds.

    Attributes
    ----------
    interval_kind : str
        ``"design"`` (class attribute): the interval comes from the random draw of the items, so it holds for every
        model, also one outside the source models' range.
    selected_ : ndarray of shape (n_items,)
        Sampled item positions, ascending.
    selected_ids_ : Index or None
        Their ids, when fitted on labelled outputs.
    folds_ : ndarray of shape (n_items,)
        Fold of each sampled item (in ``selected_`` order).
    strata_ : ndarray of shape (n_items_total,)
        Stratum of every item, 0 for the hardest items (with ``stratify``: the groups in sorted order, each from
        its hardest items); -1 for items no source model answered.
    stratum_sizes_ : ndarray of shape (n_strata_used,)
        Items per stratum, ``N_h``.
    allocation_ : ndarray of shape (n_strata_used,)
        Sampled items per stratum, ``n_h``.
    n_folds_ : int
        Folds used: ``n_folds``, or ``min(5, n_items)`` when it is None.
    features_ : ndarray of shape (n_items_total, 1 + n_components)
        Standardised item features (logit difficulty, then the loadings); 0 for unanswered items.
    n_items_total_ : int
        Items in the source outputs.

    See Also
    --------
    effstats.disco.AIPW : random items with a regression correction (no strata).
    effstats.disco.StratifiedHT : strata without a regression correction.
    effstats.sortsearch.SortSearch : the sources' difficulty order.

    Notes
    -----
    The design. The :math:`N` items are sorted by the smoothed logit of their share of source models right,
    :math:`z_i = \operatorname{logit}((k_i + 1/2) / (M + 1))` (ties broken by the first loading), and cut into
    :math:`H` strata :math:`U_h` of :math:`N_h` items; a simple random sample :math:`S_h` of :math:`n_h` items is
    drawn in each (Cochran 1977, Ch. 5), :math:`W_h = N_h / N`. Neyman's allocation
    :math:`n_h \propto N_h S_h` minimises the variance of the stratified mean for given within-stratum standard
    deviations :math:`S_h` of the estimated variable (Cochran 1977, Thm 5.6); the target's :math:`S_h` are
    unknown before it is evaluated, so the sources' stand in, and ``"mixed"`` spends three quarters of the budget
    proportionally, which bounds the loss when they mislead: :math:`n_h \geq \tfrac34\, n W_h` (up to rounding),
    so a stratum's variance term is at most 4/3 of its value under proportional allocation (while the sample
    is a small part of the stratum). At 100 items on the best fifth of AlpacaEval's models, StratifiedAIPW's error
    is 1.06 times the plain mean's of random items with half the budget proportional and 0.93 times with three
    quarters (200 draws, ``benchmarks/estimator_gain.py``). The allocation depends on the sources only, so the
    estimate below stays design-unbiased whatever it is.

    The estimate. The sampled items are dealt at random into :math:`J` folds within strata; :math:`T_j` is the
    training set of fold :math:`j` (the other folds), :math:`S_{jh}` the held-out fold's items in stratum
    :math:`h`, and :math:`g_j(x) = \lambda_j\,\operatorname{expit}(x^\top\beta_j)` the logistic model fitted on
    :math:`T_j` alone (by penalised quasi-likelihood, so that graded scores in [0, 1] work too;
    :math:`\lambda_j = 1` without power tuning). Within each stratum the difference estimator (Cochran 1977,
    Sect. 7.1) keeps the training items' known responses and corrects the model on the others:

    .. math::

        \hat\theta_{jh} = \frac{1}{N_h}\Big(\sum_{T_{jh}} y + \sum_{U_h \setminus T_{jh}} g_j
        + (N_h - t_{jh})\,\overline{(y - g_j)}_{S_{jh}}\Big), \qquad
        \hat\theta_h = \frac{1}{J_h}\sum_{j:\,S_{jh} \neq \emptyset} \hat\theta_{jh}, \qquad
        \hat\theta = \sum_h W_h\,\hat\theta_h .

    Given :math:`T_j`, the items :math:`S_{jh}` are a simple random sample of :math:`U_h \setminus T_{jh}` and
    :math:`g_j` does not depend on them, so :math:`E[\overline{(y - g_j)}_{S_{jh}} \mid T_j]` is the mean of
    :math:`y - g_j` over :math:`U_h \setminus T_{jh}` and :math:`E[\hat\theta_{jh}] = \bar y_{U_h}`: the estimate
    is exactly design-unbiased for the benchmark's mean :math:`\theta = \sum_h W_h \bar y_{U_h}` (checked by
    enumerating every sample and fold assignment of a small benchmark in the tests). With
    :math:`g \equiv 0` it is the stratified mean; with one stratum, :class:`effstats.disco.AIPW`.

    The variance. Treating the cross-fitted residuals :math:`e_i = y_i - g_{j(i)}(x_i)` as the values of a fixed
    variable, :math:`\hat\theta` is a stratified mean of :math:`e` plus known terms, whose variance is
    Cochran's Thm 5.3 with the finite-population correction:

    .. math::

        \widehat{\mathrm{Var}}(\hat\theta) = \sum_h a_h s_{e,h}^2, \qquad
        a_h = \frac{W_h^2}{n_h}\Big(1 - \frac{n_h}{N_h}\Big),

    with :math:`s_{e,h}^2` the residuals' variance in stratum :math:`h`, shrunk toward the pooled within-stratum
    variance :math:`s_{e,\mathrm{pool}}^2` by one prior degree of freedom,

    .. math::

        s_{e,h}^2 = \frac{\sum_{S_h} (e_i - \bar e_h)^2 + s_{e,\mathrm{pool}}^2}{n_h}, \qquad
        s_{e,\mathrm{pool}}^2 = \frac{\sum_h \sum_{S_h} (e_i - \bar e_h)^2}{\sum_h (n_h - 1)},

    which is the pooled variance for a stratum with one observed item (the collapsed-strata idea, Cochran 1977,
    Sect. 5A.12) and keeps a stratum whose few sampled items happen to agree (residual variance 0, on 0/1
    responses) from claiming none: at 50 items, for the best 20 % of the CIFAR-10 and AlpacaEval models as
    targets (40 draws), the 95 % interval covered 0.91 and 0.92 without the prior degree of freedom, 0.97 with it
    (``benchmarks/estimator_gain.py`` measures it on more data). The interval
    is :math:`\hat\theta \pm t_{\nu, 1 - \alpha/2}\,\widehat{\mathrm{se}}` with Satterthwaite's effective
    degrees of freedom (Cochran 1977, Sect. 5.4)

    .. math::

        \nu = \frac{\big(\sum_h a_h s_{e,h}^2\big)^2}{\sum_h (a_h s_{e,h}^2)^2 / n_h},

    between :math:`\min_h n_h` and :math:`\sum_h n_h`; it widens the interval where a few strata carry the
    variance. That :math:`t` interval is the one of graded scores.

    Near 0 and 1 (0/1 responses). A symmetric interval from the residual variance fails there: a target right on
    every sampled item is predicted at :math:`1 - \epsilon` by the logistic model, its residuals are all about 0
    and its interval a point (at 50 items, a synthetic CIFAR-10 target at 0.996 was covered 0.40 of the time,
    at 0.99 0.69), and a random guesser's 5 to 10 successes have a skewed count (0.88). So a target whose
    responses are 0/1 gets Korn & Graubard's (1998) interval: the Clopper-Pearson interval of
    :math:`n^* \hat\theta` successes in :math:`n^*` trials, at the effective sample size

    .. math::

        n^* = \operatorname{clip}\Big(\frac{\tilde p (1 - \tilde p)}{\widehat{\mathrm{se}}^2}
        \Big(\frac{z_{0.975}}{t_{\nu,\,0.975}}\Big)^2,\ \frac{n'}{2},\ 4 n'\Big), \qquad
        \tilde p = \frac{n \hat\theta + 1/2}{n + 1}, \qquad n' = \frac{n}{1 - n/N},

    (:math:`n` the target's observed sampled items, :math:`n'` the finite-population-corrected size of a simple
    random sample), the design effect bounded to :math:`[1/4, 2]` and taken at :math:`\tilde p`, shrunk toward
    1/2 by half an item, so that a near-zero residual variance cannot make the interval a point; the degrees-of-
    freedom factor is at the 95 % level, whatever level the interval is asked at. A sample with one or two
    minority responses (a model near 1 wrong on one or two sampled items) gets at most :math:`n^* = n'` (a design
    effect of at least 1): its one or two nonzero residuals weigh little in a stratum sampled more densely than
    the average, while the minority items the sample missed may lie in the strata sampled least, so their variance
    says little of the design's (at 100 of the first 400 CIFAR-10 test items, the three best models, 0.9675 to
    0.97, as targets of the other 27, the samples with one wrong item, 0.5 % of 1,000 draws, would be covered
    none of the time without the bound and those with two, 2.2 %, 0.58 of the time; with it, every one, for
    1.5 % more mean width). A target whose observed responses are all alike (every sampled item right, or every
    one wrong) has no residual variance to size that interval, and its count follows no hypergeometric law (the
    strata are sampled at different rates): its interval is the exact one of a stratified simple random sample
    all alike. For a sample all right, the lower limit
    is the smallest score :math:`1 - W/N` for which some placement of the :math:`W` wrong items among the strata
    leaves the sample all right with probability above :math:`\alpha/2`,

    .. math::

        \max_{\sum_h W_h = W}\ \prod_h \binom{N_h - W_h}{n_h} \Big/ \binom{N_h}{n_h} > \frac{\alpha}{2},

    (:math:`n_h` the target's observed sampled items of stratum :math:`h`), found by placing the wrong items one
    at a time where they lower the probability least, which is optimal as each factor is log-concave in
    :math:`W_h`; with one stratum it is the hypergeometric interval of :class:`effstats.disco.AIPW`. The wrong
    items may gather in the strata sampled least, so it is wider than the Clopper-Pearson interval at
    :math:`n'`: at 50 of CIFAR-10's 10,000 test items every one right, [0.907, 1] against [0.929, 1] (at 120 of
    400, [0.965, 1] against [0.979, 1]). Graded scores less than an item's worth from all alike at their median
    :math:`c` (:math:`m = \sum |y - c|` over the sampled items below 1; near 0 or 1 the smaller of :math:`\sum y`
    and :math:`\sum (1 - y)`) have a residual variance near 0 that says as little: their interval is
    :math:`(1 - m)` times the exact interval of scores all alike at :math:`c` plus :math:`m` times the t interval,
    so that scores of 1e-9 get the interval of scores of 0. Scores all alike at :math:`c` inside (0, 1) say nothing
    of the items the sample missed, which may score 0 or 1: their interval is :math:`[c L, c + (1 - c)(1 - L)]`,
    with :math:`[L, 1]` the exact interval above of a sample all right (a sample all at 0.5 gets no interval of
    zero width). A 0/1 sample with one to five minority responses (:math:`c`) gets at least, on the side towards all
    alike, the limit that no placement of the population's minority items among the strata passes with probability
    above :math:`\alpha/2` (``stratified_minority_limit`` in ``effstats._hypergeometric``: the score is at most
    :math:`1 - W/N` for the smallest :math:`W` whose densest placement makes :math:`c` or more likely than that,
    bounded by Hoeffding's (1956) binomial tail [7]_): a few minority responses from the strata sampled most densely
    make the residual variance, and so Korn & Graubard's effective size, say more than the sample does. Targets at
    0.98-0.996 whose wrong items lie among the best source's (200-300 draws of 50 items of 2,000): its samples with
    two to five wrong items, a tenth, are covered 0.96 against Korn & Graubard's 0.88, for 0.5 % more mean width
    (``benchmarks/few_wrong_coverage.py``). With it, the targets
    above (300 draws of 50 and of 100 items) were covered 0.937 (the guesser at 100 items) to 1.

    Features. :math:`z_i` above, and the item's loadings on the first ``n_components`` right singular vectors
    of the sources' item-centred response matrix (the item's discrimination along the sources' ability axis, a
    one-dimensional item-response model's slope, for the first); each standardised to unit variance over the
    items. Few parameters (``2 + n_components``), so that the tens of items of a training fold fit them, also
    for a target better than every source (its level moves the intercept).

    Item groups. With ``stratify``, group :math:`g` of :math:`N_g` items is cut into
    :math:`H_g = \min(H, \max(1, \lfloor n N_g / (4 N) \rfloor))` strata of equal size along the difficulty
    order (:math:`H` the ``n_strata``, 6 by default), so that a stratum expects about four sampled items or more
    under proportional allocation; the design and the estimate are those above on these strata. A target's
    accuracy per group is then a stratum-level quantity, which the design fixes in advance rather than the
    logistic model estimating it from a few labels. On the bundled digits (120 models, its 10 classes as
    ``stratify="label"``, 100 items, 30 draws) the MAE of 20 random targets is 0.73 times the plain mean's of
    random items against 0.76 without, that of the best fifth 0.65 against 0.64; on CIFAR-10 (its 10 classes, 10
    draws), whose gain lies in the difficulty order's many easy items that two strata a class cut coarsely, 0.53
    and 0.67 against 0.47 and 0.55 (``benchmarks/estimator_gain.py``). Groups pay where a target's accuracy
    differs between them more than the sources' difficulty order says, and where each group still gets several
    strata.

    Missing cells. A source model's missing response is replaced by the item's mean over the models that
    answered it; items no source model answered are never drawn and are outside the estimated mean. A target
    without outputs on some sampled items is estimated from the others with a ``UserWarning``. A stratum where a
    target has no output on any sampled item is collapsed, for that target, with its nearest stratum in the
    difficulty order that has one (the harder, when two are equally near; Cochran 1977, Sect. 5A.12 collapsed
    strata), with a ``UserWarning`` naming the targets, the stratum, its neighbour and its items: the model's mean
    over the stratum's items stays, the residual correction is the neighbour's, and the neighbour's variance term
    counts with both weights, :math:`(W_h + W_{h'})^2 s_{h'}^2 / n_{h'} (1 - n_{h'} / (N_h + N_{h'}))`. This
    assumes the stratum's missing results like the neighbour's answered ones, as missing cells are assumed like the
    answered ones of their stratum; the model alone would give that stratum no variance (at 100 CIFAR-10 items, the
    best model's hardest stratum unobserved: 0.9998 with a standard error of 0 for an accuracy of 0.9711).

    References
    ----------
    .. [1] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley. Ch. 5 (stratified random sampling,
       Thm 5.3; Sect. 5.4, effective degrees of freedom), Ch. 7 (regression and difference estimators).
    .. [2] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered
       inference. *Science* 382(6671), 669–674.
    .. [3] Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: Efficient prediction-powered inference.
       arXiv:2311.01453.
    .. [4] Zrnic, T. & Candès, E. J. (2024). Cross-prediction-powered inference. *PNAS* 121(15), e2322083121.
    .. [5] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number
       of positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.
    .. [6] Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. & Albanie, S. (2024). Efficient lifelong
       model evaluation in an era of rapid progress. *NeurIPS 2024*, arXiv:2402.19472 (Sort & Search's order).
    .. [7] Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. *The
       Annals of Mathematical Statistics* 27(3), 713–721.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import StratifiedAIPW
    >>> rm = simulate_responses(40, 2000, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))  # 30 sources, 10 new models
    >>> est = StratifiedAIPW(n_items=200, random_state=0).fit(src)
    >>> est.stratum_sizes_, est.allocation_
    (array([334, 333, 333, 334, 333, 333]), array([32, 34, 34, 34, 34, 32]))
    >>> est.predict_interval(tgt).to_frame().head(3).round(3)  # their accuracy on all 2,000 items, from 200
               estimate  standard_error    low   high  out_of_range
    model_ids
    sim30         0.331           0.030  0.272  0.394         False
    sim31         0.413           0.031  0.351  0.476         False
    sim32         0.460           0.032  0.395  0.526         False
    >>> tgt.accuracy().head(3).round(3).tolist()  # the truth
    [0.302, 0.466, 0.476]

    Stratified on item groups as well (here four groups of 500 items, as an array; a column of a ResponseMatrix's
    ``items`` table by name), each group is cut into six strata of its difficulty order and gets its share of the
    sample:

    >>> by_group = StratifiedAIPW(n_items=200, stratify=[i % 4 for i in range(2000)], random_state=0).fit(src)
    >>> len(by_group.stratum_sizes_), by_group.allocation_[:6].tolist()
    (24, [8, 8, 9, 9, 8, 8])
    """

    interval_kind = "design"
    _min_items = 2  # two sampled items a stratum at the least
    # one prior degree of freedom of the pooled residual variance in every stratum's (class Notes)
    _borrow = 1.0

    def __init__(self, n_items: int = 100, n_strata: int | None = None, stratify: Any = None,
                 allocation: str = "mixed", n_folds: int | None = None, n_components: int = 1, penalty: float = 1.0,
                 power_tuning: bool = False, random_state: Any = None) -> None:
        self.n_items = n_items
        self.n_strata = n_strata
        self.stratify = stratify
        self.allocation = allocation
        self.n_folds = n_folds
        self.n_components = n_components
        self.penalty = penalty
        self.power_tuning = power_tuning
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None) -> "StratifiedAIPW":
        """Build the item features and strata from the source models, and draw the stratified sample.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array
            The source models' outputs on all items (probabilities, class ids with ``labels``, or
            correctness / graded scores in [0, 1], an integer 0/1 matrix included).
        source_scores : array of shape (n_source,), optional
            Unused by the estimate (kept for the protocol).
        labels : array of shape (n_items_total,), optional
            True classes, for class ids or probabilities.

        Returns
        -------
        self : StratifiedAIPW
            The fitted estimator.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import StratifiedAIPW
        >>> est = StratifiedAIPW(n_items=40, n_strata=4, random_state=0).fit(simulate_responses(30, 400, rng=0))
        >>> est.allocation_.tolist(), est.features_.shape
        ([10, 10, 10, 10], (400, 2))
        """
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        k = check_positive_int(self.n_items, "n_items", minimum=2)
        n_strata = 6 if self.n_strata is None else check_positive_int(self.n_strata, "n_strata", maximum=k)
        allocation = check_option(self.allocation, "allocation", ("mixed", "proportional", "neyman"), ignore_case=True)
        n_comp = check_positive_int(self.n_components, "n_components", minimum=0, maximum=8)
        self._penalty = check_positive(self.penalty, "penalty")
        tuned = check_flag(self.power_tuning, "power_tuning")
        k_folds = _check_folds(self.n_folds, k, tuned, 2)
        rng = check_rng(self.random_state, "random_state")
        n = src.n_items
        pop = np.arange(n) if self._answered is None else self._answered
        y = _impute(src.correctness("source_outputs"), src.missing, src.item_means("source_outputs"))[:, pop]
        feats = _item_features(y, min(n_comp, y.shape[0] - 1))
        groups = _item_groups(self.stratify, src)
        # strata of equal size along the difficulty order (ties broken by the first loading, then position), within
        # each item group
        order = np.lexsort((np.arange(len(pop)), feats[:, -1] if n_comp else np.zeros(len(pop)), feats[:, 0]))
        strata_pop = np.empty(len(pop), dtype=int)
        if groups is None:
            h_max = max(1, min(n_strata, k // 2, len(pop)))
            strata_pop[order] = np.arange(len(pop)) * h_max // len(pop)
        else:
            codes = pd.factorize(pd.Series(groups[pop]), sort=True)[0]
            if (codes < 0).any():
                raise ValueError(f"stratify: {int((codes < 0).sum())} items have no group (NaN); give every item one")
            n_g = np.bincount(codes)
            if len(n_g) > k // 2:
                raise ValueError(f"stratify: {len(n_g)} item groups need two sampled items each, more than "
                                 f"n_items={k} allows (at most {k // 2} groups); merge groups or raise n_items")
            h_g = np.clip(k * n_g // (4 * len(pop)), 1, n_strata)  # about four sampled items a stratum (Notes)
            order = order[np.argsort(codes[order], kind="stable")]  # group-major, difficulty order within groups
            within = np.arange(len(pop)) - np.repeat(np.cumsum(n_g) - n_g, n_g)
            strata_pop[order] = np.repeat(np.cumsum(h_g) - h_g, n_g) + within * np.repeat(h_g, n_g) // np.repeat(
                n_g, n_g)
            h_max = int(h_g.sum())
        sizes = np.bincount(strata_pop, minlength=h_max)
        spread = None
        if allocation != "proportional":  # the sources' mean within-stratum sd of their responses, a proxy of S_h
            onehot = np.eye(h_max)[strata_pop]  # (N, H)
            sums, squares = y @ onehot, (y * y) @ onehot  # (M, H)
            var_h = np.maximum(squares - sums**2 / sizes, 0.0) / np.maximum(sizes - 1, 1)
            sd_h = np.sqrt(var_h).mean(axis=0)
            # "mixed": a quarter of the budget Neyman, three quarters proportional (n_h proportional to
            # N_h (S_h + 3 sum_g W_g S_g)): the sources' spread misleads for a target far from them (class Notes)
            spread = sd_h if allocation == "neyman" else sd_h + 3.0 * (sd_h @ (sizes / sizes.sum()))
        alloc = _allocate(sizes, k, spread)
        key = rng.random(len(pop))
        chosen = pop[_first_per_group(np.lexsort((key, strata_pop)), strata_pop, sizes, alloc)]
        self._set_selected(chosen)
        strata = np.full(n, -1)
        strata[pop] = strata_pop
        full = np.zeros((n, feats.shape[1]))
        full[pop] = feats
        h_sel = strata[self.selected_]
        self.folds_ = _deal_folds(h_sel, k_folds, rng)
        self.n_folds_ = k_folds
        self.strata_ = strata
        self.stratum_sizes_ = sizes
        self.allocation_ = alloc
        self.features_ = full
        self._x_sel = np.ascontiguousarray(full[self.selected_])
        self._h_sel = h_sel
        self._pop_features = (feats, strata_pop)
        self._last = None  # estimates of the last target outputs (a refit must not reuse them)
        return self

    def _fit_f(self, X: np.ndarray, Y: np.ndarray) -> _Fit:
        return _LogitFit(X, Y, self._penalty, *self._pop_features, len(self.stratum_sizes_))


def _allocate(sizes: np.ndarray, k: int, spread: np.ndarray | None) -> np.ndarray:
    """Items per stratum: ``k`` in proportion to ``sizes`` (times ``spread``: Neyman), by largest remainders, at
    least two (one when a stratum holds one item) and at most the stratum's size."""
    weight = sizes * (np.ones(len(sizes)) if spread is None else np.maximum(spread, 1e-3 * spread.max() + 1e-12))
    raw = k * weight / weight.sum()
    floor = np.minimum(sizes, 2)
    alloc = np.clip(np.floor(raw).astype(int), floor, sizes)
    while alloc.sum() < k:
        gap = np.where(alloc < sizes, raw - alloc, -np.inf)
        alloc[np.argmax(gap)] += 1
    while alloc.sum() > k:
        gap = np.where(alloc > floor, alloc - raw, -np.inf)
        alloc[np.argmax(gap)] -= 1
    return alloc


def _item_features(y: np.ndarray, n_comp: int) -> np.ndarray:
    """Standardised item features from the sources' responses ``y`` (M, N): the smoothed logit difficulty and the
    loadings on the first ``n_comp`` principal components of the item-centred matrix; shape (N, 1 + n_comp)."""
    m = y.shape[0]
    p = (y.sum(axis=0) + 0.5) / (m + 1.0)
    cols = [np.log(p / (1 - p))]
    if n_comp:
        yc = y - y.mean(axis=0)
        load = _top_components(yc, n_comp).T @ yc  # (n_comp, N): item loadings times the singular values
        # a sign convention: loadings correlate positively with the item's share of sources right
        sign = np.sign(load @ (cols[0] - cols[0].mean()))
        cols.extend(load * np.where(sign == 0, 1.0, sign)[:, None])
    X = np.column_stack(cols)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


#: sources above which the leading eigenvectors come from Lanczos iterations rather than a full decomposition
_LANCZOS_SOURCES = 1000


def _top_components(yc: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` leading eigenvectors (M, k) of the (M, M) Gram matrix ``yc yc'`` (the left singular vectors of
    ``yc``, without an (N, M) factor of size N x M in float64), in decreasing order of their eigenvalues.

    The full decomposition costs M**3 (12 CPU s at the Open LLM Leaderboard's 4,500 models, for each task); with
    many sources the leading ones come from Lanczos iterations on products with ``yc`` and ``yc'`` (a fixed start:
    reproducible), which agree with it to rounding, and from it where they do not converge."""
    m = yc.shape[0]
    if m > _LANCZOS_SOURCES and k < m - 1:
        from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

        gram = LinearOperator((m, m), matvec=lambda v: yc @ (yc.T @ v), dtype=float)
        start = np.random.default_rng(0).standard_normal(m)
        try:
            vals, vecs = eigsh(gram, k=k, which="LA", v0=start, tol=0)
            return vecs[:, np.argsort(vals)[::-1]]
        except ArpackError:
            pass
    vals, vecs = np.linalg.eigh(yc @ yc.T)
    return vecs[:, np.argsort(vals)[::-1][:k]]


class _LogitFit(_Fit):
    """Penalised logistic (quasi-likelihood) regressions of every target's responses on the same item features,
    by Newton's method for all targets at once (:func:`effstats.disco._logistic.penalised_logit`); predicted on every
    item for the strata's sums."""

    def __init__(self, X: np.ndarray, Y: np.ndarray, penalty: float, pop_x: np.ndarray, pop_h: np.ndarray,
                 n_strata: int, n_iter: int = 50) -> None:
        Xa = np.column_stack([np.ones(len(X)), X])  # (n, p)
        T, p = Y.shape[0], Xa.shape[1]
        lam = np.full(p, float(penalty))
        lam[0] = penalty / 100.0
        beta = np.zeros((T, p))
        # start at the training mean's logit: one Newton step from there is usually nearly converged
        beta[:, 0] = special.logit(np.clip(Y.mean(axis=1), 0.02, 0.98))
        self.beta = penalised_logit(Xa, Y, lam, beta, n_iter=n_iter)
        self._pop_x, self._pop_h, self._n_strata = pop_x, pop_h, n_strata

    def at(self, Xq: np.ndarray) -> np.ndarray:
        return special.expit(self.beta[:, 1:] @ Xq.T + self.beta[:, :1])

    def stratum_sums(self) -> np.ndarray:
        f = self.at(self._pop_x)  # (T, N)
        onehot_sums = np.zeros((f.shape[0], self._n_strata))
        for h in range(self._n_strata):  # H column sums; a (T, N) @ (N, H) one-hot would allocate N x H
            onehot_sums[:, h] = f[:, self._pop_h == h].sum(axis=1)
        return onehot_sums
