"""What a stopping rule sees at each look: :class:`effstats.sequential.LookStats`, the estimate, its standard
error, the test statistic and the repeated confidence intervals of every look of every run (arrays of shape
``(n_runs, n_looks)``), with the boundaries they are judged on."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import ndtri

from .._results import ReadOnlyFields
from ._statistic_base import _interval_of

__all__ = ["LookStats"]


@dataclass(frozen=True, eq=False)
class LookStats(ReadOnlyFields):
    """Statistics at each look, arrays of shape (n_runs, n_looks) unless stated.

    ``statistic`` is the score statistic of ``effstats.sequential.statistics`` (exact binomial for one model, Tango for
    a paired difference, Agresti–Caffo for two arms): ``z_at(value)`` tests any value, and ``interval(c)`` inverts
    the test. ``c2`` / ``c1`` (n_looks,) are the two-sided and one-sided boundaries at level ``alpha`` with the
    evaluator's spending function evaluated at the information fractions ``t`` (n_looks,); ``c2_final`` /
    ``c1_final`` are the bounds of the planned final look (the full design's, also while evaluating online).
    ``ci_low`` / ``ci_high`` is the two-sided ``1 - alpha`` repeated confidence interval (``c2``), ``low1`` /
    ``high1`` the interval at ``c1`` (each end a one-sided ``1 - alpha`` bound). ``null`` is None when no value is
    tested (a single model under a precision rule); ``z`` is then 0. Built by hand (``statistic=None``), the
    statistic is the plug-in ``(estimate - value) / se``.

    :class:`effstats.sequential.SequentialEvaluator` builds these; a custom
    :class:`effstats.sequential.StoppingRule` reads them.

    Parameters
    ----------
    n : numpy.ndarray of shape (n_runs, n_looks)
        Items (per model) at each look.
    t : numpy.ndarray of shape (n_looks,)
        Information fractions of the looks.
    estimate, se : numpy.ndarray of shape (n_runs, n_looks)
        Estimate (score, or difference of scores) and its standard error.
    z : numpy.ndarray of shape (n_runs, n_looks) or None
        Statistic at ``null``; None computes it from ``statistic``.
    c2, c1 : numpy.ndarray of shape (n_looks,)
        Two-sided and one-sided boundaries at level ``alpha``.
    null : float or None
        The value tested (None when none is).
    alpha : float
        Level of the boundaries.
    spending : str or effstats.sequential.SpendingFunction, default="ld_pocock"
        The evaluator's spending function (for rules that derive their own bounds).
    spending_param : float, optional
        Its parameter.
    statistic : object, optional
        The score statistic; None for the plug-in Wald statistic.
    c2_final, c1_final : float, optional
        Bounds of the planned final look (default: the last of ``c2`` / ``c1``).
    information : numpy.ndarray of shape (n_looks,), optional
        Information of each look for a unit per-item variance (the inverse variance of the mean of means,
        ``inf`` at an exhaustive look with the finite-population correction); the evaluator sets it, and
        :class:`effstats.sequential.Precision` bounds its items by it.

    See Also
    --------
    effstats.sequential.StoppingRule : Reads these statistics.
    effstats.sequential.SequentialEvaluator : Builds them at every look.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import LookStats, Efficacy
    >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
    ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
    ...               null=0.0, alpha=0.05)
    >>> s.z.round(3)
    array([[1.667, 4.   ]])
    >>> s.ci_low.round(4), s.ci_high.round(4)
    (array([[-0.0148,  0.0368]]), array([[0.1148, 0.1232]]))
    >>> Efficacy().fires(s)
    array([[False,  True]])
    """

    n: np.ndarray
    t: np.ndarray
    estimate: np.ndarray
    se: np.ndarray
    z: np.ndarray | None
    c2: np.ndarray
    c1: np.ndarray
    null: float | None
    alpha: float
    spending: object = "ld_pocock"
    spending_param: float | None = None
    statistic: Any = None
    c2_final: float | None = None
    c1_final: float | None = None
    information: np.ndarray | None = None

    def __post_init__(self) -> None:
        from .._results import read_only_fields
        from .statistics import WaldStatistic

        read_only_fields(self)  # the intervals kept (fixed_interval, the bounds' intervals) hold for these numbers only
        if self.statistic is None:
            object.__setattr__(self, "statistic", WaldStatistic(self.estimate, self.se))
        if self.z is None:
            z = (self.statistic.z_at(self.null) if self.null is not None
                 else np.zeros(np.shape(self.estimate)))
            z.flags.writeable = False  # fresh, as the fields above
            object.__setattr__(self, "z", z)
        if self.c2_final is None:
            object.__setattr__(self, "c2_final", float(np.asarray(self.c2)[-1]))
        if self.c1_final is None:
            object.__setattr__(self, "c1_final", float(np.asarray(self.c1)[-1]))

    def z_at(self, value: Any) -> np.ndarray:
        """Score statistic for ``H0: parameter = value`` at every (run, look).

        Parameters
        ----------
        value : float
            The value tested.

        Returns
        -------
        numpy.ndarray of shape (n_runs, n_looks)

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats, Efficacy
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.z_at(0.02).round(3)
        array([[1., 3.]])
        """
        return self.statistic.z_at(value)

    @cached_property
    def _ci2(self):
        return _interval_of(self.statistic, self.c2)

    @cached_property
    def _ci1(self):
        return _interval_of(self.statistic, self.c1)

    @property
    def ci_low(self) -> np.ndarray:
        """Lower end of the two-sided ``1 - alpha`` repeated confidence interval (n_runs, n_looks).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.ci_low.round(4)
        array([[-0.0148,  0.0368]])
        """
        return self._ci2[0]

    @property
    def ci_high(self) -> np.ndarray:
        """Upper end of the two-sided ``1 - alpha`` repeated confidence interval (n_runs, n_looks).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.ci_high.round(4)
        array([[0.1148, 0.1232]])
        """
        return self._ci2[1]

    @property
    def low1(self) -> np.ndarray:
        """Lower one-sided ``1 - alpha`` repeated confidence bound (at ``c1``), (n_runs, n_looks).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.low1.round(4)
        array([[-0.0064,  0.0424]])
        """
        return self._ci1[0]

    @property
    def high1(self) -> np.ndarray:
        """Upper one-sided ``1 - alpha`` repeated confidence bound (at ``c1``), (n_runs, n_looks).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.high1.round(4)
        array([[0.1064, 0.1176]])
        """
        return self._ci1[1]

    @property
    def half_width(self) -> np.ndarray:
        """Half the width of the two-sided repeated CI (score intervals need not be symmetric).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> s.half_width.round(4)
        array([[0.0648, 0.0432]])
        """
        return (self.ci_high - self.ci_low) / 2

    @cached_property
    def fixed_interval(self) -> tuple[np.ndarray, np.ndarray]:
        """The fixed-sample two-sided ``1 - alpha`` interval at every (run, look): ``(low, high)``.

        The statistic's interval at the normal quantile ``z = Phi^{-1}(1 - alpha / 2)`` of a single look (exact
        Clopper–Pearson, or hypergeometric with the finite-population correction, for one model), not at the
        group-sequential bound; where that is wider than the worst-case normal interval ``estimate +-``
        :attr:`worst_case_half_width` (whose variance bound holds whatever the accuracy), the latter, clipped to
        the scores' range. The interval of :class:`effstats.sequential.Precision` (Chow & Robbins 1965).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> [v.round(4) for v in s.fixed_interval]
        [array([[-0.0088,  0.0408]]), array([[0.1088, 0.1192]])]
        """
        return self._fixed_ends(*_interval_of(self.statistic, ndtri(1 - self.alpha / 2)))

    def _fixed_and_repeated(self) -> None:
        """:attr:`fixed_interval` and the two-sided repeated interval (:attr:`ci_low`, :attr:`ci_high`) at every
        (run, look) from one root search (the statistic twice over, at ``c2`` and at the fixed-sample ``z``), kept
        as if each had been asked for: a search costs about ten evaluations of the statistic whatever the size of
        its arrays, and each end is searched alone, so the values are those of two searches. Where the statistic's
        interval is such a search (``_per_call``), the one-sided repeated interval (at ``c1``, :attr:`low1`) and
        the fixed-sample interval at ``1 - 2 alpha`` (``_fixed_half``: the statistic's, before the worst case) join
        the same search, for the evaluator's intervals at the stop to read."""
        shape = np.shape(self.estimate)
        if len(shape) != 2 or "fixed_interval" in self.__dict__ or "_ci2" in self.__dict__:
            return
        cs = [np.broadcast_to(np.asarray(self.c2, float), shape), np.full(shape, ndtri(1 - self.alpha / 2))]
        more = bool(getattr(self.statistic, "_per_call", False)) and "_ci1" not in self.__dict__
        if more:
            z_half = ndtri(1 - (2 * self.alpha) / 2)  # as replace(self, alpha=2 * alpha).fixed_interval's z
            cs += [np.broadcast_to(np.asarray(self.c1, float), shape), np.full(shape, z_half)]
        runs, looks = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
        every = self.statistic.take((np.concatenate([runs] * len(cs)), np.concatenate([looks] * len(cs))))
        lows, highs = (np.split(v, len(cs)) for v in _interval_of(every, np.concatenate(cs)))
        self.__dict__["_ci2"] = (lows[0], highs[0])
        self.__dict__["fixed_interval"] = self._fixed_ends(lows[1], highs[1])
        if more:
            self.__dict__["_ci1"] = (lows[2], highs[2])
            self.__dict__["_fixed_half"] = (z_half, lows[3], highs[3])

    def _fixed_ends(self, low, high, index=None):
        """:attr:`fixed_interval` from the statistic's interval ``(low, high)`` at ``z = Phi^{-1}(1 - alpha / 2)``,
        at every (run, look), or where ``index`` (an index of the (run, look) arrays) says: ``low``, ``high`` are
        then the statistic's interval there."""
        worst = self.worst_case_half_width
        if worst is None:
            return low, high
        # a corrected estimate's worst case is that of the stratified mean it corrects (per-item variance <= 1/4)
        est = np.asarray(getattr(self.statistic, "design_estimate", self.estimate), float)
        if index is not None:
            shape = np.broadcast_shapes(np.shape(worst), np.shape(est), np.shape(self.estimate))
            worst, est = np.broadcast_to(worst, shape)[index], np.broadcast_to(est, shape)[index]
        # an exhaustive look (worst 0) keeps the exact interval, the score +- the rounding tolerance
        wider = ((high - low) / 2 > worst) & (worst > 0)
        lo_lim, hi_lim = self.statistic._limits
        return (np.where(wider, np.maximum(est - worst, lo_lim), low),
                np.where(wider, np.minimum(est + worst, hi_lim), high))

    @property
    def worst_case_half_width(self) -> np.ndarray | None:
        """Half-width of the fixed-sample ``1 - alpha`` interval at the largest per-item variance, (1, n_looks).

        ``z sqrt(v_max / information)`` with ``v_max = 1/4`` for scores in [0, 1] (one model, or each of two models
        on different items) and ``1`` for a paired difference in [-1, 1]: what a fixed design that assumes the
        worst (accuracy 1/2) plans with. None without ``information``.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats
        >>> s = LookStats(n=np.array([[1200, 2401]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.5, 0.5]]),
        ...               se=np.array([[0.014, 0.01]]), z=None, c2=np.array([2.16, 2.16]),
        ...               c1=np.array([1.88, 1.88]), null=None, alpha=0.05, information=np.array([1200.0, 2401.0]))
        >>> s.worst_case_half_width.round(4)
        array([[0.0283, 0.02  ]])
        """
        if self.information is None:
            return None
        from .statistics import TangoStatistic

        v_max = 1.0 if isinstance(self.statistic, TangoStatistic) else 0.25
        return _worst_half_width(self.alpha, self.information, v_max)[None, :]


def _worst_half_width(alpha: float, information: Any, v_max: float) -> np.ndarray:
    """:attr:`LookStats.worst_case_half_width` at the looks' ``information``, per-item variance at most ``v_max``
    (1/4 for scores in [0, 1], 1 for a paired difference), shape (n_looks,)."""
    with np.errstate(divide="ignore"):
        return ndtri(1 - alpha / 2) * np.sqrt(v_max / np.asarray(information, float))
