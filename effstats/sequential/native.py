"""Native group-sequential computations: Armitage–McPherson–Rowe recursive numerical integration.

The sub-density of the z-statistic among paths that have not stopped is propagated look by look
on Jennison & Turnbull's (2000, ch. 19) grid: ``6r - 1`` points spaced for the normal tails,
Simpson weights, ``r = 18`` as in gsDesign. Boundaries are solved from the error spent at each
look by the same Newton iteration and stopping rule as gsDesign's C code (``gsbound``,
``gsbound1``), and one-dimensional searches (Wang–Tsiatis constants, maximum information) use
R's ``zeroin`` (Brent) step for step, so that this backend reproduces gsDesign to rounding error
rather than only to the tolerance of either implementation.

With hundreds of looks (a batch adds less than 1/144 of the information so far) the r = 18 grid
no longer resolves the density of one increment; :func:`effstats.sequential.design` then raises
``r`` and the recursion rescales each transition to its exact probability (``conserve``), which
keeps it stable where gsDesign's unmodified scheme overflows. Below that regime nothing changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["gridpts", "gsprob", "gsbound", "gsbound1", "zeroin", "wt_constant", "native_design"]

EXTREMEZ = 20.0
_RT2PI_H = 2.506628275  # gsDesign's constant in h1/hupdate/gsbound1
_RT2PI_B = 2.506628274631  # gsDesign's constant in gsbound
_DBL_EPS = np.finfo(float).eps


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


def gridpts(r: int, mu: float, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid points and Simpson weights on [a, b] centred at ``mu`` (Jennison & Turnbull p. 349).

    Returns
    -------
    z, w : arrays of shape (m,)
        Odd positions are interval mid-points; a grid that collapses to one point has weight 0.
    """
    zt = mu + _grid_offsets(r)
    first = zt[0]
    if first <= a:
        z0 = a
    elif first >= b:
        return np.array([b]), np.array([0.0])
    else:
        z0 = first
    lo = max(1, int(np.searchsorted(zt, a, side="right")))  # first candidate > a (after the first point)
    hi = int(np.searchsorted(zt, b, side="left"))  # first candidate >= b
    if hi < lo:
        hi = lo
    if hi < zt.size:
        cand = np.append(zt[lo:hi], b)
    else:
        cand = zt[lo:]
    even = np.empty(cand.size + 1)
    even[0] = z0
    even[1:] = cand
    if even.size == 1:
        return even, np.array([0.0])
    d = np.diff(even)
    z = np.empty(2 * even.size - 1)
    z[0::2] = even
    z[1::2] = (even[1:] + even[:-1]) / 2
    w = np.empty_like(z)
    w[1::2] = 2 * d / 3
    w[0::2] = 0.0
    w[0:-1:2] += d / 6
    w[2::2] += d / 6
    return z, w


def _h1(theta: float, z: np.ndarray, w: np.ndarray, info: float) -> np.ndarray:
    x = z - theta * np.sqrt(info)
    return w * np.exp(-x * x / 2) / _RT2PI_H


