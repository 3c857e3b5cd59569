"""AIPW: a random subset's mean, corrected by a regression on the source models' responses (prediction-powered).

Items are the samples. An item's features are the source models' responses on it (correctness or graded
scores, shape ``(n_source,)``); a regression ``f`` from those features to the target's response is fitted on the
evaluated random subset and predicted on every item, and the subset's residuals ``y - f`` correct the
prediction's mean, so the estimate stays design-unbiased however far the target is from the sources
(Zhang, Dorner & Hardt 2025, "AIPW"; the difference estimator of survey sampling, Cochran 1977, Sect. 7.1; the
prediction-powered mean of Angelopoulos et al. 2023, optionally with PPI++'s power tuning, Angelopoulos, Duchi &
Zrnic 2023).

The estimate, per stratum ``h`` (one stratum without ``stratify``) and fold ``j`` of the sampled items
(``n_folds`` folds, dealt at random within strata):

    theta_jh = ( sum_{T_jh} y + sum_{U_h \\ T_jh} g_j + (N_h - t_jh) * mean_{S_jh}(y - g_j) ) / N_h

``T_j`` is the training set (the other folds), ``S_j`` the held-out fold, ``U_h`` the stratum's ``N_h`` items,
``g_j = lambda_j * f_j`` the regression fitted on ``T_j`` alone (``lambda_j = 1`` without power tuning). The
items of ``T_j`` enter with their observed values (the benchmark is finite), and given ``T_j`` the fold ``S_j`` is
a simple random sample of the other items, so every ``theta_jh`` is exactly design-unbiased for the stratum's mean
and so is their average ``theta_h`` over folds and ``theta = sum_h (N_h / N) theta_h``. ``lambda_j`` is the slope
of ``y`` on cross-fitted predictions within ``T_j`` (its folds as inner folds), clipped to [0, 1] (with
``power_tuning=True``): PPI++'s
``Cov(y, f) / ((1 + n/N) Var(f))`` with the ``n/N`` term dropped, since the mean of ``g`` over the other items is
known exactly here. ``lambda = 0`` gives back the plain mean when the folds are equal in size.

With ``n_folds=1`` (and without power tuning) it is, for one stratum,
``mean_S(y) + (mean_{U \\ S} f - mean_S f) / (1 + n/(N - n))`` (the formula of Zhang et al.'s
``benchpred/aipw.py``), with ``f`` fitted on the items it corrects: not exactly unbiased (the in-sample
residuals are too small). For a fixed ``f`` it is exactly unbiased for the full benchmark's mean, the form
``mean_{U \\ S} f + mean_S(y - f) / (1 + n/(N - n))`` is not (class Notes).

The standard error is the stratified design-based one of the cross-fitted residuals ``e = y - g``:
``sqrt(sum_h W_h^2 (1 - n_h/N_h) s_h^2 / n_h)`` (finite-population correction included; Cochran 1977,
Thm 5.3). On 0/1 responses the interval is Korn & Graubard's (1998): the Clopper-Pearson interval at the
effective sample size ``p (1 - p) / se^2``, as :class:`effstats.disco.StratifiedAIPW`'s; a symmetric interval
around the estimate is too narrow for a score near 0 or 1, when the sample's residuals are nearly all 0. Graded
scores get the t interval on Satterthwaite's degrees of freedom (``n - 1`` without strata).

References
----------
Zhang, G., Dorner, F. E. & Hardt, M. (2025). How benchmark prediction from fewer data misses the mark.
arXiv:2506.07673. Code: github.com/socialfoundations/benchmark-prediction (``benchpred/aipw.py``).
Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered inference.
*Science* 382(6671), 669–674. doi:10.1126/science.adi6000.
Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: Efficient prediction-powered inference.
arXiv:2311.01453.
Zrnic, T. & Candès, E. J. (2024). Cross-prediction-powered inference. *PNAS* 121(15), e2322083121.
Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley.
Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of positive
counts estimated from survey data. *Survey Methodology* 24(2), 193–201.
"""
from __future__ import annotations

import functools
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, special
from sklearn.base import clone, is_classifier

from .._shared import array_digest
from .._outputs import _impute, _item_groups
from .._subset import _collapsed_strata, _SubsetEstimator
from .._validation import check_flag, check_option, check_positive, check_positive_int, check_rng, is_zero_one
from ._logistic import logistic_one_feature
from ._selection import select_random

__all__ = ["AIPW", "difficulty_regressor"]


