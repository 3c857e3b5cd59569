"""Error-spending functions and classic (Wang–Tsiatis) boundary families.

Each spending function maps an information fraction ``t`` in [0, 1] to the cumulative error
``alpha * f(t)`` spent by then (``f(0) = 0``, ``f(1) = 1``). The formulas are those of gsDesign's
``sfLDPocock``, ``sfLDOF``, ``sfHSD`` and ``sfPower`` so that the native backend and gsDesign
agree to rounding error.

References
----------
Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
*Biometrika*, 70(3), 659–663.

Hwang, I. K., Shih, W. J. & DeCani, J. S. (1990). Group sequential designs using a family of type I
error probability spending functions. *Statistics in Medicine*, 9(12), 1439–1445.

Kim, K. & DeMets, D. L. (1987). Design and analysis of group sequential tests based on the type I
error spending rate function. *Biometrika*, 74(1), 149–154.

Pocock, S. J. (1977). Group sequential methods in the design and analysis of clinical trials.
*Biometrika*, 64(2), 191–199.

O'Brien, P. C. & Fleming, T. R. (1979). A multiple testing procedure for clinical trials.
*Biometrics*, 35(3), 549–556.

Wang, S. K. & Tsiatis, A. A. (1987). Approximately optimal one-parameter boundaries for group
sequential trials. *Biometrics*, 43(1), 193–199.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from .._shared import _plain
from .._validation import _number

__all__ = [
    "SpendingFunction",
    "ld_pocock",
    "ld_obrien_fleming",
    "hwang_shih_decani",
    "kim_demets_power",
    "pocock",
    "obrien_fleming",
    "wang_tsiatis",
    "get_spending",
]

_ALIASES = {
    "ld_pocock": "ld_pocock",
    "ldpocock": "ld_pocock",
    "sfldpocock": "ld_pocock",
    "lan_demets_pocock": "ld_pocock",
    "ld_obf": "ld_obf",
    "ld_of": "ld_obf",
    "ldof": "ld_obf",
    "sfldof": "ld_obf",
    "lan_demets_obf": "ld_obf",
    "hsd": "hsd",
    "sfhsd": "hsd",
    "hwang_shih_decani": "hsd",
    "power": "power",
    "sfpower": "power",
    "kim_demets": "power",
    "pocock": "pocock",
    "obf": "obf",
    "of": "obf",
    "obrien_fleming": "obf",
    "wt": "wt",
    "wang_tsiatis": "wt",
}
_R_NAMES = {"ld_pocock": "sfLDPocock", "ld_obf": "sfLDOF", "hsd": "sfHSD", "power": "sfPower",
            "pocock": "Pocock", "obf": "OF", "wt": "WT"}
_LABELS = {"ld_pocock": "Lan-DeMets Pocock", "ld_obf": "Lan-DeMets O'Brien-Fleming",
           "hsd": "Hwang-Shih-DeCani", "power": "Kim-DeMets power", "pocock": "Pocock (classic)",
           "obf": "O'Brien-Fleming (classic)", "wt": "Wang-Tsiatis (classic)"}
_DEFAULT_PARAM = {"hsd": -4.0, "power": 3.0, "wt": 0.25, "ld_obf": 1.0}
_NO_PARAM = ("ld_pocock", "pocock", "obf")


@dataclass(frozen=True)
class SpendingFunction:
    r"""An error-spending function, or a classic boundary shape (``pocock``, ``obf``, ``wt``).

    Calling a spending function, ``f(alpha, t)``, gives the cumulative error spent by information
    fraction(s) ``t``; :func:`effstats.sequential.design` takes one as ``spending`` or
    ``lower_spending``. The constructors :func:`effstats.sequential.ld_pocock`,
    :func:`effstats.sequential.ld_obrien_fleming`, :func:`effstats.sequential.hwang_shih_decani`,
    :func:`effstats.sequential.kim_demets_power`, :func:`effstats.sequential.pocock`,
    :func:`effstats.sequential.obrien_fleming` and :func:`effstats.sequential.wang_tsiatis` build one
    by name.

    Parameters
    ----------
    family : {"ld_pocock", "ld_obf", "hsd", "power", "pocock", "obf", "wt"}
        ``ld_*``: Lan–DeMets spending approximating Pocock / O'Brien–Fleming; ``hsd``:
        Hwang–Shih–DeCani with ``param`` = gamma; ``power``: Kim–DeMets :math:`t^\rho`;
        ``pocock`` / ``obf`` / ``wt``: classic constant / :math:`c / \sqrt{t}` / :math:`c\, t^{\Delta - 1/2}`
        boundaries whose constant is solved so the total error is ``alpha``. gsDesign's names
        (``"sfLDPocock"``, ``"sfLDOF"``, ``"sfHSD"``, ``"sfPower"``) and long names
        (``"hwang_shih_decani"``, ``"obrien_fleming"``, ...) are accepted, in any case.
    param : float, optional
        gamma (``hsd``, default -4, in [-40, 40]), rho (``power``, default 3, positive; ``ld_obf``,
        default 1, in [0.005, 20]) or Delta (``wt``, default 0.25). None for the families without one.

    Attributes
    ----------
    family : str
        The canonical family name.
    param : float or None
        The family parameter (its default when none was given).

    Raises
    ------
    ValueError
        For an unknown family (the message starts with ``family``) or a bad or superfluous
        parameter (``param``).

    See Also
    --------
    effstats.sequential.get_spending : A spending function from a name or an instance.
    effstats.sequential.design : Boundaries from spending functions.

    Notes
    -----
    The formulas are those of gsDesign's ``sfLDPocock``, ``sfLDOF``, ``sfHSD`` and ``sfPower``, so
    that the native backend and gsDesign agree to rounding error. Fractions above 1 are capped at
    1, as in gsDesign.

    References
    ----------
    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    Hwang, I. K., Shih, W. J. & DeCani, J. S. (1990). Group sequential designs using a family of
    type I error probability spending functions. *Statistics in Medicine*, 9(12), 1439–1445.

    Kim, K. & DeMets, D. L. (1987). Design and analysis of group sequential tests based on the type
    I error spending rate function. *Biometrika*, 74(1), 149–154.

    Wang, S. K. & Tsiatis, A. A. (1987). Approximately optimal one-parameter boundaries for group
    sequential trials. *Biometrics*, 43(1), 193–199.

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

    Examples
    --------
    >>> from effstats.sequential import SpendingFunction
    >>> f = SpendingFunction("sfHSD", -4)
    >>> f
    SpendingFunction(family='hsd', param=-4.0)
    >>> f(0.05, [0.25, 0.5, 1.0]).round(4)
    array([0.0016, 0.006 , 0.05  ])
    >>> f.label, f.r_name
    ('Hwang-Shih-DeCani (-4)', 'sfHSD')
    """

    family: str
    param: float | None = None

    def __post_init__(self) -> None:
        fam = _ALIASES.get(str(self.family).lower())
        if fam is None:
            raise ValueError(f"family: unknown spending family {self.family!r}; expected one of "
                             f"{sorted(set(_ALIASES.values()))}")
        object.__setattr__(self, "family", fam)
        p = _number(self.param)
        if fam in _NO_PARAM:
            if p is not None:
                raise ValueError(f"param: the {_LABELS[fam]} family has no parameter, got {_plain(p)!r}; "
                                 "leave it at None")
        elif p is None:
            p = _DEFAULT_PARAM[fam]
        if p is not None:
            if isinstance(p, (bool, str)) or not isinstance(p, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(p):  # (math's: a numpy ufunc call costs ~1 us)
                raise ValueError(f"param: expected a finite number, got {_plain(p)!r}")
            p = float(p)
            if fam == "power" and p <= 0:
                raise ValueError(f"param: the power family needs rho > 0, got {p}")
            if fam == "ld_obf" and not 0.005 <= p <= 20:
                raise ValueError(f"param: ld_obf needs rho in [0.005, 20], got {p}")
            if fam == "hsd" and not -40 <= p <= 40:
                raise ValueError(f"param: hsd needs gamma in [-40, 40], got {p}")
        object.__setattr__(self, "param", p)

    @property
    def is_classic(self) -> bool:
        """Whether this is a classic Wang–Tsiatis boundary shape (Pocock, O'Brien–Fleming), not a spending function.

        Examples
        --------
        >>> from effstats.sequential import ld_pocock, pocock
        >>> pocock().is_classic, ld_pocock().is_classic
        (True, False)
        """
        return self.family in ("pocock", "obf", "wt")

    @property
    def wt_delta(self) -> float:
        """The Wang–Tsiatis Delta of a classic boundary (0.5 Pocock, 0 O'Brien–Fleming).

        Raises
        ------
        ValueError
            For a spending function (the message starts with ``spending``).

        Examples
        --------
        >>> from effstats.sequential import obrien_fleming, wang_tsiatis
        >>> obrien_fleming().wt_delta, wang_tsiatis(0.25).wt_delta
        (0.0, 0.25)
        """
        if not self.is_classic:
            raise ValueError("spending: wt_delta is only defined for classic boundaries")
        return {"pocock": 0.5, "obf": 0.0}.get(self.family, self.param)  # type: ignore[return-value]

    @property
    def r_name(self) -> str:
        """gsDesign's name: ``sfLDPocock``, ``sfLDOF``, ``sfHSD``, ``sfPower`` or ``Pocock`` / ``OF`` / ``WT``.

        Examples
        --------
        >>> from effstats.sequential import ld_obrien_fleming
        >>> ld_obrien_fleming().r_name
        'sfLDOF'
        """
        return _R_NAMES[self.family]

    @property
    def label(self) -> str:
        """A readable name with the parameter, for tables and reprs.

        Examples
        --------
        >>> from effstats.sequential import kim_demets_power
        >>> kim_demets_power(2).label
        'Kim-DeMets power (2)'
        """
        lab = _LABELS[self.family]
        return lab if self.param is None or self.family == "ld_obf" and self.param == 1 else f"{lab} ({self.param:g})"

    def __call__(self, alpha: float, t: Any) -> np.ndarray:
        """Cumulative error spent by information fraction(s) ``t`` (capped at 1, like gsDesign).

        Parameters
        ----------
        alpha : float
            Total error to spend.
        t : float or array-like of shape (k,)
            Information fractions in [0, 1].

        Returns
        -------
        numpy.ndarray
            ``alpha * f(t)``, of the shape of ``t``.

        Raises
        ------
        ValueError
            For a classic boundary shape, which spends no error by formula.

        Examples
        --------
        >>> from effstats.sequential import ld_pocock
        >>> ld_pocock()(0.05, [0.0, 0.5, 1.0, 1.2]).round(4)  # fractions above 1 are capped
        array([0.   , 0.031, 0.05 , 0.05 ])
        """
        if self.is_classic:
            raise ValueError(f"spending: {self.label} is a boundary shape, not a spending function")
        t = np.minimum(np.asarray(t, dtype=float), 1.0)
        if self.family == "ld_pocock":
            return alpha * np.log(1 + (np.e - 1) * t)
        if self.family == "ld_obf":
            z = -ndtri(alpha / 2)
            # the usual case: no t = 0, so no division by zero to silence (errstate costs ~5 us)
            if t.size and t.min() > 0:
                return 2 * (1 - ndtr(z / t ** (self.param / 2)))
            with np.errstate(divide="ignore"):
                return 2 * (1 - ndtr(z / t ** (self.param / 2)))
        if self.family == "hsd":
            g = self.param
            if g == 0:
                return alpha * t
            return alpha * (1 - np.exp(-t * g)) / (1 - np.exp(-g))
        return alpha * t**self.param  # power


def _with_param(family: str, value: Any, name: str) -> SpendingFunction:
    """A parameterised family; errors name the constructor's argument (``rho``, ``gamma``, ``delta``)."""
    if value is None:
        raise ValueError(f"{name}: expected a finite number, got None")
    return get_spending(family, value, name="family", param_name=name)


def ld_pocock() -> SpendingFunction:
    r"""Lan–DeMets Pocock-type spending :math:`\alpha \log(1 + (e - 1) t)`.

    Spends error almost evenly over the information, like Pocock's constant bound; gsDesign's
    ``sfLDPocock``.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.
    effstats.sequential.pocock : The classic Pocock bound it approximates.

    References
    ----------
    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    Pocock, S. J. (1977). Group sequential methods in the design and analysis of clinical trials.
    *Biometrika*, 64(2), 191–199.

    Examples
    --------
    >>> from effstats.sequential import design, ld_pocock
    >>> ld_pocock()(0.05, [0.5, 1.0]).round(4)
    array([0.031, 0.05 ])
    >>> design(3, spending=ld_pocock()).upper.round(3)
    array([2.279, 2.295, 2.296])
    """
    return SpendingFunction("ld_pocock")


def ld_obrien_fleming(rho: float = 1.0) -> SpendingFunction:
    r"""Lan–DeMets O'Brien–Fleming-type spending :math:`2 - 2 \Phi(z_{\alpha/2} / t^{\rho/2})`.

    Spends little error early and most at the end, like O'Brien–Fleming's :math:`c / \sqrt{t}` bound;
    gsDesign's ``sfLDOF`` (``rho`` is its ``sfupar``, 1 for the Lan–DeMets function).

    Parameters
    ----------
    rho : float, default=1.0
        Exponent in [0.005, 20]; larger spends later.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.
    effstats.sequential.obrien_fleming : The classic O'Brien–Fleming bound it approximates.

    References
    ----------
    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
    *Biometrika*, 70(3), 659–663.

    O'Brien, P. C. & Fleming, T. R. (1979). A multiple testing procedure for clinical trials.
    *Biometrics*, 35(3), 549–556.

    Examples
    --------
    >>> from effstats.sequential import ld_obrien_fleming
    >>> ld_obrien_fleming()(0.05, [0.5, 1.0]).round(4)
    array([0.0056, 0.05  ])
    """
    return _with_param("ld_obf", rho, "rho")


def hwang_shih_decani(gamma: float = -4.0) -> SpendingFunction:
    r"""Hwang–Shih–DeCani spending :math:`\alpha (1 - e^{-\gamma t}) / (1 - e^{-\gamma})` (:math:`\gamma = 0`: linear).

    A one-parameter family between O'Brien–Fleming-like (gamma = -4) and Pocock-like (gamma = 1)
    spending; gsDesign's ``sfHSD``.

    Parameters
    ----------
    gamma : float, default=-4.0
        Shape in [-40, 40]; more negative spends later.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.

    References
    ----------
    Hwang, I. K., Shih, W. J. & DeCani, J. S. (1990). Group sequential designs using a family of
    type I error probability spending functions. *Statistics in Medicine*, 9(12), 1439–1445.

    Examples
    --------
    >>> from effstats.sequential import hwang_shih_decani
    >>> hwang_shih_decani(-4)(0.05, [0.5, 1.0]).round(4)
    array([0.006, 0.05 ])
    """
    return _with_param("hsd", gamma, "gamma")


def kim_demets_power(rho: float = 3.0) -> SpendingFunction:
    r"""Kim–DeMets power spending :math:`\alpha t^\rho`.

    gsDesign's ``sfPower``; ``rho = 1`` spends in proportion to the information, ``rho = 3`` is
    close to O'Brien–Fleming.

    Parameters
    ----------
    rho : float, default=3.0
        Positive exponent; larger spends later.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.

    References
    ----------
    Kim, K. & DeMets, D. L. (1987). Design and analysis of group sequential tests based on the type
    I error spending rate function. *Biometrika*, 74(1), 149–154.

    Examples
    --------
    >>> from effstats.sequential import kim_demets_power
    >>> kim_demets_power(3)(0.05, [0.5, 1.0]).round(5)
    array([0.00625, 0.05   ])
    """
    return _with_param("power", rho, "rho")


def pocock() -> SpendingFunction:
    """Classic Pocock boundary: the same critical value at every look.

    A boundary shape (Wang–Tsiatis Delta = 0.5), not a spending function: the constant is solved so
    that the total type-I error is ``alpha`` at the planned looks; gsDesign's ``sfu="Pocock"``.
    Only for test types 1 and 2.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.
    effstats.sequential.ld_pocock : The spending-function version, for unplanned looks.

    References
    ----------
    Pocock, S. J. (1977). Group sequential methods in the design and analysis of clinical trials.
    *Biometrika*, 64(2), 191–199.

    Examples
    --------
    >>> from effstats.sequential import design, pocock
    >>> design(3, spending=pocock()).upper.round(4)
    array([2.2895, 2.2895, 2.2895])
    """
    return SpendingFunction("pocock")


def obrien_fleming() -> SpendingFunction:
    r"""Classic O'Brien–Fleming boundary :math:`c / \sqrt{t}`.

    A boundary shape (Wang–Tsiatis Delta = 0), not a spending function: the constant is solved so
    that the total type-I error is ``alpha`` at the planned looks; gsDesign's ``sfu="OF"``. Only for
    test types 1 and 2.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.
    effstats.sequential.ld_obrien_fleming : The spending-function version, for unplanned looks.

    References
    ----------
    O'Brien, P. C. & Fleming, T. R. (1979). A multiple testing procedure for clinical trials.
    *Biometrics*, 35(3), 549–556.

    Examples
    --------
    >>> from effstats.sequential import design, obrien_fleming
    >>> design(3, spending=obrien_fleming()).upper.round(4)
    array([3.4711, 2.4544, 2.004 ])
    """
    return SpendingFunction("obf")


def wang_tsiatis(delta: float) -> SpendingFunction:
    r"""Classic Wang–Tsiatis boundary :math:`c\, t^{\delta - 1/2}`.

    The family through O'Brien–Fleming (``delta = 0``) and Pocock (``delta = 0.5``); the constant is
    solved so that the total type-I error is ``alpha`` at the planned looks; gsDesign's
    ``sfu="WT"``. Only for test types 1 and 2.

    Parameters
    ----------
    delta : float
        The shape parameter Delta.

    Returns
    -------
    effstats.sequential.SpendingFunction

    See Also
    --------
    effstats.sequential.SpendingFunction : The spending function and its evaluation.
    effstats.sequential.design : Boundaries from a spending function.

    References
    ----------
    Wang, S. K. & Tsiatis, A. A. (1987). Approximately optimal one-parameter boundaries for group
    sequential trials. *Biometrics*, 43(1), 193–199.

    Examples
    --------
    >>> from effstats.sequential import design, wang_tsiatis
    >>> design(3, spending=wang_tsiatis(0.25)).upper.round(4)
    array([2.7411, 2.305 , 2.0828])
    """
    return _with_param("wt", delta, "delta")


def get_spending(spending: Any, param: float | None = None, name: str = "spending",
                 param_name: str | None = None) -> SpendingFunction:
    """A :class:`effstats.sequential.SpendingFunction` from an instance or a family name (``"ld_pocock"``,
    ``"sfHSD"``, ...).

    Parameters
    ----------
    spending : SpendingFunction or str
        The family (or a function whose parameter ``param`` replaces, if given).
    param : float, optional
        Family parameter (gamma, rho or Delta); None for the family default.
    name, param_name : str
        Argument names used in error messages: ``name`` for an unknown family (default ``"spending"``),
        ``param_name`` for a bad or superfluous parameter (default ``"spending_param"`` for
        ``name="spending"``, ``"lower_param"`` for ``name="lower_spending"``).

    Returns
    -------
    effstats.sequential.SpendingFunction

    Raises
    ------
    ValueError
        For an unknown family (the message starts with ``name``) or a bad parameter (with
        ``param_name``).

    See Also
    --------
    effstats.sequential.SpendingFunction : The families and their parameters.

    Examples
    --------
    >>> from effstats.sequential import get_spending, hwang_shih_decani
    >>> get_spending("sfHSD", -2)
    SpendingFunction(family='hsd', param=-2.0)
    >>> get_spending(hwang_shih_decani(), 1.0)
    SpendingFunction(family='hsd', param=1.0)
    """
    if param_name is None:
        param_name = {"spending": "spending_param", "lower_spending": "lower_param"}.get(name, f"{name}_param")
    if isinstance(spending, SpendingFunction):
        fam = spending.family
        param = spending.param if param is None else param
    elif isinstance(spending, str):
        fam = spending
    else:
        raise ValueError(f"{name}: expected a SpendingFunction or a family name, got {type(spending).__name__}")
    try:
        return SpendingFunction(fam, param)
    except ValueError as exc:
        msg = str(exc)
        if msg.startswith("family:"):
            raise ValueError(f"{name}:" + msg[len("family:"):]) from None
        raise ValueError(f"{param_name}:" + msg[len("param:"):] + f" (for {name}={fam!r})") from None
