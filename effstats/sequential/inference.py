"""Inference after a group-sequential test: stage-wise ordering p-values, median-unbiased estimates, final
confidence intervals and conditional power.

When a group-sequential test stops at look ``k`` with statistic ``z``, the naive p-value, estimate and
interval of a fixed-sample analysis are wrong: the data were looked at repeatedly and the stopping rule
selects extreme paths. The *stage-wise ordering* (Armitage 1957; Fairbanks & Madsen 1982; Tsiatis, Rosner &
Mehta 1984) ranks outcomes first by the look at which the upper boundary is crossed (earlier is more extreme)
and then by ``z``. Everything below follows Jennison & Turnbull (2000, ch. 8) and rpact's implementation
(Wassmer & Brannath 2016, sec. 4.1):

* p-value ``P_0((T, Z_T) >= (k, z))``: the probability under H0 of crossing the upper bound at a look before
  ``k``, or of reaching look ``k`` and seeing at least ``z`` there;
* median-unbiased estimate: the drift ``theta`` at which that probability is 1/2;
* ``100 (1 - 2 gamma)`` % confidence interval: the drifts at which it is ``gamma`` and ``1 - gamma``.

Binding lower (futility) bounds (test types 3 and 5) stop paths and enter the ordering; non-binding ones
(test types 4 and 6) are ignored, so the results stay valid whether or not futility stopping is obeyed (as
rpact). A stop *on* a non-binding futility bound is therefore not a stop of that ordering: rpact's
``getFinalPValue`` / ``getFinalConfidenceInterval`` return NA there ("final stage not reached") and
:func:`effstats.sequential.stagewise_inference` raises, saying so, unless ``binding_futility=True`` asks for the
ordering of the test that obeys the bound (what rpact computes for a design with ``bindingFutility = TRUE``). For a
symmetric two-sided design (test type 2) the ordering runs in the direction of the observed effect, with both boundaries
stopping paths, and the two-sided p-value is ``2 min(p_up, p_down)``. rpact (3.3.4) instead ignores the opposite
boundary there (and reports the one-sided p-value at a stage-1 stop). The difference is the probability of crossing one
boundary and then ending beyond the other: below 1e-9 at an early stop, but it grows with the number of looks and with
alpha when the test runs to the last look. Measured against rpact for LD-Pocock spending with 10 looks reaching the last
one without rejecting: 1e-4 in the p-value and 3e-4 in the interval limits at two-sided alpha 0.05; 0.003 and 0.002 at
alpha 0.2. Passing the bounds as one-sided (``upper=design.upper, two_sided=False``) and doubling the smaller tail
reproduces rpact.

Conditional power (before stopping) is :func:`effstats.sequential.conditional_power`.

The statistic is the standardised one: ``Z_j ~ N(theta sqrt(I_j), 1)`` at information ``I_j``. With
``information`` in units of inverse variance (e.g. ``n / sigma**2``) ``theta`` is the effect itself; with
``information`` in sample sizes it is the effect in standard deviations; by default (the design's information
fractions) it is the expected ``z`` at the planned final look.

References
----------
Armitage, P. (1957). Restricted sequential procedures. *Biometrika*, 44(1/2), 9–26.

Armitage, P., McPherson, C. K. & Rowe, B. C. (1969). Repeated significance tests on accumulating data.
*Journal of the Royal Statistical Society, Series A*, 132(2), 235–244.

Fairbanks, K. & Madsen, R. (1982). P values for tests using a repeated significance test design.
*Biometrika*, 69(1), 69–74.

Tsiatis, A. A., Rosner, G. L. & Mehta, C. R. (1984). Exact confidence intervals following a group sequential
test. *Biometrics*, 40(3), 797–803.

Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
Chapman & Hall/CRC, Boca Raton (ch. 8, analysis following a group sequential test).

Wassmer, G. & Brannath, W. (2016). *Group Sequential and Confirmatory Adaptive Designs in Clinical Trials*.
Springer, Cham (sec. 4.1).

Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*,
70(3), 659–663.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import ndtr

from .._results import ConfidenceInterval, ReadOnlyFields, check_confidence_level
from .._shared import _plain
from .._validation import _number, check_array
from .native import EXTREMEZ, gsprob

__all__ = ["StagewiseInference", "stagewise_inference", "stagewise_pvalue", "sequential_pvalue"]


@dataclass(frozen=True)
class _Bounds(ReadOnlyFields):
    upper: np.ndarray  # (K,)
    lower: np.ndarray | None  # (K,) binding lower bounds, or None
    two_sided: bool
    info: np.ndarray  # (K,) information levels
    r: int
    nonbinding: np.ndarray | None = None  # (K,) a non-binding futility bound the ordering ignores, or None

    def __post_init__(self) -> None:
        from .._results import read_only_fields

        read_only_fields(self)


def _check_design(design: Any) -> None:
    """One ValueError naming ``design`` when it is not a GroupSequentialDesign (None is left to the caller); an
    evaluation's result is told the method that does this for it."""
    from ._design import GroupSequentialDesign
    from ._results import SequentialResult

    if design is None or isinstance(design, GroupSequentialDesign):
        return
    if isinstance(design, SequentialResult):
        raise ValueError("design: got a SequentialResult (an evaluation's result), not a GroupSequentialDesign; its "
                         "final_inference() gives this inference with the bounds and information of its looks")
    raise ValueError(f"design: expected a GroupSequentialDesign (from effstats.sequential.design), got "
                     f"{type(design).__name__}")


