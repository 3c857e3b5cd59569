"""Armitage–McPherson–Rowe recursive numerical integration on Jennison & Turnbull's grid, as gsDesign computes it.

The sub-density of the z-statistic among paths that have not stopped is propagated look by look: the grid
(:func:`gridpts`), the crossing probabilities at given bounds (:func:`gsprob`) and the bounds solved from the error
spent at each look (:func:`gsbound1`, :func:`gsbound`). Public path: :mod:`effstats.sequential.native`.
"""
from __future__ import annotations

import importlib
import math
from bisect import bisect_left, bisect_right
from functools import lru_cache

import numpy as np
from scipy.special import ndtr, ndtri

EXTREMEZ = 20.0
_RT2PI_H = 2.506628275  # gsDesign's constant in h1/hupdate/gsbound1
_RT2PI_B = 2.506628274631  # gsDesign's constant in gsbound
_DBL_EPS = np.finfo(float).eps
_dot = np.dot
_exp = np.exp
# (the hot loops pass a ufunc's output positionally, f(x, y, out): without keywords to parse a call on these grids'
# ~50-200 points takes ~40 ns less, of ~0.3-0.8 us)
# -1/2 as a 0-d array: numpy's ufuncs take it without converting a Python scalar on each call (~0.15 us of ~0.5 us
# at the grids' sizes, in loops that make a few dozen such calls a look)
_MHALF = np.array(-0.5)
_MHALF.setflags(write=False)
# -1/2 as a vector, sliced to a grid's length once a look: a ufunc takes an operand of its output's shape faster still
# than a 0-d one (0.26 against 0.43 us at 150 points, numpy 1.24, where a 0-d operand goes through value-based
# casting); a grid has at most 2 (6 r - 1) - 1 = 957 points (r <= 80)
_MHALF_ROW = np.full(960, -0.5)
_MHALF_ROW.setflags(write=False)


def _mhalf(shape) -> np.ndarray:
    """-1/2 in an array of ``shape`` (read-only; a view of ``_MHALF_ROW`` where it is long enough)."""
    if isinstance(shape, int) and shape <= _MHALF_ROW.size:
        return _MHALF_ROW[:shape]
    return np.full(shape, -0.5)


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
def _tail_cut(r: int) -> float:
    """The last candidate offset below -5.9, where a pass with no lower bound starts its grids (:func:`gsbound1`)."""
    off = _grid_offsets(r).tolist()
    return max(v for v in off if v < -5.9)


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
    fz, fw, offl = _grid_full(r)
    n = len(offl)
    first = mu + offl[0]
    if first >= b:
        return np.array([b]), np.array([0.0])
    z0 = a if first <= a else first
    # bisection on the offsets as a list (a fraction of searchsorted's call on a scalar); NaN sorts last, as there
    al, bl = a - mu, b - mu
    lo = (bisect_right(offl, al) if al == al else n) or 1  # first candidate > a (after the first point)
    hi = bisect_left(offl, bl) if bl == bl else n  # first candidate >= b
    if hi < lo:
        hi = lo
    if lo + 2 <= hi < n:
        # the usual case, >= 2 candidates strictly inside: the interior is a slice of the precomputed full grid
        # (a few array operations); only the two end intervals are built here
        m2 = 2 * (hi - lo + 2) - 1
        z = np.empty(m2)
        w = np.empty(m2)
        zi = z[2:-2]
        if mu:
            zi.fill(mu)  # (a filled operand: faster than a Python scalar's casting, see _MHALF_ROW)
            np.add(fz[2 * lo: 2 * hi - 1], zi, out=zi)
        else:  # (every pass under H0: a copy, a third of an addition's time)
            zi[...] = fz[2 * lo: 2 * hi - 1]
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


def _shift_rows(z: np.ndarray, c: float) -> np.ndarray:
    """The rows ``[1, z * c]`` of shape (2, n): the second is a look's shifts (the Newton steps' ``base``), the pair the
    right factor of :func:`_outer_diff` (built once a look, in place, for both)."""
    rows = np.empty((2, z.size))
    rows[0] = 1.0
    shift = rows[1]
    shift.fill(c)  # (a filled operand of z's shape: faster than a Python scalar's casting, see _MHALF_ROW)
    np.multiply(z, shift, shift)
    return rows


