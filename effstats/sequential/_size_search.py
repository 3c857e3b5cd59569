"""The sample-size search's tilted Newton search: maximum information for the requested power from one recursion pass.

A recursion pass at one drift gives the power at nearby drifts by a change of measure (the sub-densities times the
path's likelihood ratio), and its derivative in the drift, so that Newton steps on the probit of that power find the
maximum information, usually with one pass (``_max_info_tilt``). Its fallback, the secant search on full passes
(``_max_info_secant``), and the caller (``native_sizes``) are in :mod:`effstats.sequential.native`, which re-exports
these names.
"""
from __future__ import annotations

import math
from itertools import accumulate

import numpy as np
from scipy.special import ndtr, ndtri

from ._recursion import _h1, _hupdate, _mhalf, gridpts


# A tilted root is accepted, with its crossing probabilities, when it lies within _TILT_REACH / q (relative) of the
# drift of the pass it tilts, q the largest ratio I_j / (I_j - I_{j-1}) of the looks (k for equal spacing): the tilted
# sums differ from a pass of its own there by up to ~1e-6 q / 2 times that distance (the grids are centred at the
# pass's drift, and a look adding little information has a narrow kernel), so by less than ~5e-11
_TILT_REACH = 5e-5
_RT2PI = float(np.sqrt(2 * np.pi))
_RT2 = math.sqrt(2.0)


class _IgnoreFloatErrors:
    """``np.errstate(all="ignore")`` for the search, which runs in about 0.1-0.3 ms: on numpy 1.x errstate is a Python
    context manager around ``geterr`` / ``seterr`` (~6 us), where swapping the error object itself takes ~0.4 us;
    numpy 2 keeps the state in a context variable, cheaply, and has no error object (it uses errstate)."""

    __slots__ = ("_old",)
    _get = getattr(np, "geterrobj", None)
    _set = getattr(np, "seterrobj", None)

    def __enter__(self):
        self._old = old = self._get()
        self._set([old[0], 0, old[2]])  # [buffer size, error mask (0: ignore all), callback]

    def __exit__(self, *exc) -> None:
        self._set(self._old)


def _ignore_float_errors():
    """A context that ignores floating-point errors (see :class:`_IgnoreFloatErrors`)."""
    return _IgnoreFloatErrors() if _IgnoreFloatErrors._get is not None else np.errstate(all="ignore")


def _ndtr1(x: float) -> float:
    """The normal distribution function at one point: ``ndtr``'s value to a few ulp, without a ufunc call (0.75 us on
    a Python float, against 0.03 us)."""
    return 0.5 * math.erfc(-x / _RT2)


def _tilt_pass(eta: float, t: np.ndarray, a: np.ndarray, b: np.ndarray, r: int, per: np.ndarray | None = None) -> dict:
    """One recursion pass at drift ``eta`` per unit of the maximum information, at information ``t`` (fractions of
    the maximum): the sub-densities entering each look after the first, flattened for :func:`_tilted` (``per``: the
    design's constants from :func:`_tilt_constants`, when already computed)."""
    rtl = np.sqrt(t).tolist()
    al, bl = a.tolist(), b.tolist()
    z1, w1 = gridpts(r, eta * rtl[0], al[0], bl[0])
    h = _h1(eta, z1, w1, t[0])
    dens = []
    for i in range(1, t.size):
        dens.append((h, z1))
        if i < t.size - 1:
            z2, w2 = gridpts(r, eta * rtl[i], al[i], bl[i])
            h = _hupdate(eta, w2, t[i - 1], z1, h, t[i], z2, r=r)
            z1 = z2
    return _tilt_arrays(eta, t, a, b, dens, per)