def _as_bounds(design: Any, information: Any, upper: Any, lower: Any, two_sided: bool | None, r: int | None,
               binding_futility: bool | None = None) -> _Bounds:
    """Bounds, binding lower bounds and information from a GroupSequentialDesign or explicit arrays."""
    if binding_futility is not None and not isinstance(binding_futility, (bool, np.bool_)):
        raise ValueError(f"binding_futility: expected True, False or None, got {binding_futility!r}")
    for name, val in (("information", information), ("upper", upper), ("lower", lower)):
        if val is not None and (isinstance(val, (bool, np.bool_)) or np.asarray(val).dtype == bool):
            raise ValueError(f"{name}: expected an array of numbers, got {_plain(val)!r}")
    if two_sided is not None and not isinstance(two_sided, (bool, np.bool_)):
        raise ValueError(f"two_sided: expected True or False, got {two_sided!r}")
    if r is not None and (isinstance(r, (bool, np.bool_)) or not isinstance(r, (Integral, np.integer))
                          or not 6 <= r <= 80):
        raise ValueError(f"r: expected an integer grid size in [6, 80], got {r!r}")

    if design is not None:
        _check_design(design)
        if upper is not None or lower is not None:
            raise ValueError("upper: give either a design or explicit bounds (upper=, lower=), not both")
        b = np.asarray(design.upper, float)
        tt = design.test_type
        a = nonbinding = None
        if tt in (3, 5):
            if binding_futility is False:
                raise ValueError(f"binding_futility: the upper bounds of a test_type {tt} design assume its lower "
                                 "bound is binding; False would ignore it")
            a = np.asarray(design.lower, float)
        elif tt in (4, 6):
            if binding_futility:
                a = np.asarray(design.lower, float)
            else:
                nonbinding = np.asarray(design.lower, float)
        elif binding_futility:
            raise ValueError(f"binding_futility: a test_type {tt} design has no futility bound")
        sym = tt == 2
        if two_sided is not None and bool(two_sided) != sym:
            raise ValueError(f"two_sided: the design's test_type {tt} fixes it to {sym}")
        default_info = design._observed if design._observed is not None else design.timing
        rr = design.r if r is None else r
    else:
        if upper is None:
            raise ValueError("design: expected a GroupSequentialDesign, or explicit bounds via upper= (and lower=)")
        b = check_array(upper, "upper", ndim=1)
        if not np.all(np.isfinite(b)):
            raise ValueError(f"upper: expected finite z-bounds, got {b.tolist()}")
        a = nonbinding = None
        if lower is not None:
            a = check_array(lower, "lower", ndim=1, shape=b.shape)
            if np.any(a > b):
                raise ValueError("lower: expected lower bounds at or below the upper bounds")
            if binding_futility is False:
                raise ValueError("binding_futility: explicit lower bounds are binding (they stop paths in the "
                                 "ordering); to ignore a non-binding futility bound, leave lower out")
        elif binding_futility:
            raise ValueError("binding_futility: True needs a futility bound (lower=, or a design of test_type 3-6)")
        sym = bool(two_sided) if two_sided is not None else False
        if sym and a is not None:
            raise ValueError("lower: a two-sided symmetric test uses -upper as its lower bound; do not pass lower")
        default_info = np.arange(1, b.size + 1) / b.size
        rr = 18 if r is None else r
    if information is None:
        info = np.asarray(default_info, float)
    else:
        info = check_array(information, "information", ndim=1)
        if not np.all(np.isfinite(info)) or np.any(info <= 0) or np.any(np.diff(info) <= 0):
            raise ValueError(f"information: expected positive, strictly increasing levels, got {info.tolist()}")
        if info.size > b.size:
            raise ValueError(f"information: expected at most {b.size} levels (one per look), got {info.size}")
    return _Bounds(upper=b, lower=a, two_sided=sym, info=info, r=int(rr), nonbinding=nonbinding)