def _outer_diff(u: np.ndarray, u_scale: float, rows: np.ndarray) -> np.ndarray:
    """``np.subtract.outer(u * u_scale, v)`` for ``rows = [1, v]`` (:func:`_shift_rows`) as the product of an (m, 2)
    and a (2, n) matrix ``[u * u_scale, -1] @ [1, v]``: the same numbers (each entry is one product by 1, exact, and
    one rounded sum), at about 60 % of the time of numpy's broadcast loop at these sizes (m, n ~ 100-250). The left
    factor is built as a C-ordered (2, m) array and transposed (two row writes instead of strided column ones)."""
    left = np.empty((2, u.size))
    lu = left[0]
    lu.fill(u_scale)  # (see _shift_rows)
    np.multiply(u, lu, lu)
    left[1] = -1.0
    return left.T @ rows


def _vector_exp() -> bool:
    """Whether numpy's float64 ``exp`` runs in SIMD on this CPU: numpy vectorises it with AVX-512 only (numpy's
    loops_exponent_log dispatch), elsewhere it calls the C library's scalar ``exp`` element by element. Read from
    numpy's private table of CPU features; a numpy without it is taken as scalar (both kernels give the same designs
    to ~1e-13: only the speed depends on the answer)."""
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, numpy 1
        try:
            features = importlib.import_module(module).__cpu_features__
        except (ImportError, AttributeError):
            continue
        return bool(features.get("AVX512F"))
    return False


# The kernels' rows on the grid's equally spaced middle are factored (:func:`_run_dot`) only where numpy's exp is
# scalar: an entry's exp then costs ~5 ns, which the factored product saves for about 15 more numpy calls; with a
# vectorised exp (~0.5 ns an entry) those calls cost more than the exp they save, and the direct kernel is faster
_FACTOR_KERNELS = not _vector_exp()
# ... and where that saves at least this many kernel entries
_RUN_SAVED_MIN = 3000
# ... and where its factors' exponents stay below this: no overflow, and their rounding error (the exponent times the
# machine epsilon) under 4e-14 of an entry
_RUN_EXP_MAX = 300.0


def _grid_run(r: int, mu: float, z: np.ndarray) -> tuple[int, int] | None:
    """The rows ``[j0, j1)`` of a :func:`gridpts` grid centred at ``mu`` that lie on the equally spaced middle of the
    candidate grid (offsets -3 to 3, candidates and mid-points), or None where there are too few for
    :func:`_run_dot`."""
    m = z.size
    if m < 44:
        return None
    offl = _grid_full(r)[2]
    v = float(z[2]) - mu  # the third point is a candidate (gridpts: the first candidate inside)
    lo = bisect_left(offl, v - 1e-9)
    if lo >= len(offl) or abs(offl[lo] - v) > 1e-9:
        return None
    j0 = 2 + max(2 * (r - 1 - lo), 0)
    j1 = min(m - 2, 2 * (5 * r - lo) + 1)  # row j of the interior holds the full grid's point 2 lo + j - 2
    return (j0, j1) if j1 - j0 >= 40 else None


