"""The two-model statistics of :mod:`effstats.sequential.statistics`: Tango's paired score statistic and the
Agresti–Caffo statistic of two models on different items (the module docstring there gives the theory)."""
from __future__ import annotations

import numpy as np

from ._safe_arith import _TIE, _critical, _div, _exact_z
from ._statistic_base import _CC0, _EPS, _FEW_LEFT, _Statistic


class TangoStatistic(_Statistic):
    """Paired difference of two models: Tango's score test with the restricted maximum-likelihood variance.

    The variance of ``d = a - b`` is evaluated under ``H0: p10 - p01 = delta0`` at the restricted MLE of the
    discordant rates (closed form), with a continuity correction of a quarter of an item at 0 growing to one item
    (details in the module's notes); at 0 it is McNemar's test. Datasets enter through ``n_eff``.

    Parameters
    ----------
    estimate : array-like of shape (n_runs, n_looks) or broadcastable
        Mean paired difference in [-1, 1] (mean of per-dataset means).
    se : array-like
        Its standard error (reported; the test uses ``n_eff`` and the null variance).
    n_eff : array-like
        Effective number of items; ``inf`` at an exhaustive look with ``fpc=True``.
    p10, p01 : array-like
        Rates at which A beats B and B beats A (``E[max(d, 0)]``, ``E[max(-d, 0)]``).
    n_items : array-like, optional
        Effective number of items without the finite-population correction (the continuity correction's unit;
        with ``fpc=True`` ``n_eff`` is larger); default ``n_eff``. Where it is below ``n_eff`` and fewer than two
        discordant items are expected among the items left, the continuity correction is one whole item.

    See Also
    --------
    effstats.sequential.statistics.BinomialStatistic : The statistic for one model.
    effstats.sequential.statistics.AgrestiCaffoStatistic : Two models on different items.
    effstats.sequential.SequentialEvaluator : Uses it for a paired comparison.

    References
    ----------
    Tango, T. (1998). Equivalence test and confidence interval for the difference in proportions for the
    paired-sample design. *Statistics in Medicine*, 17(8), 891–908.

    Nam, J. (1997). Establishing equivalence of two treatments and sample size requirements in matched-pairs
    design. *Biometrics*, 53(4), 1422–1430.

    Edwards, A. L. (1948). Note on the "correction for continuity" in testing the significance of the difference
    between correlated proportions. *Psychometrika*, 13(3), 185–187.

    Examples
    --------
    On 1,000 paired items A wins 4 % and loses 1 %:

    >>> from effstats.sequential.statistics import TangoStatistic
    >>> st = TangoStatistic(0.03, 0.01, 1000.0, 0.04, 0.01)
    >>> round(float(st.z_at(0.0)), 3)
    4.207
    >>> [round(float(v), 4) for v in st.interval(1.96)]
    [0.0159, 0.0461]
    """

    _fields = ("estimate", "se", "n_eff", "p10", "p01", "n_items")

    def __init__(self, estimate, se, n_eff, p10, p01, n_items=None):
        self.estimate, self.se, self.n_eff, self.p10, self.p01 = (np.asarray(x, float)
                                                                   for x in (estimate, se, n_eff, p10, p01))
        self.n_items = self.n_eff if n_items is None else np.asarray(n_items, float)

    def _cc_items(self):
        """The continuity correction's item count (``n_eff``; 1 at an exhaustive look) and where it is one whole
        item of the ``n_items`` drawn whatever the value tested, few discordant items expected among the items left
        (z_at): there the count is ``n_items``. A function of the fields alone, asked at every evaluation of z_at
        in a root search: computed once and kept (read-only; take() makes a new statistic)."""
        kept = self.__dict__.get("_cc")
        if kept is None:
            kept = self.__dict__["_cc"] = self._cc_items_of_fields()
        return kept

    def _cc_items_of_fields(self):
        fin = np.isfinite(self.n_eff) & np.isfinite(self.n_items)
        n = np.where(fin, self.n_eff, 1.0)
        m = np.where(fin, self.n_items, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = m / n  # the finite-population factor (1 without)
            left = np.where(f < 1 - 1e-12, f / (1 - f) * m * (self.p10 + self.p01), np.inf)
        whole = np.asarray(left < _FEW_LEFT)
        unit = np.where(whole, m, n)
        unit.flags.writeable = whole.flags.writeable = False
        return unit, whole

    def _reach(self, c):
        # |estimate - delta0| - one item <= c * sqrt(V0 / n_eff) with V0 <= 1 at every end of the interval
        unit, _ = self._cc_items()
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(np.isfinite(self.n_eff), c / np.sqrt(self.n_eff) + 1.0 / unit, 0.0)
        return np.nan_to_num(r, nan=2.0, posinf=2.0) + 1e-9

    def _kinks(self, side):
        # z is flat (0) where the difference is within the continuity correction of the estimate, and the
        # correction grows from a quarter of an item at 0 to one item at one item's worth from 0 (z_at): kinks
        # at 0, +-1 / n and the end of the flat part on the side searched (side -1: below the estimate, where
        # est - t = cc(t) has one root; +1: above it, the mirror image); at an exhaustive look, the jump of
        # _exact_z at +-_TIE from the estimate, between the floats next to est -+ _TIE
        fin = np.isfinite(self.n_eff)
        unit, whole = self._cc_items()
        e = np.where(fin, 1.0 / unit, 0.0)
        x = -side * self.estimate  # the low end's problem
        edge = -side * np.where((x >= 2 * e) | (x < 0) | whole, x - e,
                                np.where(x >= _CC0 * e, (x - _CC0 * e) / (2 - _CC0), (x - _CC0 * e) / _CC0))
        jump = self.estimate + side * _TIE
        return np.stack(np.broadcast_arrays(0.0 * edge, np.where(fin, -e, np.nextafter(jump, -np.inf)),
                                            np.where(fin, e, np.nextafter(jump, np.inf)), np.where(fin, edge, jump)))

    def null_variance(self, delta0):
        """Per-item variance of ``d`` under ``p10 - p01 = delta0`` at the restricted MLE (Tango 1998).

        Parameters
        ----------
        delta0 : float or array-like
            Difference tested, in (-1, 1).

        Returns
        -------
        ndarray
            ``p10~ + p01~ - delta0**2`` at the restricted estimates.

        Examples
        --------
        >>> from effstats.sequential.statistics import TangoStatistic
        >>> st = TangoStatistic(0.03, 0.01, 1000.0, 0.04, 0.01)
        >>> round(float(st.null_variance(0.0)), 4), round(float(st.null_variance(0.02)), 4)
        (0.05, 0.0454)
        """
        dl = np.minimum(np.maximum(np.asarray(delta0, float), -1 + _EPS), 1 - _EPS)  # np.clip has more overhead
        pos = dl >= 0
        # delta0 < 0 is reflected onto delta0 > 0 (p10 and p01 swapped); what depends on the rates alone is kept
        p10, p01, m2, p01_8 = self._variance_parts()
        x10 = np.where(pos, p10[0], p10[1])
        x01 = np.where(pos, p01[0], p01[1])
        a = np.abs(dl)
        one_a = 1 - a
        b = x10 * one_a + x01 * (1 - 3 * a) - np.where(pos, m2[0], m2[1]) * a
        # the restricted MLE of the smaller discordant rate
        q = (b + np.sqrt(b * b + np.where(pos, p01_8[0], p01_8[1]) * a * one_a)) / 4
        q = np.minimum(np.maximum(q, 0), one_a / 2)
        return 2 * q + a - a * a

    def _variance_parts(self):
        """What :meth:`null_variance` needs of the rates alone, for ``delta0 >= 0`` and (rates swapped) below:
        ``(p10, p01)``, ``(p01, p10)``, ``2 m`` and ``8 p01`` (``m = 1 - p10 - p01`` clipped to [0, 1], the
        concordant rate), each a pair (``delta0 >= 0``, below). Kept as :meth:`_cc_items` is: the same operations
        in the same order as on each evaluation, so the variance is the same to the last bit."""
        kept = self.__dict__.get("_var")
        if kept is None:
            p10, p01 = self.p10, self.p01
            m2 = tuple(2 * np.minimum(np.maximum(1 - x - y, 0), 1) for x, y in ((p10, p01), (p01, p10)))
            kept = self.__dict__["_var"] = ((p10, p01), (p01, p10), m2, (8 * p01, 8 * p10))
        return kept

    def z_at(self, theta0):
        """Continuity-corrected score statistic of the paired difference against ``theta0``.

        Parameters
        ----------
        theta0 : float or array-like
            Difference tested, broadcast against the estimates.

        Returns
        -------
        ndarray
            Positive when the difference is above ``theta0``; ``+-inf`` or 0 at an exhaustive look.

        Examples
        --------
        >>> from effstats.sequential.statistics import TangoStatistic
        >>> round(float(TangoStatistic(0.03, 0.01, 1000.0, 0.04, 0.01).z_at(0.05)), 3)
        -2.404
        """
        t = np.asarray(theta0, float)
        v = self.null_variance(t)
        d = self.estimate - t
        # continuity correction of one item (of n_eff; Edwards' for McNemar) away from delta0 = 0: the tail of a
        # rare, skewed disagreement count is heavier than the normal one, and half an item is not enough for a
        # one-directional disagreement of a few per cent. At delta0 = 0 the null law is the symmetric
        # Bin(n10 + n01, 1/2), whose normal test (the mid-p test) is liberal with few discordant items and whose
        # exact test is far too strict: a quarter of an item keeps the size <= 0.98 alpha at every expected count
        # 0.5 - 400 and z 1.64 - 3.5 (exact sums over a Poisson count of discordant items, recomputed by a test)
        # and costs little of alpha at large counts. The count being random is what it relies on: with nearly every
        # item discordant (disagreement >= 99.9 %, a count almost fixed) the size exceeds alpha slightly.
        # The correction grows from a quarter of an item at 0 to one item at one item's worth from 0, so z is
        # continuous in theta0 and an interval that excludes a rejected 0 ends at a real value beyond it, not at 0.
        # With the finite-population correction, near a census the sample's difference is fixed up to the
        # discordant items left, a count of small mean whose tail is far heavier than the normal one (one
        # discordant item among the last 5 of 1,000, at 2 % disagreement, gives |z| about 3): where fewer than
        # _FEW_LEFT of them are expected, the correction is one whole item of those drawn (n_items, not n_eff)
        unit, whole = self._cc_items()
        finite, all_finite, any_whole, root_n = self._z_parts()
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            items = np.minimum(1.0, _CC0 + (1.0 - _CC0) * np.abs(t) * unit)
            if any_whole:
                items = np.where(whole, 1.0, items)
            cc = items / unit
            if not all_finite:
                cc = np.where(finite, cc, 0.0)
            d = np.sign(d) * np.maximum(np.abs(d) - cc, 0.0)
            # an exhaustive look with the finite-population correction (n_eff infinite): the difference is exact
            exact = ~finite | ~(v > 0)
            z = d * root_n / np.sqrt(v)
            if exact.any():
                z = np.where(exact, _exact_z(d), z)
        return np.where(np.isnan(z), 0.0, z)

    def _z_parts(self):
        """What :meth:`z_at` needs of the fields alone, kept as :meth:`_cc_items` is: where ``n_eff`` is finite,
        whether it is everywhere, whether the correction is one whole item anywhere, and ``sqrt(n_eff)`` (1 where
        infinite)."""
        kept = self.__dict__.get("_z")
        if kept is None:
            finite = np.isfinite(self.n_eff)
            _, whole = self._cc_items()
            kept = self.__dict__["_z"] = (finite, bool(finite.all()), bool(whole.any()),
                                          np.sqrt(np.where(finite, self.n_eff, 1.0)))
        return kept

    def interval(self, c):
        """Score-test inversion, with 0 inside exactly when the test at 0 does not reject.

        Parameters
        ----------
        c : float or array-like
            Critical value(s) on the z-scale; each end is a one-sided bound at level ``1 - Phi(c)``.

        Returns
        -------
        low, high : ndarray

        Notes
        -----
        The decision is made at 0, so the interval that reports it contains 0 if and only if 0 is not rejected: a
        "greater" claim never comes with an interval reaching below 0. When 0 is rejected the end is searched on
        the estimate's side of 0: with disagreement in one direction only (``p01 = 0``) the restricted-MLE variance
        grows for ``theta0 < 0``, so ``z`` is not monotone there and some negative values are not rejected although
        0 is; the reported end is the smallest value beyond 0 that is not rejected, a real value rather than 0
        itself or the smallest positive float.

        Examples
        --------
        >>> from effstats.sequential.statistics import TangoStatistic
        >>> [round(float(v), 4) for v in TangoStatistic(0.03, 0.01, 1000.0, 0.04, 0.01).interval(2.5)]
        [0.0122, 0.0509]
        """
        c = np.broadcast_to(np.asarray(c, float), np.shape(self.estimate))
        z0 = self.z_at(0.0)
        up, down = z0 >= c, z0 <= -c
        low, high = super().interval(c, floor=np.where(up, 0.0, -np.inf), ceiling=np.where(down, 0.0, np.inf))
        # the search's last bit must not cross 0 either way: 0 is outside exactly when it was rejected
        tiny = np.nextafter(0.0, 1.0)
        low = np.where(up, np.maximum(low, tiny), np.minimum(low, 0.0))
        high = np.where(down, np.minimum(high, -tiny), np.maximum(high, 0.0))
        return low, high


class AgrestiCaffoStatistic(_Statistic):
    """Two models on different items: the Agresti–Caffo adjusted difference and its Wald interval.

    Each arm's mean is adjusted by one success and one failure, ``(s + 1) / (n + 2)``; the test of ``theta0``
    is the interval ``adjusted -/+ c * se`` inverted.

    Parameters
    ----------
    estimate : array-like of shape (n_runs, n_looks) or broadcastable
        Plain difference of the two arms' scores.
    se : array-like
        Standard error of the adjusted difference; 0 where both arms used up their benchmarks (``fpc=True``).
    adjusted : array-like
        Adjusted difference.

    See Also
    --------
    effstats.sequential.statistics.TangoStatistic : Two models on the same items.
    effstats.sequential.SequentialEvaluator : Uses it with ``paired=False``.

    References
    ----------
    Agresti, A. & Caffo, B. (2000). Simple and effective confidence intervals for proportions and differences of
    proportions result from adding two successes and two failures. *The American Statistician*, 54(4), 280–288.

    Examples
    --------
    >>> from effstats.sequential.statistics import AgrestiCaffoStatistic
    >>> st = AgrestiCaffoStatistic(0.05, 0.03, 0.049)
    >>> round(float(st.z_at(0.0)), 3), [round(float(v), 4) for v in st.interval(1.96)]
    (1.633, [-0.0098, 0.1078])
    """

    _per_call = False  # a closed form, computed cell by cell
    _fields = ("estimate", "se", "adjusted")

    def __init__(self, estimate, se, adjusted):
        self.estimate, self.se, self.adjusted = (np.asarray(x, float) for x in (estimate, se, adjusted))

    def z_at(self, theta0):
        """Wald statistic of the adjusted difference against ``theta0`` (exact where ``se == 0``).

        Parameters
        ----------
        theta0 : float or array-like
            Difference tested.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from effstats.sequential.statistics import AgrestiCaffoStatistic
        >>> round(float(AgrestiCaffoStatistic(0.05, 0.03, 0.049).z_at(0.1)), 3)
        -1.7
        """
        theta0 = np.asarray(theta0, float)
        # se = 0 only where both arms used up their benchmarks (fpc): the plain difference is then exact, and the
        # adjusted one is not the benchmarks' difference
        exact = _exact_z(self.estimate - theta0)
        return np.nan_to_num(_div(self.adjusted - theta0, self.se, exact), nan=0.0)

    def interval(self, c):
        """``adjusted -/+ c * se``, clipped to [-1, 1] (the plain difference +- 1e-12 where ``se == 0``).

        Parameters
        ----------
        c : float or array-like
            Critical value(s) on the z-scale.

        Returns
        -------
        low, high : ndarray

        Examples
        --------
        >>> from effstats.sequential.statistics import AgrestiCaffoStatistic
        >>> [round(float(v), 4) for v in AgrestiCaffoStatistic(0.05, 0.03, 0.049).interval(2.5)]
        [-0.026, 0.124]
        """
        c = _critical(c)
        centre = np.where(self.se > 0, self.adjusted, self.estimate)
        h = np.where(self.se > 0, c * self.se, _TIE)
        return np.clip(centre - h, -1, 1), np.clip(centre + h, -1, 1)