def _nonbinding_stop(bd: _Bounds, look: int, z: float) -> ValueError:
    """The error for a statistic at or below a non-binding futility bound, saying what to do instead."""
    return ValueError(
        f"z: {z:g} is at or below the non-binding futility bound {bd.nonbinding[look - 1]:.4g} at look {look}: H0 is "
        "not rejected, but the stage-wise ordering of a design whose futility bound is non-binding defines no final "
        "p-value, estimate or interval there (its alpha ignores the bound; rpact's getFinalPValue and "
        "getFinalConfidenceInterval return NA, 'final stage not reached'). The repeated confidence interval stays "
        "valid at any stop. If the futility bound is obeyed whenever it is crossed, pass binding_futility=True: the "
        "ordering of the test that obeys it (its lower bounds stop paths; valid, and conservative for these upper "
        "bounds, which ignore it)")


def _upper_tail(bd: _Bounds, look: int, z: float, thetas: np.ndarray) -> np.ndarray:
    """P_theta((T, Z_T) >= (look, z)) in the stage-wise ordering, for each theta (n_theta,)."""
    k = look
    b = bd.upper[:k].copy()
    b[k - 1] = z
    if bd.two_sided:
        a = -bd.upper[:k].copy()
    elif bd.lower is not None:
        a = bd.lower[:k].copy()
    else:
        a = np.full(k, -EXTREMEZ)
    a[k - 1] = -EXTREMEZ
    a = np.minimum(a, b)  # a binding lower bound that met the upper one at an earlier look
    info = bd.info[:k]
    if k == 1:
        return ndtr(thetas * np.sqrt(info[0]) - z)
    return gsprob(thetas, info, a, b, bd.r)["probhi"].sum(0)


def _stopping_look(bd: _Bounds, z: np.ndarray) -> tuple[int, str]:
    """First look whose statistic is outside the continuation region (rpact's .getStageGroupSeq)."""
    kmax = bd.upper.size
    for j, zj in enumerate(z.tolist()):
        if zj >= bd.upper[j]:
            return j + 1, "efficacy"
        if bd.two_sided and zj <= -bd.upper[j]:
            return j + 1, "efficacy"
        if bd.lower is not None and j < kmax - 1 and zj <= bd.lower[j]:
            return j + 1, "futility"
    return z.size, "final" if z.size == kmax else "continue"


