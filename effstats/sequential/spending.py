"""Error-spending functions and classic (Wang–Tsiatis) boundary families.

Each spending function maps an information fraction ``t`` in [0, 1] to the cumulative error
``alpha * f(t)`` spent by then (``f(0) = 0``, ``f(1) = 1``). The formulas are those of gsDesign's
``sfLDPocock``, ``sfLDOF``, ``sfHSD`` and ``sfPower`` so that the native backend and gsDesign
agree to rounding error.
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
            raise ValueError(f"spending: unknown family {self.family!r}; expected one of {sorted(set(_ALIASES.values()))}")
        object.__setattr__(self, "family", fam)
        p = self.param
        if fam in ("ld_pocock", "pocock", "obf"):
            p = None
        elif p is None:
            p = _DEFAULT_PARAM[fam]
        if p is not None:
            if isinstance(p, bool) or not np.isfinite(p):
                raise ValueError(f"spending: param must be a finite number, got {p!r}")
            p = float(p)
            if fam == "power" and p <= 0:
                raise ValueError(f"spending: the power family needs rho > 0, got {p}")
            if fam == "ld_obf" and not 0.005 <= p <= 20:
                raise ValueError(f"spending: ld_obf needs rho in [0.005, 20], got {p}")
            if fam == "hsd" and not -40 <= p <= 40:
                raise ValueError(f"spending: hsd needs gamma in [-40, 40], got {p}")
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
            with np.errstate(divide="ignore"):
                return 2 * (1 - ndtr(z / t ** (self.param / 2)))
        if self.family == "hsd":
            g = self.param
            if g == 0:
                return alpha * t
            return alpha * (1 - np.exp(-t * g)) / (1 - np.exp(-g))
        return alpha * t**self.param  # power


def ld_pocock() -> SpendingFunction:
    """Lan–DeMets Pocock-type spending ``alpha * log(1 + (e - 1) t)``."""
    return SpendingFunction("ld_pocock")


def ld_obrien_fleming(rho: float = 1.0) -> SpendingFunction:
    """Lan–DeMets O'Brien–Fleming-type spending ``2 - 2 Phi(z_{alpha/2} / t**(rho/2))``."""
    return SpendingFunction("ld_obf", rho)


def hwang_shih_decani(gamma: float = -4.0) -> SpendingFunction:
    """Hwang–Shih–DeCani spending ``alpha (1 - exp(-gamma t)) / (1 - exp(-gamma))`` (gamma = 0: linear)."""
    return SpendingFunction("hsd", gamma)


def kim_demets_power(rho: float = 3.0) -> SpendingFunction:
    """Kim–DeMets power spending ``alpha * t**rho``."""
    return SpendingFunction("power", rho)


def pocock() -> SpendingFunction:
    """Classic Pocock boundary: the same critical value at every look."""
    return SpendingFunction("pocock")


def obrien_fleming() -> SpendingFunction:
    """Classic O'Brien–Fleming boundary ``c / sqrt(t)``."""
    return SpendingFunction("obf")


def wang_tsiatis(delta: float) -> SpendingFunction:
    """Classic Wang–Tsiatis boundary ``c * t**(delta - 0.5)``."""
    return SpendingFunction("wt", delta)


def get_spending(spec: Any, param: float | None = None, name: str = "spending") -> SpendingFunction:
    """A :class:`SpendingFunction` from an instance or a family name (``"ld_pocock"``, ``"sfHSD"``, ...)."""
    if isinstance(spec, SpendingFunction):
        return spec if param is None else SpendingFunction(spec.family, param)
    if isinstance(spec, str):
        try:
            return SpendingFunction(spec, param)
        except ValueError as exc:
            raise ValueError(str(exc).replace("spending:", f"{name}:", 1)) from None
    raise ValueError(f"{name}: expected a SpendingFunction or a family name, got {type(spec).__name__}")