class AIPW(_SubsetEstimator):
    """Prediction-powered (AIPW) estimate of a target's benchmark score from a random subset of items.

    A regression from the source models' responses on an item to the target's response on it is fitted on the
    sampled items (cross-fitted over ``n_folds`` folds, so it never corrects an item it was fitted on) and
    predicted on every item; the sampled items' residuals correct its mean (Notes). The estimate is
    design-unbiased whatever the target's distance from the sources; optional power tuning shrinks the correction
    toward the plain mean when the regression predicts the target poorly.

    Parameters
    ----------
    n_items : int, default=100
        Number of items evaluated, drawn uniformly at random (the same items as :class:`effstats.disco.RandomDirect`
        with the same ``random_state`` and ``stratify``).
    stratify : str or array of shape (n_items_total,), default=None
        Item groups (a column of the source ``items`` table, or an array): equal numbers of items per group
        (as :class:`effstats.disco.RandomDirect`), and the estimate weights each group by its share of the items. Every
        group needs at least one sampled item; a group with one takes the variance of its nearest group with two
        (collapsed strata, Notes), and with one in every group (``n_items`` below twice the groups) that of all the
        sampled items, which errs on the large side: two items a group give a tighter interval.
    n_folds : int or None, default=None
        Folds of the sampled items for cross-fitting; 1 fits and corrects on the same items (Zhang et al.'s
        estimator, not exactly unbiased). In ``[1, n_items]``, and at least 3 with ``power_tuning=True``. None:
        ``min(5, n_items)``.
    regressor : {"ridge", "logistic", "difficulty"} or object, default="ridge"
        The regression ``f``. ``"ridge"``: ridge regression with intercept and penalty ``alpha`` (Zhang et al.'s
        default, ``Ridge(alpha=10)``), solved in closed form for all targets at once. ``"logistic"``:
        ``LogisticRegression()`` on the source responses (0/1 responses only). ``"difficulty"``: a logistic
        regression with two parameters on one item feature, the logit of the item's share of source models right
        (smoothed by half a model, ``(k + 1/2) / (M + 1)``; the order Sort & Search sorts items by):
        ``f = expit(a + b logit(difficulty))``, a one-dimensional item-response curve whose level ``a`` follows
        the target, so that few labels fit it also for a target better than every source (0/1 responses only;
        :func:`effstats.disco.difficulty_regressor`). Names in any case. A scikit-learn estimator is cloned per
        target and fold; a classifier's ``predict_proba`` of class 1 is used (0/1 responses only).
    alpha : float, default=10.0
        Ridge penalty (``regressor="ridge"`` only), on features in [0, 1].
    power_tuning : bool, default=False
        Scale the regression by ``lambda`` in [0, 1] chosen on the training folds (PPI++), which shrinks the
        correction toward the plain mean when the predictions are poor. Needs ``n_folds >= 3``. Off by default:
        ``lambda`` is estimated from the few sampled items of the training folds, and with a budget of tens to
        hundreds of items that noise costs more accuracy than the shrinkage saves (Zhang et al.'s estimator uses
        ``lambda = 1``).
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
    n_folds_ : int
        Folds used: ``n_folds``, or ``min(5, n_items)`` when it is None.
    strata_ : ndarray of shape (n_items_total,)
        Stratum code of every item (0 without ``stratify``); -1 for items no source model answered (outside
        the population the estimate is about).
    stratum_sizes_ : ndarray of shape (n_strata,)
        Items per stratum, ``N_h``.
    n_items_total_ : int
        Items in the source outputs.

    See Also
    --------
    effstats.disco.RandomDirect : the plain mean of a random subset (the estimate with ``lambda = 0``).
    effstats.disco.StratifiedHT : stratified Horvitz–Thompson estimate on source-difficulty strata.
    effstats.disco.DISCO : model-based prediction from a model signature (valid only for targets like the sources).

    Notes
    -----
    The estimate. In stratum :math:`h` (one stratum without ``stratify``) of :math:`N_h` items :math:`U_h`, the
    sampled items are dealt at random into ``n_folds`` folds; for fold :math:`j`, :math:`S_{jh}` is the held-out
    fold, :math:`T_{jh}` the other folds (:math:`t_{jh}` items), and :math:`g_j = \\lambda_j f_j` the regression
    fitted on :math:`T_j` alone (:math:`\\lambda_j = 1` without power tuning). Then

    .. math::

        \\hat\\theta_{jh} = \\frac{1}{N_h}\\Big(\\sum_{T_{jh}} y + \\sum_{U_h \\setminus T_{jh}} g_j
        + (N_h - t_{jh})\\,\\overline{(y - g_j)}_{S_{jh}}\\Big), \\qquad
        \\hat\\theta_h = \\frac{1}{J}\\sum_{j=1}^{J} \\hat\\theta_{jh}, \\qquad
        \\hat\\theta = \\sum_h \\frac{N_h}{N}\\,\\hat\\theta_h .

    Given :math:`T_j`, the fold :math:`S_j` is a simple random sample of the other items, so every
    :math:`\\hat\\theta_{jh}` is exactly design-unbiased for the stratum's mean, and so is :math:`\\hat\\theta`.
    With power tuning, :math:`\\lambda_j` is the slope of :math:`y` on cross-fitted predictions within
    :math:`T_j`, clipped to :math:`[0, 1]` (PPI++'s :math:`\\mathrm{Cov}(y, f) / ((1 + n/N)\\,\\mathrm{Var}(f))`
    without the :math:`n/N` term, since the mean of :math:`g` over the other items is known exactly here);
    :math:`\\lambda = 0` gives back the plain mean when the folds are equal in size.

    The standard error is the stratified design-based one of the cross-fitted residuals :math:`e = y - g`, with
    the finite-population correction (Cochran 1977, Thm 5.3):

    .. math::

        \\widehat{\\mathrm{se}}(\\hat\\theta) = \\sqrt{\\sum_h W_h^2 \\Big(1 - \\frac{n_h}{N_h}\\Big)
        \\frac{s_{e,h}^2}{n_h}}, \\qquad W_h = \\frac{N_h}{N}.

    A stratum with one sampled item has no variance of its own: it takes that of its nearest stratum with two in the
    strata's order (the lower at a tie), both strata's residuals around their common mean (collapsed strata, Cochran
    1977, Sect. 5A.12; with one item in every stratum, all the residuals around their mean), one variance estimate
    on their number less one degrees of freedom. It also holds the differences between the strata's mean residuals,
    and so errs on the large side: on graded scores (Beta(0.6, 0.6), 10 groups of 40 items), 10 to 20 items, the
    95 % interval covered 0.955 to 0.975 of 200 draws, where borrowing the pooled variance of the strata with two
    covered 0.71 at 11 items; AlpacaEval's 805 items cut into 20 groups of 3 to 180, 20 items, the best model the
    target: 0.975, 0.52 wide on average.

    Graded scores get the t interval :math:`\\hat\\theta \\pm t_{\\nu, 1 - \\alpha/2}\\,\\widehat{\\mathrm{se}}`, with
    Satterthwaite's effective degrees of freedom :math:`\\nu` of the strata's variance terms (Cochran 1977,
    Sect. 5.4; :math:`n - 1` without ``stratify``). On 0/1 responses a symmetric interval fails near 0 and 1: a
    sample of a target at 0.97 with one wrong item has residuals nearly all 0 and an estimate near 0.99, and
    the normal interval misses the score (at 100 of the first 400 CIFAR-10 test items, for the three best models
    as targets of the other 27, the normal interval covers 0.885 to 0.964 over 1,000 draws). So 0/1 responses
    get Korn & Graubard's (1998) interval, as :class:`effstats.disco.StratifiedAIPW` (its class Notes): the
    Clopper-Pearson interval of :math:`n^* \\hat\\theta` successes in :math:`n^*` trials at the effective sample
    size

    .. math::

        n^* = \\operatorname{clip}\\Big(\\frac{\\tilde p (1 - \\tilde p)}{\\widehat{\\mathrm{se}}^2}
        \\Big(\\frac{z_{0.975}}{t_{\\nu,\\,0.975}}\\Big)^2,\\ \\frac{n'}{2},\\ 4 n'\\Big), \\qquad
        \\tilde p = \\frac{n \\hat\\theta + 1/2}{n + 1}, \\qquad n' = \\frac{n}{1 - n/N},

    which covers 0.935 to 0.967 there, 0.4 points wider on average. Away from 0 and 1 it costs a little width and
    over-covers a little, as Clopper-Pearson does: on ImageNet's 80,000 items, 20 random targets at 0.33 to 0.79, it
    is 8, 5 and 2.5 % wider than the normal interval at 50, 100 and 300 items, and the worst target's coverage is
    0.955, 0.947 and 0.943 of 1,000 draws against 0.930, 0.929 and 0.934. With ``stratify``, a sample with one or
    two minority responses gets at most :math:`n^* = n'`, as :class:`effstats.disco.StratifiedAIPW`'s. A target
    whose sampled responses are all alike (every one right, or every one wrong) has residuals of 0 and a standard
    error of 0, which say nothing of its spread: its interval is the exact (hypergeometric) interval of its count,
    none or all of the :math:`n` items drawn without replacement from the :math:`N` right (Buonaccorsi 1987; at 30
    of 200 items every one right, [0.895, 1]); the standard error stays 0. The Clopper-Pearson interval at the
    finite-population-corrected size :math:`n / (1 - n/N)` would be narrower ([0.901, 1] there) and cover less than
    it claims. With ``stratify`` the items are a stratified simple random sample, whose count follows no
    hypergeometric law: its interval of responses all alike is the exact one of such a sample (the worst placement
    of the wrong items among the strata, as :class:`effstats.disco.StratifiedAIPW`'s), which with one stratum is the
    hypergeometric one; one to five minority responses get at least the limit of their worst placement on the side
    towards all alike, as :class:`effstats.disco.StratifiedAIPW`'s. Graded scores less than an item's worth from
    all alike at their median :math:`c`
    (:math:`m = \\sum |y - c|` below 1; near 0 or 1 the smaller of :math:`\\sum y` and :math:`\\sum (1 - y)`) get
    :math:`(1 - m)` times the interval of scores all alike at :math:`c` plus :math:`m` times the t one, so that scores
    of 1e-9 get the interval of scores of 0. Scores all alike at :math:`c` inside (0, 1) say nothing of the items the
    sample missed, which may score 0 or 1: their interval is :math:`[c L, c + (1 - c)(1 - L)]`, with :math:`[L, 1]`
    the exact interval of a sample all right (a sample all at 0.5 gets no interval of zero width).

    Missing cells. A source model's missing response is replaced by the item's mean over the models that
    answered it; items no source model answered are never drawn and are outside the estimated mean (as for
    :class:`effstats.disco.RandomDirect`). A target without outputs on some sampled items is estimated from the others
    (a smaller random sample when cells are missing at random) with a ``UserWarning``. With ``stratify``, a
    stratum where a target has no output on any sampled item is collapsed with its nearest stratum in the strata's
    order that has one (the lower, when two are equally near; Cochran 1977, Sect. 5A.12), with a ``UserWarning``
    naming the targets, the stratum, its neighbour and its items: the regression's mean over the stratum's items
    stays, its residual correction is the neighbour's, and the neighbour's variance term counts with both weights,
    :math:`(W_h + W_{h'})^2 s_{h'}^2 / n_{h'} (1 - n_{h'} / (N_h + N_{h'}))`. This assumes the stratum's missing
    results like the neighbour's answered ones, as missing cells are assumed like the answered ones of their
    stratum; never a standard error of 0 from an empty stratum.

    Why this form of the estimate. The target is the mean of all :math:`N` items,
    :math:`\\theta = \\frac{1}{N} \\sum_U y`; the :math:`n` sampled items :math:`S` (simple random sampling without
    replacement) are known exactly, the :math:`N - n` others :math:`R` are predicted by :math:`f` and corrected.
    For :math:`f` fixed (not depending on the sample; cross-fitting makes it so
    within each fold), the sample mean :math:`\\bar d_S` of :math:`d = y - f` is unbiased for
    :math:`\\bar d_U`, so :math:`(N - n) \\bar d_S` is unbiased for :math:`\\sum_R d` (whose expectation is
    :math:`(N - n) \\bar d_U`), and

    .. math::

        \\hat\\theta = \\frac{1}{N}\\Big(\\sum_S y + \\sum_R f + (N - n)\\,\\bar d_S\\Big)
        = \\bar y_S + \\frac{N - n}{N}\\,(\\bar f_R - \\bar f_S)
        = \\bar y_S + \\frac{\\bar f_R - \\bar f_S}{1 + n / (N - n)},
        \\qquad E[\\hat\\theta] = \\theta,

    since :math:`E[\\sum_S y + \\sum_R f] = n \\bar y_U + (N - n) \\bar f_U` and
    :math:`E[(N - n) \\bar d_S] = (N - n)(\\bar y_U - \\bar f_U)`. This is the ``n_folds=1`` formula. The other
    form, :math:`\\bar f_R + \\bar d_S / (1 + n / (N - n))`, has

    .. math::

        E\\Big[\\bar f_R + \\frac{N - n}{N} \\bar d_S\\Big] = \\bar f_U + \\frac{N - n}{N}(\\bar y_U - \\bar f_U)
        = \\theta + \\frac{n}{N}(\\bar f_U - \\bar y_U),

    biased for the full mean by :math:`(n/N)(\\bar f_U - \\bar y_U)`, and for the mean of the unsampled items
    (:math:`E[\\bar y_R] = \\bar y_U`) by the same amount: the unbiased estimate of that mean is
    :math:`\\bar f_R + \\bar d_S`, without the factor. The two forms differ by :math:`(n/N)(\\bar y_S - \\bar f_R)`.
    Checked by enumerating every sample of a small benchmark (``tests/test_aipw.py``).

    Validated against a plain-loop implementation with scikit-learn's ``Ridge`` (1e-10) and against Zhang et
    al.'s formula computed by hand (``tests/test_aipw.py``).

    References
    ----------
    .. [1] Zhang, G., Dorner, F. E. & Hardt, M. (2025). How benchmark prediction from fewer data misses the mark.
       arXiv:2506.07673.
    .. [2] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered
       inference. *Science* 382(6671), 669–674.
    .. [3] Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: Efficient prediction-powered inference.
       arXiv:2311.01453.
    .. [4] Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley.
    .. [5] Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number
       of positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.
    .. [6] Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
       American Statistician* 41(3), 215–218.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AIPW, RandomDirect
    >>> rm = simulate_responses(40, 2000, rng=0)
    >>> src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))  # 30 sources, 10 new models
    >>> est = AIPW(n_items=200, random_state=0).fit(src)
    >>> est.predict_interval(tgt).to_frame().head(3).round(3)  # their accuracy on all 2,000 items, from 200
               estimate  standard_error    low   high  out_of_range
    model_ids
    sim30         0.261           0.030  0.203  0.325         False
    sim31         0.483           0.033  0.416  0.550         False
    sim32         0.458           0.033  0.392  0.525         False
    >>> tgt.accuracy().head(3).round(3).tolist()  # the truth
    [0.302, 0.466, 0.476]
    >>> plain = RandomDirect(n_items=200, random_state=0).fit(src)
    >>> bool((est.selected_ == plain.selected_).all())  # the same items as the plain mean
    True
    >>> est.n_folds_, est.folds_.shape
    (5, (200,))
    """

    interval_kind = "design"
    _borrow = 0.0  # prior degrees of freedom of the pooled residual variance in each stratum's (none)
    # on 0/1 responses: Clopper-Pearson at the effective size (Korn & Graubard), at most 4 times the sample's
    # (class Notes); responses all alike (0/1, or graded within an item's worth of it): the count's exact interval
    _max_deff_inv = 4.0
    _exact_interval = True

    def __init__(self, n_items: int = 100, stratify: Any = None, n_folds: int | None = None, regressor: Any = "ridge",
                 alpha: float = 10.0, power_tuning: bool = False, random_state: Any = None) -> None:
        self.n_items = n_items
        self.stratify = stratify
        self.n_folds = n_folds
        self.regressor = regressor
        self.alpha = alpha
        self.power_tuning = power_tuning
        self.random_state = random_state

    def fit(self, source_outputs: Any, source_scores: Any = None, *, labels: Any = None,
            ridge_fits: dict | None = None) -> "AIPW":
        """Draw ``n_items`` random items and keep the source models' responses as item features.

        Parameters
        ----------
        source_outputs : ResponseMatrix, DataFrame or array
            The source models' outputs on all items (probabilities, class ids with ``labels``, or
            correctness / graded scores in [0, 1], an integer 0/1 matrix included); their correctness on an item
            is its feature vector.
        source_scores : array of shape (n_source,), optional
            Unused by the estimate (kept for the protocol).
        labels : array of shape (n_items_total,), optional
            True classes, for class ids or probabilities; an integer array given with ``labels`` is class ids.
        ridge_fits : dict, optional
            A dict the caller owns that keeps the ridge regressions of the cross-fitting folds
            (``regressor="ridge"``), each under a digest of the numbers it was fitted on (the training items'
            features and the targets' responses on them, the penalty, the strata's feature sums): an estimator
            given the same dict takes a fold's fit from it instead of refitting. The default and the power-tuned
            AIPW of one draw fit the same folds (:func:`effstats.disco.run_protocol` shares them within a call).

        Returns
        -------
        self : AIPW
            The fitted estimator.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import AIPW
        >>> rm = simulate_responses(30, 400, rng=0)
        >>> est = AIPW(n_items=40, n_folds=4, random_state=0).fit(rm)
        >>> est.selected_.shape, sorted(set(est.folds_.tolist()))
        ((40,), [0, 1, 2, 3])
        """
        if ridge_fits is not None and not isinstance(ridge_fits, dict):
            raise ValueError(f"ridge_fits: expected a dict (or None), got {type(ridge_fits).__name__}")
        src, _ = self._fit_source(source_outputs, source_scores, labels)
        k = self.n_items  # checked against the answered items by _fit_source
        tuned = check_flag(self.power_tuning, "power_tuning")
        if tuned and k < 3:
            raise ValueError(f"power_tuning: needs n_items >= 3 (three folds), got n_items={k}; set power_tuning=False")
        k_folds = _check_folds(self.n_folds, k, tuned, 1)
        self._regressor = _check_regressor(self.regressor)
        # "difficulty": its pipeline's first step (one feature per item) applied once to every item, not per fit
        self._features = _source_responses
        if isinstance(self.regressor, str) and self.regressor.lower() == "difficulty":
            self._features, self._regressor = _logit_difficulty, self._regressor[-1]
        if self._regressor is None:
            self._alpha = check_positive(self.alpha, "alpha")
        rng = check_rng(self.random_state, "random_state")
        groups = _item_groups(self.stratify, src)
        # the same draws as RandomDirect's: its items for the same random_state
        self._set_selected(self._select_answered(
            lambda n, g: select_random(n, k, groups=g, rng=rng), src, groups))
        n = src.n_items
        pop = np.arange(n) if self._answered is None else self._answered
        strata = np.full(n, -1)
        strata[pop] = 0 if groups is None else pd.factorize(pd.Series(groups[pop]), sort=True)[0]
        sizes = np.bincount(strata[pop])
        h_sel = strata[self.selected_]
        empty = np.flatnonzero(np.bincount(h_sel, minlength=len(sizes)) == 0)
        if len(empty):
            raise ValueError(f"n_items: {k} items leave {len(empty)} of the {len(sizes)} strata without a sampled "
                             "item; the estimate needs one in every stratum (raise n_items or merge groups)")
        y = _impute(src.correctness("source_outputs"), src.missing, src.item_means("source_outputs"))
        # features of the sampled items (k, M), and their sums over each stratum's items (H, M): all a linear
        # regression needs of the unsampled items
        self._x_sel = np.ascontiguousarray(self._features(y[:, self.selected_].T))
        self._stratum_sums = np.stack([np.bincount(strata[pop], weights=row[pop], minlength=len(sizes)) for row in y],
                                      axis=1)
        self._h_sel = h_sel
        self.folds_ = _deal_folds(h_sel, k_folds, rng)
        self.n_folds_ = k_folds
        self.strata_ = strata
        self.stratum_sizes_ = sizes
        self._pop_features = None  # (N, M) for other regressors, built on first use
        self._last = None  # estimates of the last target outputs (a refit must not reuse them)
        self._ridge_fits = ridge_fits
        return self

    # -- regression fits on the training items, for all targets at once
    def _fold_fit(self, X: np.ndarray, Y: np.ndarray) -> "_Fit":
        """A cross-fitting fold's regression: from ``ridge_fits`` (fit's argument) when a ridge was fitted there on
        the same numbers, else fitted (and kept there)."""
        store = getattr(self, "_ridge_fits", None)
        if store is None or self._regressor is not None or type(self)._fit_f is not AIPW._fit_f:
            return self._fit_f(X, Y)
        key = array_digest(X, Y, self._alpha, self._stratum_sums, self.stratum_sizes_)
        if key not in store:
            store[key] = self._fit_f(X, Y)
        return store[key]

    def _fit_f(self, X: np.ndarray, Y: np.ndarray) -> "_Fit":
        if self._regressor is None:
            return _RidgeFit(X, Y, self._alpha, self._stratum_sums, self.stratum_sizes_)
        if self._pop_features is None:
            src = self._source[0]
            y = _impute(src.correctness("source_outputs"), src.missing, src.item_means("source_outputs"))
            pop = self.strata_ >= 0
            self._pop_features = (np.ascontiguousarray(self._features(y[:, pop].T)), self.strata_[pop])
        return _EstimatorFit(self._regressor, X, Y, *self._pop_features, len(self.stratum_sizes_),
                             one_feature=self._features is _logit_difficulty)

    def _lambda(self, X: np.ndarray, Y: np.ndarray, folds: np.ndarray, fit_without: Any = None) -> np.ndarray:
        """Power-tuning lambda per target from cross-fitted predictions within one training set: the slope of y on
        the predictions, clipped to [0, 1]; 1 when fewer than two inner folds hold items. ``fit_without(i)``, when
        given, returns the regression fitted on the training items outside fold ``i`` (in their order)."""
        inner = np.unique(folds)
        if len(inner) < 2:
            return np.ones(Y.shape[0])
        P = np.empty_like(Y)
        for i in inner:
            test = folds == i
            fit = self._fit_f(X[~test], Y[:, ~test]) if fit_without is None else fit_without(i)
            P[:, test] = fit.at(X[test])
        pc = P - P.mean(axis=1, keepdims=True)
        var, cov = (pc**2).sum(axis=1), (pc * Y).sum(axis=1)
        # a (numerically) constant prediction carries no information: lambda 0, the plain mean
        ok = var > 1e-12 * max(1.0, Y.shape[1])
        return np.clip(np.where(ok, cov / np.where(ok, var, 1.0), 0.0), 0.0, 1.0)

    def _aipw(self, Y: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Estimates, standard errors and Satterthwaite's degrees of freedom for targets whose responses ``Y``
        (T, len(idx)) are on sampled items ``idx`` (positions in ``selected_``)."""
        X, folds, h = self._x_sel[idx], self.folds_[idx], self._h_sel[idx]
        sizes = self.stratum_sizes_.astype(float)
        n_strata = len(sizes)
        onehot = np.eye(n_strata)[h]  # (n, H)
        T = Y.shape[0]
        # a stratum drawn from but without an observed item here: its residual correction comes from the nearest
        # one with items (collapsed strata, class Notes); its model predictions over its items stay
        drawn = np.bincount(self._h_sel, minlength=n_strata) > 0
        to = _collapsed_strata(((onehot.sum(axis=0) > 0) | ~drawn)[None])[0]
        corrected = np.zeros((T, n_strata))
        n_corrected = np.zeros(n_strata)
        uncorrected = np.zeros((T, n_strata))
        n_fits = 0
        resid = np.zeros_like(Y)
        k_folds = self.n_folds_
        pair_fits: dict = {}

        def without(i: int, j: int) -> _Fit:
            # power tuning's inner fit for outer fold j without inner fold i is the one on the items outside folds i
            # and j (the same rows in the same order): fitted once for the pair
            key = (min(i, j), max(i, j))
            if key not in pair_fits:
                keep = (folds != i) & (folds != j)
                pair_fits[key] = self._fit_f(X[keep], Y[:, keep])
            return pair_fits[key]

        for j in range(k_folds):
            # one fold: fitted and corrected on the same items (the authors' estimator)
            test = np.ones(len(idx), bool) if k_folds == 1 else folds == j
            train = test if k_folds == 1 else ~test
            if not test.any() or not train.any():
                continue
            fit = self._fold_fit(X[train], Y[:, train])
            lam = (self._lambda(X[train], Y[:, train], folds[train], lambda i: without(i, j)) if self.power_tuning
                   else np.ones(T))
            f_test = fit.at(X[test])
            t_h = onehot[train].sum(axis=0)
            m_h = onehot[test].sum(axis=0)
            y_known = Y[:, train] @ onehot[train]
            f_rest = fit.stratum_sums() - fit.at(X[train]) @ onehot[train]  # sum of f over U_h \ T_jh
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = ((Y[:, test] - lam[:, None] * f_test) @ onehot[test]) / m_h
            corr, m_h = corr[:, to], m_h[to]
            theta = (y_known + (sizes - t_h) * corr + lam[:, None] * f_rest) / sizes
            corrected += np.where(m_h > 0, theta, 0.0)
            n_corrected += m_h > 0
            uncorrected += (y_known + f_rest) / sizes
            n_fits += 1
            resid[:, test] = Y[:, test] - lam[:, None] * f_test
        n_h = onehot.sum(axis=0)
        if n_fits == 0:  # the observed items lie in one fold: nothing to cross-fit, the plain mean
            k, n = Y.shape[1], sizes.sum()
            s2 = Y.var(axis=1, ddof=1) if k > 1 else np.full(T, 0.25)
            return Y.mean(axis=1), np.sqrt(s2 / k * (1 - k / n)), np.full(T, max(k - 1, 1.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            theta_h = np.where(n_corrected > 0, corrected / n_corrected, uncorrected / n_fits)
        w = sizes / sizes.sum()
        # a collapsed stratum's items and weight join its neighbour's: (W_h + W_h')^2 s_h'^2 / n_h' (1 - f)
        merged = np.bincount(to, weights=sizes, minlength=n_strata)
        var, df = _stratified_variance(resid, onehot, n_h, merged, merged / sizes.sum(), with_df=True,
                                       borrow=self._borrow)
        return theta_h @ w, np.sqrt(var), df

    def _selected_strata(self) -> tuple[np.ndarray, np.ndarray] | None:
        return (self.stratum_sizes_, self._h_sel) if len(self.stratum_sizes_) > 1 else None

    def _estimate(self, o) -> tuple[np.ndarray, np.ndarray]:
        # predict_interval asks for the estimate and its standard error on the same outputs: computed once
        last = getattr(self, "_last", None)
        if last is not None and last[0] is o:
            return last[1]
        Y = o.correctness("target_outputs")
        if o.missing is None:
            out = self._aipw(Y, np.arange(Y.shape[1]))
        else:  # each target's observed items are its sample; targets missing the same items share the fits
            est, se, df = np.empty(len(Y)), np.empty(len(Y)), np.empty(len(Y))
            patterns, inv = np.unique(o.missing, axis=0, return_inverse=True)
            for p, pattern in enumerate(patterns):
                rows, idx = np.flatnonzero(inv.ravel() == p), np.flatnonzero(~pattern)
                est[rows], se[rows], df[rows] = self._aipw(Y[np.ix_(rows, idx)], idx)
            out = (est, se, df)
        self._last = (o, out)
        return out

    def _predict(self, o) -> np.ndarray:
        return self._estimate(o)[0]

    def _design_se(self, o) -> np.ndarray:
        """Stratified design-based standard error of the cross-fitted residuals (module docstring)."""
        return self._estimate(o)[1]

    def _design_srs(self, o) -> tuple[np.ndarray, np.ndarray]:
        """Observed sampled items per target and stratum, and the strata's sizes, shape (n_target, n_strata): a
        target's responses all alike get the exact interval of a stratified simple random sample all alike (class
        Notes; with one stratum the hypergeometric one of its count)."""
        onehot = np.eye(len(self.stratum_sizes_))[self._h_sel]  # (k, H)
        seen = np.ones((o.n_models, o.n_items), bool) if o.missing is None else ~o.missing
        k_h = seen.astype(float) @ onehot
        return k_h, np.broadcast_to(self.stratum_sizes_.astype(float), k_h.shape)

    def _design_df(self, o) -> np.ndarray:
        """Satterthwaite's effective degrees of freedom of the stratified residual variance (``n - 1`` without
        ``stratify``; class Notes)."""
        return self._estimate(o)[2]

    def _design_n(self, o, minority) -> np.ndarray:
        """Korn & Graubard's effective sample size of the Clopper-Pearson interval on 0/1 responses (class Notes);
        for responses all alike, or graded within an item's worth of it, the finite-population-corrected count of
        items evaluated, ``k / (1 - k/N)``."""
        est, se, df = self._estimate(o)
        y = o.correctness("target_outputs")
        n = self.n_items_total_
        k = np.full(len(y), float(y.shape[1])) if o.missing is None else (~o.missing).sum(axis=1).astype(float)
        with np.errstate(divide="ignore"):
            srs = np.where(k < n, k / (1 - k / n), np.inf)
        p = (k * np.clip(est, 0.0, 1.0) + 0.5) / (k + 1)
        z = special.ndtri(0.975)
        with np.errstate(divide="ignore", invalid="ignore"):
            kish = p * (1 - p) / se**2 * (z / special.stdtrit(np.maximum(df, 1.0), 0.975)) ** 2
        kish = np.clip(kish, srs / 2, self._max_deff_inv * srs)
        graded = ~is_zero_one(y, axis=1)
        if len(self.stratum_sizes_) > 1:
            # one or two minority responses of a stratified sample: their residuals' variance depends on the strata
            # that hold them, small in a stratum sampled densely, while the minority items the sample missed may lie
            # in the strata sampled least; at most the simple random sample's size (class Notes)
            kish = np.where(~graded & (minority <= 2), np.minimum(kish, srs), kish)
        return np.where((minority > 0) & (se > 0) & ~(graded & (minority < 1)), kish, srs)


def _check_folds(n_folds: Any, k: int, tuned: bool, minimum: int) -> int:
    """``n_folds`` checked: one bound, as every fold needs an item, and power tuning chooses lambda by
    cross-fitting within the training folds, so it needs three folds (two inner ones). None: ``min(5, k)``."""
    if n_folds is None:
        if tuned and k < 3:
            raise ValueError(f"power_tuning: needs n_items >= 3 (three folds), got n_items={k}; set "
                             "power_tuning=False")
        return max(min(5, k), minimum)
    try:
        return check_positive_int(n_folds, "n_folds", minimum=3 if tuned else minimum, maximum=k)
    except ValueError as exc:
        why = []
        if tuned:
            why.append("power_tuning=True chooses lambda by cross-fitting within the training folds; set "
                       "power_tuning=False for fewer folds")
        if isinstance(n_folds, Integral) and n_folds > k:
            why.append(f"at most n_items={k}, as every fold needs a selected item: with n_items={k} pass "
                       f"n_folds={k} or fewer")
        if not why:
            raise
        raise ValueError(f"{exc} ({'; '.join(why)})") from None


def _deal_folds(h_sel: np.ndarray, k_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Folds of the sampled items (strata ``h_sel``), dealt within strata in random order, so that each fold holds
    about k/K items and n_h/K of every stratum."""
    k = len(h_sel)
    order = np.lexsort((rng.random(k), h_sel))
    folds = np.empty(k, dtype=int)
    folds[order] = (rng.integers(k_folds) + np.arange(k)) % k_folds
    return folds