@dataclass(frozen=True)
class StagewiseInference(ReadOnlyFields):
    r"""Inference at the stopping look of a group-sequential test under the stage-wise ordering.

    Attributes
    ----------
    look : int
        Stopping look (1-based).
    z : float
        Standardised statistic at that look.
    reason : {"efficacy", "futility", "final"}
        Why the test stopped there: a crossed upper (or, two-sided, lower) bound, a binding futility bound, or the
        last look reached without crossing.
    statistic : float
        Median-unbiased estimate of the drift :math:`\theta` (:math:`Z_j \sim N(\theta \sqrt{I_j}, 1)`).
    naive_estimate : float
        :math:`z / \sqrt{I_\mathrm{look}}`, the fixed-sample estimate on the statistic's scale, biased away from 0
        after early stopping. It is the sample difference only up to the test's variance: a score test standardises
        by the variance at the null, so for a paired comparison it differs slightly from
        ``SequentialResult.estimate``.
    pvalue : float
        Stage-wise ordering p-value: one-sided (upper) for one-sided designs, two-sided ``2 min(p_up, p_down)``
        for symmetric two-sided designs.
    pvalue_upper : float
        :math:`P_0((T, Z_T) \ge (\mathrm{look}, z))`, the one-sided upper p-value.
    information : numpy.ndarray of shape (look,)
        Information at looks 1..look used for the estimate.
    alternative : {"greater", "two-sided"}
        One-sided (upper) or symmetric two-sided ordering.
    median_unbiased_estimate : float
        The same as ``statistic``.

    See Also
    --------
    effstats.sequential.stagewise_inference : Makes one.
    effstats.sequential.stagewise_pvalue : The p-value alone.

    References
    ----------
    Tsiatis, A. A., Rosner, G. L. & Mehta, C. R. (1984). Exact confidence intervals following a group
    sequential test. *Biometrics*, 40(3), 797–803.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 8, analysis following a group sequential test).

    Wassmer, G. & Brannath, W. (2016). *Group Sequential and Confirmatory Adaptive Designs in Clinical
    Trials*. Springer, Cham (sec. 4.1).

    Wassmer, G. & Pahlke, F. (2023). *rpact: Confirmatory Adaptive Clinical Trial Design and
    Analysis*. R package version 3.3.4 (``getFinalPValue``, ``getFinalConfidenceInterval``).

    Examples
    --------
    >>> from effstats.sequential import design, stagewise_inference
    >>> res = stagewise_inference(design(10, 0.05, spending="pocock"), z=3.0, look=2)
    >>> res.look, res.reason, round(res.pvalue, 4)
    (2, 'efficacy', 0.0123)
    >>> round(res.statistic, 4), round(res.naive_estimate, 4)  # the naive estimate is biased away from 0
    (6.3819, 6.7082)
    """

    look: int
    z: float
    reason: str
    statistic: float
    naive_estimate: float
    pvalue: float
    pvalue_upper: float
    information: np.ndarray
    alternative: str
    _bounds: _Bounds = field(repr=False)
    _sign: float = field(default=1.0, repr=False)

    def __post_init__(self) -> None:
        from .._results import read_only_fields

        read_only_fields(self)  # the statistic is solved once, from these information levels

    def _solve(self, target: float) -> float:
        """theta with P_theta(>= observed) = target (increasing in theta), by Brent's method on a widened bracket."""
        scale = 1.0 / np.sqrt(self.information[0])
        centre = self._sign * self.naive_estimate

        def f(t: float) -> float:
            return float(_upper_tail(self._bounds, self.look, self._sign * self.z, np.array([t]))[0]) - target

        lo, hi = centre - 4 * scale, centre + 4 * scale
        flo, fhi = f(lo), f(hi)
        n = 0
        while flo > 0 and n < 40:
            lo -= 4 * scale * 2**n
            flo = f(lo)
            n += 1
        n = 0
        while fhi < 0 and n < 40:
            hi += 4 * scale * 2**n
            fhi = f(hi)
            n += 1
        if flo > 0 or fhi < 0:  # pragma: no cover - the tail probability is a continuous cdf in theta
            raise RuntimeError(f"stagewise_inference: no drift gives tail probability {target:g} in [{lo:g}, {hi:g}]")
        root = brentq(f, lo, hi, xtol=1e-12 * max(1.0, abs(centre)), rtol=4 * np.finfo(float).eps, maxiter=200)
        return self._sign * root

    @property
    def median_unbiased_estimate(self) -> float:
        """Median-unbiased estimate of the drift ``theta`` (the same as ``statistic``).

        Examples
        --------
        >>> from effstats.sequential import design, stagewise_inference
        >>> res = stagewise_inference(design(10, 0.05, spending="pocock"), z=3.0, look=2)
        >>> round(res.median_unbiased_estimate, 4)
        6.3819
        """
        return self.statistic

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Final (stage-wise ordering) confidence interval for ``theta``.

        Its limits are the drifts at which the probability of a result at least as extreme is
        ``(1 - confidence_level) / 2`` and ``(1 + confidence_level) / 2`` (rpact's final CI with
        ``confidence_level = 1 - 2 alpha / sided``).

        Parameters
        ----------
        confidence_level : float, default=0.95
            In (0, 1).

        Returns
        -------
        ConfidenceInterval
            Named tuple ``(low, high)``.

        Examples
        --------
        >>> from effstats.sequential import design, stagewise_inference
        >>> res = stagewise_inference(design(10, 0.05, spending="pocock"), z=3.0, look=2)
        >>> low, high = res.confidence_interval(0.95)
        >>> round(low, 4), round(high, 4)
        (1.5117, 10.9075)
        """
        level = check_confidence_level(confidence_level)
        g = (1 - level) / 2
        lo, hi = self._solve(g), self._solve(1 - g)
        lo, hi = min(lo, hi), max(lo, hi)
        return ConfidenceInterval(float(lo), float(hi))

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One row: look, z, reason, estimate (median unbiased), naive estimate, p-value and the final CI.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Level of the final confidence interval.

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> from effstats.sequential import design, stagewise_inference
        >>> res = stagewise_inference(design(10, 0.05, spending="pocock"), z=3.0, look=2)
        >>> res.to_frame()[["look", "estimate", "pvalue", "ci_low", "ci_high"]].round(4)
           look  estimate  pvalue  ci_low  ci_high
        0     2    6.3819  0.0123  1.5117  10.9075
        """
        ci = self.confidence_interval(confidence_level)
        confidence_level = check_confidence_level(confidence_level)  # the column holds a float
        return pd.DataFrame([{
            "look": self.look, "z": self.z, "reason": self.reason, "estimate": self.statistic,
            "naive_estimate": self.naive_estimate, "pvalue": self.pvalue, "ci_low": ci.low, "ci_high": ci.high,
            "confidence_level": confidence_level, "alternative": self.alternative,
        }])


