"""Native group-sequential computations: Armitage–McPherson–Rowe recursive numerical integration.

The sub-density of the z-statistic among paths that have not stopped is propagated look by look
(Armitage, McPherson & Rowe 1969) on Jennison & Turnbull's (2000, ch. 19) grid: ``6r - 1`` points
spaced for the normal tails, Simpson weights, ``r = 18`` as in gsDesign. Boundaries are solved from
the error spent at each look by the same Newton iteration and stopping rule as gsDesign's C code
(``gsbound``, ``gsbound1``), and one-dimensional searches (Wang–Tsiatis constants, maximum
information) use R's ``zeroin`` (Brent) step for step, so that this backend reproduces gsDesign to
rounding error rather than only to the tolerance of either implementation.

Each look costs one ``m x m`` kernel (``m ~ 2 (6r - 1)`` grid points) built with a handful of
whole-array numpy operations (half of it for symmetric two-sided bounds under H0, whose density is
symmetric), and a few Newton steps of ``O(m)`` each; the grid, its mid-points and Simpson weights
are precomputed per ``r``. The crossing probabilities at the solved bounds fall out of the last Newton
step, so the type-I error spent is known without a second pass. The sample-size search (maximum
information for the requested power) is separate (``native_sizes``) and only run when sizes are
asked for.

With hundreds of looks (a batch adds less than 1/144 of the information so far) the r = 18 grid
does not resolve the density of one increment; :func:`effstats.sequential.design` then raises
``r`` and the recursion rescales each transition to its exact probability (``conserve``), which
keeps it stable where gsDesign's unmodified scheme overflows. Below that regime the recursion is gsDesign's.

References
----------
Armitage, P., McPherson, C. K. & Rowe, B. C. (1969). Repeated significance tests on accumulating
data. *Journal of the Royal Statistical Society, Series A*, 132(2), 235–244.

Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
Trials*. Chapman & Hall/CRC, Boca Raton (ch. 19, numerical computations).

Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials.
*Biometrika*, 70(3), 659–663.

Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy.special import ndtr, ndtri

from ..exceptions import ConvergenceWarning

__all__ = ["gridpts", "gsprob", "gsbound", "gsbound1", "zeroin", "wt_constant", "native_bounds", "native_sizes",
           "native_design"]

EXTREMEZ = 20.0
_RT2PI_H = 2.506628275  # gsDesign's constant in h1/hupdate/gsbound1
_RT2PI_B = 2.506628274631  # gsDesign's constant in gsbound
_DBL_EPS = np.finfo(float).eps
_dot = np.dot
_exp = np.exp
# kernel x density: einsum's own SIMD loop, so that the cost at these sizes (m ~ 100-250) does not depend on
# which BLAS numpy links (a reference BLAS dgemv is the slowest option here)
_matvec = np.einsum


def _qnorm_upper(p: float, mu: float = 0.0) -> float:
    return mu - float(ndtri(p))


@lru_cache(maxsize=None)
def _grid_offsets(r: int) -> np.ndarray:
    """Offsets from ``mu`` of Jennison & Turnbull's 6r - 1 candidate points (increasing)."""
    i = np.arange(1, 6 * r, dtype=float)
    rd = float(r)
    off = np.where(i < r, -3 - 4 * np.log(rd / i),
                   np.where(i <= 5 * r, 3 * (-1 + (i - rd) / (2 * rd)), 3 + 4 * np.log(rd / np.maximum(6 * rd - i, 1))))
    off[0] = -3 - 4 * np.log(rd)
    off.setflags(write=False)
    return off


@lru_cache(maxsize=None)
def _grid_full(r: int) -> tuple[np.ndarray, np.ndarray, list]:
    """The whole candidate grid interleaved with its mid-points, its Simpson weights, and the offsets as floats."""
    off = _grid_offsets(r)
    d = np.diff(off)
    z = np.empty(2 * off.size - 1)
    z[0::2] = off
    z[1::2] = off[:-1] + d / 2
    w = np.zeros(2 * off.size - 1)
    w[1::2] = 4 * d / 6
    w[0:-1:2] += d / 6
    w[2::2] += d / 6
    z.setflags(write=False)
    w.setflags(write=False)
    return z, w, off.tolist()


