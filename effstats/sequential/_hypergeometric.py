"""Exact hypergeometric tails and limits, for a single model's binary scores drawn without replacement.

With the finite-population correction the number of correct items drawn from one dataset is hypergeometric;
:class:`effstats.sequential.statistics.BinomialStatistic` uses these tails and limits as they are (Buonaccorsi
1987), computed once per distinct (count, sample size) pair of a simulation.

References
----------
Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. The American
Statistician 41, 215-218.
"""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln

def _unique_apply(f, *arrays):
    """``f`` over the distinct rows of the broadcast ``arrays`` only, spread back to their shape.

    A simulation's cells share few distinct (count, sample size) pairs, and an exact hypergeometric tail costs a
    sum of terms, so each distinct pair is computed once.
    """
    b = np.broadcast_arrays(*(np.asarray(a, float) for a in arrays))
    if b[0].size == 0:
        return np.zeros(b[0].shape)
    rows, inv = np.unique(np.stack([a.ravel() for a in b], 1), axis=0, return_inverse=True)
    return np.asarray(f(*rows.T), float)[inv.ravel()].reshape(b[0].shape)


def _hyp_tail(x, N, K, n, lower):
    """``P(X <= x)`` (``lower``) or ``P(X >= x)`` for ``X ~ Hypergeometric(N, K, n)``: 1-d float arrays.

    The tail away from the mode is summed term by term from ``x`` outwards with the ratio of neighbouring
    probabilities, until a term is below 1e-17 of the sum (beyond the mode the terms fall faster than
    geometrically, the law being log-concave); the tail across the mode is one minus the other side's. This costs
    a few standard deviations of terms, where a sum from the end of the support (scipy's) costs up to ``n``.
    """
    x, N, K, n = (np.asarray(v, float) for v in np.broadcast_arrays(x, N, K, n))
    lo, hi = np.maximum(0.0, n - (N - K)), np.minimum(n, K)
    mode = np.floor((n + 1) * (K + 1) / (N + 2))
    # the short side: below x for a lower tail left of the mode, else from x + 1 (complement) and likewise above
    down = (x <= mode) if lower else (x < mode)
    start = np.where(lower, np.where(down, x, x + 1), np.where(down, x - 1, x))
    start = np.clip(start, lo, hi)
    with np.errstate(all="ignore"):
        logp = (gammaln(K + 1) - gammaln(start + 1) - gammaln(K - start + 1) + gammaln(N - K + 1)
                - gammaln(n - start + 1) - gammaln(N - K - n + start + 1) - gammaln(N + 1) + gammaln(n + 1)
                + gammaln(N - n + 1))
    term = np.exp(logp)
    acc = term.copy()
    j = start.copy()
    live = np.ones(x.shape, bool)
    while live.any():
        with np.errstate(all="ignore"):
            ratio = np.where(down, j * (N - K - n + j) / ((K - j + 1) * (n - j + 1)),
                             (K - j) * (n - j) / ((j + 1) * (N - K - n + j + 1)))
        j = np.where(down, j - 1, j + 1)
        live &= (j >= lo) & (j <= hi)
        term = np.where(live, term * np.nan_to_num(ratio), 0.0)
        acc += term
        live &= term > 1e-17 * acc
    side = np.clip(acc, 0.0, 1.0)  # the short side's sum: from start outwards
    tail = np.where(down == lower, side, 1.0 - side)  # ... or the complement of the requested tail
    # outside the support the tails are 0 or 1
    if lower:
        tail = np.where(x < lo, 0.0, np.where(x >= hi, 1.0, tail))
    else:
        tail = np.where(x <= lo, 1.0, np.where(x > hi, 0.0, tail))
    return tail


def _hyp_up(x, size, good, n):
    """``P(X >= x)`` for ``X ~ Hypergeometric(size, good, n)`` (successes among ``n`` of ``size`` items)."""
    return _unique_apply(lambda x, N, K, m: _hyp_tail(x, N, K, m, lower=False), x, size, good, n)


def _hyp_low(x, size, good, n):
    """``P(X <= x)`` for ``X ~ Hypergeometric(size, good, n)``."""
    return _unique_apply(lambda x, N, K, m: _hyp_tail(x, N, K, m, lower=True), x, size, good, n)


def _hyp_limits(x, size, n, a):
    """Exact limits ``(K_low, K_high)`` of the number of successes in the population (Buonaccorsi 1987).

    ``K_low`` is the smallest ``K`` with ``P(X >= x | K) > a``, ``K_high`` the largest with ``P(X <= x | K) > a``:
    the values not rejected by the two one-sided exact tests at level ``a``. Both tails are monotone in ``K``, so
    each is a bisection over the integers ``x <= K <= size - n + x`` (the values the sample allows), vectorised
    over the distinct rows.
    """

    def search(x, N, m, a):
        lo_k, hi_k = x.copy(), N - m + x
        out = []
        for tail in (lambda k: _hyp_tail(x, N, k, m, lower=False), lambda k: _hyp_tail(x, N, k, m, lower=True)):
            # kept: the end where the tail exceeds a (not rejected); other: where it does not, or the range's end
            kept = hi_k.copy() if len(out) == 0 else lo_k.copy()
            other = lo_k.copy() if len(out) == 0 else hi_k.copy()
            done = tail(other) > a  # the range's far end itself is not rejected
            kept = np.where(done, other, kept)
            while True:
                gap = np.abs(kept - other) > 1
                if not gap.any():
                    break
                mid = np.floor((kept + other) / 2)
                ok = tail(mid) > a
                kept = np.where(gap & ok, mid, kept)
                other = np.where(gap & ~ok, mid, other)
            out.append(kept)
        return np.stack(out)

    b = np.broadcast_arrays(*(np.asarray(v, float) for v in (x, size, n, a)))
    rows, inv = np.unique(np.stack([v.ravel() for v in b], 1), axis=0, return_inverse=True)
    res = search(*rows.T)[:, inv.ravel()]
    return res[0].reshape(b[0].shape), res[1].reshape(b[0].shape)