def _run_dot(z2: np.ndarray, r2: float, run: tuple[int, int], rows: np.ndarray, h: np.ndarray) -> np.ndarray | None:
    """``K @ h`` for the kernel ``K_ij = exp(-(a_i - b_j)^2 / 2)``, ``a = z2 r2`` and ``b = rows[1]``, where
    ``z2[j0:j1]`` (``run``) is equally spaced: the run's rows in blocks of ``T``, ``a_i = A_s + t`` (``A_s`` the
    block's first row, ``t`` the offset within the block), so that

        exp(-(a_i - b_j)^2 / 2) = exp(-(A_s - b_j)^2 / 2) exp(t b_j - t^2 / 2) exp(-t A_s)

    and the run's part of ``K @ h`` is an (S, n) by (n, T) matrix product, ``exp`` on S + T rows instead of S T
    (``T ~ sqrt(j1 - j0)``). The blocks' first rows and the rows outside the run are the direct kernel's
    (:func:`_outer_diff`). The factors' exponents are at most ``|t| max(|a|, |b|)`` (``t`` under half a unit of
    ``r2``), so the entries agree with the direct kernel's to ~1e-14 relative. None where that saves fewer than
    ``_RUN_SAVED_MIN`` entries or the exponents could exceed ``_RUN_EXP_MAX`` (the caller then builds the direct
    kernel).
    """
    j0, j1 = run
    m, n = z2.size, h.size
    p = j1 - j0
    tn = math.isqrt(p - 1) + 1  # T = ceil(sqrt(p))
    ns = (p - 1) // tn + 1  # S blocks
    if (p - ns - tn) * n < _RUN_SAVED_MIN:
        return None
    b = rows[1]
    zj0 = float(z2[j0])
    span = (tn - 1) * (float(z2[j0 + 1]) - zj0) * r2
    big = max(abs(float(b[0])), abs(float(b[-1])), abs(zj0) * r2, abs(float(z2[j1 - 1])) * r2)
    if not span * big < _RUN_EXP_MAX:
        return None
    nd = ns + m - p
    # the left factor's rows: [d, -1] for the direct rows d (the blocks' first rows, then the rows outside the run),
    # giving d - b_j, and [-t^2 / 2, t], giving the exponents t b_j - t^2 / 2
    left = np.empty((2, nd + tn))
    l0, l1 = left
    d = l0[:nd]
    np.concatenate((z2[j0:j1:tn], z2[:j0], z2[j1:]), out=d)
    d *= r2
    l1[:nd] = -1.0
    t = l1[nd:]
    np.subtract(z2[j0: j0 + tn], zj0, out=t)
    t *= r2
    tsq = l0[nd:]
    np.multiply(t, t, out=tsq)
    tsq *= _MHALF
    x = left.T @ rows
    xd = x[:nd]
    np.multiply(xd, xd, out=xd)
    xd *= _MHALF
    _exp(x, x)
    mst = (x[:ns] * h) @ x[nd:].T  # (S, T): sum_j exp(-(A_s - b_j)^2 / 2) h_j exp(t b_j - t^2 / 2)
    e = np.multiply.outer(d[:ns], t)
    np.negative(e, out=e)
    _exp(e, out=e)
    mst *= e
    out = np.empty(m)
    out[j0:j1] = mst.ravel()[:p]
    if nd > ns:
        rest = x[ns:nd].dot(h)
        out[:j0] = rest[:j0]
        out[j1:] = rest[j0:]
    return out


def _h1(theta: float, z: np.ndarray, w: np.ndarray, info: float) -> np.ndarray:
    x = z - theta * math.sqrt(info) if theta else z
    y = x * x
    y *= _MHALF  # = -x * x / 2 exactly
    _exp(y, y)
    y *= w
    y /= _RT2PI_H
    return y