def _hupdate(theta: float, w2: np.ndarray, i1: float, z1: np.ndarray, h: np.ndarray, i2: float, z2: np.ndarray,
             conserve: bool = False) -> np.ndarray:
    dk = i2 - i1
    rtd = np.sqrt(dk)
    # x = (z2 sqrt(I2) - z1 sqrt(I1) - theta dk) / sqrt(dk), built in place: this m2 x m1 kernel is the hot spot
    shift = z1 * (np.sqrt(i1) / rtd) + theta * dk / rtd
    x = np.subtract.outer(z2 * (np.sqrt(i2) / rtd), shift)
    np.multiply(x, x, out=x)
    np.multiply(x, -0.5, out=x)
    np.exp(x, out=x)
    scale = np.sqrt(i2) / rtd / _RT2PI_H
    if conserve:
        # Hundreds of looks make the transition kernel narrower than the grid's coarse tail spacing, and the
        # Simpson sum of a column can exceed the probability it approximates; errors then compound look
        # after look. Rescale each column to the exact probability of landing on the grid's support.
        got = (w2 @ x) * scale
        lo, hi = z2[0] * np.sqrt(i2) / rtd, z2[-1] * np.sqrt(i2) / rtd
        exact = ndtr(hi - shift) - ndtr(lo - shift)
        h = h * np.where(got > 0, exact / np.where(got > 0, got, 1.0), 0.0)
    return w2 * (x @ h) * scale


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

    Returns
    -------
    dict with ``problo``, ``probhi`` of shape (k, n_theta), ``powr`` (n_theta,) and ``en``
    (n_theta,), the expected information at stopping.
    """
    thetas = np.atleast_1d(np.asarray(theta, dtype=float))
    info = np.asarray(info, dtype=float)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    k = info.size
    plo = np.zeros((k, thetas.size))
    phi = np.zeros((k, thetas.size))
    for j, th in enumerate(thetas):
        mu = th * np.sqrt(info[0])
        plo[0, j] = ndtr(a[0] - mu)
        phi[0, j] = ndtr(mu - b[0])
        z1, w1 = gridpts(r, mu, a[0], b[0])
        h = _h1(th, z1, w1, info[0])
        for i in range(1, k):
            dk = info[i] - info[i - 1]
            rtd, rti, rtim1 = np.sqrt(dk), np.sqrt(info[i]), np.sqrt(info[i - 1])
            base = z1 * rtim1 + th * dk
            phi[i, j] = h @ ndtr((base - b[i] * rti) / rtd)
            plo[i, j] = h @ ndtr((a[i] * rti - base) / rtd)
            if i < k - 1:
                mu = th * rti
                z2, w2 = gridpts(r, mu, a[i], b[i])
                h = _hupdate(th, w2, info[i - 1], z1, h, info[i], z2, r > 18)
                z1 = z2
    powr = phi.sum(0)
    futile = plo.sum(0)
    iover = np.concatenate((np.minimum(info[:-1] + overrun, info[-1]), info[-1:]))
    en = iover @ (plo + phi) + info[-1] * (1 - powr - futile)
    return {"problo": plo, "probhi": phi, "powr": powr, "en": en}


def gsbound1(theta: float, info, a, probhi, tol: float = 1e-6, r: int = 18):
    """Upper bound with the given upper-crossing probabilities for drift ``theta`` and a fixed lower bound.

    A transcription of gsDesign's C ``gsbound1`` plus the R wrapper ``gsBound1`` (which lifts an
    upper bound that fell below the lower one).

    Returns
    -------
    dict with ``b`` (k,), ``problo`` (k,), ``probhi`` (k,) and ``error`` (0 when converged).
    """
    info = np.asarray(info, dtype=float)
    a = np.asarray(a, dtype=float)
    probhi = np.asarray(probhi, dtype=float)
    k = info.size
    b = np.zeros(k)
    problo = np.zeros(k)
    rtik = np.sqrt(info[0])
    mu = rtik * theta
    problo[0] = ndtr(a[0] - mu)
    b[0] = EXTREMEZ if probhi[0] <= 0 else _qnorm_upper(probhi[0], mu)
    err = 0
    if k > 1:
        z1, w1 = gridpts(r, mu, a[0], b[0])
        h = _h1(theta, z1, w1, info[0])
        for i in range(1, k):
            rtikm1, rtik = rtik, np.sqrt(info[i])
            mu = rtik * theta
            dk = info[i] - info[i - 1]
            rtd = np.sqrt(dk)
            btem2 = EXTREMEZ if probhi[i] <= 0 else _qnorm_upper(probhi[i], mu)
            base = z1 * rtikm1 + theta * dk
            plo = float(h @ ndtr((a[i] * rtik - base) / rtd))
            bdelta, j, btem = 1.0, 0, btem2
            while bdelta > tol and j < 20:
                j += 1
                btem = btem2
                xhi = (base - btem * rtik) / rtd
                phi = float(h @ ndtr(xhi))
                dphi = -float(h @ np.exp(-xhi * xhi / 2)) / _RT2PI_H * rtik / rtd
                bd = probhi[i] - phi
                if bd < dphi:
                    btem2 = btem + 1.0
                elif bd > -dphi:
                    btem2 = btem - 1.0
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 ends the loop, as in C
                        btem2 = btem + bd / dphi
                btem2 = min(max(btem2, -EXTREMEZ), EXTREMEZ)
                bdelta = abs(btem2 - btem)
            b[i] = btem
            problo[i] = plo
            if bdelta > tol:
                err = 1
            if i < k - 1:
                z2, w2 = gridpts(r, mu, a[i], b[i])
                h = _hupdate(theta, w2, info[i - 1], z1, h, info[i], z2, r > 18)
                z1 = z2
    out = {"b": b, "problo": problo, "probhi": probhi.copy(), "error": err}
    if err == 0 and np.min(b - a) < 0:
        bb = np.where(b < a, a, b)
        pr = gsprob(theta, info, a, bb, r)
        out.update(b=bb, probhi=pr["probhi"][:, 0], problo=pr["problo"][:, 0])
    return out


def gsbound(info, trueneg, falsepos, tol: float = 1e-6, r: int = 18):
    """Lower and upper bounds with given crossing probabilities under H0 (gsDesign's C ``gsbound``).

    Returns
    -------
    dict with ``a``, ``b`` (k,) and ``error``.
    """
    info = np.asarray(info, dtype=float)
    trueneg = np.asarray(trueneg, dtype=float)
    falsepos = np.asarray(falsepos, dtype=float)
    k = info.size
    a = np.zeros(k)
    b = np.zeros(k)
    a[0] = -EXTREMEZ if trueneg[0] <= 0 else float(ndtri(trueneg[0]))
    b[0] = EXTREMEZ if falsepos[0] <= 0 else _qnorm_upper(falsepos[0])
    z1, w1 = gridpts(r, 0.0, a[0], b[0])
    h = _h1(0.0, z1, w1, info[0])
    rtik = np.sqrt(info[0])
    err = 0
    for i in range(1, k):
        rtikm1, rtik = rtik, np.sqrt(info[i])
        rtd = np.sqrt(info[i] - info[i - 1])
        atem2 = -EXTREMEZ if trueneg[i] <= 0 else float(ndtri(trueneg[i]))
        btem2 = EXTREMEZ if falsepos[i] <= 0 else _qnorm_upper(falsepos[i])
        adelta = bdelta = 1.0
        j = 0
        atem, btem = atem2, btem2
        zr = z1 * rtikm1
        while (adelta > tol or bdelta > tol) and j < EXTREMEZ:
            j += 1
            atem, btem = atem2, btem2
            xlo = (zr - atem * rtik) / rtd
            xhi = (zr - btem * rtik) / rtd
            plo = float(h @ ndtr(-xlo))
            phi = float(h @ ndtr(xhi))
            dplo = float(h @ np.exp(-xlo * xlo / 2)) / _RT2PI_B * rtik / rtd
            dphi = -float(h @ np.exp(-xhi * xhi / 2)) / _RT2PI_B * rtik / rtd
            ad = trueneg[i] - plo
            if ad > dplo:
                atem2 = atem + 1.0
            elif ad < -dplo:
                atem2 = atem - 1.0
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    atem2 = atem + ad / dplo
            atem2 = min(max(atem2, -EXTREMEZ), EXTREMEZ)
            bd = falsepos[i] - phi
            if bd < dphi:
                btem2 = btem + 1.0
            elif bd > -dphi:
                btem2 = btem - 1.0
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    btem2 = btem + bd / dphi
            btem2 = min(max(btem2, -EXTREMEZ), EXTREMEZ)
            if atem2 > btem2:
                atem2 = btem2
            adelta = abs(atem2 - atem)
            bdelta = abs(btem2 - btem)
        a[i], b[i] = atem, btem
        if adelta > tol or bdelta > tol:
            err = 1
            break
        if i < k - 1:
            z2, w2 = gridpts(r, 0.0, a[i], b[i])
            h = _hupdate(0.0, w2, info[i - 1], z1, h, info[i], z2, r > 18)
            z1 = z2
    return {"a": a, "b": b, "error": err}


def zeroin(f: Callable[[float], float], lower: float, upper: float, tol: float = 1e-6, maxiter: int = 1000,
           f_lower: float | None = None, f_upper: float | None = None) -> float:
    """R's ``uniroot`` (``R_zeroin2``, Brent's method) step for step, so roots match R's to the last bit."""
    fa = f(lower) if f_lower is None else f_lower
    fb = f(upper) if f_upper is None else f_upper
    if fa * fb > 0:
        raise ValueError("f() values at end points not of opposite sign")
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
    return b


