"""Score-type statistics for adaptive evaluation that stay valid near accuracy 0 and 1 and for rare disagreements.

Why not the plug-in (Wald) statistic
------------------------------------
The Wald statistic ``(estimate - theta0) / se_hat`` estimates the variance at the *observed* value. For a model that
gets a whole batch right, ``se_hat = 0``: the interval collapses to ``[1, 1]`` and any threshold below 1 is
"confidently" crossed. For two models that disagree on 2 % of the items, always in the same direction, the variance
at the observed difference is too small exactly when the observed difference is too small, and equivalence is
declared far too often. Each statistic here evaluates the variance **at the value being tested** (a score test,
Jennison & Turnbull 2000, ch. 3 and 12), so tests and intervals stay honest at the edges, and each repeated
confidence interval is the set of values its score test does not reject -- the interval and the decision agree.

Single model: exact binomial tails with an effective sample size
    The test of ``theta0`` uses the exact binomial tail of ``x = p * n_eff`` successes in ``n_eff`` trials (null
    variance built in, like Wilson's 1927 score test, but without its normal approximation) and the interval is
    Clopper & Pearson's (1934) at the boundary's nominal level: Korn & Graubard's (1998) interval for proportions
    from complex samples. For the unweighted mean of per-dataset means, ``n_eff = p~(1 - p~) / V`` where ``V`` is
    the stratified variance of the mean of means (Kish's design effect), computed from per-dataset means smoothed
    by half a success and half a failure, ``(s + 1/2) / (n + 1)``, so that ``n_eff`` never degenerates when a
    dataset is all-correct; with one dataset and binary scores ``n_eff = n``. Why exact rather than Wilson: near
    the ceiling failures are rare and their count's upper tail is heavier than the normal one, so Wilson's normal
    score test claims "below tau" too often there; the exact tails keep the claim's error at most alpha and cost
    no items at accuracies 0.5 - 0.9. Scores in [0, 1] that are not binary are treated as quasi-binomial (Wedderburn
    1974): variance ``phi * mu (1 - mu)`` with the dispersion ``phi`` estimated per dataset and shrunk towards its
    maximum 1 (Bhatia & Davis 2000) by one pseudo-item, ``phi = (SS + 1) / (n p (1 - p) + 1)``; ``phi = 1`` for binary
    scores.
Single model on a finite benchmark: exact hypergeometric tails
    With ``fpc=True`` the items are drawn without replacement from the benchmark, whose score is the target. For
    binary scores in one dataset the number of correct items drawn is then hypergeometric, and its tails are
    used as they are: the test of ``theta0`` is the exact test of ``K = theta0 * N`` correct items among the
    ``N`` (at the whole number of items on the side that makes the p-value largest), the interval is the exact
    hypergeometric one (Buonaccorsi 1987). No binomial stands in for it: once more than half of the benchmark is
    drawn, the sample's score is fixed by the few items left, and its skewness has the opposite sign to any
    binomial's, so a binomial with the matching variance is liberal in the heavy tail (below the score for
    accuracies under 1/2, above it for accuracies over 1/2).
Paired difference: Tango's score statistic with an effective sample size
    For paired binary outcomes ``d = a - b`` in {-1, 0, 1}, the variance under ``H0: p10 - p01 = delta0`` uses
    the restricted maximum-likelihood ``p01~`` (closed form; Tango 1998; Nam 1997), so ``delta0 = 0`` gives
    McNemar's statistic ``(n10 - n01) / sqrt(n10 + n01)``, and a one-directional disagreement tested at a margin
    gives the binomial score test of the discordance rate. A continuity correction of one item (of ``n_eff``,
    Edwards' for McNemar's test) for ``delta0 != 0`` keeps rare one-directional disagreements valid (the tail of a
    rare, skewed count is heavier than normal). At ``delta0 = 0`` McNemar's normal test (the mid-p test of the
    symmetric ``Bin(n10 + n01, 1/2)``) is liberal with few discordant items and the exact conditional test far
    too strict (it spends about half of alpha): a quarter of an item keeps the size below alpha at every
    expected discordant count. With the finite-population correction (``fpc=True``) on one dataset, near a census
    the sample's difference is fixed up to the discordant items left, a count of small mean with a heavy tail: where
    fewer than two of them are expected the correction is one whole item of those drawn. Datasets enter through
    ``n_eff`` as above, from cells smoothed by Agresti & Min (2005) (half an item added to each of the four
    cells). Continuous differences in [-1, 1] use ``p10 = E[max(d, 0)]``, ``p01 = E[max(-d, 0)]`` with a dispersion
    factor as above
    (``E[d^2] <= E|d|``, so the trinomial variance bounds theirs). The interval ends are found by a safeguarded
    root search.
Two models on different items: Agresti & Caffo (2000)
    Each arm's mean is adjusted by one success and one failure, ``(s + 1) / (n + 2)``, and the Wald interval of
    the adjusted difference is used (with per-dataset stratification and the dispersion factor); the test is
    the same interval inverted.

References
----------
Jennison, C. & Turnbull, B. W. (2000). Group Sequential Methods with Applications to Clinical Trials. Chapman &
Hall/CRC. Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. Journal of the
American Statistical Association 22, 209-212. Agresti, A. & Caffo, B. (2000). Simple and effective confidence
intervals for proportions and differences of proportions result from adding two successes and two failures. The
American Statistician 54, 280-288. Agresti, A. & Min, Y. (2005). Simple improved confidence intervals for comparing
matched proportions. Statistics in Medicine 24, 729-740. Edwards, A. L. (1948). Note on the "correction for continuity"
in testing the significance of the difference between correlated proportions. Psychometrika 13, 185-187. Clopper, C. J.
& Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of the binomial. Biometrika
26, 404-413. Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions for the
paired-sample design. Statistics in Medicine 17, 891-908. Nam, J. (1997). Establishing equivalence of two treatments and
sample size requirements in matched-pairs design. Biometrics 53, 1422-1430. Buonaccorsi, J. P. (1987). A note on
confidence intervals for proportions in finite populations. The American Statistician 41, 215-218. Newcombe, R. G.
(1998). Improved confidence intervals for the difference between binomial proportions based on paired data. Statistics
in Medicine 17, 2635-2650. Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small
expected number of positive counts estimated from survey data. Survey Methodology 24, 193-201. Wedderburn, R. W. M.
(1974). Quasi-likelihood functions, generalized linear models, and the Gauss-Newton method. Biometrika 61, 439-447.
Bhatia, R. & Davis, C. (2000). A better bound on the variance. The American Mathematical Monthly 107, 353-357.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import betainc, betaincinv, ndtr, ndtri

from .._hypergeometric import _hyp_limits, _hyp_low, _hyp_up
from ._paired_statistics import AgrestiCaffoStatistic, TangoStatistic
from ._safe_arith import _TIE, _critical, _div, _exact_z, _fpc
from ._statistic_base import _EPS, _Statistic

__all__ = ["BinomialStatistic", "TangoStatistic", "AgrestiCaffoStatistic", "WaldStatistic", "Accumulator",
           "information"]


class WaldStatistic(_Statistic):
    """Plug-in (Wald) statistic ``(estimate - theta0) / se`` and interval ``estimate -/+ c * se``.

    The evaluator never builds it: it is for statistics made by hand (e.g. a :class:`effstats.sequential.LookStats`
    from a custom estimate and its standard error). Its variance is the one estimated at the observed value, so it
    is not valid near accuracy 0 or 1 (see the module's notes).

    Parameters
    ----------
    estimate : array-like of shape (n_runs, n_looks) or broadcastable
        Estimates on the scale of the scores.
    se : array-like of the same shape
        Their standard errors; 0 marks an exact estimate (tested by its sign beyond rounding).

    See Also
    --------
    effstats.sequential.statistics.BinomialStatistic : The score statistic the evaluator uses for one model.
    effstats.sequential.LookStats : The per-look statistics the stopping rules read.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> from effstats.sequential.statistics import WaldStatistic
    >>> st = WaldStatistic([0.62, 0.55], [0.02, 0.03])
    >>> st.z_at(0.5).round(3)
    array([6.   , 1.667])
    >>> [end.round(3) for end in st.interval(1.96)]
    [array([0.581, 0.491]), array([0.659, 0.609])]
    """

    _per_call = False  # a closed form, computed cell by cell
    _fields = ("estimate", "se")

    def __init__(self, estimate, se):
        self.estimate, self.se = np.asarray(estimate, float), np.asarray(se, float)

    def z_at(self, theta0):
        """The statistic ``(estimate - theta0) / se`` (``+-inf`` or 0 where ``se == 0``).

        Parameters
        ----------
        theta0 : float or array-like
            Value tested, broadcast against the estimates.

        Returns
        -------
        ndarray
            Positive when the estimate is above ``theta0``.

        Examples
        --------
        >>> from effstats.sequential.statistics import WaldStatistic
        >>> float(WaldStatistic(0.6, 0.05).z_at(0.5))
        2.0
        """
        d = self.estimate - theta0
        return np.nan_to_num(_div(d, self.se, _exact_z(d)), nan=0.0)

    def interval(self, c):
        """The values the test at critical value ``c`` does not reject: ``estimate -/+ c * se``.

        Parameters
        ----------
        c : float or array-like
            Critical value(s) on the z-scale (``inf`` for no boundary); NaN is refused.

        Returns
        -------
        low, high : ndarray

        Examples
        --------
        >>> from effstats.sequential.statistics import WaldStatistic
        >>> [round(float(v), 3) for v in WaldStatistic(0.6, 0.05).interval(1.96)]
        [0.502, 0.698]
        """
        c = _critical(c)
        h = np.where(self.se > 0, c * self.se, _TIE)  # se = 0: the values the test does not reject
        return self.estimate - h, self.estimate + h



class BinomialStatistic(_Statistic):
    """Single model: exact binomial (Clopper–Pearson) tails with the effective sample size ``n_eff``.

    ``z_at(theta0)`` is the normal quantile of the exact one-sided p-value of ``x = estimate * n_eff`` successes
    in ``n_eff`` trials (regularised incomplete beta, so ``n_eff`` need not be an integer), positive when the
    score is above ``theta0``. Comparing it with a boundary ``c`` is the exact one-sided test at the nominal level
    ``1 - Phi(c)``, and ``interval(c)`` is the Clopper–Pearson interval at that level (Korn & Graubard 1998).

    Cells with a finite ``population`` are binary scores drawn without replacement from one benchmark of that
    many items (``fpc=True``, one dataset): there the count of correct items is hypergeometric, and the tails
    and limits are the exact hypergeometric ones (Buonaccorsi 1987). Cells with an infinite ``n_eff`` are
    exhaustive looks: the estimate is the benchmark's score and the test is exact.

    Parameters
    ----------
    estimate : array-like of shape (n_runs, n_looks) or broadcastable
        Scores in [0, 1] (the mean of per-dataset means).
    se : array-like
        Their standard errors (reported; the test uses ``n_eff``).
    n_eff : array-like
        Effective number of trials, ``p (1 - p) / Var``; ``inf`` at an exhaustive look with ``fpc=True``.
    population : array-like, default=inf
        Benchmark size where the exact hypergeometric law applies, ``inf`` elsewhere.
    count : array-like, default=nan
        Items drawn, where ``population`` is finite.

    See Also
    --------
    effstats.sequential.statistics.Accumulator : Builds this statistic from per-dataset sums.
    effstats.sequential.statistics.TangoStatistic : The statistic for a paired difference.
    effstats.sequential.SequentialEvaluator : Uses it for one model.

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. *Biometrika*, 26(4), 404–413.

    Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology*, 24(2), 193–201.

    Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
    American Statistician*, 41(3), 215–218.

    Examples
    --------
    80 % correct on 125 effective trials, tested at 0.7 and as a 95 % interval; then the same 80 of 100 items
    drawn from a benchmark of 500 (exact hypergeometric):

    >>> from effstats.sequential.statistics import BinomialStatistic
    >>> st = BinomialStatistic(0.8, 0.04, 125.0)
    >>> round(float(st.z_at(0.7)), 3), [round(float(v), 4) for v in st.interval(1.96)]
    (2.415, [0.7191, 0.8662])
    >>> fin = BinomialStatistic(0.8, 0.04, 125.0, population=500, count=100)
    >>> round(float(fin.z_at(0.7)), 3), [round(float(v), 4) for v in fin.interval(1.96)]
    (2.372, [0.718, 0.866])
    """

    _per_call = False  # a closed form, computed cell by cell
    _fields = ("estimate", "se", "n_eff", "population", "count")
    _limits = (0.0, 1.0)

    def __init__(self, estimate, se, n_eff, population=np.inf, count=np.nan):
        self.estimate, self.se, self.n_eff = (np.asarray(x, float) for x in (estimate, se, n_eff))
        shape = self.estimate.shape
        self.population = np.broadcast_to(np.asarray(population, float), shape)
        self.count = np.broadcast_to(np.asarray(count, float), shape)

    def _xn(self):
        n = np.where(np.isfinite(self.n_eff), self.n_eff, 1e300)
        x = np.clip(self.estimate, 0.0, 1.0) * n
        return x, n

    def _hyp(self):
        """Cells tested by the exact hypergeometric law, and their successes, sample sizes and population sizes."""
        hyp = np.isfinite(self.population) & np.isfinite(self.n_eff)
        N = np.where(hyp, self.population, 2.0)
        m = np.where(hyp, self.count, 1.0)
        return hyp, np.round(np.clip(self.estimate, 0.0, 1.0) * m), m, N

    def z_at(self, theta0):
        """Normal quantile of the exact one-sided p-value of the score against ``theta0``.

        Parameters
        ----------
        theta0 : float or array-like
            Score tested, in [0, 1], broadcast against the estimates.

        Returns
        -------
        ndarray
            ``-Phi^{-1}(P(X >= x))`` when positive (score above ``theta0``), else ``Phi^{-1}(P(X <= x))`` when
            negative, else 0; ``+-inf`` or 0 at an exhaustive look.

        Examples
        --------
        >>> from effstats.sequential.statistics import BinomialStatistic
        >>> BinomialStatistic([0.5, 0.8], 0.04, 100.0).z_at(0.7).round(3)
        array([-4.085,  2.133])
        """
        th = np.clip(np.asarray(theta0, float), _EPS, 1 - _EPS)
        x, n = self._xn()
        with np.errstate(all="ignore"):
            p_up = np.where(x > 0, betainc(np.maximum(x, 1e-300), np.maximum(n - x + 1, 1e-300), th), 1.0)
        hyp, xh, m, N = self._hyp()
        p_lo_hyp = None
        if hyp.any():
            # H0 "the benchmark's score is theta0" allows whole numbers K = theta0 * N of correct items only: the
            # claim "above" is tested at the largest K at or below theta0 * N, "below" at the smallest at or above
            # (the p-values' worst cases); within _TIE of a whole number, theta0 * N is that number (rounding)
            shape = np.broadcast_shapes(hyp.shape, th.shape)
            hyp, thb, xb, mb, Nb = (np.broadcast_to(v, shape) for v in (hyp, th, xh, m, N))
            thb, xb, mb, Nb = thb[hyp], xb[hyp], mb[hyp], Nb[hyp]
            tol = _TIE * Nb
            p_up = np.broadcast_to(p_up, shape).copy()
            p_up[hyp] = _hyp_up(xb, Nb, np.floor(thb * Nb + tol), mb)
            p_lo_hyp = np.zeros(shape)
            p_lo_hyp[hyp] = _hyp_low(xb, Nb, np.ceil(thb * Nb - tol), mb)
        with np.errstate(all="ignore"):
            zu = -ndtri(np.clip(p_up, 1e-300, 1.0))
        z = np.where(zu > 0, zu, 0.0)
        # the lower tail decides only where the upper one does not (z <= 0): its p-value is computed there alone,
        # each cell's as in a computation of every cell (betainc works cell by cell)
        low = ~(zu > 0)
        if low.any():
            xl, nl, tl = (np.broadcast_to(v, z.shape)[low] for v in (x, n, th))
            with np.errstate(all="ignore"):
                p_lo = np.where(xl < nl, 1 - betainc(xl + 1, np.maximum(nl - xl, 1e-300), tl), 1.0)
                if p_lo_hyp is not None:
                    p_lo = np.where(np.broadcast_to(hyp, z.shape)[low], np.broadcast_to(p_lo_hyp, z.shape)[low], p_lo)
                zl = ndtri(np.clip(p_lo, 1e-300, 1.0))
            z[low] = np.where(zl < 0, zl, 0.0)
        exact = ~np.isfinite(self.n_eff)  # exhaustive look with the finite-population correction
        if exact.any():
            z = np.where(exact, _exact_z(self.estimate - np.asarray(theta0, float)), z)
        return z

    def interval(self, c):
        """Exact interval: the scores the two one-sided tests at critical value ``c`` do not reject.

        Parameters
        ----------
        c : float or array-like
            Critical value(s) on the z-scale; each end is a one-sided bound at level ``1 - Phi(c)``.

        Returns
        -------
        low, high : ndarray
            Clopper–Pearson ends on ``n_eff`` trials, exact hypergeometric ends ``K / N`` where ``population`` is
            finite, the estimate itself (+- 1e-12) at an exhaustive look.

        Examples
        --------
        >>> from effstats.sequential.statistics import BinomialStatistic
        >>> [round(float(v), 4) for v in BinomialStatistic(0.8, 0.04, 100.0).interval(1.96)]
        [0.7082, 0.8733]
        """
        a = np.array(np.broadcast_to(ndtr(-_critical(c)), self.estimate.shape), ndmin=1)  # one-sided level of c
        x, n = (np.array(v, ndmin=1) for v in self._xn())
        hyp, xh, m, N = (np.array(v, ndmin=1) for v in self._hyp())
        exact = np.array(~np.isfinite(self.n_eff), ndmin=1)  # the exact test keeps the estimate (+- _TIE)
        low, high = np.array(self.estimate - _TIE, ndmin=1), np.array(self.estimate + _TIE, ndmin=1)
        beta = ~hyp & ~exact  # betaincinv at n = 1e300 would take milliseconds per cell for this known answer
        if beta.any():
            xb, nb, ab = x[beta], n[beta], a[beta]
            with np.errstate(all="ignore"):
                low[beta] = np.where(xb > 0, betaincinv(np.maximum(xb, 1e-300), np.maximum(nb - xb + 1, 1e-300), ab),
                                     0.0)
                high[beta] = np.where(xb < nb, betaincinv(xb + 1, np.maximum(nb - xb, 1e-300), 1 - ab), 1.0)
        if hyp.any():
            k_low, k_high = _hyp_limits(xh[hyp], N[hyp], m[hyp], a[hyp])
            low[hyp], high[hyp] = k_low / N[hyp], k_high / N[hyp]
        shape = self.estimate.shape
        return np.clip(low, 0.0, 1.0).reshape(shape), np.clip(high, 0.0, 1.0).reshape(shape)



class Accumulator:
    """Builds one statistic of the mean of per-dataset means from per-dataset sums, one dataset at a time.

    Memory stays (n_runs, n_looks), not times the number of datasets. Each dataset's mean, smoothed proportion,
    dispersion and variance (with the finite-population factor ``(N - n) / (N - 1)`` when ``fpc``) are summed;
    :meth:`finish` turns the sums into the statistic of the kind.

    Parameters
    ----------
    kind : {"single", "paired", "unpaired"}
        One model (scores in [0, 1]), a paired difference (in [-1, 1]) or two models on different items.
    fpc : bool, default=False
        Finite-population correction: each dataset is the whole population of interest.

    See Also
    --------
    effstats.sequential.statistics.information : The information of the same mean of means.
    effstats.sequential.SequentialEvaluator : Feeds it the sums of each look.

    References
    ----------
    Kish, L. (1965). *Survey Sampling*. Wiley, New York (design effect, effective sample size).

    Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology*, 24(2), 193–201.

    Examples
    --------
    200 items of which 160 are correct, in one dataset of 1,000 items and in one of 250 with the
    finite-population correction:

    >>> import numpy as np
    >>> from effstats.sequential.statistics import Accumulator
    >>> x = (np.arange(200) % 5 != 0).astype(float)
    >>> acc = Accumulator("single")
    >>> acc.add(x.sum(), (x * x).sum(), x.sum(), 200.0, 1000.0)
    >>> st = acc.finish()
    >>> type(st).__name__, round(float(st.estimate), 3), round(float(st.n_eff), 1)
    ('BinomialStatistic', 0.8, 200.0)
    >>> acc = Accumulator("single", fpc=True)
    >>> acc.add(x.sum(), (x * x).sum(), x.sum(), 200.0, 250.0)
    >>> [round(float(v), 3) for v in acc.finish().interval(1.96)]
    [0.772, 0.824]
    """

    def __init__(self, kind: str, fpc: bool = False) -> None:
        self.kind, self.fpc = kind, fpc
        self.acc: dict[str, Any] = {}
        self._datasets: list = []  # (s1, s2, cnt, size) of each dataset added (single model with fpc only)
        self._n_paired = 0  # datasets added (paired with fpc only)

    def _add(self, key, value):
        cur = self.acc.get(key)
        if cur is None or np.shape(cur) != np.broadcast_shapes(np.shape(cur), np.shape(value)):
            self.acc[key] = (cur if cur is not None else 0.0) + value
        else:
            cur += value  # in place: (n_runs, n_looks) arrays, no temporaries

    def add(self, s1, s2, sa, cnt, size, arm_b: tuple | None = None) -> None:
        """Add one dataset's sums at every look.

        Parameters
        ----------
        s1, s2, sa : array-like of shape (n_runs, n_looks) or broadcastable
            ``sum x``, ``sum x**2`` and ``sum |x|`` over the dataset's items drawn by each look.
        cnt : array-like
            Items drawn by each look.
        size : int or float
            Items in the dataset (used with ``fpc``).
        arm_b : tuple, optional
            ``(s1, s2, cnt, size)`` of the second model's items, for ``kind="unpaired"``.

        Examples
        --------
        >>> from effstats.sequential.statistics import Accumulator
        >>> acc = Accumulator("paired")
        >>> acc.add(6.0, 10.0, 10.0, 100.0, 500.0)  # 8 wins and 2 losses of A over B in 100 items
        >>> round(float(acc.finish().estimate), 3)
        0.06
        """
        cnt = np.asarray(cnt, float)
        have = cnt > 0
        n = np.maximum(cnt, 1.0)
        f = _fpc(cnt, size) if self.fpc else 1.0
        self._add("D", have.astype(float))
        if have.all() and arm_b is None:
            have = True  # every run has items from this dataset: skip the masking copies
        if self.kind == "single":
            if self.fpc:
                self._datasets.append((s1, s2, cnt, size))
            p = s1 / n
            ss = np.maximum(s2 - s1 * p, 0.0)
            phi = np.minimum(1.0, (ss + 1.0) / (n * p * (1 - p) + 1.0))
            ps = (s1 + 0.5) / (n + 1.0)
            self._add("est", np.where(have, p, 0.0))
            self._add("ps", np.where(have, ps, 0.0))
            self._add("var", np.where(have, phi * ps * (1 - ps) * f / n, 0.0))
        elif self.kind == "paired":
            d = s1 / n
            p10 = np.maximum((sa + s1) / (2 * n), 0.0)
            p01 = np.maximum((sa - s1) / (2 * n), 0.0)
            model = np.maximum(p10 + p01 - d * d, 0.0)
            emp = np.maximum(s2 / n - d * d, 0.0)
            phi = np.minimum(1.0, (n * emp + 1.0) / (n * model + 1.0))
            s10 = (n * p10 + 0.5) / (n + 2.0)
            s01 = (n * p01 + 0.5) / (n + 2.0)
            self._add("est", np.where(have, d, 0.0))
            self._add("p10", np.where(have, p10, 0.0))
            self._add("p01", np.where(have, p01, 0.0))
            self._add("s10", np.where(have, s10, 0.0))
            self._add("s01", np.where(have, s01, 0.0))
            self._add("var", np.where(have, phi * (s10 + s01 - (s10 - s01) ** 2) * f / n, 0.0))
            if self.fpc:  # the same without the finite-population factor: the items of the continuity correction
                self._add("var0", np.where(have, phi * (s10 + s01 - (s10 - s01) ** 2) / n, 0.0))
                self._n_paired += 1
        else:  # unpaired: this arm is a; arm_b = (s1, s2, cnt, size) of b
            t1, t2, cb, size_b = arm_b
            cb = np.asarray(cb, float)
            have = have & (cb > 0)
            self.acc["D"] = self.acc["D"] - (cnt > 0) + have
            nb = np.maximum(cb, 1.0)
            fb = _fpc(cb, size_b) if self.fpc else 1.0
            out = []
            for s, q, m, ff in ((s1, s2, n, f), (t1, t2, nb, fb)):
                p = s / m
                phi = np.minimum(1.0, (np.maximum(q - s * p, 0.0) + 1.0) / (m * p * (1 - p) + 1.0))
                pt = (s + 1.0) / (m + 2.0)
                out.append((p, pt, phi * pt * (1 - pt) * ff / (m + 2.0)))
            self._add("est", np.where(have, out[0][0] - out[1][0], 0.0))
            self._add("adj", np.where(have, out[0][1] - out[1][1], 0.0))
            self._add("var", np.where(have, out[0][2] + out[1][2], 0.0))

    def _population(self):
        """Benchmark size and items drawn where the count of correct items is exactly hypergeometric, else inf.

        That is one dataset drawn without replacement (``fpc=True``) whose items so far are all 0 or 1
        (``sum x^2 == sum x``) and not yet used up.
        """
        data, self._datasets = self._datasets, []
        if len(data) != 1:
            return np.inf, np.nan
        s1, s2, cnt, size = (np.asarray(v, float) for v in data[0])
        binary = np.abs(s2 - s1) <= 1e-9 * np.maximum(cnt, 1.0)
        hyp = binary & (cnt > 0) & (cnt < size)
        return np.where(hyp, size, np.inf), np.broadcast_to(cnt, np.shape(hyp))

    def finish(self) -> _Statistic:
        """The statistic of the datasets added so far, and a fresh start for the next.

        Returns
        -------
        BinomialStatistic, TangoStatistic or AgrestiCaffoStatistic
            By ``kind``.

        Examples
        --------
        >>> from effstats.sequential.statistics import Accumulator
        >>> acc = Accumulator("single")
        >>> acc.add(45.0, 45.0, 45.0, 50.0, 50.0)
        >>> round(float(acc.finish().z_at(0.8)), 3)
        1.664
        """
        a, self.acc = self.acc, {}
        D = np.maximum(a["D"], 1.0)
        est = a["est"] / D
        var = a["var"] / D**2
        se = np.sqrt(var)
        if self.kind == "single":
            ps = a["ps"] / D
            n_eff = _div(ps * (1 - ps), var, np.inf)
            population, count = self._population()
            return BinomialStatistic(est, se, n_eff, population, count)
        if self.kind == "paired":
            s10, s01 = a["s10"] / D, a["s01"] / D
            n_eff = _div(s10 + s01 - (s10 - s01) ** 2, var, np.inf)
            # one dataset: the discordant items left are those of one benchmark (TangoStatistic.z_at); with several,
            # the items left lie in some datasets only and the statistic is the one of n_eff
            one, self._n_paired = "var0" in a and self._n_paired == 1, 0
            n_items = _div(s10 + s01 - (s10 - s01) ** 2, a["var0"] / D**2, np.inf) if one else None
            return TangoStatistic(est, se, n_eff, a["p10"] / D, a["p01"] / D, n_items)
        return AgrestiCaffoStatistic(est, se, a["adj"] / D)


def information(counts: np.ndarray, sizes: np.ndarray | None = None, counts_b: np.ndarray | None = None,
                sizes_b: np.ndarray | None = None) -> np.ndarray:
    """Statistical information of the mean of per-dataset means at each look, up to a constant.

    With equal per-item variances the variance of the mean of means is ``sum_d 1 / n_d / D^2`` (times
    ``(N_d - n_d) / (N_d - 1)`` with the finite-population correction, ``sizes`` given), so the information is its
    inverse (``inf`` once every dataset is used up with the correction). Two arms on different items add
    ``1 / n_b``. The spending function is evaluated at this information's fraction of its maximum, not at the
    fraction of items (Lan & DeMets 1983).

    Parameters
    ----------
    counts : ndarray of shape (n_looks, n_datasets)
        Items per dataset at each look.
    sizes : ndarray of shape (n_datasets,), optional
        Items in each dataset, for the finite-population correction.
    counts_b, sizes_b : ndarray, optional
        The same for the second model's items (two models on different items).

    Returns
    -------
    ndarray of shape (n_looks,)

    See Also
    --------
    effstats.sequential.design : Boundaries at these information levels.
    effstats.sequential.statistics.Accumulator : The statistic whose information this is.

    References
    ----------
    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*,
    70(3), 659–663.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential.statistics import information
    >>> information(np.array([[100], [200]]))
    array([100., 200.])
    >>> information(np.array([[100, 100], [200, 150]]), sizes=np.array([400, 150])).round(1)
    array([ 367.8, 1596. ])
    """
    c = np.asarray(counts, float)
    f = 1.0 if sizes is None else _fpc(c, np.asarray(sizes, float)[None, :])
    v = np.where(c > 0, f / np.maximum(c, 1), 0.0)
    if counts_b is not None:
        cb = np.asarray(counts_b, float)
        fb = 1.0 if sizes_b is None else _fpc(cb, np.asarray(sizes_b, float)[None, :])
        v = v + np.where(cb > 0, fb / np.maximum(cb, 1), 0.0)
    D = np.maximum((c > 0).sum(-1), 1)
    v = v.sum(-1) / D**2
    return _div(1.0, v, np.inf)
