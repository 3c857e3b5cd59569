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

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

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
    """An error-spending function, or a classic boundary shape (``pocock``, ``obf``, ``wt``).

    Parameters
    ----------
    family : {"ld_pocock", "ld_obf", "hsd", "power", "pocock", "obf", "wt"}
        ``ld_*``: Lan–DeMets spending approximating Pocock / O'Brien–Fleming; ``hsd``:
        Hwang–Shih–DeCani with ``param`` = gamma; ``power``: Kim–DeMets ``t**rho``;
        ``pocock`` / ``obf`` / ``wt``: classic constant / ``c/sqrt(t)`` / ``c*t**(Delta-0.5)``
        boundaries whose constant is solved so the total error is ``alpha``.
    param : float, optional
        gamma (hsd), rho (power, ld_obf) or Delta (wt).
    """

    family: str
    param: float | None = None

    def __post_init__(self) -> None:
        fam = _ALIASES.get(str(self.family).lower())
        if fam is None:
            raise ValueError(f"family: unknown spending family {self.family!r}; expected one of "
                             f"{sorted(set(_ALIASES.values()))}")
        object.__setattr__(self, "family", fam)
        p = self.param
        if fam in _NO_PARAM:
            if p is not None:
                raise ValueError(f"param: the {_LABELS[fam]} family has no parameter, got {p!r}; "
                                 "leave it at None")
        elif p is None:
            p = _DEFAULT_PARAM[fam]
        if p is not None:
            if isinstance(p, (bool, str)) or not isinstance(p, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(p):
                raise ValueError(f"param: expected a finite number, got {p!r}")
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
        """True for Wang–Tsiatis boundaries (Pocock, O'Brien–Fleming), which are not spending functions."""
        return self.family in ("pocock", "obf", "wt")

    @property
    def wt_delta(self) -> float:
        """The Wang–Tsiatis Delta (0.5 Pocock, 0 O'Brien–Fleming)."""
        if not self.is_classic:
            raise ValueError("spending: wt_delta is only defined for classic boundaries")
        return {"pocock": 0.5, "obf": 0.0}.get(self.family, self.param)  # type: ignore[return-value]

    @property
    def r_name(self) -> str:
        """gsDesign's name: ``sfLDPocock``, ``sfLDOF``, ``sfHSD``, ``sfPower`` or ``Pocock`` / ``OF`` / ``WT``."""
        return _R_NAMES[self.family]

    @property
    def label(self) -> str:
        lab = _LABELS[self.family]
        return lab if self.param is None or self.family == "ld_obf" and self.param == 1 else f"{lab} ({self.param:g})"

    def __call__(self, alpha: float, t: Any) -> np.ndarray:
        """Cumulative error spent by information fraction(s) ``t`` (capped at 1, like gsDesign)."""
        if self.is_classic:
            raise ValueError(f"spending: {self.label} is a boundary shape, not a spending function")
        t = np.minimum(np.asarray(t, dtype=float), 1.0)
        if self.family == "ld_pocock":
            return alpha * np.log(1 + (np.e - 1) * t)
        if self.family == "ld_obf":
            z = -ndtri(alpha / 2)
            if t.size and t.min() > 0:  # the usual case: no t = 0, so no division by zero to silence (errstate costs ~5 us)
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
    """Lan–DeMets Pocock-type spending ``alpha * log(1 + (e - 1) t)``."""
    return SpendingFunction("ld_pocock")


def ld_obrien_fleming(rho: float = 1.0) -> SpendingFunction:
    """Lan–DeMets O'Brien–Fleming-type spending ``2 - 2 Phi(z_{alpha/2} / t**(rho/2))``."""
    return _with_param("ld_obf", rho, "rho")


def hwang_shih_decani(gamma: float = -4.0) -> SpendingFunction:
    """Hwang–Shih–DeCani spending ``alpha (1 - exp(-gamma t)) / (1 - exp(-gamma))`` (gamma = 0: linear)."""
    return _with_param("hsd", gamma, "gamma")


def kim_demets_power(rho: float = 3.0) -> SpendingFunction:
    """Kim–DeMets power spending ``alpha * t**rho``."""
    return _with_param("power", rho, "rho")


def pocock() -> SpendingFunction:
    """Classic Pocock boundary: the same critical value at every look."""
    return SpendingFunction("pocock")


def obrien_fleming() -> SpendingFunction:
    """Classic O'Brien–Fleming boundary ``c / sqrt(t)``."""
    return SpendingFunction("obf")


def wang_tsiatis(delta: float) -> SpendingFunction:
    """Classic Wang–Tsiatis boundary ``c * t**(delta - 0.5)``."""
    return _with_param("wt", delta, "delta")


def get_spending(spending: Any, param: float | None = None, name: str = "spending",
                 param_name: str | None = None) -> SpendingFunction:
    """A :class:`SpendingFunction` from an instance or a family name (``"ld_pocock"``, ``"sfHSD"``, ...).

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