def _tilt_constants(t: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per look after the first (columns): sqrt(t) and t of the look before, sqrt(dt), the upper and lower bounds
    on the scale of ``S / sqrt(dt)``, and sqrt(dt / (2 pi))."""
    out = np.empty((6, t.size - 1))
    rt = np.sqrt(t)
    out[0] = rt[:-1]
    out[1] = t[:-1]
    rdt = out[2]
    np.subtract(t[1:], t[:-1], out=rdt)
    np.sqrt(rdt, out=rdt)
    np.multiply(b[1:], rt[1:], out=out[3])
    out[3] /= rdt
    np.multiply(a[1:], rt[1:], out=out[4])
    out[4] /= rdt
    np.divide(rdt, _RT2PI, out=out[5])
    return out


def _tilt_arrays(eta: float, t: np.ndarray, a: np.ndarray, b: np.ndarray, dens: list,
                 per: np.ndarray | None = None) -> dict:
    """The sub-densities ``dens`` (``(h, z)`` entering each look after the first) of a pass at drift ``eta`` per unit
    of the maximum information, at information ``t`` (fractions of the maximum), flattened for :func:`_tilted`.

    The statistic depends on the drift and the maximum information through ``eta = theta sqrt(I_max)`` only, and the
    sub-density at another drift is this one times the likelihood ratio of the path, which depends on its current
    value only: ``exp((eta' - eta) S - (eta'^2 - eta^2) t / 2)`` with ``S = z sqrt(t)`` (a change of measure).
    """
    sizes = [z.size for _, z in dens]
    # rows: S = z sqrt(t), t and sqrt(dt) of the look before, the upper and the lower bound's terms, sqrt(dt / 2 pi);
    # the first four are what _tilted combines linearly. (take with the looks' indices: a third of repeat's time on
    # the columns of so small an array)
    looks = np.arange(len(sizes)).repeat(sizes)
    cols = (_tilt_constants(t, a, b) if per is None else per).take(looks, axis=1)
    s = cols[0]
    s *= np.concatenate([z for _, z in dens])
    sd = s / cols[2]
    np.subtract(sd, cols[3], out=cols[3])
    np.subtract(cols[4], sd, out=cols[4])
    # the coefficients of _tilted's matrix product, rewritten in place at each evaluation (four item writes take a
    # fifth of the time of building the (3, 4) array from nested lists)
    coef = np.zeros((3, 4))
    coef[1, 3] = coef[2, 0] = 1.0
    coef_looks = np.zeros((3, 5))  # (with the looks: the likelihood ratio's exponent and both crossings' arguments)
    coef_looks[1, 3] = coef_looks[2, 4] = 1.0
    return {"eta": eta, "h": np.concatenate([h for h, _ in dens]), "v": cols[:4], "s": s, "t": cols[1], "coef": coef,
            "v_looks": cols[:5], "coef_looks": coef_looks, "rdt": cols[2], "rdt_c": cols[5], "up": cols[3],
            "lo": cols[4],
            "starts": list(accumulate(sizes[:-1], initial=0)), "first": (float(t[0]) ** 0.5, float(a[0]), float(b[0]))}


def _tilted(p: dict, eta: float, looks: bool = False):
    """Power at drift ``eta`` from the pass ``p`` of :func:`_tilt_pass` (the same quadrature, tilted) and its
    derivative in ``eta``; with ``looks``, the upper- and lower-crossing probabilities at each look instead."""
    rt1, a1, b1 = p["first"]
    pe = p["eta"]
    d = eta - pe
    # the likelihood ratio's exponent, the crossing's argument and the derivative's factor S - eta t (with the looks:
    # the lower crossing's argument instead): linear in the pass's rows S, t, sqrt(dt) and the bounds' terms, so one
    # matrix product gives all three
    if looks:
        coef = p["coef_looks"]  # [[d, -d (eta + pe) / 2, 0, 0, 0], [0, 0, eta, 1, 0], [0, 0, -eta, 0, 1]]
        coef[2, 2] = -eta
        v = p["v_looks"]
    else:
        coef = p["coef"]  # [[d, -d (eta + pe) / 2, 0, 0], [0, 0, eta, 1], [1, -eta, 0, 0]]
        coef[2, 1] = -eta
        v = p["v"]
    coef[0, 0] = d
    coef[0, 1] = -(d * (eta + pe) * 0.5)
    coef[1, 2] = eta
    rows = coef @ v
    lr, x, dlr = rows
    if d:
        np.exp(lr, lr)  # (output positionally: see _recursion)
        lr *= p["h"]
    else:  # the pass's own drift: likelihood ratio 1
        lr = p["h"]
    x0 = eta * rt1 - b1
    if looks:
        both = rows[1:]  # the upper and the lower crossings at once
        ndtr(both, both)
        both *= lr
        up, lo = np.add.reduceat(both, p["starts"], axis=1).tolist()
        return [_ndtr1(x0)] + up, [_ndtr1(a1 - eta * rt1)] + lo
    # d/d eta: the likelihood ratio's (S - eta t) times the crossing, and the crossing's density times sqrt(dt)
    dens = x * x
    dens *= _mhalf(dens.size)
    np.exp(dens, dens)
    dens *= p["rdt_c"]
    cdf = ndtr(x, x)
    dlr *= cdf
    dlr += dens
    # the crossing probabilities and the derivative's terms are adjacent rows: one matrix-vector product for both
    inner, dinner = rows[1:].dot(lr).tolist()
    power = _ndtr1(x0) + inner
    dpower = math.exp(-0.5 * x0 * x0) * rt1 / _RT2PI + dinner
    return power, dpower


def _tilt_root(p: dict, eta: float, target: float, rel: float = 1e-5) -> float | None:
    """Root of the probit of the tilted power of the pass ``p`` minus ``target``, by Newton steps from ``eta``.

    The probit is nearly linear in the drift, so a step of relative size ``rel`` leaves an error of the order of its
    square (~1e-10 for the default): the steps stop there. None if a step fails.
    """
    new = eta
    for _ in range(30):
        pw, dpw = _tilted(p, new)
        if not (0.0 < pw < 1.0 and dpw > 0):
            return None
        q = float(ndtri(pw))
        step = (q - target) * math.exp(-0.5 * q * q) / (_RT2PI * dpw)  # g / g' for g = probit(power)
        if not np.isfinite(step):
            return None
        new -= step
        if not new > 0:
            return None
        if abs(step) <= rel * new:
            return new
    return None


def _max_info_tilt(delta, beta, tx, a, b, r, i0, lower: bool = True, dens0: list | None = None) -> tuple | None:
    """Maximum information giving power ``1 - beta`` for fixed bounds, by Newton steps on the tilted power of a pass.

    A recursion pass at a drift gives the power at nearby drifts without another pass (:func:`_tilt_pass`), and its
    derivative: Newton steps on the probit of that power, which is nearly linear in the drift, find its root. The root
    of the tilted power is off the pass's own (gsprob's) root by about 1e-6 times the relative distance between the
    two drifts (more after a look that adds little information), so a pass is run at the root until the root lies
    within ``_TILT_REACH / q`` of the pass's drift (``q`` the largest ``I_j / (I_j - I_{j-1})``); its
    crossing probabilities are then read from the tilted pass. The search starts at the root tilted from the bounds'
    own pass under H0 where it is given (``dens0``, the sub-densities entering each look on the design's grid), which
    lies within ~2e-6 of the root: one pass then suffices. Otherwise it starts at the root of a pass on a coarser grid
    (r = 10), within ~1e-5 of the root.

    Returns ``(information, upper, lower)`` as :func:`_max_info_secant`, or None if a step fails (the caller then
    runs that search).
    """
    if not (delta > 0 and 0.0 < beta < 0.5) or tx.size < 2 or r > 18:
        return None
    target = float(ndtri(1 - beta))
    eta = float(delta) * float(np.sqrt(i0))  # Python floats: the Newton steps' scalar arithmetic is faster on them
    tl = tx.tolist()
    reach = _TILT_REACH / max(tl[i] / (tl[i] - tl[i - 1]) for i in range(1, len(tl)))
    per = _tilt_constants(tx, a, b)
    with _ignore_float_errors():
        if dens0 is not None and len(dens0) == tx.size - 1:
            # the probit of the power is so nearly linear in the drift that a Newton step of 1 % leaves the start
            # within the reach of the root (over 1,600 designs, none needed a second pass); a start off by more
            # costs a pass, not accuracy
            eta = _tilt_root(_tilt_arrays(0.0, tx, a, b, dens0, per), eta, target, 1e-2) or eta
        elif r > 10:
            eta = _tilt_root(_tilt_pass(eta, tx, a, b, 10, per), eta, target, 1e-3) or eta
        for _ in range(6):
            p = _tilt_pass(eta, tx, a, b, r, per)
            new = _tilt_root(p, eta, target)
            if new is None:
                return None
            if abs(new - eta) <= reach * eta:
                up, lo = _tilted(p, new, looks=True)
                return (new / delta) ** 2, np.array(up), np.array(lo) if lower else None
            eta = new
    return None
