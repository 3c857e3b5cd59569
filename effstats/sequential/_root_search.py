"""The safeguarded root search that finds the ends of the score statistics' confidence intervals.

Each repeated confidence interval is the set of values a score test does not reject; its ends are where a
monotone function of the value tested changes sign, found here for whole arrays at once.
"""
from __future__ import annotations

import numpy as np

_BISECT = 40  # the interval ends are found to the bracket's width / 2**40 (~1e-13), as by 40 bisection steps
_MAX_STEPS = 4 * _BISECT  # safeguarded steps halve the bracket at least every fourth step


def _boundary(g, a, b, points=None):
    """Where a monotone ``g`` changes sign between ``a`` (``g > 0``, rejected) and ``b`` (``g <= 0``): arrays.

    Returns the ``b`` end of the final bracket (a value ``g`` does not reject), within ``|b - a| / 2**40`` of the
    change, as bisection would after 40 steps; where ``g(a) <= 0`` (nothing rejected up to ``a``), ``a`` itself. Steps
    are Illinois (regula falsi with the value of an end kept twice halved), superlinear where ``g`` is smooth, and
    land at least half the width to reach away from either end (Dekker's minimal step: next to the change ``g`` is
    rounding noise, often exactly 0, where regula falsi would barely move off an end); an element whose bracket has not
    halved in three steps, or whose last step was a minimal one, is bisected, so jumps (the continuity correction),
    infinite values and flat stretches cost at most 4 times the bisection's steps. The width to reach is never below
    a few units in the last place of the ends (a bracket of 1e-9, as an exhaustive look gives, cannot shrink by
    2**40), and a bracket whose ends are adjacent floats is done. A score interval takes about 10 evaluations of ``g``
    where bisection takes 40; this matters for a single evaluation, whose cost is per call rather than per array
    element.

    ``points`` (shape ``(k,) + a.shape``), where given, are the places where ``g`` has a kink or a jump, or is flat
    on one side: evaluated all at once, they narrow each bracket to the two of them (or an end) around the change
    before the steps begin, so that the steps see a smooth piece of ``g``. The width to reach stays that of the
    bracket given.

    ``g`` works element by element and takes arrays with more leading axes than ``a``: the ends (and the points)
    are evaluated in one call, stacked on a new first axis.
    """
    a0 = a
    if points is None:
        ga, gb = g(np.stack([a, b]))  # g once for both ends: its cost is largely per call
        a, b = a.copy(), b.copy()  # the steps update the brackets in place
    else:
        # the ends and the points inside each bracket in one call; a point's value is used only where the bracket
        # is searched (below), as if asked for there alone
        points = np.asarray(points, float)
        sign = np.sign(b - a)
        key = points * sign  # increases from a towards b; compared, not subtracted, so that floats a few ulps apart
        between = (key > a * sign) & (key < b * sign)
        gs = g(np.concatenate([a[None], b[None], np.where(between, points, b)]))
        ga, gb, gp = gs[0], gs[1], gs[2:]
    whole = ga <= 0  # the range's end is not rejected: it is the answer
    # the width to reach; elements whose ends do not bracket a change are not searched
    ulp = 4 * np.spacing(np.maximum(np.abs(a), np.abs(b)))
    tol = np.where((ga > 0) & ~(gb > 0), np.maximum(np.abs(b - a) * 2.0 ** -_BISECT, ulp), np.inf)
    if points is not None:
        a, ga, b, gb = _narrow(a, ga, b, gb, points, gp, between & np.isfinite(tol), key, sign)
    # b - a keeps its sign while a bracket is open (every step lands inside it); arrays updated in place below
    sign = np.sign(b - a)
    width = np.abs(b - a)
    mark = width.copy()  # bracket width when it last halved
    half_tol = 0.5 * tol
    since = np.zeros(a.shape, np.int32)  # steps since then
    kept = np.zeros(a.shape, np.int8)  # +1: the a end was kept last step, -1: b was
    nudged = np.zeros(a.shape, bool)  # the last step was the minimal one
    flat = np.zeros(a.shape, bool)  # a minimal step found g == 0, as at b: g is flat there, only bisection helps
    for _ in range(_MAX_STEPS):
        todo = width > tol
        if not todo.any():
            break
        with np.errstate(all="ignore"):
            m = b - gb * (b - a) / (gb - ga)
            # a step lands at least half the width to reach inside the bracket (Dekker's minimal step): near the
            # change g is rounding noise (often exactly 0 at b), where the secant would barely move off an end;
            # such a step ends the search unless g is flat there, and then the next step bisects
            step = np.minimum(half_tol, 0.5 * width)
            pos = (m - a) * sign
            far = width - step
            near = (pos < step) | (pos > far)
            m = np.where(near, a + sign * np.minimum(np.maximum(pos, step), far), m)
        secant = np.isfinite(m) & np.isfinite(ga) & np.isfinite(gb) & ~(nudged | flat)
        nudged = near & secant
        m = np.where((since >= 3) | ~secant, 0.5 * (a + b), m)
        # adjacent floats: no value strictly between the ends is left, b is the answer
        todo &= (m != a) & (m != b)
        gm = g(m)
        up = gm > 0
        flat |= nudged & (gm == 0)
        rej = up & todo
        acc = ~up & todo
        np.multiply(ga, 0.5, out=ga, where=acc & (kept == 1))
        np.multiply(gb, 0.5, out=gb, where=rej & (kept == -1))
        np.copyto(a, m, where=rej)
        np.copyto(ga, gm, where=rej)
        np.copyto(b, m, where=acc)
        np.copyto(gb, gm, where=acc)
        np.copyto(kept, -1, where=rej)
        np.copyto(kept, 1, where=acc)
        width = np.abs(b - a)
        halved = width <= 0.5 * mark
        np.copyto(mark, width, where=halved)
        since += 1
        np.copyto(since, 0, where=halved)
    return np.where(whole, a0, b)


def _narrow(a, ga, b, gb, points, gp, inside, key, sign):
    """The brackets ``[a, b]`` narrowed to adjacent ones of ``points`` (where ``inside``: the point lies strictly
    inside a bracket searched; ``gp``, ``g`` there; ``key``, ``points * sign``, increases from ``a`` towards ``b``):
    ``a`` becomes the rejected point nearest ``b``, ``b`` the first accepted point beyond it; with their values of
    ``g``.
    """
    rej = inside & (gp > 0)
    i = np.argmax(np.where(rej, key, -np.inf), axis=0)[None]
    moved = np.take_along_axis(rej, i, 0)[0]
    new_a = np.where(moved, np.take_along_axis(points, i, 0)[0], a)
    new_ga = np.where(moved, np.take_along_axis(gp, i, 0)[0], ga)
    # the first accepted point beyond the new a (g need not be monotone in floating point)
    beyond = inside & ~(gp > 0) & (key > new_a * sign)
    j = np.argmin(np.where(beyond, key, np.inf), axis=0)[None]
    found = np.take_along_axis(beyond, j, 0)[0]
    new_b = np.where(found, np.take_along_axis(points, j, 0)[0], b)
    new_gb = np.where(found, np.take_along_axis(gp, j, 0)[0], gb)
    return new_a, new_ga, new_b, new_gb
