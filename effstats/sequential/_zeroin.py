"""R's ``zeroin`` (Brent's method) step for step, so one-dimensional searches match R's to the last bit."""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ..exceptions import ConvergenceWarning
from ._recursion import _DBL_EPS


def zeroin(f: Callable[[float], float], lower: float, upper: float, tol: float = 1e-6, maxiter: int = 1000,
           f_lower: float | None = None, f_upper: float | None = None) -> float:
    """R's ``uniroot`` (``R_zeroin2``, Brent's method) step for step, so roots match R's to the last bit.

    Parameters
    ----------
    f : callable
        Function of one float.
    lower, upper : float
        Bracket; ``f`` must change sign over it.
    tol : float, default=1e-6
        Tolerance on the root.
    maxiter : int, default=1000
        Maximum iterations.
    f_lower, f_upper : float, optional
        ``f`` at the ends, when already known.

    Returns
    -------
    float
        The root.

    Raises
    ------
    RuntimeError
        If ``f`` has the same sign at both ends (the root is not bracketed) or is not finite there.

    Warns
    -----
    ConvergenceWarning
        If ``maxiter`` iterations end before the tolerance is met (the last iterate is returned).

    Examples
    --------
    >>> from effstats.sequential.native import zeroin
    >>> round(zeroin(lambda x: x**3 - 2, 0.0, 2.0, tol=1e-10), 8)
    1.25992105
    """
    fa = f(lower) if f_lower is None else f_lower
    fb = f(upper) if f_upper is None else f_upper
    if not (np.isfinite(fa) and np.isfinite(fb)):
        raise RuntimeError(f"zeroin: f is not finite at the end points (f({lower:g}) = {fa}, f({upper:g}) = {fb})")
    if fa * fb > 0:
        raise RuntimeError(f"zeroin: the root is not bracketed: f({lower:g}) = {fa:.3g} and f({upper:g}) = {fb:.3g} "
                           "have the same sign")
    a, b = float(lower), float(upper)
    c, fc = a, fa
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    it = maxiter + 1
    while it > 0:
        it -= 1
        prev_step = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol_act = 2 * _DBL_EPS * abs(b) + tol / 2
        new_step = (c - b) / 2
        if abs(new_step) <= tol_act or fb == 0.0:
            return b
        if abs(prev_step) >= tol_act and abs(fa) > abs(fb):
            cb = c - b
            if a == c:
                t1 = fb / fa
                p = cb * t1
                q = 1.0 - t1
            else:
                q = fa / fc
                t1 = fb / fc
                t2 = fb / fa
                p = t2 * (cb * q * (q - t1) - (b - a) * (t1 - 1.0))
                q = (q - 1.0) * (t1 - 1.0) * (t2 - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if p < (0.75 * cb * q - abs(tol_act * q) / 2) and p < abs(prev_step * q / 2):
                new_step = p / q
        if abs(new_step) < tol_act:
            new_step = tol_act if new_step > 0 else -tol_act
        a, fa = b, fb
        b += new_step
        fb = f(b)
        if (fb > 0 and fc > 0) or (fb < 0 and fc < 0):
            c, fc = a, fa
    warnings.warn(f"zeroin: no convergence to tol={tol:g} in {maxiter} iterations; returning the last iterate {b:g}",
                  ConvergenceWarning, stacklevel=2)
    return b


def _increasing_root(f: Callable[[float], float], lower: float, upper: float, tol: float, name: str) -> float:
    """Root of an increasing ``f``: R's bracket ``[lower, upper]`` when it brackets (bit-identical to gsDesign),
    otherwise the bracket is widened geometrically first (gsDesign's own search stops with
    "f() values at end points not of opposite sign", e.g. when the design needs no more information than a
    fixed-sample test to within rounding)."""
    flo, fhi = f(lower), f(upper)
    lo, hi = lower, upper
    n = 0
    while flo > 0 and n < 60:
        hi, fhi = lo, flo
        lo = lo / 1.25
        flo = f(lo)
        n += 1
    n = 0
    while fhi < 0 and n < 30:
        lo, flo = hi, fhi
        hi = hi * 2
        fhi = f(hi)
        n += 1
    if flo > 0 or fhi < 0:
        raise RuntimeError(f"{name}: no root of the power equation in [{lo:g}, {hi:g}] (f = {flo:.3g}, {fhi:.3g})")
    return zeroin(f, lo, hi, tol, f_lower=flo, f_upper=fhi)
