"""Exact hypergeometric tails and limits, for 0/1 scores of items drawn without replacement.

The number of correct items in a simple random sample of ``n`` of a benchmark's ``N`` items is hypergeometric;
its exact tails and limits (Buonaccorsi 1987) are the finite-population Clopper-Pearson interval. Used by
:class:`effstats.sequential.statistics.BinomialStatistic` (one model on one finite benchmark, computed once per
distinct (count, sample size) pair of a simulation), by the random-sample subset estimators for a target whose
sampled responses are all alike, and by the workflow's one-task interval of such a count. A stratified simple
random sample whose responses are all alike gets the exact interval of the worst placement of the wrong items
among its strata (``stratified_alike_interval``; the stratified AIPW estimators).

References
----------
Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. The American
Statistician 41, 215-218.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special
from scipy.special import gammaln, ndtri

from ._results import ConfidenceInterval, check_confidence_level
from ._shared import _value_list
from ._validation import check_array


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
    """``P(X <= x)`` (``lower``) or ``P(X >= x)`` for ``X ~ Hypergeometric(N, K, n)``: 1-d float arrays (``lower``
    a bool, or one a row).

    The tail away from the mode is summed term by term from ``x`` outwards with the ratio of neighbouring
    probabilities, until a term is below 1e-17 of the sum (beyond the mode the terms fall faster than
    geometrically, the law being log-concave); the tail across the mode is one minus the other side's. This costs
    a few standard deviations of terms, where a sum from the end of the support (scipy's) costs up to ``n``.
    """
    x, N, K, n = (np.asarray(v, float) for v in np.broadcast_arrays(x, N, K, n))
    lo, hi = np.maximum(0.0, n - (N - K)), np.minimum(n, K)
    mode = np.floor((n + 1) * (K + 1) / (N + 2))
    # the short side: below x for a lower tail left of the mode, else from x + 1 (complement) and likewise above
    down = np.where(lower, x <= mode, x < mode)
    start = np.where(lower, np.where(down, x, x + 1), np.where(down, x - 1, x))
    start = np.clip(start, lo, hi)
    with np.errstate(all="ignore"):
        logp = (gammaln(K + 1) - gammaln(start + 1) - gammaln(K - start + 1) + gammaln(N - K + 1)
                - gammaln(n - start + 1) - gammaln(N - K - n + start + 1) - gammaln(N + 1) + gammaln(n + 1)
                + gammaln(N - n + 1))
    acc = _sum_outwards(np.exp(logp), start, down, N, K, n, lo, hi)
    side = np.clip(acc, 0.0, 1.0)  # the short side's sum: from start outwards
    tail = np.where(down == lower, side, 1.0 - side)  # ... or the complement of the requested tail
    # outside the support the tails are 0 or 1
    return np.where(lower, np.where(x < lo, 0.0, np.where(x >= hi, 1.0, tail)),
                    np.where(x <= lo, 1.0, np.where(x > hi, 0.0, tail)))


_BLOCK_ROWS = 64  # up to this many rows, _sum_outwards sums in blocks of terms


def _sum_outwards(term, j, down, N, K, n, lo, hi, block=32):
    """The hypergeometric terms from position ``j`` (probability ``term``) outwards (down or up), summed until a
    term is below 1e-17 of the sum (that term included) or the support ends.

    Term ``t`` is the previous one times the ratio of neighbouring probabilities. Over many rows, one pass per
    term over them all; over a few (a sequential run's look: numpy's per-call cost dominates), ``block`` terms of
    every row still summing at once (running products and sums, in the order the passes take them, so the sum is
    the same to the last bit), a row stopping at its first term past the threshold.
    """
    if np.size(term) > _BLOCK_ROWS:
        return _sum_term_by_term(term, j, down, N, K, n, lo, hi)
    shape = np.shape(term)
    term, j, down, N, K, n, lo, hi = (np.ravel(v).copy() for v in (term, j, down, N, K, n, lo, hi))
    acc = term.copy()
    live = np.arange(acc.size)
    while live.size:
        steps = np.arange(block + 1)
        sign = np.where(down[live], -1.0, 1.0)[:, None]
        jj = j[live, None] + sign * steps  # jj[:, 0]: the last term taken; jj[:, s]: the s-th next one
        Nl, Kl, nl = N[live, None], K[live, None], n[live, None]
        prev = jj[:, :-1]
        with np.errstate(all="ignore"):
            ratio = np.where(sign < 0, prev * (Nl - Kl - nl + prev) / ((Kl - prev + 1) * (nl - prev + 1)),
                             (Kl - prev) * (nl - prev) / ((prev + 1) * (Nl - Kl - nl + prev + 1)))
            terms = np.cumprod(np.concatenate([term[live, None], np.nan_to_num(ratio)], axis=1), axis=1)[:, 1:]
            inside = np.logical_and.accumulate((jj[:, 1:] >= lo[live, None]) & (jj[:, 1:] <= hi[live, None]), 1)
            terms = np.where(inside, terms, 0.0)
            sums = np.cumsum(np.concatenate([acc[live, None], terms], axis=1), axis=1)[:, 1:]
            going = inside & (terms > 1e-17 * sums)
        stop = np.where(going.all(axis=1), block - 1, np.argmin(going, axis=1))  # the last term taken
        rows = np.arange(live.size)
        acc[live] = sums[rows, stop]
        term[live] = terms[rows, stop]
        j[live] = jj[rows, stop + 1]
        live = live[going.all(axis=1)]
    return acc.reshape(shape)


def _sum_term_by_term(term, j, down, N, K, n, lo, hi):
    """:func:`_sum_outwards` one term at a time over every row, each pass over the rows still summing (a row's sum
    stops at its first term past the threshold, or at the support's end; most rows stop long before the last)."""
    shape = np.shape(term)
    acc = np.ravel(term).astype(float)
    live = np.arange(acc.size)
    term, j, down, N, K, n, lo, hi = (np.ravel(np.broadcast_to(v, shape)) for v in (term, j, down, N, K, n, lo, hi))
    going = np.ones(acc.size, bool)
    while going.any():
        if 4 * going.sum() < 3 * going.size:  # a quarter stopped: the rows still summing taken out
            live, term, j, down, N, K, n, lo, hi, going = (v[going] for v in (live, term, j, down, N, K, n, lo, hi,
                                                                               going))
        with np.errstate(all="ignore"):
            ratio = np.where(down, j * (N - K - n + j) / ((K - j + 1) * (n - j + 1)),
                             (K - j) * (n - j) / ((j + 1) * (N - K - n + j + 1)))
        j = np.where(down, j - 1, j + 1)
        going &= (j >= lo) & (j <= hi)
        term = np.where(going, term * np.nan_to_num(ratio), 0.0)
        acc[live] += term
        going &= term > 1e-17 * acc[live]
    return acc.reshape(shape)


def _bracket(x, N, m, a, lower, kept, other):
    """``kept`` and ``other`` of :func:`_hyp_limits`' bisection (the range's ends) narrowed to two counts either
    side of Clopper-Pearson's limit at the finite-population-corrected size, within a tenth of the limit's
    standard error of the exact one or about an item: tried with the range's far end in one call, where they
    bracket the limit the bisection takes a few steps instead of log2 of the range, and elsewhere each still
    narrows the range on its side."""
    n_eff = m * (N - 1) / np.maximum(N - m, 0.5)
    x_eff = x / m * n_eff
    with np.errstate(all="ignore"):
        high = np.where(x < m, special.betaincinv(x_eff + 1, np.maximum(n_eff - x_eff, 1e-300), 1 - a), 1.0)
        low = np.where(x > 0, special.betaincinv(np.maximum(x_eff, 1e-300), n_eff - x_eff + 1, a), 0.0)
    guess = N * np.where(lower, high, low)
    se = N * np.sqrt(x / m * (1 - x / m) / m * (N - m) / np.maximum(N - 1, 1))
    width = 1.5 + 0.1 * ndtri(1 - np.clip(a, 1e-300, 0.5)) * se
    lo, hi = np.minimum(kept, other), np.maximum(kept, other)
    near = [np.clip(np.round(guess - width), lo, hi), np.clip(np.round(guess + width), lo, hi)]
    tried = np.concatenate([other] + near)
    ok = (_hyp_tail(np.tile(x, 3), np.tile(N, 3), tried, np.tile(m, 3), np.tile(lower, 3)) > np.tile(a, 3))
    ok = ok.reshape(3, -1)
    done = ok[0]  # the range's far end itself is not rejected
    kept = np.where(done, other, kept)
    for c, c_ok in zip(near, ok[1:]):
        toward = np.sign(kept - other)  # from the rejected side to the kept one
        inside = ~done & ((c - other) * toward > 0) & ((kept - c) * toward > 0)
        kept = np.where(inside & c_ok, c, kept)
        other = np.where(inside & ~c_ok, c, other)
    return kept, other


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
        # both limits in one bisection (a look's interval has one or two distinct rows, where numpy's per-call cost
        # dominates): the first half of the rows searches K_low on the upper tail, the second K_high on the lower
        lower = np.repeat([False, True], x.size)
        x, N, m, a = (np.concatenate([v, v]) for v in (x, N, m, a))
        # kept: the end where the tail exceeds a (not rejected); other: where it does not, or the range's end
        kept, other = np.concatenate([hi_k, lo_k]), np.concatenate([lo_k, hi_k])
        kept, other = _bracket(x, N, m, a, lower, kept, other)
        # each step takes the rows whose range is still open only: after the bracket most need a few steps, those
        # it could not narrow the log2 of their range
        rows = np.flatnonzero(np.abs(kept - other) > 1)
        while rows.size:
            k, o = kept[rows], other[rows]
            mid = np.floor((k + o) / 2)
            ok = _hyp_tail(x[rows], N[rows], mid, m[rows], lower[rows]) > a[rows]
            kept[rows] = np.where(ok, mid, k)
            other[rows] = np.where(ok, o, mid)
            rows = rows[np.abs(kept[rows] - other[rows]) > 1]
        return kept.reshape(2, -1)

    b = np.broadcast_arrays(*(np.asarray(v, float) for v in (x, size, n, a)))
    rows, inv = np.unique(np.stack([v.ravel() for v in b], 1), axis=0, return_inverse=True)
    res = search(*rows.T)[:, inv.ravel()]
    return res[0].reshape(b[0].shape), res[1].reshape(b[0].shape)


def _whole(x: Any, name: str, minimum: float, ndim: Any = (0, 1)) -> np.ndarray:
    """``x`` as a float array (of ``ndim`` dimensions) of whole numbers >= ``minimum``, or one ValueError naming
    ``name``."""
    arr = check_array(x, name, ndim=ndim)
    bad = (arr != np.round(arr)) | (arr < minimum)
    if bad.any():
        raise ValueError(f"{name}: expected whole numbers >= {minimum:g}, got {_value_list(arr[bad])}")
    return arr


def hypergeometric_interval(successes: Any, n: Any, population: Any,
                            confidence_level: float = 0.95) -> ConfidenceInterval:
    """Exact (finite-population Clopper-Pearson) interval for the share of 1s among ``population`` items, from
    ``successes`` 1s in a simple random sample of ``n`` of them drawn without replacement.

    The interval holds the scores :math:`K / N` that neither one-sided exact hypergeometric test rejects at
    ``(1 - confidence_level) / 2`` (Buonaccorsi 1987): its coverage is at least ``confidence_level`` for every
    population count :math:`K`, and it is never wider than the binomial Clopper-Pearson interval of the same count
    (sampling without replacement makes the count less variable). It is not the binomial Clopper-Pearson interval
    at the finite-population-corrected size :math:`n / (1 - n/N)`, which the design effect suggests: that one is
    narrower than the exact interval for a sample whose items are all alike (at 120 of 400 items all right, its
    95 % lower limit is 0.9787 against the exact 0.975) and so covers less than it claims. A census (``n`` equal
    to ``population``) gives the exact score, a zero-width interval.

    Parameters
    ----------
    successes : int or array-like of shape (m,)
        Number of 1s in the sample, whole numbers in [0, n].
    n : int or array-like of shape (m,)
        Sample size, whole numbers in [1, population]; broadcast against ``successes``.
    population : int or array-like of shape (m,)
        Number of items sampled from, whole numbers >= 1; broadcast against ``successes``.
    confidence_level : float, default=0.95
        In (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``, multiples of ``1 / population``: floats for scalar input, else ndarrays of the
        broadcast shape.

    Notes
    -----
    With :math:`X \\sim \\mathrm{Hypergeometric}(N, K, n)` and :math:`a = (1 - \\text{level}) / 2`,

    .. math::

        K_{\\mathrm{low}} = \\min\\{K : P_K(X \\ge x) > a\\}, \\qquad
        K_{\\mathrm{high}} = \\max\\{K : P_K(X \\le x) > a\\},

    both tails monotone in :math:`K`, so each limit is a bisection over the whole numbers
    :math:`x \\le K \\le N - n + x` that the sample allows.

    References
    ----------
    Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
    American Statistician* 41(3), 215-218.

    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case of
    the binomial. *Biometrika* 26(4), 404-413.

    Examples
    --------
    120 of 400 items, every one right; then 0, 3 and 10 right of 10 items from 20:

    >>> from effstats._hypergeometric import hypergeometric_interval
    >>> ci = hypergeometric_interval(120, 120, 400)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.975, 1.0)
    >>> ci = hypergeometric_interval([0, 3, 10], 10, 20)
    >>> ci.low, ci.high
    (array([0.  , 0.15, 0.8 ]), array([0.2 , 0.55, 1.  ]))
    """
    level = check_confidence_level(confidence_level)
    x = _whole(successes, "successes", 0)
    m = _whole(n, "n", 1)
    size = _whole(population, "population", 1)
    try:
        x, m, size = np.broadcast_arrays(x, m, size)
    except ValueError:
        raise ValueError(f"n, population: expected shapes broadcastable to successes' {x.shape}, got {m.shape} "
                         f"and {size.shape}") from None
    if (m > size).any():
        raise ValueError(f"n: expected at most population ({_first(size[m > size])}), got {_first(m[m > size])}")
    if (x > m).any():
        raise ValueError(f"successes: expected at most n ({_first(m[x > m])}), got {_first(x[x > m])}")
    k_low, k_high = _hyp_limits(x, size, m, np.full(x.shape, (1 - level) / 2))
    low, high = k_low / size, k_high / size
    if low.ndim == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(low, high)


def _first(values: np.ndarray) -> int:
    """The first of ``values`` as a plain int, for a message."""
    return int(values.ravel()[0])


def _stratified_wrong_max(n_h: np.ndarray, N_h: np.ndarray, a: float) -> float:
    """The most wrong items a stratified population of ``N_h`` items can hold (one design, arrays of shape (H,))
    while some placement of them among the strata leaves a sample of ``n_h`` a stratum all right with probability
    above ``a``.

    With :math:`W_h` wrong items in stratum :math:`h`, :math:`\\log P(\\text{all right}) = \\sum_h \\sum_{i < W_h}
    \\log(1 - n_h / (N_h - i))`; each stratum's steps fall with :math:`i` (its factor is log-concave in
    :math:`W_h`), so the largest sum for a total :math:`W` takes the :math:`W` largest steps of all strata: the
    greedy placement is optimal. A stratum's steps beyond its cap (where its own sum alone is below
    :math:`\\log a`) are never among them; a stratum without sampled items holds wrong items at no cost.
    """
    la = np.log(a)
    steps = [np.zeros(0)]
    for n, N in zip(n_h, N_h):
        n, N = int(n), int(N)
        if n == 0:
            steps.append(np.zeros(N))
            continue
        if n == N:  # a census of the stratum: it holds no wrong item
            continue
        first = np.log1p(-n / N)
        cap = min(N - n, int(np.ceil(la / first)) + 1)
        steps.append(np.log1p(-n / (N - np.arange(cap))))
    s = np.sort(np.concatenate(steps))[::-1]
    # a probability equal to a (as 10/400 at a = 0.025) is kept whatever the rounding of the sum: the wider limit
    return float(np.count_nonzero(np.cumsum(s) > la - 1e-12))


def _refuse_bad_designs(k: np.ndarray, size: np.ndarray) -> None:
    """One ValueError for designs (rows of stratum sample sizes and sizes) that sample more than a stratum holds or
    hold no item."""
    if (k > size).any():
        raise ValueError(f"n_sampled: expected at most population ({_first(size[k > size])}), got "
                         f"{_first(k[k > size])}")
    if (size.sum(axis=1) == 0).any():
        raise ValueError("population: expected at least one item in every design, got none")


def stratified_alike_interval(n_sampled: Any, population: Any, all_right: Any,
                              confidence_level: float = 0.95) -> ConfidenceInterval:
    """Exact interval for the share of 1s among a stratified population whose stratified simple random sample
    holds 0/1 responses all alike: all 1 (``all_right``) or all 0.

    Stratum :math:`h` holds :math:`N_h` items of which :math:`n_h` are drawn without replacement. The lower limit
    of a sample all right is the smallest score :math:`1 - W/N` for which some placement of the :math:`W` wrong
    items among the strata gives a sample all right a probability above :math:`a = (1 - \\text{level}) / 2`; the
    upper limit is 1 (and for a sample all wrong, symmetrically, ``[0, W/N]``). A true score below the lower limit
    gives a sample all right a probability of at most :math:`a` wherever its wrong items lie, so the interval of
    such a sample misses the score at most that often. With one stratum it is
    :func:`hypergeometric_interval` of a count of none or all. The Clopper-Pearson interval at the
    finite-population-corrected size :math:`n / (1 - n/N)` is narrower, since the wrong items may gather in
    the strata sampled least (50 of CIFAR-10's 10,000 test items in StratifiedAIPW's six strata, all right: a
    95 % lower limit of 0.929 against the exact 0.907).

    Parameters
    ----------
    n_sampled : array-like of shape (H,) or (m, H)
        Items sampled per stratum, whole numbers in [0, population]; a stratum with none adds its items freely.
    population : array-like of shape (H,) or (m, H)
        Items per stratum, whole numbers >= 0 (0: no stratum); broadcast against ``n_sampled``.
    all_right : bool or array-like of bool, shape (m,)
        True: the sample is all 1; False: all 0.
    confidence_level : float, default=0.95
        In (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``, multiples of ``1 / sum(population)``: floats for one design, else ndarrays of shape
        (m,).

    Notes
    -----
    .. math::

        W_{\\max} = \\max\\Big\\{W : \\max_{\\sum_h W_h = W}\\ \\prod_h
        \\binom{N_h - W_h}{n_h} \\Big/ \\binom{N_h}{n_h} > a\\Big\\},

    the lower limit :math:`1 - W_{\\max}/N`. Each factor is log-concave in :math:`W_h` (the ratio of successive
    factors, :math:`1 - n_h/(N_h - W_h)`, falls with :math:`W_h`), so the largest product for a total :math:`W`
    takes the :math:`W` largest of all strata's log-ratios: the greedy placement, one wrong item at a time where
    it lowers the probability least, is optimal (checked against every placement of small designs in the tests).

    References
    ----------
    Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
    American Statistician* 41(3), 215-218.

    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (Ch. 5, stratified random sampling).

    Examples
    --------
    Six strata of 400 items, 20 drawn from each and all right; then one stratum of 400, 120 drawn:

    >>> from effstats._hypergeometric import stratified_alike_interval
    >>> ci = stratified_alike_interval([20] * 6, [400] * 6, True)
    >>> round(ci.low, 4), ci.high
    (0.9708, 1.0)
    >>> ci = stratified_alike_interval([[120], [120]], [[400], [400]], [True, False])
    >>> ci.low, ci.high
    (array([0.975, 0.   ]), array([1.   , 0.025]))
    """
    level = check_confidence_level(confidence_level)
    k = _whole(n_sampled, "n_sampled", 0, ndim=(0, 1, 2))
    size = _whole(population, "population", 0, ndim=(0, 1, 2))
    scalar = k.ndim < 2 and size.ndim < 2
    try:
        k, size = np.broadcast_arrays(np.atleast_2d(k), np.atleast_2d(size))
    except ValueError:
        raise ValueError(f"population: expected a shape broadcastable to n_sampled's {np.shape(k)}, got "
                         f"{np.shape(size)}") from None
    _refuse_bad_designs(k, size)
    right = np.broadcast_to(np.asarray(all_right, dtype=bool), (len(k),))
    rows, inv = np.unique(np.concatenate([k, size], axis=1), axis=0, return_inverse=True)
    h = k.shape[1]
    a = (1 - level) / 2
    w = np.array([_stratified_wrong_max(r[:h], r[h:], a) for r in rows])[inv.ravel()]
    share = 1.0 - w / size.sum(axis=1)
    low, high = np.where(right, share, 0.0), np.where(right, 1.0, 1.0 - share)
    if scalar:
        return ConfidenceInterval(float(low[0]), float(high[0]))
    return ConfidenceInterval(low, high)


def _minority_count_low(n_h: np.ndarray, N_h: np.ndarray, c: int, a: float) -> float:
    """The fewest minority items a stratified population of ``N_h`` items (one design, arrays of shape (H,)) can
    hold while some placement of them among the strata gives a sample of ``n_h`` a stratum ``c >= 1`` or more
    minority items with probability above ``a`` (:func:`stratified_minority_limit`)."""
    n_h, N_h = n_h.astype(float), N_h.astype(float)
    sampled = n_h > 0
    if c == 1:
        # P(X >= 1) = 1 - prod_h P(none in stratum h): its logarithm is concave in each W_h, so over the placements
        # of W items its largest value is at a vertex, all W in one stratum while W stays below every stratum's
        # size; in stratum h, the smallest W with P(X_h >= 1) > a is the hypergeometric limit of a count of 1
        k_low, _ = _hyp_limits(np.ones(sampled.sum()), N_h[sampled], n_h[sampled], np.full(sampled.sum(), a))
        # beyond a stratum's size the vertices include that stratum full, whose sample is all minority
        return float(min(k_low.min(), N_h[sampled].min()))
    # Hoeffding (1956, Thm 4): X, a sum of independent Bernoulli variables (each stratum's hypergeometric count is
    # one, its generating function having real roots), has P(X >= c) at most the binomial's of its n terms and
    # mean mu whenever c >= mu + 1; the binomial tail is above a only for mu > n p_L, p_L the Clopper-Pearson lower
    # limit of c of n. The largest mean W items can give is the strata's sampling fractions filled densest first.
    n = n_h.sum()
    p_low = float(special.betaincinv(c, n - c + 1, a))
    mu_t = min(c - 1.0, n * p_low)
    f = np.where(sampled, n_h / np.where(N_h > 0, N_h, 1.0), 0.0)
    order = np.argsort(-f, kind="stable")
    f, size = f[order], N_h[order]
    before = np.concatenate([[0.0], np.cumsum(f * size)])  # the mean of the strata filled before each one
    start = np.concatenate([[0.0], np.cumsum(size)])
    for h in range(len(f)):
        if before[h + 1] > mu_t and f[h] > 0:
            # the smallest whole W with mean above mu_t; the rounding of mu_t / f never counts a W with mean equal
            # to mu_t as above it
            w = start[h] + np.floor((mu_t - before[h]) / f[h] * (1 + 1e-12)) + 1
            return float(max(c, w))
    return float(N_h.sum())


_MINORITY_LOW: dict = {}  # (design row's bytes, dtype, H, a) -> _minority_count_low: a pure function of its row


def _minority_count_low_of(row: np.ndarray, h: int, a: float) -> float:
    """:func:`_minority_count_low` of one row ``(n_h, N_h, c)`` of :func:`stratified_minority_limit`, each design
    computed once (a Monte-Carlo run asks for the same few designs again and again)."""
    key = (row.tobytes(), row.dtype.str, h, a)
    w = _MINORITY_LOW.get(key)
    if w is None:
        if len(_MINORITY_LOW) >= 100_000:
            _MINORITY_LOW.clear()
        w = _MINORITY_LOW[key] = _minority_count_low(row[:h], row[h:2 * h], int(row[-1]), a)
    return w


def stratified_minority_limit(n_sampled: Any, population: Any, n_minority: Any,
                              confidence_level: float = 0.95) -> np.ndarray:
    """Lower confidence limit of the minority's share among a stratified population, from the ``n_minority``
    minority responses (the wrong ones of a sample mostly right) of a stratified simple random sample of 0/1
    responses: ``W_low / N`` with every placement of fewer than ``W_low`` minority items among the strata giving
    ``n_minority`` or more of them in the sample a probability of at most :math:`a = (1 - \\text{level}) / 2`.

    A score is then at most ``1 - W_low / N`` (a sample mostly right) or at least ``W_low / N`` (mostly wrong)
    with a chance of missing of at most ``a``, wherever the items lie. An interval that estimates the design effect
    from a few minority responses (Korn & Graubard's at the effective sample size) is too short on this side when
    the population's minority items gather in the strata sampled most densely: a handful in the sample then says
    less than the residual variance suggests. With no minority response the limit is 0.

    Parameters
    ----------
    n_sampled : array-like of shape (H,) or (m, H)
        Items sampled per stratum, whole numbers in [0, population].
    population : array-like of shape (H,) or (m, H)
        Items per stratum, whole numbers >= 0 (0: no stratum); broadcast against ``n_sampled``.
    n_minority : int or array-like of shape (m,)
        Minority responses in the sample, whole numbers in [0, sum(n_sampled)].
    confidence_level : float, default=0.95
        In (0, 1).

    Returns
    -------
    ndarray of shape (m,), or float for one design
        ``W_low / sum(population)``.

    Notes
    -----
    With ``X`` the number of minority items in the sample and :math:`W_h` those of stratum :math:`h`, ``X`` is a
    sum of independent hypergeometric counts. For one minority response, :math:`P(X \\ge 1) = 1 - \\prod_h
    P(X_h = 0)` is largest with every item in one stratum (each factor is log-concave in :math:`W_h`, so the
    product is smallest at a vertex of the placements), the exact hypergeometric limit of the stratum where it is
    lowest. For :math:`c \\ge 2`, each hypergeometric count is a sum of independent Bernoulli variables (its
    generating function has real roots), and Hoeffding's (1956) Theorem 4 bounds :math:`P(X \\ge c)` by the
    binomial tail of the same number of trials :math:`n` and mean :math:`\\mu = \\sum_h W_h n_h / N_h` when
    :math:`c \\ge \\mu + 1`. The bound grows with :math:`\\mu`, whose largest value for a total :math:`W` fills
    the most densely sampled strata first; :math:`W_{\\mathrm{low}}` is the smallest :math:`W \\ge c` whose
    largest mean exceeds :math:`\\min(c - 1, n p_L)`, :math:`p_L` the Clopper-Pearson lower limit of :math:`c` of
    :math:`n`. With one stratum this is the binomial Clopper-Pearson limit without the finite-population
    correction, a little below the hypergeometric one.

    References
    ----------
    Hoeffding, W. (1956). On the distribution of the number of successes in independent trials. *The Annals of
    Mathematical Statistics* 27(3), 713-721.

    Pitman, J. (1997). Probabilistic bounds on the coefficients of polynomials with only real zeros. *Journal of
    Combinatorial Theory, Series A* 77(2), 279-303.

    Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology* 24(2), 193-201.

    Examples
    --------
    Six strata of 400 items, 40 drawn from one and 20 from each of the others, 3 wrong items in the sample: the
    score is at most 0.9971 (7 wrong items in the dense stratum may give 3); 24 drawn from each, at most 0.9954:

    >>> from effstats._hypergeometric import stratified_minority_limit
    >>> round(1 - stratified_minority_limit([40] + [20] * 5, [400] * 6, 3), 4)
    0.9971
    >>> (1 - stratified_minority_limit([24] * 6, [400] * 6, [0, 1, 3])).round(4)
    array([1.    , 0.9996, 0.9954])
    """
    level = check_confidence_level(confidence_level)
    k = _whole(n_sampled, "n_sampled", 0, ndim=(0, 1, 2))
    size = _whole(population, "population", 0, ndim=(0, 1, 2))
    c = _whole(n_minority, "n_minority", 0, ndim=(0, 1))
    scalar = k.ndim < 2 and size.ndim < 2 and c.ndim == 0
    try:
        k, size = np.broadcast_arrays(np.atleast_2d(k), np.atleast_2d(size))
        m = np.broadcast_shapes((len(k),), np.shape(c))
        k, size, c = np.broadcast_to(k, m + k.shape[1:]), np.broadcast_to(size, m + k.shape[1:]), np.broadcast_to(c, m)
    except ValueError:
        raise ValueError(f"population, n_minority: expected shapes broadcastable to n_sampled's {np.shape(k)}, got "
                         f"{np.shape(size)} and {np.shape(c)}") from None
    _refuse_bad_designs(k, size)
    if (c > k.sum(axis=1)).any():
        bad = c > k.sum(axis=1)
        raise ValueError(f"n_minority: expected at most the items sampled ({_first(k.sum(axis=1)[bad])}), got "
                         f"{_first(c[bad])}")
    a = (1 - level) / 2
    h = k.shape[1]
    rows, inv = np.unique(np.concatenate([k, size, c[:, None]], axis=1), axis=0, return_inverse=True)
    w = np.array([_minority_count_low_of(r, h, a) if r[-1] > 0 else 0.0 for r in rows])
    out = w[inv.ravel()] / size.sum(axis=1)
    return float(out[0]) if scalar else out