def _check_z_look(z: Any, look: Any, bd: _Bounds) -> tuple[int, float, str]:
    kmax = bd.upper.size
    if isinstance(z, (bool, np.bool_)) or np.asarray(z).dtype == bool:
        raise ValueError(f"z: expected a number or an array of numbers, got {z!r}")
    zarr = check_array(z, "z", ndim=(0, 1))
    is_path = zarr.ndim == 1
    zarr = zarr.reshape(-1)
    if zarr.size == 0 or not np.all(np.isfinite(zarr)):
        raise ValueError(f"z: expected finite statistics, got {zarr.tolist()}")
    if zarr.size > kmax:
        raise ValueError(f"z: expected at most {kmax} statistics (one per look), got {zarr.size}")
    if is_path:  # the path: stop at its first exit
        stop, reason = _stopping_look(bd, zarr)
        # a path may run on past a non-binding futility bound; one that ends on it stopped for futility
        if reason == "continue" and bd.nonbinding is not None and zarr[-1] <= bd.nonbinding[zarr.size - 1]:
            raise _nonbinding_stop(bd, zarr.size, float(zarr[-1]))
        if reason == "continue":
            raise ValueError(f"z: the test has not stopped: no bound was crossed in {zarr.size} of {kmax} looks")
        if look is not None and int(look) != stop:
            raise ValueError(f"look: the path z stops at look {stop}, got look={look}")
        return stop, float(zarr[stop - 1]), reason
    if look is None:
        if kmax == 1:
            look = 1
        else:
            raise ValueError("look: required when z is a single statistic (the 1-based look at which the test stopped)")
    look = _number(look)
    if isinstance(look, bool) or not isinstance(look, Integral) or not 1 <= look <= kmax:
        raise ValueError(f"look: expected an integer in [1, {kmax}], got {_plain(look)!r}")
    look = int(look)
    zz = float(zarr[0])
    j = look - 1
    if look < kmax:
        if zz >= bd.upper[j] or (bd.two_sided and zz <= -bd.upper[j]):
            reason = "efficacy"
        elif bd.lower is not None and zz <= bd.lower[j]:
            reason = "futility"
        elif bd.nonbinding is not None and zz <= bd.nonbinding[j]:
            raise _nonbinding_stop(bd, look, zz)
        else:
            lo = -bd.upper[j] if bd.two_sided else (bd.lower[j] if bd.lower is not None else -np.inf)
            raise ValueError(f"z: {zz:g} is inside the continuation region ({lo:.4g}, {bd.upper[j]:.4g}) at look "
                             f"{look}; "
                             "the test stops there only when a bound is crossed (stage-wise inference is defined at "
                             "the stopping look)")
    else:  # the last look: a decision either way
        crossed = zz >= bd.upper[j] or (bd.two_sided and zz <= -bd.upper[j])
        reason = "efficacy" if crossed else "final"
    return look, zz, reason