def _hupdate(theta: float, w2: np.ndarray, i1: float, z1: np.ndarray, h: np.ndarray, i2: float, z2: np.ndarray,
             conserve: bool = False, sym: bool = False, rows: np.ndarray | None = None,
             r: int | None = None) -> np.ndarray:
    """Sub-density on the grid ``z2`` of look 2 from the sub-density ``h`` on ``z1`` of look 1 (one m2 x m1 kernel).

    ``sym``: the grids and ``h`` are symmetric about 0 and ``theta = 0`` (two-sided symmetric bounds under H0), so
    the new density is too: only the rows z2 >= 0 are computed (half the kernel) and mirrored. The grids are
    symmetric to rounding (a few ulp), so this agrees with the full kernel to ~1e-16 relative.

    ``rows``: the caller's :func:`_shift_rows` of ``z1`` at this look (its Newton steps' ``base``, the same numbers),
    built here when None.

    ``r``: the grid size of ``z2`` (from :func:`gridpts` centred at ``theta sqrt(i2)``); given, the rows on the grid's
    equally spaced middle enter the product by :func:`_run_dot` (to ~1e-14 relative of the direct kernel's) where
    numpy's exp is scalar (``_FACTOR_KERNELS``); elsewhere the direct kernel is the faster one, and ``r`` is unused.
    """
    dk = i2 - i1
    rtd = dk ** 0.5
    r2 = i2 ** 0.5 / rtd
    if not _FACTOR_KERNELS:
        r = None
    # x = (z2 sqrt(I2) - z1 sqrt(I1) - theta dk) / sqrt(dk), built in place: this m2 x m1 kernel is the hot spot
    if rows is None:
        rows = _shift_rows(z1, (i1 ** 0.5) / rtd)
        if theta:
            rows[1] += theta * dk / rtd
    shift = rows[1]
    m2 = z2.size
    if sym and not conserve and not theta and m2 % 2 == 1 and m2 >= 3:
        mid = m2 // 2
        run = None if r is None else _grid_run(r, 0.0, z2)
        half = None
        if run is not None and run[1] - max(run[0], mid) >= 40:  # the rows z2 >= 0 on the grid's middle
            half = _run_dot(z2[mid:], r2, (max(run[0], mid) - mid, run[1] - mid), rows, h)
        if half is None:
            x = _outer_diff(z2[mid:], r2, rows)
            np.multiply(x, x, out=x)
            x *= _MHALF
            _exp(x, out=x)
            half = x.dot(h)
        out = np.empty(m2)
        out[mid:] = half
        out[:mid] = half[mid:0:-1]
        out *= w2
        out *= r2 / _RT2PI_H
        return out
    if r is not None and not conserve:
        run = _grid_run(r, theta * i2 ** 0.5, z2)
        if run is not None:
            out = _run_dot(z2, r2, run, rows, h)
            if out is not None:
                out *= w2
                out *= r2 / _RT2PI_H
                return out
    x = _outer_diff(z2, r2, rows)
    np.multiply(x, x, x)  # (the same squares as np.square's, at about half its time on these matrices)
    x *= _MHALF
    _exp(x, x)
    scale = r2 / _RT2PI_H
    if conserve:
        # Hundreds of looks make the transition kernel narrower than the grid's coarse tail spacing, and the
        # Simpson sum of a column can exceed the probability it approximates; errors then compound look
        # after look. Rescale each column to the exact probability of landing on the grid's support.
        got = _dot(w2, x) * scale
        lo, hi = z2[0] * r2, z2[-1] * r2
        exact = ndtr(hi - shift) - ndtr(lo - shift)
        h = h * np.where(got > 0, exact / np.where(got > 0, got, 1.0), 0.0)
    out = x.dot(h)  # the BLAS numpy links (OpenBLAS in its wheels): 2.4x einsum's loop at m ~ 100-250
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

    See Also
    --------
    effstats.sequential.native.gsbound : The bounds that spend given error probabilities.
    effstats.sequential.GroupSequentialDesign.crossing_probability : The same probabilities for a design.

    References
    ----------
    Armitage, P., McPherson, C. K. & Rowe, B. C. (1969). Repeated significance tests on accumulating data.
    *Journal of the Royal Statistical Society, Series A*, 132(2), 235–244.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 19, numerical computations).

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
            rows = _shift_rows(z1, rtl[i - 1] / rtd)
            base = rows[1]
            if th:
                base += th * dk / rtd
            phi[i, j] = _dot(h, ndtr(base - bl[i] * rtl[i] / rtd))
            plo[i, j] = _dot(h, ndtr(al[i] * rtl[i] / rtd - base))
            if i < k - 1:
                mu = th * rtl[i]
                z2, w2 = gridpts(r, mu, al[i], bl[i])
                h = _hupdate(th, w2, info[i - 1], z1, h, info[i], z2, conserve, sym, rows, r)
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
    x = np.empty(base.size)
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
    # the bound's shift and -1/2 as vectors of the grid's length (see _MHALF_ROW): filling one costs less than a 0-d
    # operand's casting
    shift = np.empty(base.size)
    fill = shift.fill
    mhalf = _mhalf(base.size)
    s1 = s2 = dphi = 0.0  # the last two steps' sizes (0: none) and the last derivative
    while bdelta > tol and j < 20:
        j += 1
        btem = btem2
        fill(btem * scale)
        sub(base, shift, x)
        ndtr(x, cdf)
        if s2 and s1 <= 1e-3 and s1 * s1 * s1 < 0.0625 * tol * s2 * s2 and dphi:
            # Newton's error squares each step: the next step, ~s1^3 / s2^2, is predicted well inside tol, so this is
            # likely the last evaluation, where only the crossing probability is used. The step from it with the
            # last derivative is that step to within exp(scale |x| s1) - 1 (a few % at most here): under tol / 4,
            # the step with this point's own derivative is under tol, so the iteration stops at this point
            # (gsDesign's answer and its crossing probability, as the full step gives them; the density row left
            # from the step before enters only the unused sum)
            phi = twodot(h).tolist()[0]
            if abs(target - phi) <= -0.25 * tol * dphi:
                return btem, phi, True
        mul(x, x, x)
        mul(x, mhalf, x)
        ex(x, dens)
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
        s2, s1 = s1, bdelta
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


