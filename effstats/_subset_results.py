"""The result of a subset estimator: predicted full-benchmark scores with their intervals, and their accuracy.

:class:`SubsetPrediction` holds what ``predict_interval`` of every subset estimator
(:class:`effstats._subset._SubsetEstimator`) returns and makes its intervals: the conformal quantile of
cross-validated source residuals, or a design-based interval (Wald or Student's t, Wilson's score interval, Korn &
Graubard's Clopper-Pearson interval at the effective size, the exact hypergeometric interval of responses all alike,
and the bound of a stratified sample with few minority responses). :func:`prediction_metrics` scores estimates and
intervals against true scores (:class:`PredictionMetrics`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from ._results import ConfidenceInterval, check_confidence_level, normal_interval, read_only_fields, ReadOnlyFields
from ._validation import check_array

__all__ = ["SubsetPrediction", "PredictionMetrics", "prediction_metrics"]


@dataclass(frozen=True)
class PredictionMetrics:
    """Accuracy of estimated benchmark scores: MAE in percentage points, Spearman's rank correlation, and (when
    intervals were made) the share of targets whose true score lies in its interval and the mean width (points),
    with the intervals' ``confidence_level`` (NaN when not given).

    Attributes
    ----------
    mae : float
        Mean absolute error of the estimates, in percentage points (×100).
    spearman : float
        Spearman's rank correlation between true and estimated scores (0 when either is constant).
    n_models : int
        Number of target models scored.
    coverage : float
        Share of targets whose true score lies in its interval (NaN without intervals).
    width : float
        Mean width of the intervals, in percentage points (NaN without intervals).
    confidence_level : float
        Level the intervals were made at (NaN when not given).

    See Also
    --------
    effstats.disco.prediction_metrics : computes it.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import prediction_metrics
    >>> m = prediction_metrics(np.array([0.5, 0.6, 0.7]), np.array([0.52, 0.58, 0.71]))
    >>> round(m.mae, 3), m.spearman, m.n_models
    (1.667, 1.0, 3)
    """

    mae: float
    spearman: float
    n_models: int
    coverage: float = float("nan")
    width: float = float("nan")
    confidence_level: float = float("nan")

    def as_dict(self) -> dict[str, float]:
        """The metrics as a plain dict (``mae``, ``spearman``, ``n_models``, ``coverage``, ``width``,
        ``confidence_level``: the level of the intervals behind ``coverage`` and ``width``).

        Returns
        -------
        dict

        Examples
        --------
        >>> from effstats.disco import prediction_metrics
        >>> prediction_metrics([0.5, 0.6, 0.7], [0.52, 0.58, 0.71]).as_dict()["n_models"]
        3
        >>> ci = ([0.45, 0.55, 0.65], [0.55, 0.65, 0.75])
        >>> prediction_metrics([0.5, 0.6, 0.7], [0.5, 0.6, 0.7], ci, confidence_level=0.9).as_dict()["confidence_level"]
        0.9
        """
        return {"mae": self.mae, "spearman": self.spearman, "n_models": self.n_models, "coverage": self.coverage,
                "width": self.width, "confidence_level": self.confidence_level}


def prediction_metrics(true_scores: Any, estimates: Any, interval: Any = None, *,
                       confidence_level: float | None = None) -> PredictionMetrics:
    """MAE (×100, percentage points) and Spearman ρ between true and estimated scores, shape (n_models,).

    ρ is reported as 0 when the estimates (or the truths) are all equal: a constant prediction ranks nothing.

    Parameters
    ----------
    true_scores : array-like of shape (n_models,)
        The target models' true full-benchmark scores (at least two models).
    estimates : array-like of shape (n_models,)
        Their estimated scores, in the same order.
    interval : (array-like, array-like), default=None
        The intervals' ``(low, high)``, each of shape (n_models,) (NaN allowed), for instance
        ``SubsetPrediction.confidence_interval()``; adds the coverage and the mean width (points).
    confidence_level : float in (0, 1), default=None
        The level ``interval`` was made at, kept in the result beside the coverage (NaN when None).

    Returns
    -------
    PredictionMetrics
        ``mae``, ``spearman``, ``n_models``, and ``coverage``, ``width`` and ``confidence_level`` (NaN without
        ``interval``).

    Raises
    ------
    ValueError
        Fewer than two models, shapes that differ, or non-finite scores.

    See Also
    --------
    effstats.disco.evaluate_split : fits an estimator on a model split and scores it with this.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import prediction_metrics
    >>> truth, est = np.array([0.5, 0.6, 0.7]), np.array([0.52, 0.58, 0.71])
    >>> m = prediction_metrics(truth, est, (est - 0.05, est + 0.05))
    >>> round(m.mae, 3), m.coverage, round(m.width, 1)
    (1.667, 1.0, 10.0)
    """
    t = check_array(true_scores, "true_scores", ndim=1)
    e = check_array(estimates, "estimates", ndim=1, shape=t.shape)
    if t.size < 2:
        raise ValueError("true_scores: need at least 2 target models for a rank correlation")
    rho = stats.spearmanr(t, e)[0] if np.ptp(e) > 0 and np.ptp(t) > 0 else 0.0
    cov = width = float("nan")
    if interval is not None:
        lo = check_array(interval[0], "interval", ndim=1, shape=t.shape, allow_nan=True)
        hi = check_array(interval[1], "interval", ndim=1, shape=t.shape, allow_nan=True)
        cov, width = float(np.mean((lo <= t) & (t <= hi))), float(100 * np.mean(hi - lo))
    level = float("nan") if confidence_level is None else check_confidence_level(confidence_level)
    return PredictionMetrics(float(100 * np.abs(t - e).mean()), float(rho), int(t.size), cov, width, level)


# a 0/1 target of a stratified sample with 1 to this many minority responses gets at least the limit of every
# placement of its minority items among the strata (SubsetPrediction's n_minority). From more, Korn & Graubard's
# effective size rests on enough responses; the worst placement, which is wider than a simple random sample's
# interval, then only widens intervals that cover (CIFAR-10's best models from 300 of 10,000 items: +2 % width up to
# 10 minority responses, +14 % without a bound, at a coverage of 0.957 already)
_FEW_MINORITY = 5


@dataclass(frozen=True)
class SubsetPrediction(ReadOnlyFields):
    """Predicted full-benchmark scores of target models with their uncertainty (the effstats result protocol).

    Its arrays are read-only: ``dataclasses.replace(p, statistic=...)`` makes a result of other numbers.

    Attributes
    ----------
    statistic : ndarray of shape (n_target,)
        Point predictions.
    standard_error : ndarray of shape (n_target,)
        Design-based standard error (random subsets), or the root-mean-square cross-validated residual over
        the source models (model-based predictors: the same for every target).
    method : {"conformal", "design"}
        How :meth:`confidence_interval` is made.
    residuals : ndarray of shape (n_source,) or None
        Absolute cross-validated residuals of the source models (``method="conformal"``).
    bounds : (float, float)
        Range of the score; intervals are clipped to it.
    model_ids : Index or None
    n_effective : ndarray of shape (n_target,) or None
        ``method="design"``: the effective sample size (finite-population-corrected ``k / (1 − k/N)``, or the
        design-effect one of a stratified design; inf when every item was sampled).
    wilson : ndarray of bool, shape (n_target,), or None
        Targets whose sampled outputs are 0/1 correctness: their interval is Wilson's score interval at
        ``n_effective``; the others (graded scores) get the Wald interval. None: Wilson wherever ``n_effective`` is
        finite and positive.
    n_missing : int
        Cells missing in the source (reference) outputs the estimator was fitted on (its ``n_missing_``).
    n_missing_target : int
        Cells missing in the targets' outputs on the selected items (estimated from the observed ones).
    out_of_range : ndarray of bool, shape (n_target,), or None
        Targets outside the range the estimator was fitted on: on the selected items (mean response beyond the
        source models' range, or farther from every source than any source is from its nearest neighbour), or with
        an estimate beyond the source models' scores over every item (the check ``effstats estimate`` applies to
        every method; a design-based estimate only beyond them by more than its sampling error, its 95 % interval
        clear of them). A model-based interval (``method="conformal"``) is calibrated on the sources and
        need not hold for them; a design-based one does.
    df : ndarray of shape (n_target,) or None
        ``method="design"``: degrees of freedom of the standard error; the Wald interval then takes Student's t
        quantile instead of the normal one (None: the normal quantile).
    exact : ndarray of bool, shape (n_target,), or None
        Targets among ``wilson`` whose interval is the Clopper–Pearson interval of ``statistic * n_effective``
        successes in ``n_effective`` trials (Korn & Graubard 1998) instead of Wilson's; None: none.
    alike : ndarray of shape (n_target,), or None
        Graded targets (not ``wilson``): how far their sampled scores are from all alike, ``sum |y - c|`` with
        ``c`` their median (``alike_at``; for scores near 0 or 1 the smaller of the totals ``sum y`` and
        ``sum (1 - y)``), clipped to [0, 1]. Below 1 (scores within an item's worth of all alike, whose residual
        variance says nothing), the interval moves linearly from the interval of scores all alike (0) to the t
        interval (1); None: the t interval. Scores all alike at 0 or 1 get the Clopper–Pearson interval at
        ``n_effective``; all alike at ``c`` inside (0, 1), ``[c L, c + (1 - c)(1 - L)]`` with ``[L, 1]`` the
        interval of scores all 1: the sample says nothing of the items it missed, which may score 0 or 1, so a
        constant sample of 0.5 gets no interval of zero width.
    alike_at : ndarray of shape (n_target,), or None
        The median ``c`` of each target's sampled scores (above); None: 0 or 1 as the statistic lies.
    n_sampled, population : ndarray of shape (n_target,) or (n_target, n_strata), or None
        Targets whose observed sampled items are a simple random sample of ``population`` items (NaN elsewhere):
        ``n_sampled`` of them. Their interval of responses all alike (``exact``, and the end of ``alike``'s ramp)
        is the exact hypergeometric one of none or all of the ``n_sampled`` items right (Buonaccorsi 1987), not
        the Clopper–Pearson or Wilson one at ``n_effective``, which are narrower near a census and cover less
        than they claim (at 120 of 400 items every one right, 95 % lower limits of 0.9787 and 0.9781 against the
        exact 0.975). Two-dimensional: a stratified simple random sample, ``n_sampled[:, h]`` of the
        ``population[:, h]`` items of stratum ``h``, whose interval of responses all alike is the exact stratified
        one (the worst placement of the wrong items among the strata; ``stratified_alike_interval`` in
        ``effstats._hypergeometric``). None: none.
    n_minority : ndarray of shape (n_target,), or None
        With a ``population``: the 0/1 targets' minority responses among their sampled items (the wrong ones of a
        target mostly right; 0 for graded targets, whose interval does not read it). With a two-dimensional one, a
        0/1 target with one to five gets, on the side towards all alike, at least the limit that holds wherever the
        population's minority items lie among the strata (``stratified_minority_limit`` in
        ``effstats._hypergeometric``; Hoeffding 1956): Korn & Graubard's effective size, estimated from a handful of
        minority responses, is too large when they come from the strata sampled most densely (targets at
        0.98-0.996, 50 of 2,000 items: of the samples with two and three wrong items its interval covers 0.91 and
        0.68, with the limit 0.98 and 0.86;
        ``benchmarks/few_wrong_coverage.py``). None: none.
    floor : ndarray of shape (n_target,), or None
        Graded targets: the interval is at least ``statistic ± z × floor`` (``z`` the normal quantile of the level),
        the interval of scores at the range's bounds where the sampled scores are within an item's worth of alike in
        every stratum, which says nothing of the strata's spread (StratifiedHT's Notes); 0 elsewhere. None: none.

    See Also
    --------
    effstats.disco.AIPW.predict_interval, effstats.disco.DISCO.predict_interval : make it.

    References
    ----------
    Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.

    Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
    American Statistician* 41(3), 215–218.

    Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. *The Annals of
    Mathematical Statistics* 27(3), 713–721.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.disco import AIPW
    >>> rm = simulate_responses(60, 400, rng=0)
    >>> src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 53))
    >>> p = AIPW(40, random_state=0).fit(src).predict_interval(tgt)
    >>> p.method, p.statistic.round(3), p.out_of_range
    ('design', array([0.604, 0.408, 0.469]), array([False, False, False]))
    >>> p.confidence_interval(0.9).low.round(3)
    array([0.458, 0.291, 0.327])
    >>> p.to_frame(0.9).round(3)
               estimate  standard_error    low   high  out_of_range
    model_ids
    sim50         0.604           0.077  0.458  0.738         False
    sim51         0.408           0.067  0.291  0.534         False
    sim52         0.469           0.079  0.327  0.615         False
    """

    statistic: np.ndarray
    standard_error: np.ndarray
    method: str
    residuals: np.ndarray | None = None
    bounds: tuple[float, float] = (0.0, 1.0)
    model_ids: Any = field(default=None)
    n_effective: np.ndarray | None = None
    wilson: np.ndarray | None = None
    n_missing: int = 0
    n_missing_target: int = 0
    out_of_range: np.ndarray | None = None
    df: np.ndarray | None = None
    exact: np.ndarray | None = None
    alike: np.ndarray | None = None
    n_sampled: np.ndarray | None = None
    population: np.ndarray | None = None
    alike_at: np.ndarray | None = None
    n_minority: np.ndarray | None = None
    floor: np.ndarray | None = None
    # intervals made, by level (the fields are fixed, so an interval asked for again is the one made before)
    _intervals: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        read_only_fields(self)  # the intervals kept by level hold for these numbers only

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for each target's full-benchmark score, arrays of shape (n_target,).

        ``method="conformal"`` (model-based estimators: DISCO, anchors, IRT, Sort & Search's threshold): the
        prediction ± the ⌈(n+1)·level⌉-th smallest absolute cross-validated source residual (n source models; the
        whole score range when that rank exceeds n). Approximately valid when targets are exchangeable with the
        sources (random model splits; the residuals come from models fitted on (K−1)/K of the sources, so there
        is no finite-sample guarantee), not under a chronological or performance shift.

        ``method="design"`` (random items: AIPW, StratifiedAIPW, RandomDirect, StratifiedHT, the chooser's Sort &
        Search), per target, the first branch that applies:

        1. 0/1 responses (``wilson``) all alike (every sampled item right, or every one wrong) where the sample's
           ``population`` is recorded (AIPW, StratifiedAIPW, RandomDirect, StratifiedHT): the exact interval of
           that count, hypergeometric for one simple random sample (Buonaccorsi 1987), the worst
           placement of the wrong items among the strata for a stratified one (``population``, ``n_sampled``).
        2. Other 0/1 responses with ``exact`` (AIPW and StratifiedAIPW): Korn & Graubard's (1998) interval, the
           Clopper–Pearson interval of ``statistic × n_effective`` successes in ``n_effective`` trials, the
           effective sample size from the design-based standard error (its bounds and degrees-of-freedom factor
           are in the estimator's Notes).
        3. Other 0/1 responses: Wilson's score interval at ``n_effective`` (the finite-population-corrected
           number of sampled items for RandomDirect; the design effect's size for StratifiedHT and Sort & Search).
        4. Graded scores: ``statistic ± t × standard_error``, with Student's t at ``df`` (AIPW and StratifiedAIPW:
           n − 1, or Satterthwaite's with strata) or the normal quantile without ``df``; scores within an item's
           worth of all alike (``alike`` below 1) move linearly towards the exact interval of scores all alike (at
           ``alike_at``); with ``floor`` (StratifiedHT), at least ``statistic ± z × floor``.

        With a stratified sample (2-d ``population``), a 0/1 target with one to five minority responses
        (``n_minority``) is then widened, on the side towards all alike, to the limit that holds wherever the
        population's minority items lie among the strata (``stratified_minority_limit``, by Hoeffding's 1956
        binomial bound). Finally every interval is clipped to ``bounds``.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of every target's interval, in (0, 1) (0.9, not 95).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high`` per target, within ``bounds``.

        References
        ----------
        Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
        American Statistician* 41(3), 215–218.

        Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. *The Annals of
        Mathematical Statistics* 27(3), 713–721.

        Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. *Survey Methodology* 24(2), 193–201.

        Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. *Journal of the
        American Statistical Association* 22(158), 209–212.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import RandomDirect, StratifiedAIPW
        >>> rm = simulate_responses(60, 2000, rng=0)
        >>> src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 53))
        >>> p = StratifiedAIPW(100, random_state=0).fit(src).predict_interval(tgt)
        >>> p.exact, p.df.round(1)  # Korn-Graubard at n_effective, its df factor from Satterthwaite's df
        (array([ True,  True,  True]), array([98.1, 80.3, 98.6]))
        >>> p.confidence_interval(0.95).low.round(3)
        array([0.453, 0.164, 0.45 ])
        >>> q = RandomDirect(100, random_state=0).fit(src).predict_interval(tgt)  # Wilson at k / (1 - k/N)
        >>> q.exact, q.n_effective.round(1)
        (array([False, False, False]), array([105.3, 105.3, 105.3]))
        """
        level = check_confidence_level(confidence_level)
        ci = self._intervals.get(level)
        if ci is None:
            ci = self._intervals[level] = self._interval(level)
        # copies: a caller that writes into its limits leaves the next caller's alone
        return ConfidenceInterval(*(x.copy() if isinstance(x, np.ndarray) else x for x in ci))

    def _interval(self, level: float) -> ConfidenceInterval:
        """The interval of :meth:`confidence_interval` at a checked ``level``."""
        lo_b, hi_b = self.bounds
        if self.method == "conformal":
            r = np.sort(self.residuals)
            rank = math.ceil((len(r) + 1) * level)
            q = r[rank - 1] if rank <= len(r) else np.inf
            low, high = self.statistic - q, self.statistic + q
        else:
            if self.df is None:
                low, high = normal_interval(self.statistic, self.standard_error, level)
            else:
                q = special.stdtrit(np.asarray(self.df, dtype=float), 0.5 + level / 2)
                low, high = self.statistic - q * self.standard_error, self.statistic + q * self.standard_error
            if self.n_effective is not None:
                n = np.asarray(self.n_effective, dtype=float)
                wilson = np.asarray(self.wilson, dtype=bool) if self.wilson is not None else True
                ok = np.isfinite(n) & (n > 0) & wilson
                z2 = special.ndtri(0.5 + level / 2) ** 2
                p = np.clip(np.asarray(self.statistic, dtype=float), 0.0, 1.0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    d = 1 + z2 / n
                    centre = (p + z2 / (2 * n)) / d
                    half = np.sqrt(z2) / d * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
                low, high = np.where(ok, centre - half, low), np.where(ok, centre + half, high)
                if self.exact is not None or self.alike is not None:
                    cp = ok & (False if self.exact is None else np.asarray(self.exact, dtype=bool))
                    w = np.ones_like(p) if self.alike is None else np.asarray(self.alike, dtype=float)
                    # graded scores near 0 or 1: toward the interval of scores all alike, continuously
                    near = ~ok & (w < 1) & np.isfinite(n) & (n > 0)
                    nn = np.where(cp | near, n, 1.0)
                    # graded scores near one value c inside (0, 1): unsampled items may lie anywhere in [0, 1], so
                    # the interval of scores all alike at c is c's share of the all-right interval's width below c
                    # and (1 - c)'s above (the items the sample missed at 0 or at 1)
                    c = np.full_like(p, np.nan) if self.alike_at is None else np.asarray(self.alike_at, float)
                    inner = near & (c > 0) & (c < 1)
                    x = np.where(inner, nn, p * nn)
                    a = (1 - level) / 2
                    with np.errstate(divide="ignore", invalid="ignore"):
                        # both ends in one call of the beta quantile (elementwise: the same values as two)
                        xs, ns = np.ravel(x), np.ravel(np.broadcast_to(nn, np.shape(x)))
                        ends = stats.beta.ppf(np.repeat([a, 1 - a], xs.size), np.concatenate([xs, xs + 1]),
                                              np.concatenate([ns - xs + 1, ns - xs]))
                        cp_lo = np.where(x > 0, ends[:xs.size].reshape(np.shape(x)), 0.0)
                        cp_hi = np.where(x < nn, ends[xs.size:].reshape(np.shape(x)), 1.0)
                    # a count near 0 has a lower bound of about a**(1/x), which underflows; SciPy's beta quantile
                    # returns that as 0 or as the smallest normal number depending on its version: both are 0
                    cp_lo = np.where(cp_lo <= np.finfo(float).tiny, 0.0, cp_lo)
                    if self.population is not None:
                        # only responses all alike (a 0/1 target's Clopper-Pearson interval may be Korn-Graubard's
                        # of a sample that is not: ``alike`` is 0 for all alike, 1 otherwise)
                        all_alike = cp if self.alike is None else cp & (w == 0)
                        cp_lo, cp_hi = self._finite_alike(all_alike | near, np.where(inner, 1.0, p), cp_lo, cp_hi,
                                                          level)
                    cp_lo, cp_hi = (np.where(inner, c * cp_lo, cp_lo),
                                    np.where(inner, c + (1 - c) * (1 - cp_lo), cp_hi))
                    low = np.where(cp, cp_lo, np.where(near, w * low + (1 - w) * cp_lo, low))
                    high = np.where(cp, cp_hi, np.where(near, w * high + (1 - w) * cp_hi, high))
                low, high = self._few_minority(ok, low, high, level)
            if self.floor is not None:
                # graded scores whose strata's spread the sample has not shown: at least the interval of scores at
                # the bounds (StratifiedHT's Notes)
                half = special.ndtri(0.5 + level / 2) * np.asarray(self.floor, dtype=float)
                low, high = np.minimum(low, self.statistic - half), np.maximum(high, self.statistic + half)
        return ConfidenceInterval(np.clip(low, lo_b, hi_b), np.clip(high, lo_b, hi_b))

    def _few_minority(self, ok: np.ndarray, low: np.ndarray, high: np.ndarray,
                      level: float) -> tuple[np.ndarray, np.ndarray]:
        """``low``/``high`` with the 0/1 targets (``ok``) of a stratified simple random sample that have minority
        responses (at most ``_FEW_MINORITY``) widened, on the side towards all alike, to the limit that holds for
        every placement of the population's minority items among the strata (``n_minority``)."""
        if self.n_minority is None or self.population is None or np.ndim(self.population) != 2:
            return low, high
        from ._hypergeometric import stratified_minority_limit

        N, k = np.asarray(self.population, float), np.asarray(self.n_sampled, float)
        c = np.asarray(self.n_minority, float)
        few = (ok & np.isfinite(c) & (c > 0) & (c <= _FEW_MINORITY) & np.isfinite(N).all(axis=1)
               & np.isfinite(k).all(axis=1) & (k.sum(axis=1) < N.sum(axis=1)))
        if not few.any():
            return low, high
        # the minority is what the sampled responses' median is not: wrong items for a median of 1; an even split
        # (median 0.5) has no minority side
        mid = np.asarray(self.statistic if self.alike_at is None else self.alike_at, float)
        few &= mid != 0.5
        if not few.any():
            return low, high
        share = stratified_minority_limit(k[few], N[few], c[few], level)
        right = mid[few] > 0.5
        low, high = np.array(low, float), np.array(high, float)
        high[few] = np.where(right, np.maximum(high[few], 1.0 - share), high[few])
        low[few] = np.where(right, low[few], np.minimum(low[few], share))
        return low, high

    def _finite_alike(self, alike: np.ndarray, p: np.ndarray, low: np.ndarray, high: np.ndarray,
                      level: float) -> tuple[np.ndarray, np.ndarray]:
        """``low``/``high`` with the ``alike`` targets of a simple random sample (finite ``population``) given the
        exact hypergeometric interval of none (estimate below 1/2) or all of their ``n_sampled`` items right; of a
        stratified one (2-d ``population``), the exact stratified interval of a sample all alike."""
        from ._hypergeometric import hypergeometric_interval, stratified_alike_interval

        N, k = np.asarray(self.population, float), np.asarray(self.n_sampled, float)
        if N.ndim == 2:
            srs = alike & np.isfinite(N).all(axis=1) & (k.sum(axis=1) < N.sum(axis=1))
        else:
            srs = alike & np.isfinite(N) & (k < N)
        if srs.any():
            if N.ndim == 2:
                ci = stratified_alike_interval(k[srs], N[srs], p[srs] >= 0.5, level)
            else:
                ci = hypergeometric_interval(np.where(p[srs] >= 0.5, k[srs], 0.0), k[srs], N[srs], level)
            low, high = np.array(low, float), np.array(high, float)
            low[srs], high[srs] = ci.low, ci.high
        return low, high

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row per target: estimate, standard_error, low, high (at ``confidence_level``), and ``out_of_range``
        (bool) when the estimator checked it.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of ``low`` and ``high``, in (0, 1).

        Returns
        -------
        pandas.DataFrame
            Indexed by ``model_ids`` (positions when there are none).
        """
        ci = self.confidence_interval(confidence_level)
        out = pd.DataFrame(
            {"estimate": self.statistic, "standard_error": self.standard_error, "low": ci.low, "high": ci.high},
            index=self.model_ids,
        )
        if self.out_of_range is not None:
            out["out_of_range"] = np.asarray(self.out_of_range, dtype=bool)
        return out