def _stratified_variance(resid: np.ndarray, onehot: np.ndarray, n_h: np.ndarray, sizes: np.ndarray,
                         w: np.ndarray, with_df: bool = False, borrow: float = 0.0) -> Any:
    """``sum_h W_h^2 (1 - n_h/N_h) s_h^2 / n_h`` of residuals (T, n) in strata ``onehot`` (n, H) (Cochran 1977,
    Thm 5.3); strata without items add 0. With ``with_df``, also Satterthwaite's effective degrees of freedom
    ``(sum_g v_g)^2 / sum_g v_g^2 / nu_g`` of the terms ``v_g`` of the independent variance estimates (Cochran 1977,
    Sect. 5.4).

    A stratum with one item has no variance of its own: it takes that of its nearest stratum with two in the strata's
    order (the lower at a tie), both strata's items around their common mean (collapsed strata, Cochran 1977,
    Sect. 5A.12; with no stratum of two, all the items around their mean). Such a group of strata has one variance
    estimate, on its items less one degrees of freedom, and one term of the sum above. It holds the differences
    between the strata's means as well, so it errs on the large side.

    With ``borrow > 0`` (and some stratum of two) every stratum's variance is instead
    ``((n_h - 1) s_h^2 + borrow * pooled) / (n_h - 1 + borrow)``, the pooled within-stratum variance as ``borrow``
    prior degrees of freedom (the same for a stratum with one item), each on ``n_h - 1 + borrow`` degrees of
    freedom."""
    dof = np.maximum(n_h - 1, 0)
    if borrow > 0 and dof.sum() > 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_h = np.nan_to_num((resid @ onehot) / n_h)
        ss_h = ((resid - mean_h @ onehot.T) ** 2) @ onehot
        pooled = ss_h.sum(axis=1) / dof.sum()
        s2_h = (ss_h + borrow * pooled[:, None]) / (dof + borrow)
        group, nu_g = np.eye(len(n_h)), dof + borrow
    else:
        present = n_h >= 2
        to = _collapsed_strata(present[None])[0] if present.any() else np.zeros(len(n_h), int)
        group = np.eye(len(n_h))[to]  # (H, H): stratum -> the stratum whose variance it takes
        in_g = onehot @ group
        n_g = n_h @ group
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_g = np.nan_to_num((resid @ in_g) / n_g)
        nu_g = np.maximum(n_g - 1, 0)
        s2_g = (((resid - mean_g @ in_g.T) ** 2) @ in_g) / np.maximum(nu_g, 1)
        s2_h = s2_g[:, to]
    with np.errstate(invalid="ignore", divide="ignore"):
        terms = np.where(n_h > 0, w**2 * s2_h / n_h * (1 - n_h / sizes), 0.0)
    var = terms.sum(axis=1)
    if not with_df:
        return var
    v_g = terms @ group
    with np.errstate(invalid="ignore", divide="ignore"):
        # every residual 0 (no variance): the degrees of freedom of the sample, the value for equal terms
        df = np.where(var > 0, var**2 / np.where(v_g > 0, v_g**2 / nu_g, 0.0).sum(axis=1), max(dof.sum(), 1))
    return var, df