def _p_upper(bd: _Bounds, look: int, z: float) -> float:
    """``P_0((T, Z_T) >= (look, z))`` under no drift, as a probability: the recursion's quadrature overshot 1 by
    1.5e-6 for a z far below the bounds."""
    return min(1.0, max(0.0, float(_upper_tail(bd, look, z, np.array([0.0]))[0])))


def stagewise_inference(design: Any = None, z: Any = None, look: int | None = None, information: Any = None, *,
                        upper: Any = None, lower: Any = None, two_sided: bool | None = None,
                        r: int | None = None, binding_futility: bool | None = None) -> StagewiseInference:
    """P-value, median-unbiased estimate and final CI after a group-sequential test (stage-wise ordering).

    Parameters
    ----------
    design : effstats.sequential.GroupSequentialDesign, optional
        The design whose bounds were used (binding lower bounds of test types 3 / 5 enter the ordering;
        non-binding ones are ignored). Alternatively pass ``upper`` (and ``lower``, ``two_sided``).
    z : float or array-like of shape (n_looks,)
        The statistic at the stopping look (then ``look`` is required), or the statistics of looks 1..n
        (the stopping look is the first outside the continuation region).
    look : int, optional
        1-based stopping look (``z`` must cross a bound there unless it is the last look).
    information : array-like of shape (n_looks,), optional
        Information levels of the looks (e.g. ``n / variance``); default: the design's observed information
        when it was built from ``information=``, else its information fractions.
    upper, lower : array-like of shape (k,), optional
        Explicit z-bounds instead of a design; ``lower`` is taken as binding.
    two_sided : bool, optional
        With explicit bounds: a symmetric two-sided test with bounds ``±upper``.
    r : int, optional
        Integration grid size (default the design's, or 18).
    binding_futility : bool, optional
        Whether the futility (lower) bound stops paths in the ordering. Default: as the design says (binding for
        test types 3 / 5 and explicit ``lower``, ignored for the non-binding test types 4 / 6). A stop on a
        non-binding futility bound has no stage-wise inference in its own design (its alpha ignores the bound;
        rpact returns NA there) and raises a ValueError saying so. ``True`` for test types 4 / 6 takes the bound
        as binding: the inference of the test that obeys the futility bound whenever it is crossed -- valid when
        that is how the evaluation is run, and conservative, since the upper bounds were computed without it.

    Returns
    -------
    effstats.sequential.StagewiseInference
        ``statistic`` (median-unbiased estimate), ``pvalue``, ``confidence_interval(confidence_level)``,
        ``to_frame()``.

    Raises
    ------
    ValueError
        If ``z`` is not finite, ``look`` is out of range, or the test does not stop at ``look`` with ``z``
        (including a stop on a non-binding futility bound, unless ``binding_futility=True``).

    See Also
    --------
    effstats.sequential.stagewise_pvalue : The p-value alone, without root finding.
    effstats.sequential.sequential_pvalue : The two-sided p-value from sample sizes.
    effstats.sequential.design : The design whose bounds are used.

    References
    ----------
    Armitage, P. (1957). Restricted sequential procedures. *Biometrika*, 44(1/2), 9–26.

    Fairbanks, K. & Madsen, R. (1982). P values for tests using a repeated significance test design.
    *Biometrika*, 69(1), 69–74.

    Tsiatis, A. A., Rosner, G. L. & Mehta, C. R. (1984). Exact confidence intervals following a group
    sequential test. *Biometrics*, 40(3), 797–803.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 8, analysis following a group sequential test).

    Wassmer, G. & Brannath, W. (2016). *Group Sequential and Confirmatory Adaptive Designs in Clinical
    Trials*. Springer, Cham (sec. 4.1).

    Wassmer, G. & Pahlke, F. (2023). *rpact: Confirmatory Adaptive Clinical Trial Design and
    Analysis*. R package version 3.3.4 (``getFinalPValue``, ``getFinalConfidenceInterval``).

    Examples
    --------
    >>> from effstats.sequential import design, stagewise_inference
    >>> d = design(10, 0.05, spending="pocock")
    >>> res = stagewise_inference(d, z=3.0, look=2)
    >>> round(res.pvalue, 4)
    0.0123

    The statistics of every look so far; the stop is the first look outside the continuation region:

    >>> res = stagewise_inference(design(3, 0.025, sided=1, spending="ld_obf"), z=[1.2, 2.9])
    >>> res.look, res.reason, round(res.pvalue, 4)
    (2, 'efficacy', 0.0019)
    """
    _check_design(design)
    if z is None:
        raise ValueError("z: the statistic at the stopping look is required")
    bd = _as_bounds(design, information, upper, lower, two_sided, r, binding_futility)
    look_, zz, reason = _check_z_look(z, look, bd)
    if bd.info.size < look_:
        raise ValueError(f"information: expected at least {look_} levels (up to the stopping look), got {bd.info.size}")
    info = bd.info[:look_]
    p_up = _p_upper(bd, look_, zz)
    if bd.two_sided:
        p_down = float(_upper_tail(bd, look_, -zz, np.array([0.0]))[0])  # by symmetry, P_0(<= (look, z))
        pvalue = min(1.0, 2 * min(p_up, p_down))
        sign = 1.0 if zz >= 0 else -1.0
        alternative = "two-sided"
    else:
        pvalue = p_up
        sign = 1.0
        alternative = "greater"
    res = StagewiseInference(look=look_, z=zz, reason=reason, statistic=float("nan"),
                             naive_estimate=float(zz / np.sqrt(info[-1])), pvalue=float(pvalue),
                             pvalue_upper=p_up, information=info, alternative=alternative, _bounds=bd, _sign=sign)
    object.__setattr__(res, "statistic", float(res._solve(0.5)))
    return res


