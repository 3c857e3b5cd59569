"""The safeguarded root search that finds the ends of the score statistics' confidence intervals.

Each repeated confidence interval is the set of values a score test does not reject; its ends are where a
monotone function of the value tested changes sign, found here for whole arrays at once.
"""
from __future__ import annotations

import numpy as np

_BISECT = 40  # the interval ends are found to the bracket's width / 2**40 (~1e-13), as by 40 bisection steps
_MAX_STEPS = 4 * _BISECT  # safeguarded steps halve the bracket at least every fourth step


def _boundary(g, a, b):
    """Where a monotone ``g`` changes sign between ``a`` (``g > 0``, rejected) and ``b`` (``g <= 0``): arrays.

    Returns the ``b`` end of the final bracket (a value ``g`` does not reject), within ``|b - a| / 2**40`` of the
    change, as bisection would after 40 steps; where ``g(a) <= 0`` (nothing rejected up to ``a``), ``a`` itself. Steps
    are Illinois (regula falsi with the value of an end kept twice halved), superlinear where ``g`` is smooth; an
    element whose bracket has not halved in three steps is bisected, so jumps (the continuity correction) and infinite
    values cost at most 4 times the bisection's steps. The width to reach is never below a few units in the last place
    of the ends (a bracket of 1e-9, as an exhaustive look gives, cannot shrink by 2**40), and a bracket whose ends are
    adjacent floats is done. A score interval takes about 10 evaluations of ``g`` where bisection takes 40; this matters
    for a single evaluation, whose cost is per call rather than per array element.
    """
    a0, a, b = a, a.copy(), b.copy()
    ga, gb = g(a), g(b)
    whole = ga <= 0  # the range's end is not rejected: it is the answer
    # the width to reach; elements whose ends do not bracket a change are not searched
    ulp = 4 * np.spacing(np.maximum(np.abs(a), np.abs(b)))
    tol = np.where((ga > 0) & ~(gb > 0), np.maximum(np.abs(b - a) * 2.0 ** -_BISECT, ulp), np.inf)
    mark = np.abs(b - a)  # bracket width when it last halved
    since = np.zeros(a.shape, np.int32)  # steps since then
    kept = np.zeros(a.shape, np.int8)  # +1: the a end was kept last step, -1: b was
    for _ in range(_MAX_STEPS):
        width = np.abs(b - a)
        todo = width > tol
        if not todo.any():
            break
        with np.errstate(all="ignore"):
            m = b - gb * (b - a) / (gb - ga)
        inside = np.isfinite(m) & ((m - a) * (m - b) < 0)
        m = np.where((since >= 3) | ~inside, 0.5 * (a + b), m)
        # adjacent floats: no value strictly between the ends is left, b is the answer
        todo &= (m != a) & (m != b)
        gm = g(m)
        rej = (gm > 0) & todo
        acc = ~(gm > 0) & todo
        ga = np.where(acc & (kept == 1), 0.5 * ga, ga)
        gb = np.where(rej & (kept == -1), 0.5 * gb, gb)
        a, ga = np.where(rej, m, a), np.where(rej, gm, ga)
        b, gb = np.where(acc, m, b), np.where(acc, gm, gb)
        kept = np.where(rej, -1, np.where(acc, 1, kept)).astype(np.int8)
        width = np.abs(b - a)
        halved = width <= 0.5 * mark
        mark = np.where(halved, width, mark)
        since = np.where(halved, 0, since + 1)
    return np.where(whole, a0, b)