def _check_regressor(regressor: Any) -> Any:
    """None for the closed-form ridge; otherwise an unfitted scikit-learn estimator."""
    if isinstance(regressor, str):
        regressor = check_option(regressor, "regressor", ("ridge", "logistic", "difficulty"), ignore_case=True)
        if regressor == "ridge":
            return None
        if regressor == "difficulty":
            return difficulty_regressor()
        if regressor == "logistic":
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression()
    elif hasattr(regressor, "fit") and (hasattr(regressor, "predict") or hasattr(regressor, "predict_proba")):
        return regressor
    raise ValueError(f"regressor: expected 'ridge', 'logistic', 'difficulty' or a scikit-learn estimator, got "
                     f"{regressor!r}")


def _source_responses(X: np.ndarray) -> np.ndarray:
    """The features of the ridge and of a user's regressor: the item's source responses themselves."""
    return X


def _logit_difficulty(X: np.ndarray) -> np.ndarray:
    """``logit((k + 1/2) / (M + 1))`` of each row of source responses ``X`` (items, M), ``k`` the row's sum: the
    item's share of source models right, smoothed by half a model so that it is finite; shape (items, 1)."""
    X = np.asarray(X, float)
    p = (X.sum(axis=1) + 0.5) / (X.shape[1] + 1.0)
    return np.log(p / (1.0 - p))[:, None]