def stagewise_pvalue(design: Any = None, z: Any = None, look: int | None = None, information: Any = None,
                     **kwargs: Any) -> float:
    """The stage-wise ordering p-value alone (see :func:`effstats.sequential.stagewise_inference`; no root finding).

    Parameters
    ----------
    design, z, look, information
        As :func:`effstats.sequential.stagewise_inference`.
    **kwargs
        ``upper``, ``lower``, ``two_sided``, ``r``, ``binding_futility`` as there.

    Returns
    -------
    float
        One-sided (upper) for one-sided designs, two-sided ``2 min(p_up, p_down)`` for symmetric two-sided ones.

    Raises
    ------
    ValueError
        As :func:`effstats.sequential.stagewise_inference`.
    TypeError
        For an unknown keyword argument.

    See Also
    --------
    effstats.sequential.stagewise_inference : With the estimate and the confidence interval.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (sect. 8.4).

    Examples
    --------
    >>> from effstats.sequential import design, stagewise_pvalue
    >>> round(stagewise_pvalue(design(10, 0.05, spending="pocock"), z=3.0, look=2), 4)
    0.0123
    """
    _check_design(design)
    if z is None:
        raise ValueError("z: the statistic at the stopping look is required")
    bd = _as_bounds(design, information, kwargs.pop("upper", None), kwargs.pop("lower", None),
                    kwargs.pop("two_sided", None), kwargs.pop("r", None), kwargs.pop("binding_futility", None))
    if kwargs:
        raise TypeError(f"stagewise_pvalue: unexpected arguments {sorted(kwargs)}")
    look_, zz, _ = _check_z_look(z, look, bd)
    p_up = _p_upper(bd, look_, zz)
    if bd.two_sided:
        return min(1.0, 2 * min(p_up, float(_upper_tail(bd, look_, -zz, np.array([0.0]))[0])))
    return p_up