def wt_constant(delta: float, alpha: float, two_sided: bool, timing, tol: float = 1e-6, r: int = 18) -> float:
    """Constant ``c`` of the Wang–Tsiatis bound ``c * t**(delta - 0.5)`` with total upper error ``alpha`` (gsDesign ``WT``)."""
    timing = np.asarray(timing, dtype=float)
    shape = timing ** (delta - 0.5)
    low = np.full(timing.size, -EXTREMEZ)

    def diff(c: float) -> float:
        a = -c * shape if two_sided else low
        return alpha - float(gsprob(0.0, timing, a, c * shape, r)["probhi"].sum())

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


def _incr(x: np.ndarray) -> np.ndarray:
    return np.diff(np.concatenate(([0.0], x)))


def _betadiff(imax, theta, beta, time, a, b, r):
    return beta - 1 + float(gsprob(theta, time * imax, a, b, r)["probhi"].sum())


def _betadiff1(imax, theta, tx, problo, b, tol, r):
    info = tx * imax
    x = gsbound1(-theta, info, -b, problo, tol, r)
    y = gsprob(theta, info, -x["b"], b, r)
    return float(problo.sum() - 1 + y["powr"][0])


def _gsI1(theta, info, beta, b, ilow, ihigh, tol, r):
    tx = info / info[-1]
    root = zeroin(lambda v: _betadiff1(v, theta, tx, beta, b, tol, r), ilow, ihigh, tol)
    x = gsbound1(-theta, root * tx, -b, beta, tol, r)
    bb = x["b"].copy()
    bb[-1] = -b[-1]
    return root * tx, -bb, b