def gsbound1(theta: float, info, a, probhi, tol: float = 1e-6, r: int = 18, lower: bool = True,
             last: bool = True):
    """Upper bound with the given upper-crossing probabilities for drift ``theta`` and a fixed lower bound.

    A transcription of gsDesign's C ``gsbound1`` plus the R wrapper ``gsBound1`` (which lifts an
    upper bound that fell below the lower one).

    Parameters
    ----------
    theta : float
        Drift per unit of information (0 under the null hypothesis).
    info : array of shape (k,)
        Statistical information at each look (increasing).
    a : array of shape (k,)
        Lower z-bounds (-20 everywhere for none).
    probhi : array of shape (k,)
        Probability of crossing the upper bound first at each look (the error spent there).
    tol : float, default=1e-6
        Tolerance of the Newton iteration on each bound.
    r : int, default=18
        Grid size.
    lower : bool, default=True
        Also compute the lower-crossing probabilities (not needed when ``a`` is -20 everywhere). ``False`` also ends
        the grids below at ``mu - 5.9`` (the candidate there) where ``a`` lies lower, which leaves the bounds and the
        upper crossings as they are to ~1e-10 of themselves.
    last : bool, default=True
        Solve the last look's bound. ``False`` leaves it and its upper-crossing probability NaN, for callers that
        replace them (gsDesign sets the last lower bound of a beta-spending or non-binding design to the upper one,
        and these passes solve the mirrored problem): the lower crossings, ``mass_last`` and ``dens`` are those of
        ``last=True``. Where an earlier bound falls below ``a`` the bound is solved all the same (gsDesign then
        recomputes the pass on the lifted bounds, which include it).

    Returns
    -------
    dict
        ``b`` (k,), ``problo`` (k,), ``probhi`` (k,, the targets, as gsDesign), ``achieved`` (k,, the
        upper-crossing probabilities at the returned bounds), ``error`` (0 when converged) and ``dens`` (for each
        look after the first, the sub-density entering it and its grid, ``(h, z)``; None where the bounds were
        lifted).

    See Also
    --------
    effstats.sequential.native.gsbound : Both bounds from the error spent under the null hypothesis.
    effstats.sequential.design : A whole design from a spending function.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 7, error spending; ch. 19, numerical computations).

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0 (C function
    ``gsbound1`` and R function ``gsBound1``).

    Examples
    --------
    >>> from effstats.sequential.native import gsbound1
    >>> res = gsbound1(0.0, [1 / 3, 2 / 3, 1.0], a=[-20, -20, -20], probhi=[0.001, 0.01, 0.014])
    >>> res["b"].round(4), res["achieved"].round(4)
    (array([3.0902, 2.3066, 2.0536]), array([0.001, 0.01 , 0.014]))
    """
    # a Python float: a numpy scalar drift would make every scalar operation of the Newton loops a numpy one, several
    # times slower (the same IEEE arithmetic)
    theta = float(theta)
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
    at_last = None
    conserve = r > 18
    dens = []
    if k > 1:
        infol = info.tolist()
        qs = ndtri(probhi).tolist()  # the unconditional quantiles that start each look's Newton iteration, at once
        if not lower:
            # no lower bound: the grids start at the candidate below mu - 5.9 (mu - 6.24 for r = 18) instead of
            # mu - 3 - 4 log r (gsDesign's first, -14.6), dropping about 15 % of each kernel's entries. The density
            # below holds less than 2e-9 of the mass (2.2e-10 for r = 18), and a path from there seldom crosses an
            # upper bound later, so the bounds move by less than ~1e-10 of themselves, far inside gsDesign's
            # tolerance (up to 1.5e-10 with a first look at 1 % of the information on finer grids, 1e-11 over 359
            # designs at r = 18); below the next candidate, -5.77, lie 4e-9
            cut = _tail_cut(r)
            al = [max(v, rtv * theta + cut) for v, rtv in zip(al, rt)]
        z1, w1 = gridpts(r, mu, al[0], float(b[0]))
        h = _h1(theta, z1, w1, infol[0])
        for i in range(1, k):
            dens.append((h, z1))
            rtik = rt[i]
            mu = rtik * theta
            dk = infol[i] - infol[i - 1]
            rtd = dk ** 0.5
            btem2 = EXTREMEZ if pl[i] <= 0 else mu - qs[i]
            rows = _shift_rows(z1, rt[i - 1] / rtd)  # the Newton steps' base, and the kernel's shifts
            base = rows[1]
            if theta:
                base += theta * dk / rtd
            scale = rtik / rtd
            if lower:
                xl = np.empty(base.size)
                xl.fill(al[i] * scale)  # (see _shift_rows)
                np.subtract(xl, base, xl)
                problo[i] = float(h.dot(ndtr(xl, xl)))
            if i == k - 1:
                mass = float(h.sum())  # the (Simpson) mass entering the last look
                at_last = (h, base, scale)
                if not last and not (err == 0 and (b[:i] < a[:i]).any()):
                    b[i] = achieved[i] = np.nan  # the caller's to set; a NaN lifts nothing below
                    break
            bi, achieved[i], ok = _newton_upper(h, base, scale, pl[i], btem2, tol, _RT2PI_H)
            if not ok and abs(achieved[i] - pl[i]) > tol:
                bi, achieved[i], ok = _bracketed_upper(h, base, scale, pl[i], tol)
            b[i] = bi
            if not ok:
                err = 1
            if i < k - 1:
                z2, w2 = gridpts(r, mu, al[i], bi)
                h = _hupdate(theta, w2, infol[i - 1], z1, h, infol[i], z2, conserve, rows=rows, r=r)
                z1 = z2
    out = {"b": b, "problo": problo, "probhi": probhi.copy(), "achieved": achieved, "error": err,
           "mass_last": mass if k > 1 else 1.0, "dens": dens}
    if err == 0 and (b - a).min() < 0:
        bb = np.where(b < a, a, b)
        if k > 1 and lower and not (b[:-1] < a[:-1]).any():
            # only the last bound is lifted (a beta-spending search below its root): the looks before are unchanged,
            # and the lower crossings never depend on the upper bound at their look, so gsDesign's gsprob pass on the
            # lifted bounds equals this pass's figures except the last upper crossing, computed here from the density
            # entering the last look (to rounding; saves a recursion pass)
            hk, basek, scalek = at_last
            ach = achieved.copy()
            ach[-1] = float(_dot(hk, ndtr(basek - a[-1] * scalek)))
            out.update(b=bb, probhi=ach, achieved=ach.copy())
            return out
        pr = gsprob(theta, info, a, bb, r)
        out.update(b=bb, probhi=pr["probhi"][:, 0], problo=pr["problo"][:, 0], achieved=pr["probhi"][:, 0],
                   mass_last=np.nan, dens=None)
    return out