def difficulty_regressor(C: float = 100.0) -> Any:
    """The item-difficulty regressor of :class:`effstats.disco.AIPW` (``regressor="difficulty"``).

    A scikit-learn pipeline: the logit of an item's share of source models right (from its row of source
    responses, smoothed by half a model), then a logistic regression with intercept, ``f = expit(a + b z)``. Two
    parameters per target: a one-dimensional item-response curve on the sources' difficulty scale, fitted to the
    minimum of its penalised likelihood by Newton's method (scikit-learn's ``newton-cholesky`` solver; AIPW fits
    every target of a fold at once, to the same minimum).

    Parameters
    ----------
    C : float, default=100.0
        Inverse L2 penalty of the logistic regression (on the slope ``b``); large: nearly unpenalised, the
        penalty only keeps the fit finite when a training fold separates.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Unfitted; features are an item's source responses (items, M), targets 0/1.

    See Also
    --------
    effstats.disco.AIPW : uses it with ``regressor="difficulty"``.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import difficulty_regressor
    >>> X = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 0]] * 5, dtype=float)  # 20 items, 3 sources
    >>> y = np.array([1, 1, 0, 0] * 5)
    >>> f = difficulty_regressor().fit(X, y).predict_proba(X)[:4, 1]
    >>> bool(np.all(np.diff(f) < 0))  # easier items (more sources right) are likelier right
    True
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    from .._validation import check_positive

    C = check_positive(C, "C")
    # Newton's method to the minimum (L-BFGS, the default solver, stops where the gradient is below its tol, up to
    # 1e-4 from it in fitted probabilities): the fits AIPW(regressor="difficulty") makes for all targets at once
    return make_pipeline(FunctionTransformer(_logit_difficulty),
                         LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000))


class _Fit:
    """A regression fitted on training items for every target: predictions at items, sums over strata."""

    def at(self, Xq: np.ndarray) -> np.ndarray:  # (q, M) -> (T, q)
        raise NotImplementedError

    def stratum_sums(self) -> np.ndarray:  # (T, H): sum of f over every item of each stratum
        raise NotImplementedError


class _RidgeFit(_Fit):
    """Ridge with an unpenalised intercept (scikit-learn's ``Ridge(alpha)``), all targets in one thin SVD of the
    centred features (as cheap with more items than features as with fewer)."""

    def __init__(self, X: np.ndarray, Y: np.ndarray, alpha: float, sums: np.ndarray, sizes: np.ndarray) -> None:
        mu, ybar = X.mean(axis=0), Y.mean(axis=1)
        u, s, vt = linalg.svd(X - mu, full_matrices=False)
        B = vt.T @ ((s / (s**2 + alpha))[:, None] * (u.T @ (Y - ybar[:, None]).T))
        self.B, self.a = B, ybar - mu @ B  # (M, T), (T,)
        self._sums, self._sizes = sums, sizes

    def at(self, Xq: np.ndarray) -> np.ndarray:
        return (Xq @ self.B).T + self.a[:, None]

    def stratum_sums(self) -> np.ndarray:
        # a linear f: its sum over a stratum is f at the stratum's feature sum
        return (self._sums @ self.B).T + np.outer(self.a, self._sizes)


class _EstimatorFit(_Fit):
    """Any scikit-learn estimator, cloned and fitted per target; predicted on every item for the sums.

    ``one_feature``: the difficulty regressor's logistic regression on its one feature, whose prediction at an item is
    a function of the feature's value alone (``expit(a + b x)``, one product per item): each model is predicted once,
    at the distinct values of the items' feature (a few dozen: the source counts right), and those predictions are
    read for the items (the same numbers as predicting every item); its parameters are plain numbers, so a new
    instance with them stands for a clone. A plain L2 logistic regression (:func:`_plain_logistic`) is fitted for
    every target at once, to its minimum, by :func:`effstats.disco._logistic.logistic_one_feature`.
    """

    def __init__(self, regressor: Any, X: np.ndarray, Y: np.ndarray, pop_x: np.ndarray, pop_h: np.ndarray,
                 n_strata: int, one_feature: bool = False) -> None:
        classify = is_classifier(regressor)
        if classify and not all(is_zero_one(y) for y in Y):
            raise ValueError("regressor: a classifier needs 0/1 target responses; use 'ridge' or a regressor for "
                             "graded scores")
        # a training set with one response value: the constant (a classifier cannot be fitted on one class)
        const = np.ptp(Y, axis=1) == 0
        self._models: list = [float(y[0]) if c else None for y, c in zip(Y, const)]
        self._classify, self._pop_x, self._pop_h, self._n_strata = classify, pop_x, pop_h, n_strata
        self._grid = None
        coef = None
        if one_feature and _plain_logistic(regressor) and not const.all():
            coef = self._fit_logistic(regressor, X, Y, ~const)
        elif not const.all():
            make = (functools.partial(type(regressor), **regressor.get_params(deep=False)) if one_feature
                    else functools.partial(clone, regressor))
            for t in np.flatnonzero(~const):
                self._models[t] = make().fit(X, Y[t])
        if one_feature:
            values, at_item = np.unique(pop_x[:, 0], return_inverse=True)
            preds = [None if coef is not None and t in coef else self._one(m, values[:, None])
                     for t, m in enumerate(self._models)]
            if coef is not None:  # expit(a + b x) for every fitted target at once, as predict_proba computes it
                rows = np.fromiter(coef, int, len(coef))
                a, b = np.array([coef[t][0] for t in rows]), np.array([coef[t][1] for t in rows])
                for t, p in zip(rows, special.expit(values * b[:, None] + a[:, None])):
                    preds[t] = p
            self._grid = (values, at_item.ravel(), preds)

    def _fit_logistic(self, regressor: Any, X: np.ndarray, Y: np.ndarray, fit: np.ndarray) -> dict:
        """Fit the targets ``fit`` (a mask) at once; their models (``LogisticRegression`` instances with the
        fitted coefficients) go into ``_models``; returns {target: (intercept, slope)}."""
        params = regressor.get_params(deep=False)
        rows = np.flatnonzero(fit)
        a, b = logistic_one_feature(X[:, 0], Y[rows], params["C"], params["fit_intercept"])
        for t, a_t, b_t in zip(rows, a, b):
            m = type(regressor)(**params)
            m.classes_, m.n_features_in_ = np.array([0.0, 1.0]), 1
            m.coef_, m.intercept_ = np.array([[b_t]]), np.array([a_t])
            self._models[t] = m
        return {int(t): (a_t, b_t) for t, a_t, b_t in zip(rows, a, b)}

    def _one(self, model: Any, Xq: np.ndarray) -> np.ndarray:
        if isinstance(model, float):
            return np.full(len(Xq), model)
        if self._classify:
            return model.predict_proba(Xq)[:, list(model.classes_).index(1.0)]
        return np.asarray(model.predict(Xq), dtype=float)

    def at(self, Xq: np.ndarray) -> np.ndarray:
        if self._grid is not None:
            values, _, preds = self._grid
            pos = np.searchsorted(values, Xq[:, 0]).clip(max=len(values) - 1)
            if np.array_equal(values[pos], Xq[:, 0]):  # every queried value is an item's
                return np.stack([p[pos] for p in preds])
        return np.stack([self._one(m, Xq) for m in self._models])

    def stratum_sums(self) -> np.ndarray:
        if self._grid is not None:
            _, at_item, preds = self._grid
            return np.stack([np.bincount(self._pop_h, weights=p[at_item], minlength=self._n_strata) for p in preds])
        return np.stack([np.bincount(self._pop_h, weights=self._one(m, self._pop_x), minlength=self._n_strata)
                         for m in self._models])


def _plain_logistic(regressor: Any) -> bool:
    """Whether ``regressor`` is a binary L2 logistic regression (L-BFGS or Newton) without class weights: the
    penalised likelihood :func:`effstats.disco._logistic.logistic_one_feature` minimises (its ``fit`` stops near the
    same minimum, at its ``tol``)."""
    from sklearn.linear_model import LogisticRegression

    p = regressor.get_params(deep=False)
    # .get: parameters that scikit-learn releases deprecate and remove (multi_class, penalty) read as their defaults
    return (type(regressor) is LogisticRegression and p.get("solver") in ("lbfgs", "newton-cg", "newton-cholesky")
            and p.get("penalty", "l2") == "l2"
            and p.get("class_weight") is None and p.get("l1_ratio") is None
            and p.get("multi_class", "auto") in ("auto", "ovr"))