def native_design(s: _Spec) -> dict:
    """Derive a design like ``gsDesign::gsDesign`` (with ``delta = 0, n.fix = 1``).

    Returns a dict with ``upper``, ``lower`` (None for one-sided), ``n_i`` (information relative to
    the fixed design), ``upper_prob`` / ``lower_prob`` (k, 2) at theta = (0, delta), ``en`` (2,),
    ``falsepos`` (incremental upper error at theta = 0 ignoring a non-binding lower bound),
    ``lower_spend`` (incremental planned lower spending) and ``delta``.
    """
    k, tol, r = s.k, s.tol, s.r
    n_fix = 1.0
    delta = abs(ndtri(s.alpha) + ndtri(s.beta))
    timing = s.timing
    low20 = np.full(k, -EXTREMEZ)
    given = s.n_i is not None
    n_i = s.n_i if given else None
    out: dict = {"delta": float(delta)}
    tt = s.test_type
    up = s.upper

    def solve_ni(a, b):
        root = zeroin(lambda v: _betadiff(v, delta, s.beta, timing, a, b, r), n_fix, 10 * n_fix, tol)
        return root * timing

    if up.is_classic and tt > 2:
        raise ValueError("spending: Wang-Tsiatis, Pocock and O'Brien-Fleming bounds are not available for asymmetric testing (test_type 3-6)")

    if tt == 1:
        a = low20
        if up.is_classic:
            d = up.wt_delta
            c = wt_constant(d, s.alpha, False, timing, tol, r)
            b = c * timing ** (d - 0.5)
            falsepos = gsprob(0.0, timing, a, b, r)["probhi"][:, 0]
        else:
            falsepos = _incr(up(s.alpha, timing))
            b = gsbound1(0.0, timing, a, falsepos, tol, r)["b"]
        if not given:
            n_i = solve_ni(a, b)
        y = gsprob([0.0, delta], n_i, a, b, r)
        out.update(upper=b, lower=None, n_i=n_i, upper_prob=y["probhi"], lower_prob=None, en=y["en"],
                   falsepos=falsepos, lower_spend=None)
        return out

    if tt in (2, 5):
        if up.is_classic:
            d = up.wt_delta
            c = wt_constant(d, s.alpha, True, timing, tol, r)
            b = c * timing ** (d - 0.5)
            a = -b
            falsepos = gsprob(0.0, timing, a, b, r)["probhi"][:, 0]
            trueneg = falsepos
            if not given:
                n_i = solve_ni(a, b)
        else:
            falsepos = _incr(up(s.alpha, timing))
            if tt == 5:
                trueneg = _incr(s.lower(s.astar, timing))
            else:
                trueneg = falsepos
            sym = tt == 2 or s.astar < 1 - s.alpha
            if not given:
                x = gsbound(timing, trueneg, falsepos, tol, r)
                alpha = falsepos.sum()
                i0 = ((ndtri(alpha) + ndtri(s.beta)) / delta) ** 2
                tx = timing / timing[-1]
                root = zeroin(lambda v: _betadiff(v, delta, s.beta, tx, x["a"], x["b"], r), i0, 10 * i0, tol)
                n_i = root * tx
                a, b = x["a"].copy(), x["b"]
                if not sym:
                    a[-1] = b[-1]
            else:
                x = gsbound(n_i, trueneg, falsepos, tol, r)
                a, b = x["a"], x["b"]
        y = gsprob([0.0, delta], n_i, a, b, r)
        if np.max(np.abs(falsepos - y["probhi"][:, 0])) > tol:
            raise ValueError("False positive rates not achieved")
        out.update(upper=b, lower=a, n_i=n_i, upper_prob=y["probhi"], lower_prob=y["problo"], en=y["en"],
                   falsepos=falsepos, lower_spend=trueneg)
        return out

    if tt == 6:
        if given:
            timing = n_i / s.max_info_plan
        falsepos = _incr(up(s.alpha, timing))
        b = gsbound1(0.0, timing, low20, falsepos, tol, r)["b"]
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
        if not given:
            n_i = solve_ni(a, b)
        fpnb = gsprob(0.0, n_i, low20, b, r)["probhi"][:, 0]
        y = gsprob([0.0, delta], n_i, a, b, r)
        out.update(upper=b, lower=a, n_i=n_i, upper_prob=y["probhi"], lower_prob=y["problo"], en=y["en"],
                   falsepos=fpnb, lower_spend=trueneg)
        return out

    # beta-spending designs (test types 3 and 4)
    falsepos = _incr(up(s.alpha, timing))
    falseneg = _incr(s.lower(s.beta, timing))
    if tt == 4:
        if not given:
            x0b = gsbound1(0.0, timing, low20, falsepos, tol, r)["b"]
            ilow, ihigh = 0.98 * n_fix, 1.2 * n_fix
            while 0 > _betadiff1(ihigh, delta, timing, falseneg, x0b, tol, r):
                if ihigh > 5 * n_fix:
                    raise ValueError("Unable to derive sample size")
                ilow, ihigh = ihigh, ihigh * 1.2
            n_i, a, b = _gsI1(delta, timing, falseneg, x0b, ilow, ihigh, tol, r)
        else:
            b = gsbound1(0.0, n_i, low20, falsepos, tol, r)["b"]
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

    def bracket(bb):
        ilow, ihigh = n_fix / 3, 1.2 * n_fix
        while 0 > _betadiff1(ihigh, delta, timing, falseneg, bb, tol, r):
            if ihigh > 5 * n_fix:
                raise ValueError("Unable to derive sample size")
            ilow, ihigh = ihigh, ihigh * 1.2
        return ilow, ihigh

    ilow, ihigh = bracket(x1["b"])
    info, a, b = _gsI1(delta, timing, falseneg, x1["b"], ilow, ihigh, tol, r)
    x3 = gsprob(0.0, info, a, b, 18)
    flag = abs(float(x3["powr"][0]) - s.alpha)
    jj = 0
    while flag > tol and jj < 100:
        x4b = gsbound1(0.0, info, np.concatenate((a[:-1], [-EXTREMEZ])), falsepos)["b"]
        ilow, ihigh = bracket(x4b)
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