def gsbound(info, trueneg, falsepos, tol: float = 1e-6, r: int = 18, last: bool = True):
    """Lower and upper bounds with given crossing probabilities under H0 (gsDesign's C ``gsbound``).

    When ``trueneg`` equals ``falsepos`` (a symmetric two-sided design) the grid and the density are
    symmetric about 0, so only the upper bound is iterated and ``a = -b`` (the same iterates as the
    joint scheme, at half the cost).

    Parameters
    ----------
    info : array of shape (k,)
        Statistical information at each look (increasing).
    trueneg : array of shape (k,)
        Probability under H0 of crossing the lower bound first at each look.
    falsepos : array of shape (k,)
        Probability under H0 of crossing the upper bound first at each look (the type-I error spent there).
    tol : float, default=1e-6
        Tolerance of the Newton iteration on each bound.
    r : int, default=18
        Grid size.
    last : bool, default=True
        Solve the last look's lower bound. ``False`` leaves it and its crossing probability NaN, for callers that
        replace them (gsDesign sets the last lower bound of test type 5 to the upper one): the joint iteration there
        stops once the upper bound's step is within ``tol`` and, where the lower bound's is not, returns the upper
        bound after that step with its crossing probability. gsDesign iterates on until the lower bound converges,
        by steps of the upper bound's that square the last one (~1e-12 and less after one within ``tol`` = 1e-6):
        the same bound to that. (Symmetric bounds, one iteration for both, solve it all the same.)

    Returns
    -------
    dict
        ``a``, ``b`` (k,), ``problo``, ``probhi`` (k,, the crossing probabilities under H0 at the returned
        bounds), ``error`` (0 when converged; the look that failed otherwise), ``mass_last`` (the probability
        of reaching the last look) and ``dens`` (for each look after the first, the sub-density entering it and its
        grid, ``(h, z)``; None when not converged).

    See Also
    --------
    effstats.sequential.native.gsbound1 : The upper bound for a given drift and lower bound.
    effstats.sequential.design : A whole design from a spending function.

    References
    ----------
    Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*, 70(3),
    659–663.

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0 (C function
    ``gsbound``).

    Examples
    --------
    A symmetric two-sided design spending 0.0005, 0.007 and 0.0175 on each side at three equally spaced looks:

    >>> from effstats.sequential.native import gsbound
    >>> spent = [0.0005, 0.007, 0.0175]
    >>> res = gsbound([1 / 3, 2 / 3, 1.0], trueneg=spent, falsepos=spent)
    >>> res["b"].round(4), res["a"].round(4)
    (array([3.2905, 2.4437, 2.0082]), array([-3.2905, -2.4437, -2.0082]))
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
    # the unconditional quantiles that start each look's Newton iteration, at once
    qtn, qfp = ndtri(trueneg).tolist(), ndtri(falsepos).tolist()
    # scalars as Python floats: the Newton loops below do a few dozen scalar operations a step, several times
    # faster on floats than on numpy scalars
    infol = info.tolist()
    a0 = -EXTREMEZ if tn[0] <= 0 else qtn[0]
    b0 = EXTREMEZ if fp[0] <= 0 else 0.0 - qfp[0]
    a[0], b[0] = a0, b0
    plo_out[0], phi_out[0] = ndtr(a0), ndtr(-b0)
    z1, w1 = gridpts(r, 0.0, a0, b0)
    h = _h1(0.0, z1, w1, infol[0])
    rt = np.sqrt(info).tolist()
    err = 0
    conserve = r > 18
    mass = 1.0 if k == 1 else float("nan")
    dens = []
    for i in range(1, k):
        dens.append((h, z1))
        rtik = rt[i]
        rtd = (infol[i] - infol[i - 1]) ** 0.5
        scale = rtik / rtd
        if i == k - 1:
            mass = float(h.sum())  # the (Simpson) mass entering the last look
        rows = _shift_rows(z1, rt[i - 1] / rtd)  # the Newton steps' base, and the kernel's shifts
        zr = rows[1]
        btem2 = EXTREMEZ if fp[i] <= 0 else 0.0 - qfp[i]
        if sym:
            btem, phi, ok = _newton_upper(h, zr, scale, fp[i], btem2, tol, _RT2PI_B)
            atem, plo = -btem, phi
        else:
            atem2 = -EXTREMEZ if tn[i] <= 0 else qtn[i]
            adelta = bdelta = 1.0
            j = 0
            atem, btem = atem2, btem2
            plo = phi = 0.0
            # rows: the crossing probabilities' terms at -x_lo and x_hi, then their normal densities (unscaled): one
            # ndtr, one exp and one matrix-vector product per Newton step for both bounds
            four = np.empty((4, zr.size))
            xs, phis = four[:2], four[2:]
            sub, mul, ex, fourdot = np.subtract, np.multiply, _exp, four.dot
            c = scale / _RT2PI_B
            # the bounds' shifts and -1/2 as arrays of the rows' shape (see _MHALF_ROW)
            sa, sb = np.empty(zr.size), np.empty(zr.size)
            fa, fb = sa.fill, sb.fill
            mhalf = _mhalf((2, zr.size))
            xb = np.empty((2, zr.size))  # -x_lo and x_hi, kept for the densities while xs holds their ndtr
            xb_lo, xb_hi = xb
            sa1 = sa2 = sb1 = sb2 = dplo = dphi = 0.0  # the last two steps' sizes of each bound, the last derivatives
            while (adelta > tol or bdelta > tol) and j < EXTREMEZ:
                j += 1
                atem, btem = atem2, btem2
                fa(atem * scale)
                fb(btem * scale)
                sub(sa, zr, xb_lo)
                sub(zr, sb, xb_hi)
                ndtr(xb, xs)
                if (sa2 and sb2 and sa1 <= 1e-3 and sb1 <= 1e-3 and sa1 * sa1 * sa1 < 0.0625 * tol * sa2 * sa2
                        and sb1 * sb1 * sb1 < 0.0625 * tol * sb2 * sb2 and dplo and dphi and btem - atem > 2 * tol):
                    # likely the last evaluation of both bounds: as in _newton_upper, the steps with the last
                    # derivatives under tol / 4 put both steps under tol (and apart, so that atem2 <= btem2 holds)
                    plo, phi = fourdot(h).tolist()[:2]
                    if abs(tn[i] - plo) <= 0.25 * tol * dplo and abs(fp[i] - phi) <= -0.25 * tol * dphi:
                        adelta = bdelta = 0.0
                        break
                mul(xb, xb, phis)
                mul(phis, mhalf, phis)
                ex(phis, phis)
                plo, phi, dplo, dphi = fourdot(h).tolist()
                dplo *= c
                dphi = -dphi * c
                ad = tn[i] - plo
                if ad > dplo:
                    atem2 = atem + 1.0
                elif ad < -dplo:
                    atem2 = atem - 1.0
                else:  # (0 / 0 and NaN give NaN, as in C)
                    atem2 = atem + ad / dplo if dplo != 0 else float("nan")
                if atem2 < -EXTREMEZ:  # (NaN passes, as through min/max)
                    atem2 = -EXTREMEZ
                elif atem2 > EXTREMEZ:
                    atem2 = EXTREMEZ
                bd = fp[i] - phi
                if bd < dphi:
                    btem2 = btem + 1.0
                elif bd > -dphi:
                    btem2 = btem - 1.0
                else:
                    btem2 = btem + bd / dphi if dphi != 0 else float("nan")
                if btem2 < -EXTREMEZ:  # (NaN passes, as through min/max)
                    btem2 = -EXTREMEZ
                elif btem2 > EXTREMEZ:
                    btem2 = EXTREMEZ
                if atem2 > btem2:
                    atem2 = btem2
                adelta = abs(atem2 - atem)
                bdelta = abs(btem2 - btem)
                sa2, sa1, sb2, sb1 = sa1, adelta, sb1, bdelta
                if not last and i == k - 1 and bdelta <= tol < adelta:
                    # the lower bound is the caller's to set: the upper one after its step, where gsDesign's next
                    # iterations leave it to the square of that step
                    btem = btem2
                    fb(btem * scale)
                    sub(zr, sb, xb_hi)
                    phi = float(h.dot(ndtr(xb_hi, xb_hi)))
                    adelta = 0.0
                    break
            ok = not (adelta > tol or bdelta > tol)
            if not last and i == k - 1:
                atem = plo = float("nan")
        a[i], b[i] = atem, btem
        plo_out[i], phi_out[i] = plo, phi
        if not ok:
            err = i + 1
            break
        if i < k - 1:
            z2, w2 = gridpts(r, 0.0, atem, btem)
            h = _hupdate(0.0, w2, infol[i - 1], z1, h, infol[i], z2, conserve, sym, rows, r)
            z1 = z2
    return {"a": a, "b": b, "problo": plo_out, "probhi": phi_out, "error": err, "mass_last": mass,
            "dens": None if err else dens}