def sequential_pvalue(z: float, look: int, n: Any, max_n: float, alpha: float = 0.05, spending: Any = "ld_pocock",
                      spending_param: float | None = None) -> float:
    """Two-sided stage-wise ordering p-value of a symmetric group-sequential test stopped at ``look``.

    The bounds are those of ``design(alpha, sided=2, spending, information=n, max_information=max_n)``: spending
    evaluated at ``n / max_n`` (so bounds at looks up to ``look`` do not depend on later looks), or, for the
    classic Pocock / O'Brien-Fleming / Wang-Tsiatis shapes, whose constant depends on every look, over all the
    planned looks in ``n``. The p-value is ``2 min(p_up, p_down)`` with both boundaries stopping paths
    (Jennison & Turnbull 2000, sec. 8.4); for z beyond the bound at ``look`` this equals twice gsDesign's
    ``gsProbability`` upper-crossing probability with the bound at ``look`` replaced by ``|z|``. At an interim
    look with ``|z|`` inside the continuation region (a stop by another rule, e.g. precision or futility) it is
    the ordering's p-value at ``(look, z)``, which exceeds the alpha spent by that look, so such a stop never
    yields a significant result it would not have had by crossing the bound.

    Parameters
    ----------
    z : float
        Statistic at the stopping look (finite).
    look : int
        Stopping look, 1-based, ``<= len(n)``.
    n : array-like of shape (n_looks,)
        Sample sizes (information) of the looks; all K planned looks for classic bounds.
    max_n : float
        Planned maximum sample, ``>= n[look - 1]``.
    alpha, spending, spending_param
        As :func:`effstats.sequential.design` (two-sided total alpha).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``z`` not finite, ``look`` out of range, or an interim ``n`` beyond ``max_n``.

    See Also
    --------
    effstats.sequential.stagewise_inference : The same ordering from a design, with estimate and interval.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (sect. 8.4).

    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    Examples
    --------
    >>> from effstats.sequential import sequential_pvalue
    >>> round(sequential_pvalue(2.8, look=2, n=[100, 200, 300], max_n=300), 4)
    0.0255
    """
    from ._design import design as _design

    z, look, max_n = _number(z), _number(look), _number(max_n)
    if isinstance(z, (bool, np.bool_)) or not isinstance(z,
                                                         (int, float, np.integer, np.floating)) or not np.isfinite(z):
        raise ValueError(f"z: expected a finite real number, got {_plain(z)!r}")
    nn = check_array(n, "n", ndim=1)
    if not np.isfinite(nn).all() or (nn <= 0).any() or (np.diff(nn) <= 0).any():
        raise ValueError(f"n: expected positive, strictly increasing sample sizes, got {nn.tolist()}")
    if isinstance(look, (bool, np.bool_)) or not isinstance(look, (Integral, np.integer)) or not 1 <= look <= nn.size:
        raise ValueError(f"look: expected an integer in [1, {nn.size}], got {_plain(look)!r}")
    if isinstance(max_n, (bool, np.bool_)) or not isinstance(max_n, (int, float, np.integer, np.floating)) \
            or not np.isfinite(max_n) or max_n < nn[look - 1]:
        raise ValueError(f"max_n: expected a number at least n[look - 1] = {nn[look - 1]:g}, got {_plain(max_n)!r}")
    if nn.size > 1 and (nn[:-1] > max_n).any():
        raise ValueError(f"max_n: expected at least every interim sample size (largest {nn[-2]:g}), got {max_n:g}")
    if nn.size == 1:  # one look: a fixed-sample test (the bound at n / max_n is irrelevant to the p-value)
        return float(min(1.0, 2 * ndtr(-abs(float(z)))))
    d = _design(alpha=alpha, sided=2, spending=spending, spending_param=spending_param, information=nn,
                max_information=max_n)
    bd = _Bounds(upper=d.upper, lower=None, two_sided=True, info=nn, r=d.r)
    p_up = float(_upper_tail(bd, int(look), float(z), np.array([0.0]))[0])
    p_down = float(_upper_tail(bd, int(look), -float(z), np.array([0.0]))[0])
    return float(min(1.0, 2 * min(p_up, p_down)))
