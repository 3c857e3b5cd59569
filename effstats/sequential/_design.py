"""Group-sequential designs: :func:`effstats.sequential.design` and its frozen
result :class:`effstats.sequential.GroupSequentialDesign`.

Boundaries are derived as soon as :func:`effstats.sequential.design` returns; the sample-size search (the maximum
information giving power ``1 - beta``, needed for ``information``, ``inflation``, ``expected_n_h0`` / ``expected_n_h1``,
``power`` and the crossing probabilities under the alternative) runs on first access to any of those, once.
Beta-spending designs (test types 3 and 4) need the information to place their bounds and compute it at once.

References
----------
Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
Chapman & Hall/CRC, Boca Raton.

Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*,
70(3), 659–663.

Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property
from numbers import Integral, Real
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import ndtr

from .._results import ReadOnlyFields
from .._shared import _plain
from .._validation import _number, check_array, check_flag, check_fraction, check_positive_int
from .native import EXTREMEZ, BetaNotSpent, _Spec, gsprob, native_bounds, native_sizes
from .spending import SpendingFunction, get_spending

__all__ = ["GroupSequentialDesign", "design", "check_timing"]

Backend = Literal["native", "gsdesign"]


def check_timing(timing: Any, k: int, name: str = "timing") -> np.ndarray:
    """Information fractions: ``None`` (equal spacing), or length ``k`` / ``k - 1`` increasing in (0, 1] ending at 1.

    Parameters
    ----------
    timing : array-like of shape (k,) or (k - 1,), or None
        Fractions; a missing last fraction is 1, and a last fraction within 1e-9 of 1 is taken as 1.
    k : int
        Number of looks.
    name : str, default="timing"
        Argument name for error messages.

    Returns
    -------
    numpy.ndarray of shape (k,)

    Raises
    ------
    ValueError
        If the fractions are not strictly increasing in (0, 1] ending at 1 (the message starts with ``name``).

    Examples
    --------
    >>> from effstats.sequential._design import check_timing
    >>> check_timing([0.3, 0.6], 3)
    array([0.3, 0.6, 1. ])
    >>> check_timing(None, 4)
    array([0.25, 0.5 , 0.75, 1.  ])
    """
    if timing is None:
        return np.arange(1, k + 1) / k
    t = check_array(timing, name, ndim=(0, 1)).reshape(-1)
    if t.size == k - 1:
        t = np.append(t, 1.0)
    if t.size != k:
        raise ValueError(f"{name}: expected {k} (or {k - 1}) information fractions, got {t.size}")
    if not np.isfinite(t).all():
        raise ValueError(f"{name}: expected finite information fractions, got {t.tolist()}")
    if abs(t[-1] - 1) > 1e-9:
        raise ValueError(f"{name}: the final information fraction must be 1, got {_plain(t[-1])!r}")
    if t[-1] != 1:  # rounding error of computed fractions (e.g. np.cumsum([0.1] * 10) ends at 0.9999999999999999)
        t = t.copy()
        t[-1] = 1.0
    if t[0] <= 0 or np.any(np.diff(t) <= 0):
        raise ValueError(f"{name}: information fractions must be strictly increasing in (0, 1], got {t.tolist()}")
    return t


@dataclass(frozen=True, eq=False)
class GroupSequentialDesign(ReadOnlyFields):
    r"""A group-sequential design (boundaries on the z-scale), from either backend.

    Returned by :func:`effstats.sequential.design`; frozen. The bounds are computed when the design is
    made; the sizes (``information``, ``inflation``, ``expected_n_h0``, ``expected_n_h1``, ``power``,
    ``upper_prob``, ``lower_prob``, ``beta_spent``) on first access to any of them, once, by the
    sample-size search (or, for a design at observed information, as the operating characteristics
    there).

    Attributes
    ----------
    k : int
        Number of looks (interims + final).
    test_type : int
        gsDesign's ``test.type``: 1 one-sided; 2 two-sided symmetric; 3 / 4 beta-spending lower
        bound, binding / non-binding; 5 / 6 lower bound spending under H0, binding / non-binding.
    alpha, beta : float
        Type-I error as given (two-sided total for ``test_type=2``, one-sided otherwise) and type-II error.
    timing : numpy.ndarray of shape (k,)
        Information fractions of the looks.
    upper, lower : numpy.ndarray of shape (k,)
        z-bounds; ``lower`` is ``-upper`` for symmetric designs and None for one-sided ones.
    nominal_p : numpy.ndarray of shape (k,)
        One-sided nominal p-value ``1 - Phi(upper)`` at each look.
    alpha_spent : numpy.ndarray of shape (k,)
        Cumulative type-I error by each look (two-sided total for ``test_type=2``; ignoring a
        non-binding lower bound for test types 4 and 6).
    delta : float
        Standardised drift of the alternative for a fixed design of information 1
        (:math:`z_{1-\alpha} + z_{1-\beta}`, one-sided alpha), divided by :math:`\sqrt{n_\mathrm{fixed}}` per unit
        of the user's information when ``n_fixed`` is given.
    spending, lower_spending : effstats.sequential.SpendingFunction
        Upper and (test types 3-6) lower spending functions; ``lower_spending`` is None otherwise.
    backend : {"native", "gsdesign"}
        The implementation that derived the bounds.
    astar : float
        Total lower-bound spending for test types 5 / 6 as given (0 means ``1 - alpha``).
    max_information : float or None
        Planned maximum information (designs at observed information).
    n_fixed : float or None
        Fixed-sample information on the scale of ``information`` (designs at observed information).
    tol : float
        Tolerance of the boundary and size searches.
    r : int
        Grid size of the numerical integration.
    information : numpy.ndarray of shape (k,)
        Information at each look relative to a fixed design with the same alpha and power (on the
        user's scale, e.g. sample sizes, for designs at observed information).
    inflation : float
        Maximum information / fixed-design information (NaN for designs at observed information).
    expected_n_h0, expected_n_h1 : float
        Expected information at stopping under H0 and under the design alternative.
    power : float
        Probability of crossing the upper bound under the design alternative.
    upper_prob, lower_prob : numpy.ndarray of shape (k, 2)
        Crossing probabilities at each look under theta = 0 and theta = delta (``lower_prob`` None
        for one-sided designs).
    beta_spent : numpy.ndarray of shape (k,) or None
        Cumulative probability of crossing the lower bound under the alternative (test types 3-6).
    sided : int
        2 for a symmetric two-sided design, 1 otherwise.
    sizes_computed : bool
        Whether the sizes have been computed.

    See Also
    --------
    effstats.sequential.design : Makes a design.
    effstats.sequential.plan : A design sized in items for an evaluation.
    effstats.sequential.conditional_power : Conditional power at an interim look.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton.

    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

    Examples
    --------
    >>> from effstats.sequential import design
    >>> d = design(3, alpha=0.05, beta=0.1, spending="ld_obf")
    >>> d.upper.round(4)
    array([3.7103, 2.5114, 1.993 ])
    >>> round(d.inflation, 4), round(d.expected_n_h1, 4), round(d.power, 4)
    (1.0119, 0.8115, 0.9)
    """

    k: int
    test_type: int
    alpha: float
    beta: float
    timing: np.ndarray
    upper: np.ndarray
    lower: np.ndarray | None
    nominal_p: np.ndarray
    alpha_spent: np.ndarray
    delta: float
    spending: SpendingFunction
    lower_spending: SpendingFunction | None
    backend: str
    astar: float = 0.0
    max_information: float | None = None
    n_fixed: float | None = None
    tol: float = 1e-6
    r: int = 18
    _observed: np.ndarray | None = field(default=None, repr=False)
    _spec: Any = field(default=None, repr=False, compare=False)  # what the sizes are computed from (picklable)
    _bnd: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        from .._results import read_only_fields

        read_only_fields(self)  # the sizes kept (_sizes) hold for these bounds only

    @property
    def sided(self) -> int:
        """2 for a symmetric two-sided design (``test_type=2``), 1 otherwise.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3).sided, design(3, sided=1).sided
        (2, 1)
        """
        return 2 if self.test_type == 2 else 1

    # ------------------------------------------------------------------ sizes, computed once on demand
    @cached_property
    def _sizes(self) -> dict:
        if self._spec is None or self._bnd is None:  # pragma: no cover - every design() result carries them
            raise RuntimeError("design: this design has no size information")
        if self._bnd.get("sized"):
            res = self._bnd
        elif self.backend == "native":
            res = native_sizes(self._spec, self._bnd)
        else:
            from .gsdesign import gsdesign_design

            res = gsdesign_design(self._spec)
        n_i = np.asarray(res["n_i"], float)
        if (self._observed is not None and self.n_fixed is None and self._observed[-1] > 20
                and not self._bnd.get("sized")):
            # relative to a fixed design of information 1, 20 units is power ~1 at the design alternative (test
            # types 3 / 4 are sized at creation, where their beta-spending bounds need the scale: documented there)
            warnings.warn(f"n_fixed: power, expected_n_h1, upper_prob/lower_prob under the alternative (and "
                          f"conditional power's default alternative) take information relative to a fixed design of "
                          f"information 1 (gsDesign's n.fix = 1); information up to {self._observed[-1]:g} looks like "
                          "sample sizes: pass n_fixed, the fixed-sample size for power 1 - beta, on the same scale",
                          UserWarning, stacklevel=3)
        if not math.isfinite(sum(np.ravel(res["upper_prob"]).tolist())):  # (see _design_from_bounds)
            raise ValueError(f"r: the integration grid (r={self.r}) is too coarse for these looks; pass a larger r "
                             "(<= 80)")
        return {"n_i": n_i[: self.k], "upper_prob": np.asarray(res["upper_prob"], float)[: self.k],
                "lower_prob": None if res["lower_prob"] is None else np.asarray(res["lower_prob"], float)[: self.k],
                "en": np.asarray(res["en"], float)}

    @property
    def information(self) -> np.ndarray:
        """Information at each look relative to a fixed design with the same alpha and power (on the
        user's scale for designs at observed information).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3, spending="ld_obf").information.round(4)
        array([0.3373, 0.6746, 1.0119])
        """
        return self._sizes["n_i"]

    @property
    def inflation(self) -> float:
        """Maximum information / fixed-design information (NaN for designs at observed information).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> round(design(3, spending="ld_obf").inflation, 4)
        1.0119
        """
        return float(self.information[-1]) if self._observed is None else float("nan")

    @property
    def expected_n_h0(self) -> float:
        """Expected information at stopping under H0.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> round(design(3, spending="ld_obf").expected_n_h0, 4)
        1.0077
        """
        return float(self._sizes["en"][0])

    @property
    def expected_n_h1(self) -> float:
        """Expected information at stopping under the design alternative.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> round(design(3, spending="ld_obf").expected_n_h1, 4)
        0.8115
        """
        return float(self._sizes["en"][1])

    @property
    def power(self) -> float:
        """Probability of crossing the upper bound under the design alternative.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> round(design(3, spending="ld_obf").power, 4)
        0.9
        """
        return float(self.upper_prob[:, 1].sum())

    @property
    def upper_prob(self) -> np.ndarray:
        """Probabilities (k, 2) of crossing the upper bound at each look under theta = 0 and theta = delta.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3, spending="ld_obf").upper_prob[:, 1].round(4)
        array([0.0338, 0.5265, 0.3397])
        """
        return self._sizes["upper_prob"]

    @property
    def lower_prob(self) -> np.ndarray | None:
        """Probabilities (k, 2) of crossing the lower bound at each look under theta = 0 and theta = delta
        (None for one-sided designs).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3, spending="ld_obf").lower_prob[:, 0].round(4)
        array([0.0001, 0.0059, 0.019 ])
        """
        return self._sizes["lower_prob"]

    @property
    def beta_spent(self) -> np.ndarray | None:
        """Cumulative probability of crossing the lower bound under the alternative (test types 3-6, else None).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3, 0.025, 0.1, test_type=4).beta_spent.round(4)
        array([0.0148, 0.0437, 0.1   ])
        """
        return np.cumsum(self.lower_prob[:, 1]) if self.test_type > 2 else None

    @property
    def sizes_computed(self) -> bool:
        """Whether the sample-size search (or the operating characteristics at given information) has run.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> d = design(3)
        >>> d.sizes_computed
        False
        >>> _ = d.inflation
        >>> d.sizes_computed
        True
        """
        return "_sizes" in self.__dict__

    def to_frame(self, sizes: bool = True) -> pd.DataFrame:
        """One row per look: timing, (information,) bounds, nominal p, cumulative alpha (and beta) spent.

        Parameters
        ----------
        sizes : bool, default=True
            ``False`` leaves out the columns that need the sample-size search (information, beta spent).

        Returns
        -------
        pandas.DataFrame
            Indexed by ``look`` (1-based).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> design(3, 0.025, 0.1, test_type=4).to_frame(sizes=False).round(4)
              timing   upper   lower  nominal_p  alpha_spent
        look
        1     0.3333  2.2794 -0.1198     0.0113       0.0113
        2     0.6667  2.2949  1.1133     0.0109       0.0191
        3     1.0000  2.2959  2.2959     0.0108       0.0250
        """
        sizes = check_flag(sizes, "sizes")
        df = pd.DataFrame({"look": np.arange(1, self.k + 1), "timing": self.timing})
        if sizes:
            df["information"] = self.information
        df["upper"] = self.upper
        if self.lower is not None:
            df["lower"] = self.lower
        df["nominal_p"] = self.nominal_p
        df["alpha_spent"] = self.alpha_spent
        if sizes and self.test_type > 2:
            df["beta_spent"] = self.beta_spent
        return df.set_index("look")

    def recompute(self, information: Any, max_information: float | None = None,
                  backend: Backend | None = None) -> "GroupSequentialDesign":
        """Bounds at observed information levels (spending evaluated at ``information / max_information``).

        This is gsDesign's ``n.I`` / ``maxn.IPlan`` update: the same spending function(s), looks
        where they actually happened.

        Parameters
        ----------
        information : array-like of shape (k_observed,)
            Observed information (e.g. items) at the looks, strictly increasing.
        max_information : float, optional
            Planned maximum information (default: the last observed level).
        backend : {"native", "gsdesign"}, optional
            Default: this design's backend.

        Returns
        -------
        effstats.sequential.GroupSequentialDesign

        See Also
        --------
        effstats.sequential.design : The same, with ``information=``.

        Examples
        --------
        >>> from effstats.sequential import design
        >>> d = design(3, spending="ld_obf")
        >>> d.recompute([120, 260, 400], max_information=380).upper.round(4)
        array([3.821 , 2.4724, 2.002 ])
        """
        return design(alpha=self.alpha, beta=self.beta, test_type=self.test_type, spending=self.spending,
                      lower_spending=self.lower_spending, astar=self.astar, information=information,
                      max_information=max_information, n_fixed=self.n_fixed, backend=backend or self.backend,
                      tol=self.tol, r=None)

    def crossing_probability(self, theta: Any) -> dict[str, np.ndarray]:
        """Crossing probabilities and expected information at stopping for drifts ``theta``.

        Parameters
        ----------
        theta : float or array-like of shape (n_theta,)
            Drifts, on the scale of ``delta``.

        Returns
        -------
        dict
            ``"upper"`` and ``"lower"``: crossing probabilities of shape (k, n_theta); ``"en"``: expected
            information at stopping, shape (n_theta,).

        Examples
        --------
        >>> from effstats.sequential import design
        >>> d = design(3, spending="ld_obf")
        >>> p = d.crossing_probability([0.0, d.delta])
        >>> p["upper"].sum(0).round(4), p["en"].round(4)
        (array([0.025, 0.9  ]), array([1.0077, 0.8115]))
        """
        th = check_array(theta, "theta", ndim=(0, 1)).reshape(-1)
        if th.size == 0 or not np.isfinite(th).all():
            raise ValueError(f"theta: expected finite drifts, got {th.tolist()}")
        a = self.lower if self.lower is not None else np.full(self.k, -EXTREMEZ)
        p = gsprob(th, self.information, a, self.upper, self.r)
        return {"upper": p["probhi"], "lower": p["problo"], "en": p["en"]}

    def __repr__(self) -> str:
        lo = "" if self.lower is None else f", lower={np.round(self.lower, 4).tolist()}"
        infl = f", inflation={self.inflation:.4f}" if self.sizes_computed and self._observed is None else ""
        return (f"GroupSequentialDesign(k={self.k}, test_type={self.test_type}, alpha={self.alpha:g}, "
                f"spending={self.spending.label!r}, upper={np.round(self.upper, 4).tolist()}{lo}{infl}, "
                f"backend={self.backend!r})")


def design(
    k: int | None = None,
    alpha: float = 0.05,
    beta: float = 0.1,
    *,
    sided: int = 2,
    test_type: int | None = None,
    spending: Any = "ld_pocock",
    spending_param: float | None = None,
    lower_spending: Any = "hsd",
    lower_param: float | None = None,
    timing: Any = None,
    information: Any = None,
    max_information: float | None = None,
    n_fixed: float | None = None,
    astar: float = 0.0,
    backend: Backend = "native",
    tol: float = 1e-6,
    r: int | None = None,
) -> GroupSequentialDesign:
    """Derive group-sequential boundaries like ``gsDesign::gsDesign`` (natively, or by calling it).

    Parameters
    ----------
    k : int, optional
        Number of looks (interims + final); inferred from ``information`` when given.
    alpha : float, default=0.05
        Type-I error: two-sided total in (0, 1) for a symmetric two-sided design (``sided=2`` /
        ``test_type=2``; each tail gets ``alpha / 2``), one-sided in (0, 0.5) otherwise (gsDesign's
        convention for test types 1 and 3-6).
    beta : float, default=0.1
        Type-II error (power ``1 - beta``); sets the information and expected sample sizes. Below 1 minus the
        one-sided alpha, as in gsDesign: ``1 - alpha / 2`` for a two-sided design, ``1 - alpha`` otherwise.
    sided : {1, 2}, default=2
        Shorthand for ``test_type`` 1 or 2 when ``test_type`` is None.
    test_type : {1, 2, 3, 4, 5, 6}, optional
        gsDesign's test types (see :class:`effstats.sequential.GroupSequentialDesign`).
    spending : str or effstats.sequential.SpendingFunction, default="ld_pocock"
        Upper bound: ``"ld_pocock"``, ``"ld_obf"``, ``"hsd"``, ``"power"`` (spending functions)
        or ``"pocock"``, ``"obf"``, ``"wt"`` (classic constant-shape bounds).
    spending_param, lower_param : float, optional
        Family parameter (gamma, rho or Delta); a ValueError for the families without one
        (``ld_pocock``, ``pocock``, ``obf``). ``lower_param`` defaults to gsDesign's ``sflpar = -2``
        for the Hwang–Shih–DeCani lower bound and to the family default otherwise.
    lower_spending : str or effstats.sequential.SpendingFunction, default="hsd"
        Lower-bound spending for test types 3-6 (default Hwang–Shih–DeCani gamma = -2, as gsDesign); another
        value with test type 1 or 2 is a ValueError, as ``lower_param`` is.
    timing : array-like of shape (k,) or (k - 1,), optional
        Planned information fractions, increasing, ending at 1 (default equal spacing; a last fraction within
        1e-9 of 1, the rounding error of computed fractions, is taken as 1).
    information : array-like of shape (k,), optional
        Observed information (e.g. sample sizes) at the looks, strictly increasing.
    max_information : float, optional
        Planned maximum information (default: the last observed level): bounds are recomputed from the spending
        function at ``information / max_information`` (capped at 1). Interim levels must not exceed it; the
        final look may overrun it and then spends all the remaining alpha, as in gsDesign and rpact.
    n_fixed : float, optional
        With ``information``: the information (e.g. sample size) a fixed-sample test needs for power ``1 - beta``,
        on the scale of ``information`` (gsDesign's ``n.fix``). The design alternative :math:`\\delta` is then
        per unit of information (Notes), so ``power``,
        ``expected_n_h1``, the beta-spending lower bounds of test types 3 / 4 and conditional power's default
        alternative are on the user's scale. Default 1: information relative to a fixed design (for test types
        1, 2, 5, 6 a warning when the sizes are read and ``information`` exceeds 20, which looks like sample
        sizes; test types 3 / 4 need the right scale for their lower bounds, so pass it with sample sizes).
    astar : float, default=0.0
        Total lower-bound spending for test types 5 / 6, in [0, 1 - alpha] as gsDesign checks it (0 means
        ``1 - alpha``); refused with test types 1 / 2, which have no lower bound.
    backend : {"native", "gsdesign"}, default="native"
        ``"native"``: numpy/scipy; ``"gsdesign"``: ``gsDesign::gsDesign`` through rpy2, which needs at least 2
        looks (a one-look design is the fixed-sample test: use ``"native"``).
    tol : float, default=1e-6
        gsDesign's tolerance.
    r : int, optional
        Grid size. ``None`` uses gsDesign's 18 unless there are more than 144 looks or a look adds less than 1/144
        of the information so far: the grid must resolve the increment's density, and its mass error must not
        compound over the looks (Notes; at most 80). A beta-spending design (test types 3 / 4) whose futility
        bound misses its beta by more than ``tol`` on that grid is derived again on grids twice as fine, up to 80,
        before it is refused.

    Returns
    -------
    effstats.sequential.GroupSequentialDesign
        Bounds are computed when it is made; the sizes (``information``, ``inflation``, expected sizes, ``power``) on
        first access. gsDesign's own sample-size search can fail where the native one does not (e.g. LD
        O'Brien-Fleming with a first look at 10 % of the information); with ``backend="gsdesign"`` that
        surfaces as ``effstats.rbridge.RError`` with R's message when a size is first read.

    Raises
    ------
    ValueError
        For bad input; the message starts with the argument's name. An ``alpha`` so small that every bound
        reaches the z cap of 20 (gsDesign's ``EXTREMEZ``, where its integration ends) is refused naming ``alpha``
        (``max_information`` or ``timing`` when the last look holds a sliver of the planned information): gsDesign
        returns such a design, crossing with probability about 1e-89, or fails. For three equally spaced looks
        that is a one-sided alpha below about 1e-88 with Pocock's bounds, 1e-90 with LD Pocock spending and 1e-91
        with O'Brien-Fleming's, and below about 1e-16 with LD O'Brien-Fleming spending, whose
        :math:`2 - 2\\Phi(\\cdot)` rounds to 0. Just above that floor O'Brien-Fleming's early bounds lie above 20
        (its first one below about 1e-31), as does the first bound of a spending design (the exact normal quantile
        of its share); a later spending bound that would lie above 20 is held at the cap and spends more than its
        share. So a design whose bounds would spend more than alpha by over 1 % of it is refused naming ``alpha``
        and the cause: a bound held at the cap (LD Pocock spending, three equal looks, alpha = 1e-90: 17 times
        alpha), the boundary iteration's ``tol``, absolute as gsDesign's and so no constraint beside an alpha far
        below it (pass a smaller ``tol``), or a spending function that falls short of digits (LD O'Brien-Fleming's
        at 1e-14). For a planned
        beta-spending design (test types 3 / 4) whose futility bound cannot spend the requested beta by some look
        to ``tol`` (as gsDesign's "False negative rates not achieved"), or for a binding one (test type 3) whose
        boundary iteration has no root or does not settle in 101 rounds (gsDesign's "False positive rates not
        achieved"), the message starts with ``lower_spending``. Validated against
        gsDesign on a seeded random grid of such designs (``tests/test_sequential_finite.py``).
    RuntimeError
        If the numerical boundary iteration fails (the bounds would not spend the requested alpha).

    See Also
    --------
    effstats.sequential.GroupSequentialDesign : The result, with its sizes and operating characteristics.
    effstats.sequential.SpendingFunction : The spending functions and classic boundary shapes.
    effstats.sequential.plan : A design sized in items for an evaluation.
    effstats.sequential.stagewise_inference : p-value, estimate and interval after a stop.

    Notes
    -----
    With ``n_fixed``, the design alternative per unit of information is

    .. math::

        \\delta = \\frac{z_{1-\\alpha} + z_{1-\\beta}}{\\sqrt{n_{\\mathrm{fixed}}}},

    and the grid size that resolves a look adding little information (``r=None``) is

    .. math::

        r = \\min\\Big(80,\\ \\Big\\lceil 1.5 \\sqrt{\\max\\Big(K,\\ \\max_k \\frac{I_k}{I_k - I_{k-1}}\\Big)}
        \\Big\\rceil\\Big)

    (``K`` looks) when that exceeds gsDesign's 18.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton.

    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    Pocock, S. J. (1977). Group sequential methods in the design and analysis of clinical trials.
    *Biometrika*, 64(2), 191–199.

    O'Brien, P. C. & Fleming, T. R. (1979). A multiple testing procedure for clinical trials.
    *Biometrics*, 35(3), 549–556.

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

    Examples
    --------
    Three equally spaced looks, two-sided alpha 0.05, Lan–DeMets O'Brien–Fleming spending:

    >>> from effstats.sequential import design
    >>> d = design(3, alpha=0.05, beta=0.1, spending="ld_obf")
    >>> d.to_frame().round(4)
          timing  information   upper   lower  nominal_p  alpha_spent
    look
    1     0.3333       0.3373  3.7103 -3.7103     0.0001       0.0002
    2     0.6667       0.6746  2.5114 -2.5114     0.0060       0.0121
    3     1.0000       1.0119  1.9930 -1.9930     0.0231       0.0500

    A one-sided design with a non-binding beta-spending futility bound, at observed sample sizes
    (``n_fixed`` is the fixed-sample size for power 0.9):

    >>> design(alpha=0.025, test_type=4, information=[100, 200, 300], n_fixed=250).lower.round(4)
    array([-0.1244,  1.1068,  2.2861])
    """
    test_type, alpha, beta, a1 = _check_error_rates(sided, test_type, alpha, beta)
    up, lo = _check_spending(test_type, spending, spending_param, lower_spending, lower_param)
    astar, tol = _check_numerics(backend, astar, tol, test_type, a1)
    if information is not None:
        k, n_i, t, max_info, n_fixed = _observed_looks(k, information, timing, max_information, n_fixed, backend)
    else:
        k, t = _planned_looks(k, timing, max_information, n_fixed)
        n_i = max_info = None
        if backend == "gsdesign" and k < 2:  # gsDesign's own check refuses one look, with a message about timing
            raise ValueError("k: gsDesign needs at least 2 looks; a one-look design is the fixed-sample test, "
                             "whose bound backend='native' gives")
    auto_r = r is None
    r = _grid_size(r, k, t, equal_spacing=timing is None and information is None)
    spec = _Spec(k=k, test_type=test_type, alpha=a1, beta=beta, timing=t, upper=up, lower=lo,
                 astar=astar if astar else 1 - a1, n_i=n_i, max_info_plan=max_info if max_info is not None else 1.0,
                 tol=tol, r=r, n_fix=n_fixed if n_fixed is not None else 1.0)
    with warnings.catch_warnings(record=True) as said:  # shown unless the design is refused below
        warnings.simplefilter("always")
        spec, res = _derive_bounds(spec, backend, auto_r)
        out = _design_from_bounds(spec, res, alpha=alpha, backend=backend, astar=astar, max_info=max_info,
                                  n_fixed=n_fixed)
    # every bound capped: the design spends next to none of alpha (gsDesign's too)
    if min(out.upper.tolist()) >= EXTREMEZ:
        capped = (f"every bound reaches the z cap of {EXTREMEZ:g} (gsDesign's), so the design would cross with a "
                  "probability far below alpha")
        if t[-1] < 1:  # the looks hold a sliver of the planned information, whatever alpha is
            name = "max_information" if information is not None else "timing"
            raise ValueError(f"{name}: the last look reaches {t[-1]:.3g} of the planned information, so little that "
                             f"{capped}")
        raise ValueError(f"alpha: {alpha:g} is too small to spend: {capped}; use a larger alpha")
    _refuse_overspent(out, alpha)
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


# A design may spend more than alpha: gsDesign's tolerance is absolute (tol = 1e-6 on each look's share), no
# constraint beside an alpha far below it; a bound held at the z cap spends more than its share; and a spending
# function written 1 - Phi(.) (LD O'Brien-Fleming) loses its last digits far below 1e-10. Over 1 % of alpha is refused.
_OVERSPENT_RTOL = 0.01


def _refuse_overspent(d: GroupSequentialDesign, alpha: float) -> None:
    """Refuse a design whose bounds spend more than alpha by over 1 % of it, naming the cause."""
    spent = float(d.alpha_spent[-1])
    if not spent > alpha * (1 + _OVERSPENT_RTOL):
        return
    what = f"the bounds spend {spent:.3g}, {spent / alpha:.3g} times alpha = {alpha:g}"
    step = np.diff(d.alpha_spent, prepend=0.0)
    capped = np.flatnonzero((d.upper == EXTREMEZ) & (step > alpha * _OVERSPENT_RTOL))  # held there, not above
    if capped.size:
        raise ValueError(f"alpha: {what}: the bound at look {int(capped[0]) + 1} would lie above the z cap of "
                         f"{EXTREMEZ:g} (gsDesign's), where it is held, spending more than its share; use a larger "
                         "alpha")
    up = d.spending
    if not getattr(up, "is_classic", True):
        end = float(up(d._spec.alpha, np.array([1.0]))[-1]) * (2 if d.test_type == 2 else 1)
        if end > alpha * (1 + _OVERSPENT_RTOL):
            raise ValueError(f"alpha: {what}: the spending function itself reaches {end:.3g} by the last look "
                             "(its 1 - Phi(.) keeps too few digits at so small an alpha); use a larger alpha")
    raise ValueError(f"alpha: {what}: the boundary iteration stops within tol = {d.tol:g} of each look's share, "
                     f"coarse beside alpha; pass a smaller tol (such as {alpha * 1e-6:.0e}) or use a larger alpha")


def _check_error_rates(sided: Any, test_type: Any, alpha: Any, beta: Any) -> tuple[int, float, float, float]:
    """Validate the test type and error rates; returns them with the one-sided alpha ``a1``."""
    if test_type is None:
        if isinstance(sided, bool) or sided not in (1, 2):
            raise ValueError(f"sided: expected 1 or 2, got {sided!r}")
        test_type = sided
    if isinstance(test_type, bool) or not isinstance(test_type, Integral) or not 1 <= test_type <= 6:
        raise ValueError(f"test_type: expected an integer in 1..6 (gsDesign's test.type), got {test_type!r}")
    test_type = int(test_type)
    alpha = check_fraction(alpha, "alpha")
    beta = check_fraction(beta, "beta")
    a1 = alpha / 2 if test_type == 2 else alpha
    if a1 >= 0.5:  # the final critical value would be <= 0 (rpact refuses it; gsDesign returns negative bounds)
        raise ValueError(f"alpha: a one-sided type-I error must be below 0.5 (test_type={test_type}), got {alpha:g}")
    if beta >= 1 - a1:
        raise ValueError(f"beta: expected a value below 1 - alpha = {1 - a1:g}, got {beta:g}")
    return test_type, alpha, beta, a1


def _check_spending(test_type: int, spending: Any, spending_param: Any, lower_spending: Any,
                    lower_param: Any) -> tuple[SpendingFunction, SpendingFunction | None]:
    """The upper and (test types 3-6) lower spending functions."""
    up = get_spending(spending, spending_param, "spending")
    lo = None
    if test_type > 2:
        if lower_param is None and (lower_spending in ("hsd", "sfhsd", "sfHSD", "hwang_shih_decani")):
            lower_param = -2.0  # gsDesign's default sflpar
        lo = get_spending(lower_spending, lower_param, "lower_spending")
        if lo.is_classic:
            raise ValueError("lower_spending: expected a spending function, got a classic boundary shape")
        if up.is_classic:
            raise ValueError("spending: classic Pocock / O'Brien-Fleming / Wang-Tsiatis bounds exist only for "
                             "test_type 1 and 2")
    elif lower_param is not None:
        raise ValueError(f"lower_param: a lower bound needs test_type 3-6, got test_type={test_type} and "
                         f"lower_param={lower_param!r}")
    elif lower_spending is not None and not (isinstance(lower_spending, str) and lower_spending == "hsd"):
        # refused like lower_param rather than ignored as gsDesign's sfl is (None: a design's own lower_spending)
        raise ValueError(f"lower_spending: a lower bound needs test_type 3-6, got test_type={test_type} and "
                         f"lower_spending={lower_spending!r}")
    return up, lo


def _check_numerics(backend: Any, astar: Any, tol: Any, test_type: int, a1: float) -> tuple[float, float]:
    """``backend``, ``astar`` and ``tol`` checked; ``a1`` is the one-sided alpha that gsDesign's ``alpha`` is."""
    if backend not in ("native", "gsdesign"):
        raise ValueError(f"backend: expected 'native' or 'gsdesign', got {backend!r}")
    if isinstance(astar, bool) or not isinstance(astar, Real) or not 0 <= astar < 1:
        raise ValueError(f"astar: expected a number in [0, 1), got {astar!r}")
    if test_type > 4 and astar > 1 - a1:  # gsDesign's rule: lower spending beyond 1 - alpha is incoherent
        raise ValueError(f"astar: expected a number in [0, 1 - alpha] = [0, {1 - a1:g}] (0: 1 - alpha), got "
                         f"{astar!r}")
    if test_type < 3 and astar != 0:  # refused like lower_param rather than ignored as gsDesign does
        raise ValueError(f"astar: lower-bound spending needs test_type 5 or 6, got test_type={test_type} and "
                         f"astar={astar!r}")
    if isinstance(tol, bool) or not isinstance(tol, Real) or not 0 < tol <= 0.1:
        raise ValueError(f"tol: expected a number in (0, 0.1], got {tol!r}")
    return float(astar), float(tol)


def _observed_looks(k: Any, information: Any, timing: Any, max_information: Any, n_fixed: Any,
                    backend: str) -> tuple[int, np.ndarray, np.ndarray, float, float | None]:
    """Looks at observed information: ``(k, information, fractions, max_information, n_fixed)``."""
    n_i = check_array(information, "information", ndim=1)
    if n_i.size == 0 or not np.all(np.isfinite(n_i)):
        raise ValueError(f"information: expected finite, positive, strictly increasing levels, got {n_i.tolist()}")
    if np.any(n_i <= 0) or np.any(np.diff(n_i) <= 0):
        raise ValueError(f"information: expected a positive, strictly increasing sequence, got {n_i.tolist()}")
    if k is not None and k != n_i.size:
        raise ValueError(f"k: expected len(information) = {n_i.size}, got {k}")
    k = n_i.size
    if timing is not None:
        raise ValueError("timing: give either timing (planned fractions) or information (observed levels), not both")
    if n_fixed is not None:
        if isinstance(n_fixed, bool) or not isinstance(n_fixed, Real) or not np.isfinite(n_fixed) or n_fixed <= 0:
            raise ValueError(f"n_fixed: expected a positive number (the fixed-sample information on the scale of "
                             f"information), got {_plain(n_fixed)!r}")
        n_fixed = float(n_fixed)
    if max_information is None:
        max_info = float(n_i[-1])
    else:
        max_information = _number(max_information)
        if isinstance(max_information, bool) or not isinstance(max_information, Real):
            raise ValueError(f"max_information: expected a positive number, got {_plain(max_information)!r}")
        max_info = float(max_information)
        if not np.isfinite(max_info) or max_info <= 0:
            raise ValueError(f"max_information: expected a positive number, got {_plain(max_information)!r}")
        if n_i.size > 1 and n_i[-2] > max_info * (1 + 1e-12):
            raise ValueError(f"max_information: expected at least every interim information level (the largest "
                             f"interim level is {n_i[-2]:g}), got {max_info:g}; spending is evaluated at "
                             "information / max_information, and an interim past the maximum spends all of alpha "
                             "there (only the final look may overrun the planned maximum)")
    if backend == "gsdesign" and k < 2:
        raise ValueError("information: gsDesign needs at least 2 looks to recompute bounds; a one-look design is "
                         "the fixed-sample test, whose bound backend='native' gives")
    return k, n_i, n_i / max_info, max_info, n_fixed


def _planned_looks(k: Any, timing: Any, max_information: Any, n_fixed: Any) -> tuple[int, np.ndarray]:
    """Planned looks: ``(k, information fractions)``."""
    if max_information is not None:
        raise ValueError("max_information: only used with information (observed levels at the looks)")
    if n_fixed is not None:
        raise ValueError("n_fixed: only used with information (observed levels at the looks); without it the "
                         "information is relative to a fixed design (multiply by your fixed-sample size)")
    if k is None:
        raise ValueError("k: the number of looks is required when information is not given")
    k = check_positive_int(k, "k")
    return k, check_timing(timing, k)


def _grid_size(r: Any, k: int, t: np.ndarray, equal_spacing: bool) -> int:
    """The integration grid: gsDesign's 18 unless a look adds too little information for it to resolve."""
    if r is None:
        if equal_spacing:
            ratio = float(k)  # equal spacing: max t_j / (t_j - t_{j-1}) = k
        else:
            ratio = float((t[1:] / (t[1:] - t[:-1])).max()) if t.size > 1 else 1.0
        # at least k: the grid's mass error compounds look by look, and past 144 looks only the finer grid's
        # mass-conserving kernel keeps it bounded (looks that each add a similar share of the information, e.g.
        # the finite-population correction's n / (1 - n / N), have a small ratio but can number hundreds)
        r = int(min(80, max(18, math.ceil(1.5 * math.sqrt(max(ratio, float(k)))))))
    return check_positive_int(r, "r", maximum=80)


def _derive_bounds(spec: _Spec, backend: str, auto_r: bool) -> tuple[_Spec, dict]:
    """Bounds from the chosen backend; returns the spec they were derived on (its grid may be finer)."""
    if backend != "native":
        from .gsdesign import gsdesign_bounds

        return spec, gsdesign_bounds(spec)
    while True:
        try:
            return spec, native_bounds(spec)
        except BetaNotSpent:
            # the grid's mass error can exceed tol after a look with little information; a finer grid meets
            # the target where one can (a given r is the user's choice, and refused as it is)
            if not auto_r or spec.r >= 80:
                raise
            spec = replace(spec, r=min(80, 2 * spec.r))


def _design_from_bounds(spec: _Spec, res: dict, *, alpha: float, backend: str, astar: float, max_info: float | None,
                        n_fixed: float | None) -> GroupSequentialDesign:
    """The :class:`effstats.sequential.GroupSequentialDesign` holding a backend's bounds (and sizes, when it computed
    them)."""
    k, t, n_i, r, test_type = spec.k, spec.timing, spec.n_i, spec.r, spec.test_type
    if res.get("k", k) != k:  # a binding beta-spending design recomputed at observed information may end early
        k = int(res["k"])
        t = t[:k]
        n_i = n_i[:k]
    upper = np.asarray(res["upper"], float)
    # (the finiteness checks below sum the looks as Python floats: a tenth of isfinite().all()'s time on so few; the
    # bounds lie within +-EXTREMEZ and the probabilities in [0, 1], so only a NaN or inf makes the sum one)
    if not math.isfinite(sum(upper.tolist())):
        raise ValueError(f"r: the integration grid (r={r}) is too coarse for these looks; pass a larger r (<= 80)")
    lower = None if res["lower"] is None else np.asarray(res["lower"], float)
    # (the cumsum method: np.cumsum's dispatch costs as much as the sum of a few looks)
    if test_type == 2:
        alpha_spent = 2 * np.asarray(res["upper_prob0"], float).cumsum()
    elif test_type in (4, 6):
        alpha_spent = np.asarray(res["falsepos"], float).cumsum()
    else:
        alpha_spent = np.asarray(res["upper_prob0"], float).cumsum()
    if not math.isfinite(sum(alpha_spent.tolist())):
        raise ValueError(f"r: the integration grid (r={r}) is too coarse for these looks; pass a larger r (<= 80)")
    out = GroupSequentialDesign(
        k=k, test_type=test_type, alpha=alpha, beta=spec.beta, timing=t, upper=upper, lower=lower,
        nominal_p=ndtr(-upper), alpha_spent=alpha_spent, delta=float(res["delta"]), spending=spec.upper,
        lower_spending=spec.lower, backend=backend, astar=astar, max_information=max_info, n_fixed=n_fixed,
        tol=spec.tol, r=r, _observed=n_i, _spec=spec, _bnd=res,
    )
    if res.get("sized"):
        out.__dict__["_sizes"] = out._sizes  # already known: fill the cache now
    return out