def gridpts(r: int, mu: float, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid points and Simpson weights on [a, b] centred at ``mu`` (Jennison & Turnbull 2000, p. 349).

    Parameters
    ----------
    r : int
        Grid size (``6r - 1`` candidate points before clipping to [a, b]).
    mu : float
        Centre (the mean of the statistic).
    a, b : float
        Interval to integrate over.

    Returns
    -------
    z, w : numpy.ndarray of shape (m,)
        Odd positions are interval mid-points; a grid that collapses to one point has weight 0.

    Examples
    --------
    >>> from effstats.sequential.native import gridpts
    >>> z, w = gridpts(18, 0.0, -1.0, 1.0)
    >>> z.size, round(float(w.sum()), 6)  # Simpson weights integrate 1 over [-1, 1] to its length
    (51, 2.0)
    """
    off = _grid_offsets(r)
    n = off.size
    first = mu + off[0]
    if first >= b:
        return np.array([b]), np.array([0.0])
    z0 = a if first <= a else first
    lo = int(off.searchsorted(a - mu, side="right")) or 1  # first candidate > a (after the first point)
    hi = int(off.searchsorted(b - mu, side="left"))  # first candidate >= b
    if hi < lo:
        hi = lo
    if lo + 2 <= hi < n:
        # the usual case, >= 2 candidates strictly inside: the interior is a slice of the precomputed full grid
        # (a few array operations); only the two end intervals are built here
        fz, fw, offl = _grid_full(r)
        m2 = 2 * (hi - lo + 2) - 1
        z = np.empty(m2)
        w = np.empty(m2)
        np.add(fz[2 * lo: 2 * hi - 1], mu, out=z[2:-2])
        w[2:-2] = fw[2 * lo: 2 * hi - 1]
        e1 = mu + offl[lo]
        en = mu + offl[hi - 1]
        dl, dr = e1 - z0, b - en
        z[0], z[1], z[-2], z[-1] = z0, z0 + dl / 2, en + dr / 2, b
        w[0], w[1], w[-2], w[-1] = dl / 6, 4 * dl / 6, 4 * dr / 6, dr / 6
        w[2] = dl / 6 + (offl[lo + 1] - offl[lo]) / 6
        w[-3] = (offl[hi - 1] - offl[hi - 2]) / 6 + dr / 6
        return z, w
    if hi < n:
        m = hi - lo + 2
        even = np.empty(m)
        even[1:-1] = off[lo:hi]
        even[1:-1] += mu
        even[-1] = b
    else:
        m = n - lo + 1
        even = np.empty(m)
        even[1:] = off[lo:]
        even[1:] += mu
    even[0] = z0
    if m == 1:
        return even, np.array([0.0])
    d = even[1:] - even[:-1]
    z = np.empty(2 * m - 1)
    z[0::2] = even
    z[1::2] = even[:-1] + d / 2
    w = np.empty(2 * m - 1)
    d6 = d / 6
    w[1::2] = 4 * d6
    w[0] = 0.0
    w[2::2] = d6
    w[0:-1:2] += d6
    return z, w


def _h1(theta: float, z: np.ndarray, w: np.ndarray, info: float) -> np.ndarray:
    x = z - theta * math.sqrt(info) if theta else z
    y = x * x
    y *= -0.5  # = -x * x / 2 exactly
    _exp(y, out=y)
    y *= w
    y /= _RT2PI_H
    return y


def _hupdate(theta: float, w2: np.ndarray, i1: float, z1: np.ndarray, h: np.ndarray, i2: float, z2: np.ndarray,
             conserve: bool = False, sym: bool = False) -> np.ndarray:
    """Sub-density on the grid ``z2`` of look 2 from the sub-density ``h`` on ``z1`` of look 1 (one m2 x m1 kernel).

    ``sym``: the grids and ``h`` are symmetric about 0 and ``theta = 0`` (two-sided symmetric bounds under H0), so
    the new density is too: only the rows z2 >= 0 are computed (half the kernel) and mirrored. The grids are
    symmetric to rounding (a few ulp), so this agrees with the full kernel to ~1e-16 relative.
    """
    dk = i2 - i1
    rtd = dk ** 0.5
    r2 = i2 ** 0.5 / rtd
    # x = (z2 sqrt(I2) - z1 sqrt(I1) - theta dk) / sqrt(dk), built in place: this m2 x m1 kernel is the hot spot
    shift = z1 * ((i1 ** 0.5) / rtd)
    if theta:
        shift += theta * dk / rtd
    m2 = z2.size
    if sym and not conserve and not theta and m2 % 2 == 1 and m2 >= 3:
        mid = m2 // 2
        x = np.subtract.outer(z2[mid:] * r2, shift)
        np.square(x, out=x)
        x *= -0.5
        _exp(x, out=x)
        half = _matvec("ij,j->i", x, h)
        out = np.empty(m2)
        out[mid:] = half
        out[:mid] = half[mid:0:-1]
        out *= w2
        out *= r2 / _RT2PI_H
        return out
    x = np.subtract.outer(z2 * r2, shift)
    np.square(x, out=x)
    x *= -0.5
    _exp(x, out=x)
    scale = r2 / _RT2PI_H
    if conserve:
        # Hundreds of looks make the transition kernel narrower than the grid's coarse tail spacing, and the
        # Simpson sum of a column can exceed the probability it approximates; errors then compound look
        # after look. Rescale each column to the exact probability of landing on the grid's support.
        got = _dot(w2, x) * scale
        lo, hi = z2[0] * r2, z2[-1] * r2
        exact = ndtr(hi - shift) - ndtr(lo - shift)
        h = h * np.where(got > 0, exact / np.where(got > 0, got, 1.0), 0.0)
    out = _matvec("ij,j->i", x, h)
    out *= w2
    out *= scale
    return out


def gsprob(theta, info, a, b, r: int = 18, overrun: float = 0.0):
    """Boundary-crossing probabilities (gsDesign's ``gsprob`` / C ``probrej``).

    Parameters
    ----------
    theta : float or array of shape (n_theta,)
        Drift per unit of information.
    info : array of shape (k,)
        Statistical information at each look (increasing).
    a, b : arrays of shape (k,)
        Lower and upper z-bounds (stopping is binding at both).
    r : int, default=18
        Grid size.
    overrun : float, default=0.0
        Information added after an interim stop (gsDesign's overrun in the expected information).

    Returns
    -------
    dict
        ``problo``, ``probhi`` of shape (k, n_theta), ``powr`` (n_theta,) and ``en`` (n_theta,), the expected
        information at stopping.

    Examples
    --------
    >>> from effstats.sequential.native import gsprob
    >>> p = gsprob([0.0, 3.24], info=[0.5, 1.0], a=[-20, -20], b=[2.5, 2.0])
    >>> p["powr"].round(4), p["en"].round(4)
    (array([0.0259, 0.8957]), array([0.9969, 0.7914]))
    """
    thetas = np.atleast_1d(np.asarray(theta, dtype=float))
    info = np.asarray(info, dtype=float)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    k = info.size
    plo = np.zeros((k, thetas.size))
    phi = np.zeros((k, thetas.size))
    rt = np.sqrt(info)
    dks = np.diff(info)
    rtds = np.sqrt(dks)
    conserve = r > 18
    al, bl, rtl = a.tolist(), b.tolist(), rt.tolist()
    sym_bounds = al == [-v for v in bl]
    for j, th in enumerate(thetas.tolist()):
        sym = sym_bounds and not th
        mu = th * rtl[0]
        plo[0, j] = ndtr(al[0] - mu)
        phi[0, j] = ndtr(mu - bl[0])
        z1, w1 = gridpts(r, mu, al[0], bl[0])
        h = _h1(th, z1, w1, info[0])
        for i in range(1, k):
            dk, rtd = dks[i - 1], rtds[i - 1]
            base = z1 * (rtl[i - 1] / rtd) + th * dk / rtd
            phi[i, j] = _dot(h, ndtr(base - bl[i] * rtl[i] / rtd))
            plo[i, j] = _dot(h, ndtr(al[i] * rtl[i] / rtd - base))
            if i < k - 1:
                mu = th * rtl[i]
                z2, w2 = gridpts(r, mu, al[i], bl[i])
                h = _hupdate(th, w2, info[i - 1], z1, h, info[i], z2, conserve, sym)
                z1 = z2
    powr = phi.sum(0)
    futile = plo.sum(0)
    iover = np.concatenate((np.minimum(info[:-1] + overrun, info[-1]), info[-1:]))
    en = iover @ (plo + phi) + info[-1] * (1 - powr - futile)
    return {"problo": plo, "probhi": phi, "powr": powr, "en": en}


def _newton_upper(h, base, scale, target, b0, tol, rt2pi):
    """gsDesign's Newton iteration for an upper bound: ``h @ ndtr(base - b * scale) = target``.

    Returns ``(b, achieved, converged)`` where ``achieved`` is the crossing probability at the returned ``b``
    (gsDesign returns the last point evaluated, not the last Newton proposal).
    """
    x = np.empty_like(base)
    two = np.empty((2, base.size))  # Phi(x) and exp(-x^2 / 2) side by side: one matrix-vector product for both
    cdf, dens = two
    twodot = two.dot
    btem2 = b0
    j = 0
    bdelta = 1.0
    btem = btem2
    phi = 0.0
    sub, mul, ex = np.subtract, np.multiply, _exp
    c = scale / rt2pi
    while bdelta > tol and j < 20:
        j += 1
        btem = btem2
        sub(base, btem * scale, out=x)
        ndtr(x, out=cdf)
        mul(x, x, out=x)
        mul(x, -0.5, out=x)
        ex(x, out=dens)
        phi, dphi = twodot(h).tolist()
        dphi = -dphi * c
        bd = target - phi
        if bd < dphi:
            btem2 = btem + 1.0
        elif bd > -dphi:
            btem2 = btem - 1.0
        elif dphi == 0.0:  # 0/0 ends the loop, as in C
            btem2 = float("nan")
        else:
            btem2 = btem + bd / dphi
        if btem2 == btem2:
            btem2 = EXTREMEZ if btem2 > EXTREMEZ else (-EXTREMEZ if btem2 < -EXTREMEZ else btem2)
        bdelta = abs(btem2 - btem)
    return btem, phi, not (bdelta > tol)


def _bracketed_upper(h, base, scale, target, tol):
    """The bound ``b`` with ``h @ ndtr(base - b * scale) = target`` by bracketing in ``[-EXTREMEZ, EXTREMEZ]``.

    Used where gsDesign's Newton iteration ends off target: started from the unconditional quantile, it can step
    by +-1 through a region where the crossing probability is flat (a look that adds little information after a
    bound that left little mass) and stop after its 20 steps far from the root (a beta-spending futility bound
    then spends nothing at that look). The crossing probability decreases in ``b``, so the bracket always holds a
    root when the target is at most the mass entering the look. Returns ``(b, achieved, converged)``; not
    converged when the target exceeds that mass (no bound can spend it).
    """
    def excess(bb: float) -> float:
        return float(_dot(h, ndtr(base - bb * scale))) - target

    lo, hi = -EXTREMEZ, EXTREMEZ
    f_lo = excess(lo)
    if f_lo < 0:  # even the lowest bound crosses less than the target
        return lo, f_lo + target, False
    for _ in range(200):  # bisection: the crossing probability can be flat, where secant steps stall
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-3 * tol:
            break
    return hi, excess(hi) + target, True


def gsbound1(theta: float, info, a, probhi, tol: float = 1e-6, r: int = 18, lower: bool = True):
    """Upper bound with the given upper-crossing probabilities for drift ``theta`` and a fixed lower bound.

    A transcription of gsDesign's C ``gsbound1`` plus the R wrapper ``gsBound1`` (which lifts an
    upper bound that fell below the lower one).

    Parameters
    ----------
    lower : bool, default=True
        Also compute the lower-crossing probabilities (not needed when ``a`` is -20 everywhere).

    Returns
    -------
    dict with ``b`` (k,), ``problo`` (k,), ``probhi`` (k,, the targets, as gsDesign), ``achieved``
    (k,, the upper-crossing probabilities at the returned bounds) and ``error`` (0 when converged).
    """
    info = np.asarray(info, dtype=float)
    a = np.asarray(a, dtype=float)
    probhi = np.asarray(probhi, dtype=float)
    k = info.size
    b = np.zeros(k)
    problo = np.zeros(k)
    achieved = np.zeros(k)
    rt = np.sqrt(info).tolist()
    al, pl = a.tolist(), probhi.tolist()
    mu = rt[0] * theta
    problo[0] = ndtr(al[0] - mu)
    b[0] = EXTREMEZ if pl[0] <= 0 else _qnorm_upper(pl[0], mu)
    achieved[0] = ndtr(mu - b[0])
    err = 0
    mass = np.nan
    last = None
    conserve = r > 18
    if k > 1:
        infol = info.tolist()
        z1, w1 = gridpts(r, mu, al[0], float(b[0]))
        h = _h1(theta, z1, w1, infol[0])
        for i in range(1, k):
            rtik = rt[i]
            mu = rtik * theta
            dk = infol[i] - infol[i - 1]
            rtd = dk ** 0.5
            btem2 = EXTREMEZ if pl[i] <= 0 else _qnorm_upper(pl[i], mu)
            base = z1 * (rt[i - 1] / rtd)
            if theta:
                base += theta * dk / rtd
            scale = rtik / rtd
            if lower:
                problo[i] = float(_dot(h, ndtr(al[i] * scale - base)))
            if i == k - 1:
                mass = float(h.sum())  # the (Simpson) mass entering the last look
                last = (h, base, scale)
            bi, achieved[i], ok = _newton_upper(h, base, scale, pl[i], btem2, tol, _RT2PI_H)
            if not ok and abs(achieved[i] - pl[i]) > tol:
                bi, achieved[i], ok = _bracketed_upper(h, base, scale, pl[i], tol)
            b[i] = bi
            if not ok:
                err = 1
            if i < k - 1:
                z2, w2 = gridpts(r, mu, al[i], bi)
                h = _hupdate(theta, w2, infol[i - 1], z1, h, infol[i], z2, conserve)
                z1 = z2
    out = {"b": b, "problo": problo, "probhi": probhi.copy(), "achieved": achieved, "error": err,
           "mass_last": mass if k > 1 else 1.0}
    if err == 0 and np.min(b - a) < 0:
        bb = np.where(b < a, a, b)
        if k > 1 and lower and not (b[:-1] < a[:-1]).any():
            # only the last bound is lifted (a beta-spending search below its root): the looks before are unchanged,
            # and the lower crossings never depend on the upper bound at their look, so gsDesign's gsprob pass on the
            # lifted bounds equals this pass's figures except the last upper crossing, computed here from the density
            # entering the last look (to rounding; saves a recursion pass)
            hk, basek, scalek = last
            ach = achieved.copy()
            ach[-1] = float(_dot(hk, ndtr(basek - a[-1] * scalek)))
            out.update(b=bb, probhi=ach, achieved=ach.copy())
            return out
        pr = gsprob(theta, info, a, bb, r)
        out.update(b=bb, probhi=pr["probhi"][:, 0], problo=pr["problo"][:, 0], achieved=pr["probhi"][:, 0],
                   mass_last=np.nan)
    return out


def gsbound(info, trueneg, falsepos, tol: float = 1e-6, r: int = 18):
    """Lower and upper bounds with given crossing probabilities under H0 (gsDesign's C ``gsbound``).

    When ``trueneg`` equals ``falsepos`` (a symmetric two-sided design) the grid and the density are
    symmetric about 0, so only the upper bound is iterated and ``a = -b`` (the same iterates as the
    joint scheme, at half the cost).

    Returns
    -------
    dict with ``a``, ``b`` (k,), ``problo``, ``probhi`` (k,, the crossing probabilities under H0 at the
    returned bounds) and ``error`` (0 when converged; the look that failed otherwise).
    """
    info = np.asarray(info, dtype=float)
    trueneg = np.asarray(trueneg, dtype=float)
    falsepos = np.asarray(falsepos, dtype=float)
    k = info.size
    sym = trueneg is falsepos or (trueneg.shape == falsepos.shape and not (trueneg != falsepos).any())
    a = np.zeros(k)
    b = np.zeros(k)
    plo_out = np.zeros(k)
    phi_out = np.zeros(k)
    tn, fp = trueneg.tolist(), falsepos.tolist()
    a[0] = -EXTREMEZ if tn[0] <= 0 else float(ndtri(tn[0]))
    b[0] = EXTREMEZ if fp[0] <= 0 else _qnorm_upper(fp[0])
    plo_out[0], phi_out[0] = ndtr(a[0]), ndtr(-b[0])
    z1, w1 = gridpts(r, 0.0, a[0], b[0])
    h = _h1(0.0, z1, w1, info[0])
    rt = np.sqrt(info).tolist()
    err = 0
    conserve = r > 18
    for i in range(1, k):
        rtik = rt[i]
        rtd = (info[i] - info[i - 1]) ** 0.5
        scale = rtik / rtd
        zr = z1 * (rt[i - 1] / rtd)
        btem2 = EXTREMEZ if fp[i] <= 0 else _qnorm_upper(fp[i])
        if sym:
            btem, phi, ok = _newton_upper(h, zr, scale, fp[i], btem2, tol, _RT2PI_B)
            atem, plo = -btem, phi
        else:
            atem2 = -EXTREMEZ if tn[i] <= 0 else float(ndtri(tn[i]))
            adelta = bdelta = 1.0
            j = 0
            atem, btem = atem2, btem2
            plo = phi = 0.0
            while (adelta > tol or bdelta > tol) and j < EXTREMEZ:
                j += 1
                atem, btem = atem2, btem2
                xlo = zr - atem * scale
                xhi = zr - btem * scale
                plo = float(_dot(h, ndtr(-xlo)))
                phi = float(_dot(h, ndtr(xhi)))
                dplo = float(_dot(h, _exp(-xlo * xlo / 2))) / _RT2PI_B * scale
                dphi = -float(_dot(h, _exp(-xhi * xhi / 2))) / _RT2PI_B * scale
                ad = tn[i] - plo
                if ad > dplo:
                    atem2 = atem + 1.0
                elif ad < -dplo:
                    atem2 = atem - 1.0
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        atem2 = float(np.float64(atem) + np.float64(ad) / np.float64(dplo))
                atem2 = min(max(atem2, -EXTREMEZ), EXTREMEZ)
                bd = fp[i] - phi
                if bd < dphi:
                    btem2 = btem + 1.0
                elif bd > -dphi:
                    btem2 = btem - 1.0
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        btem2 = float(np.float64(btem) + np.float64(bd) / np.float64(dphi))
                btem2 = min(max(btem2, -EXTREMEZ), EXTREMEZ)
                if atem2 > btem2:
                    atem2 = btem2
                adelta = abs(atem2 - atem)
                bdelta = abs(btem2 - btem)
            ok = not (adelta > tol or bdelta > tol)
        a[i], b[i] = atem, btem
        plo_out[i], phi_out[i] = plo, phi
        if not ok:
            err = i + 1
            break
        if i < k - 1:
            z2, w2 = gridpts(r, 0.0, a[i], b[i])
            h = _hupdate(0.0, w2, info[i - 1], z1, h, info[i], z2, conserve, sym)
            z1 = z2
    return {"a": a, "b": b, "problo": plo_out, "probhi": phi_out, "error": err}


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


def wt_constant(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6, r: int = 18) -> float:
    """Constant ``c`` of the Wang–Tsiatis bound ``c * t**(delta - 0.5)`` with total upper error ``alpha`` (see
    ``_wt_constant_terms``)."""
    return _wt_constant_terms(delta, alpha, two_sided, timing, tol, r)[0]


def _wt_constant_terms(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6,
                       r: int = 18) -> tuple[float, np.ndarray | None]:
    """Constant ``c`` of the Wang–Tsiatis bound ``c * t**(delta - 0.5)`` with total upper error ``alpha`` (gsDesign ``WT``).

    Solved by secant steps on the probit of the crossing probability, which is nearly linear in ``c`` (exactly so
    for one look), started at the Bonferroni constant, which needs fewer recursion passes than a bracketing
    search. The root is taken to ``1e-2 * tol``, so it lies within gsDesign's own ``uniroot`` tolerance of
    gsDesign's constant. Falls back to the bracketing search (``_wt_constant_zeroin``) if a step fails.

    Returns ``(c, terms)``: ``terms`` (k,) are the upper-crossing probabilities under H0 at each look at ``c`` (the
    last point evaluated), or None when ``c`` was not evaluated (the caller then runs ``gsprob``).
    """
    timing = np.asarray(timing, dtype=float)
    shape = timing ** (delta - 0.5)
    low = np.full(timing.size, -EXTREMEZ)
    target = float(ndtri(alpha))  # probit of the wanted crossing probability

    last: dict = {}

    def g(c: float) -> float:
        terms: list = []
        p = _upper_power(0.0, timing, -c * shape if two_sided else low, c * shape, r, terms)
        last.update(c=c, terms=terms)
        return float(ndtri(p)) - target if 0.0 < p < 1.0 else np.nan

    if timing.size <= 60 and 0.0 < alpha < 0.5:
        with np.errstate(all="ignore"):
            # Bonferroni constant (an upper bound on c: the union bound over looks) and the last look's alone (a lower bound)
            c1 = float(ndtri(1 - alpha / timing.size) / shape.min()) if shape.size else 0.0
            c0 = float(ndtri(1 - alpha) / shape[-1])
            x0 = c1 if c1 > c0 else c0 + 0.1
            if delta == 0.5 and c1 > c0:
                # Pocock: the constant sits ~3/4 of the way from the last look's to the Bonferroni one (0.70-0.78 for
                # k = 2-10, alpha 0.005-0.1): starting there saves one recursion pass of the five
                x0 = c0 + 0.75 * (c1 - c0)
            g0 = g(x0)
            # first step as if the look with the lowest bound acted alone (probit slope -shape.min())
            x1 = x0 + g0 / shape.min() if np.isfinite(g0) and g0 != 0 else 0.5 * (c0 + x0)
            g1 = g(x1)
            for _ in range(30):
                if not (np.isfinite(g0) and np.isfinite(g1)) or g1 == g0:
                    break
                x2 = x1 - g1 * (x1 - x0) / (g1 - g0)
                if not np.isfinite(x2) or x2 <= 0:
                    break
                if abs(x2 - x1) < 1e-2 * tol:
                    # x1, the last point evaluated, is within 1e-2 * tol of the root: return it with its per-look
                    # crossing probabilities, which saves the caller a recursion pass for them
                    return (x1, np.array(last["terms"])) if last.get("c") == x1 else (x2, None)
                x0, g0, x1, g1 = x1, g1, x2, g(x2)
    return _wt_constant_zeroin(delta, alpha, two_sided, timing, tol, r), None


def _wt_constant_zeroin(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6, r: int = 18) -> float:
    """``wt_constant`` by gsDesign's own bracketing search (R's ``uniroot`` on ``alpha`` minus the crossing
    probability): bit-identical to gsDesign, ~12 recursion passes."""
    timing = np.asarray(timing, dtype=float)
    shape = timing ** (delta - 0.5)
    low = np.full(timing.size, -EXTREMEZ)

    def diff(c: float) -> float:
        a = -c * shape if two_sided else low
        return alpha - _upper_power(0.0, timing, a, c * shape, r)

    f0 = None
    if two_sided:
        c0 = 0.0
    else:
        # c = 0 puts the bound at z = 0: with hundreds of looks the surviving paths drift into the grid's coarse
        # far tail and the recursion overflows. Its crossing probability is >= P(Z_1 > 0) = 1/2 > alpha, so a
        # non-finite value is replaced by alpha - 1 (gsDesign itself stops at k = 30 for these bounds).
        with np.errstate(all="ignore"):
            f0 = diff(0.0)
        if not np.isfinite(f0):
            f0 = alpha - 1.0
        i = 0
        fi = f0
        while fi >= 0:
            i -= 1
            fi = diff(i)
        c0 = float(i)
        if i != 0:
            f0 = fi
    i = 2
    fhi = diff(i)
    while fhi <= 0:
        i += 1
        fhi = diff(i)
    return zeroin(diff, c0, float(i), tol, f_lower=f0, f_upper=fhi)


# ---------------------------------------------------------------------------------------------
# gsDesign's design derivations (gsDType1 ... gsDType6), test types 1-6
# ---------------------------------------------------------------------------------------------
@dataclass
class _Spec:
    k: int
    test_type: int
    alpha: float  # one-sided, as in gsDesign
    beta: float
    timing: np.ndarray
    upper: "object"  # SpendingFunction
    lower: "object | None"
    astar: float
    n_i: np.ndarray | None  # observed information (re-computation), else None
    max_info_plan: float
    tol: float
    r: int
    n_fix: float = 1.0  # fixed-design information on the scale of n_i (gsDesign's n.fix); the drift is per unit of it


def _incr(x: np.ndarray) -> np.ndarray:
    """Increments of a cumulative sequence (first element kept)."""
    x = np.asarray(x, dtype=float)
    out = x.copy()
    out[1:] -= x[:-1]
    return out


def _upper_power(theta: float, info: np.ndarray, a: np.ndarray, b: np.ndarray, r: int, terms: list | None = None) -> float:
    """Total upper-crossing probability at one drift: ``gsprob``'s ``powr`` without the lower-crossing terms
    and the expected information (the quantity the sample-size search evaluates ~10 times). ``terms``, if given,
    receives the crossing probability at each look (gsprob's ``probhi``)."""
    k = info.size
    rt = np.sqrt(info).tolist()
    al, bl = a.tolist(), b.tolist()
    mu = theta * rt[0]
    tot = float(ndtr(mu - bl[0]))
    if terms is not None:
        terms.append(tot)
    if k == 1:
        return tot
    z1, w1 = gridpts(r, mu, al[0], bl[0])
    h = _h1(theta, z1, w1, info[0])
    conserve = r > 18
    sym = not theta and al == [-v for v in bl]  # symmetric two-sided bounds under H0
    for i in range(1, k):
        dk = info[i] - info[i - 1]
        rtd = dk ** 0.5
        base = z1 * (rt[i - 1] / rtd)
        base += theta * dk / rtd - bl[i] * rt[i] / rtd
        term = float(h.dot(ndtr(base, out=base)))
        tot += term
        if terms is not None:
            terms.append(term)
        if i < k - 1:
            mu = theta * rt[i]
            z2, w2 = gridpts(r, mu, al[i], bl[i])
            h = _hupdate(theta, w2, info[i - 1], z1, h, info[i], z2, conserve, sym)
            z1 = z2
    return tot


def _betadiff(imax, theta, beta, time, a, b, r):
    return beta - 1 + _upper_power(theta, time * imax, a, b, r)


def _betadiff1(imax, theta, tx, problo, b, tol, r):
    info = tx * imax
    x = gsbound1(-theta, info, -b, problo, tol, r)
    y = gsprob(theta, info, -x["b"], b, r)
    return float(problo.sum() - 1 + y["powr"][0])


def _type4_search(delta, tx, falseneg, b, tol, r, n_fix):
    """gsDesign's gsDType4 search for the maximum information of a non-binding beta-spending design, one
    recursion pass per step.

    For information ``I`` the lower bounds spend ``falseneg`` under the drift ``delta`` given the upper bounds
    ``b``: one ``gsbound1`` pass on the mirrored problem, whose lower-crossing probabilities are the upper
    crossings of the design, i.e. the terms of the power (gsDesign runs a second ``gsprob`` pass for them).
    The bracket and R's ``uniroot`` steps are gsDesign's own (the root must be gsDesign's, which is only
    ``tol``-accurate), and the pass at the root is kept: it gives the bounds and the crossing probabilities
    under ``delta`` without further passes.

    Returns ``(n_i, a, upper1, lower1)``: information, lower bounds (the last one set to the upper, as gsDesign)
    and the crossing probabilities under ``delta`` (k,).
    """
    passes: dict = {}
    target = float(falseneg.sum()) - 1.0

    def f(v: float) -> float:
        if v not in passes:
            x = gsbound1(-delta, tx * v, -b, falseneg, tol, r)
            passes[v] = (target + float(x["problo"].sum()), x)
        return passes[v][0]

    ilow, ihigh = 0.98 * n_fix, 1.2 * n_fix
    while 0 > f(ihigh):
        if ihigh > 5 * n_fix:
            raise RuntimeError("design: unable to derive the sample size (gsDesign's bracket search exceeded "
                               "5 times the fixed-design information)")
        ilow, ihigh = ihigh, ihigh * 1.2
    root = _increasing_root(f, ilow, ihigh, tol, "information")
    f(root)
    x = passes[root][1]
    n_i = tx * root
    a = -x["b"]
    a[-1] = b[-1]
    if tx.size > 1 and np.isfinite(x["mass_last"]):
        up1 = x["problo"].copy()  # the mirrored pass's lower crossings are the upper crossings under delta
        lo1 = x["achieved"].copy()
        # a_K = b_K: at the last look the paths that do not cross up cross down; as gsprob integrates it, the grid
        # mass entering the look minus the upward crossing
        lo1[-1] = x["mass_last"] - up1[-1]
    else:  # one look, or gsBound1 lifted a bound: a pass of its own
        y = gsprob(delta, n_i, a, b, r)
        up1, lo1 = y["probhi"][:, 0], y["problo"][:, 0]
    return n_i, a, up1, lo1


def _gsI1(theta, info, beta, b, ilow, ihigh, tol, r):
    tx = info / info[-1]
    root = _increasing_root(lambda v: _betadiff1(v, theta, tx, beta, b, tol, r), ilow, ihigh, tol, "information")
    x = gsbound1(-theta, root * tx, -b, beta, tol, r)
    bb = x["b"].copy()
    bb[-1] = -b[-1]
    return root * tx, -bb, b


def _check_falsepos(target: np.ndarray, got: np.ndarray, tol: float) -> None:
    """gsDesign's "False positive rates not achieved" check, as a numerical failure (RuntimeError)."""
    dev = np.abs(np.asarray(target) - np.asarray(got))
    if dev.max() <= tol:  # (NaN compares False: falls through to the check below)
        return
    if not (dev <= tol).all():
        look = int(np.argmax(np.where(np.isfinite(dev), dev, np.inf))) + 1
        raise RuntimeError(f"design: the bounds do not spend the requested type-I error (look {look}: "
                           f"|spent - target| = {float(dev[look - 1]):.3g} > tol = {tol:g}); the boundary iteration "
                           "failed to converge. Try a larger r or fewer, more widely spaced looks.")


class BetaNotSpent(ValueError):
    """A beta-spending futility bound does not spend the requested type-II error at some look (test types 3, 4)."""

    def __init__(self, look: int, spent: float, target: float, tol: float, r: int) -> None:
        self.look, self.spent, self.target, self.r = look, spent, target, r
        super().__init__(
            f"lower_spending: the futility bound cannot spend the requested type-II error by look {look} (beta spent "
            f"{spent:.6g}, target {target:.6g}, tolerance {tol:g}, grid r={r}): a look that adds little information "
            "after one whose futility bound left little probability to spend. Spend less beta by that look "
            "(lower_spending / lower_param) or space the looks further apart (timing / information)"
            + (", or integrate on a finer grid (a larger r, at most 80)" if r < 80 else "")
            + "; gsDesign ('False negative rates not achieved') and rpact refuse such designs too")


def _check_falseneg(target: np.ndarray, got: np.ndarray, tol: float, r: int) -> None:
    """The beta spent by each look (cumulative) against its target, to ``tol``: gsDesign's "False negative rates
    not achieved" check (made there look by look), raised as a BetaNotSpent."""
    t, g = np.cumsum(target), np.cumsum(got)
    dev = np.abs(t - g)
    if not dev.max() <= tol:  # (NaN compares False: refused)
        j = int(np.argmax(np.where(np.isfinite(dev), dev, np.inf)))
        raise BetaNotSpent(j + 1, float(g[j]), float(t[j]), tol, r)


def native_bounds(s: _Spec) -> dict:
    """Boundaries only (no sample-size search where the bounds do not depend on it: test types 1, 2, 5, 6).

    Returns a dict with ``upper``, ``lower`` (None for one-sided), ``upper_prob0`` (k,, upper-crossing
    probabilities under H0 at the bounds, binding lower bound included), ``falsepos`` (k,, incremental upper error
    under H0 ignoring a non-binding lower bound), ``lower_spend``, ``delta`` and ``sized`` (True when the
    derivation needed, and so returns, the sizes too: beta-spending test types 3 and 4).
    """
    k, tol, r = s.k, s.tol, s.r
    delta = abs(ndtri(s.alpha) + ndtri(s.beta)) / np.sqrt(s.n_fix)  # gsDesign: (z_alpha + z_beta) / sqrt(n.fix)
    given = s.n_i is not None
    timing = s.timing
    low20 = np.full(k, -EXTREMEZ)
    tt = s.test_type
    up = s.upper
    out: dict = {"delta": float(delta), "sized": False}
    if up.is_classic and tt > 2:
        raise ValueError("spending: Wang-Tsiatis, Pocock and O'Brien-Fleming bounds are not available for asymmetric "
                         "testing (test_type 3-6)")
    scale = s.n_i if given else timing  # bounds at theta = 0 only depend on information ratios

    if tt == 1:
        if up.is_classic:
            d = up.wt_delta
            c, terms = _wt_constant_terms(d, s.alpha, False, timing, tol, r)
            b = c * timing ** (d - 0.5)
            falsepos = terms if terms is not None else gsprob(0.0, timing, low20, b, r)["probhi"][:, 0]
            got = falsepos
        else:
            falsepos = _incr(up(s.alpha, timing))
            x = gsbound1(0.0, scale, low20, falsepos, tol, r, lower=False)
            b, got = x["b"], x["achieved"]
            _check_falsepos(falsepos, got, tol)
        out.update(upper=b, lower=None, upper_prob0=got, lower_prob0=None, falsepos=got, lower_spend=None)
        return out

    if tt in (2, 5):
        if up.is_classic:
            d = up.wt_delta
            c, terms = _wt_constant_terms(d, s.alpha, True, timing, tol, r)
            b = c * timing ** (d - 0.5)
            a = -b
            if terms is not None:  # symmetric bounds under H0: the lower crossings mirror the upper ones
                falsepos = trueneg = got = plo = terms
            else:
                p = gsprob(0.0, timing, a, b, r)
                falsepos = trueneg = got = p["probhi"][:, 0]
                plo = p["problo"][:, 0]
        else:
            falsepos = _incr(up(s.alpha, timing))
            trueneg = _incr(s.lower(s.astar, timing)) if tt == 5 else falsepos
            x = gsbound(scale, trueneg, falsepos, tol, r)
            if x["error"]:
                warnings.warn(f"design: the boundary iteration did not converge at look {x['error']} (gsDesign's "
                              "Newton scheme, 20 steps)", ConvergenceWarning, stacklevel=3)
            a, b = x["a"].copy(), x["b"]
            got, plo = x["probhi"], x["problo"]
            if not given and not (tt == 2 or s.astar < 1 - s.alpha):
                a[-1] = b[-1]
            _check_falsepos(falsepos, got, tol)
        out.update(upper=b, lower=a, upper_prob0=got, lower_prob0=plo, falsepos=got, lower_spend=trueneg)
        return out

    if tt == 6:
        if given:
            timing = s.n_i / s.max_info_plan
        falsepos = _incr(up(s.alpha, timing))
        x = gsbound1(0.0, scale, low20, falsepos, tol, r, lower=False)
        b, fpnb = x["b"], x["achieved"]
        if s.astar == 1 - s.alpha:
            tn = _incr(s.lower(s.astar, timing))
            trueneg = tn
            flag, it = 1.0, 0
            while flag > tol and it < 10:
                xx = gsbound1(0.0, timing, -b, trueneg, tol, r)
                alpha = xx["problo"].sum()
                trueneg = (1 - alpha) * tn / s.astar
                a_try = np.concatenate((-xx["b"][:-1], b[-1:]))
                xx2 = gsprob(0.0, timing, a_try, b, r)
                flag = float(np.max(np.abs(xx2["problo"][:, 0] - trueneg)))
                it += 1
            a = a_try
        else:
            trueneg = _incr(s.lower(s.astar, timing))
            a = -gsbound1(0.0, timing, -b, trueneg, tol, r)["b"]
        out.update(upper=b, lower=a, upper_prob0=None, lower_prob0=None, falsepos=fpnb, lower_spend=trueneg)
        return out

    if tt == 4 and given:
        # non-binding beta-spending at observed information: two bound passes, no search; sizes (crossing
        # probabilities under the alternative) on demand
        falsepos = _incr(up(s.alpha, timing))
        falseneg = _incr(s.lower(s.beta, timing))
        x = gsbound1(0.0, s.n_i, low20, falsepos, tol, r, lower=False)
        b, fpnb = x["b"], x["achieved"]
        x2b = gsbound1(-delta, s.n_i, -b, falseneg, tol, r)["b"].copy()
        if -x2b[-1] > b[-1] - tol:
            x2b[-1] = -b[-1]
        out.update(upper=b, lower=-x2b, upper_prob0=None, lower_prob0=None, falsepos=fpnb, lower_spend=falseneg)
        return out

    # beta-spending designs (test types 3 and 4): the bounds depend on the information, so sizes come with them
    res = _beta_spending(s, delta)
    if s.n_i is None:
        # gsDesign's check of a planned design; at observed information neither it nor this checks (information
        # on the scale of sample sizes without n_fixed puts the alternative's mass above the upper bounds, where a
        # futility bound has nothing to spend)
        _check_falseneg(res["lower_spend"], res["lower_prob"][:, 1], tol, r)
    res.update(delta=float(delta), sized=True, upper_prob0=res["upper_prob"][:, 0],
               lower_prob0=res["lower_prob"][:, 0])
    return res


def _max_info_secant(delta, beta, tx, a, b, r, i0, tol) -> float | None:
    """Maximum information giving power ``1 - beta`` for fixed bounds: secant steps in ``sqrt(information)`` on the
    probit of the power, which is nearly linear there (exactly so for one look, with slope ``delta``), so
    it needs fewer recursion passes than a bracketing search. Taken to ``1e-2 * tol``, i.e. well inside the
    tolerance of gsDesign's own search. None if a step fails (the caller then brackets)."""
    if not (delta > 0 and 0.0 < beta < 0.5):
        return None
    target = float(ndtri(1 - beta))

    def h(u: float) -> float:
        p = _upper_power(delta, tx * (u * u), a, b, r)
        return float(ndtri(p)) - target if 0.0 < p < 1.0 else np.nan

    with np.errstate(all="ignore"):
        u0 = float(np.sqrt(i0))
        h0 = h(u0)
        if not np.isfinite(h0):
            return None
        u1 = u0 - h0 / delta if h0 != 0 else u0 * 1.01
        h1 = h(u1)
        for _ in range(30):
            if not (np.isfinite(h0) and np.isfinite(h1)) or h1 == h0:
                return None
            u2 = u1 - h1 * (u1 - u0) / (h1 - h0)
            if not np.isfinite(u2) or u2 <= 0:
                return None
            if abs(u2 * u2 - u1 * u1) < 1e-2 * tol:
                return u2 * u2
            u0, h0, u1, h1 = u1, h1, u2, h(u2)
    return None


def native_sizes(s: _Spec, bounds: dict) -> dict:
    """Information and operating characteristics for bounds from ``native_bounds``.

    The maximum information for power ``1 - beta`` at the design drift (relative to a fixed design of
    information 1) is solved unless the information was given; then crossing probabilities at
    theta = (0, delta) and the expected information at stopping.

    Returns a dict with ``n_i`` (k,), ``upper_prob`` (k, 2), ``lower_prob`` (k, 2) or None and ``en`` (2,).
    """
    if bounds.get("sized"):
        return {key: bounds[key] for key in ("n_i", "upper_prob", "lower_prob", "en")}
    k, tol, r = s.k, s.tol, s.r
    delta = bounds["delta"]
    b = bounds["upper"]
    a = bounds["lower"] if bounds["lower"] is not None else np.full(k, -EXTREMEZ)
    n_i = s.n_i
    if n_i is None:
        timing = s.timing
        if s.test_type in (2, 5) and not s.upper.is_classic:
            alpha = float(np.sum(_incr(s.upper(s.alpha, timing))))
            i0 = ((ndtri(alpha) + ndtri(s.beta)) / delta) ** 2
        else:
            i0 = 1.0  # n.fix
        tx = timing / timing[-1]
        root = _max_info_secant(delta, s.beta, tx, a, b, r, i0, tol)
        if root is None:
            root = _increasing_root(lambda v: _betadiff(v, delta, s.beta, tx, a, b, r), i0, 10 * i0, tol,
                                    "information")
        n_i = root * tx
    y = gsprob([0.0, delta], n_i, a, b, r)
    return {"n_i": n_i, "upper_prob": y["probhi"], "lower_prob": None if s.test_type == 1 else y["problo"],
            "en": y["en"]}


def native_design(s: _Spec) -> dict:
    """Bounds and sizes like ``gsDesign::gsDesign`` (with ``delta = 0, n.fix = 1``): ``native_bounds``
    followed by ``native_sizes``, merged into one dict (``falsepos`` as gsDesign reports it)."""
    bnd = native_bounds(s)
    out = dict(bnd)
    out.update(native_sizes(s, bnd))
    return out


def _beta_spending(s: _Spec, delta: float) -> dict:
    """Test types 3 and 4 (gsDesign's gsDType3 / gsDType4): lower bounds spend beta at the design drift."""
    k, tol, r = s.k, s.tol, s.r
    n_fix = 1.0
    timing = s.timing
    low20 = np.full(k, -EXTREMEZ)
    given = s.n_i is not None
    n_i = s.n_i
    tt = s.test_type
    up = s.upper
    out: dict = {}
    falsepos = _incr(up(s.alpha, timing))
    falseneg = _incr(s.lower(s.beta, timing))

    def bracket(bb, ilow, ihigh):
        while 0 > _betadiff1(ihigh, delta, timing, falseneg, bb, tol, r):
            if ihigh > 5 * n_fix:
                raise RuntimeError("design: unable to derive the sample size (gsDesign's bracket search exceeded "
                                   "5 times the fixed-design information)")
            ilow, ihigh = ihigh, ihigh * 1.2
        return ilow, ihigh

    if tt == 4:
        if not given:
            x0 = gsbound1(0.0, timing, low20, falsepos, tol, r, lower=False)
            x0b = x0["b"]
            n_i, a, up1, lo1 = _type4_search(delta, timing, falseneg, x0b, tol, r, n_fix)
            # at theta = 0 the recursion depends on information ratios only: the upper pass's crossing
            # probabilities are gsDesign's fpnb (gsprob(0, n.I, -20, b)) to rounding error
            y0 = gsprob(0.0, n_i, a, x0b, r)
            en0 = float(n_i @ (y0["problo"][:, 0] + y0["probhi"][:, 0]))
            en0 += n_i[-1] * (1 - y0["powr"][0] - y0["problo"][:, 0].sum())
            out.update(upper=x0b, lower=a, n_i=n_i, upper_prob=np.column_stack((y0["probhi"][:, 0], up1)),
                       lower_prob=np.column_stack((y0["problo"][:, 0], lo1)),
                       en=np.array([en0, float(n_i @ (up1 + lo1) + n_i[-1] * (1 - up1.sum() - lo1.sum()))]),
                       falsepos=x0["achieved"].copy(),
                       lower_spend=falseneg)
            return out
        else:
            b = gsbound1(0.0, n_i, low20, falsepos, tol, r, lower=False)["b"]
            x2b = gsbound1(-delta, n_i, -b, falseneg, tol, r)["b"].copy()
            if -x2b[-1] > b[-1] - tol:
                x2b[-1] = -b[-1]
            a = -x2b
        fpnb = gsprob(0.0, n_i, low20, b, r)["probhi"][:, 0]
        y = gsprob([0.0, delta], n_i, a, b, r)
        out.update(upper=b, lower=a, n_i=n_i, upper_prob=y["probhi"], lower_prob=y["problo"], en=y["en"],
                   falsepos=fpnb, lower_spend=falseneg)
        return out

    # test type 3: binding lower bound; at observed information gsDType3a / gsDType3b
    if given:
        res = _type3_observed(s, delta, n_i, falsepos, falseneg)
        if res["k"] < k:  # gsDesign drops looks after the one where the power target is already met
            out["k"] = res["k"]
        out.update({key: val for key, val in res.items() if key != "k"})
        return out
    trueneg = np.full(k, (1 - s.alpha) / k)
    x1 = gsbound(timing, trueneg, falsepos, tol, r)
    ilow, ihigh = bracket(x1["b"], n_fix / 3, 1.2 * n_fix)
    info, a, b = _gsI1(delta, timing, falseneg, x1["b"], ilow, ihigh, tol, r)
    x3 = gsprob(0.0, info, a, b, 18)
    flag = abs(float(x3["powr"][0]) - s.alpha)
    jj = 0
    while flag > tol and jj < 100:
        x4b = gsbound1(0.0, info, np.concatenate((a[:-1], [-EXTREMEZ])), falsepos)["b"]
        ilow, ihigh = bracket(x4b, n_fix / 3, 1.2 * n_fix)
        info, a, b = _gsI1(delta, timing, falseneg, x4b, ilow, ihigh, tol, r)
        x3 = gsprob(0.0, info, a, b, 18)
        flag = float(np.max(np.abs(np.concatenate(([x3["powr"][0] - s.alpha], falsepos - x3["probhi"][:, 0])))))
        jj += 1
    y = gsprob([0.0, delta], info, a, b, r)
    out.update(upper=b, lower=a, n_i=info, upper_prob=y["probhi"], lower_prob=y["problo"], en=y["en"],
               falsepos=x3["probhi"][:, 0], lower_spend=falseneg)
    return out


def _type3b(alpha, k, timing, n_i, delta, falsepos, falseneg, tol, r):
    """gsDesign's ``gsDType3b``: binding beta-spending bounds at given information (transcribed)."""
    trueneg = np.full(k, (1 - alpha) / k)
    x1b = gsbound(timing, trueneg, falsepos, tol, r)["b"]
    if k == 1:
        a, b = x1b.copy(), x1b.copy()
    else:
        x2b = gsbound1(-delta, n_i, -x1b, falseneg, tol, r)["b"].copy()
        x2b[-1] = -x1b[-1]
        a, b = -x2b, x1b
        powr = float(gsprob(0.0, n_i, a, b, r)["powr"][0])
        flag = tol + 1
        while flag > tol:
            aold, bold, alphaold = a, b, powr
            x4b = gsbound1(0.0, n_i, np.concatenate((a[:-1], [-EXTREMEZ])), falsepos)["b"]
            x2b = gsbound1(-delta, n_i, -x4b, falseneg, tol, r)["b"]
            a, b = -x2b, x4b  # (gsDesign's "x2$a[k] <- x2$b[k]" is overwritten before use)
            powr = float(gsprob(0.0, n_i, a, b)["powr"][0])
            flag = float(np.max(np.abs(np.concatenate((a - aold, b - bold, [alphaold - powr])))))
    y = gsprob([0.0, delta], n_i, a, b, r)
    return {"upper": b, "lower": a, "n_i": n_i, "upper_prob": y["probhi"], "lower_prob": y["problo"], "en": y["en"],
            "falsepos": y["probhi"][:, 0], "lower_spend": falseneg}


def _type3_observed(s: _Spec, delta, n_i, falsepos, falseneg) -> dict:
    """gsDesign's ``gsDType3a``: ``gsDType3b``, then, if alpha is not fully spent, stop at the look where the
    power target is reached and spend the rest of alpha and beta there."""
    k, timing = s.k, s.timing
    res = _type3b(s.alpha, k, timing, n_i, delta, falsepos, falseneg, s.tol, s.r)
    res["k"] = k
    if res["upper_prob"][:, 0].sum() > s.alpha - s.tol:
        return res
    aspend = s.upper(s.alpha, timing)
    bspend = s.lower(s.beta, timing)
    pwr = np.cumsum(res["upper_prob"][:, 1])
    hit = np.flatnonzero(pwr > 1 - s.beta - s.tol)
    i = int(hit[0]) + 1 if hit.size else k
    fp = _incr(np.concatenate((aspend[: i - 1], [s.alpha])))
    fn = _incr(np.concatenate((bspend[: i - 1], [s.beta])))
    res = _type3b(s.alpha, i, timing[:i], n_i[:i], delta, fp, fn, s.tol, s.r)
    res["k"] = i
    return res
