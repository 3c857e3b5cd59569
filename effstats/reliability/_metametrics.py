"""Meta-metrics comparing a resampled benchmark with the original: Kendall τ, weighted τ, switches."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_array
from ._benchmark import _CHUNK_CELLS

# =============================================================================================
# Meta-metrics
# =============================================================================================
# Direct comparisons per batch of rows in the leaf blocks of the inversion counts: their temporaries (n · leaf
# booleans a row) stay within a few MB and are reused from the heap batch after batch, where one batch of tens of MB
# went to fresh pages every time (page faults: system time as large as the gain of batching).
_LEAF_BATCH_CELLS = 2**22

def _dense_ranks(Y: np.ndarray) -> np.ndarray:
    """Dense integer ranks (0 = smallest; equal values share a rank) of each row of Y (B, n)."""
    order = np.argsort(Y, axis=1, kind="stable")
    srt = np.take_along_axis(Y, order, axis=1)
    new = np.ones(srt.shape, np.int64)
    new[:, 0] = 0
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    out = np.empty(Y.shape, np.int64)
    np.put_along_axis(out, order, np.cumsum(new, axis=1), axis=1)
    return out


def _tie_pairs(sorted_keys: np.ndarray) -> np.ndarray:
    """Σ t(t−1)/2 over runs of equal values in each sorted row (B, n) → (B,)."""
    B, n = sorted_keys.shape
    pos = np.broadcast_to(np.arange(n), sorted_keys.shape)
    first = np.ones(sorted_keys.shape, bool)
    first[:, 1:] = sorted_keys[:, 1:] != sorted_keys[:, :-1]
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=1)
    return (pos - start).sum(1)  # each element counts the equal elements before it


def _blocks(n: int, leaf: int) -> tuple[int, int]:
    """Leaf width w <= ``leaf`` and padded length N = w · 2**k >= n for the merge passes.

    The width is the smallest that covers n in as many doublings as width ``leaf`` needs, so the padding stays
    under 2**k elements (4,571 models pad to 4,608, not 8,192) and every pass sorts little more than n keys.
    """
    k = int(np.ceil(np.log2(max(1, -(-n // leaf)))))
    w = max(1, -(-n // (1 << k)))
    return w, w << k


def _inversions(v: np.ndarray, leaf: int = 64) -> np.ndarray:
    """Number of pairs i < j with v[i] > v[j] in each row of the integer array v (B, n).

    Blocks of at most ``leaf`` elements are counted by direct comparison (one (B, n/leaf, leaf, leaf) array op)
    and sorted; then bottom-up merge passes, each one sort of (B, n) small-integer keys (radix for int16) that
    say which half each element came from, count the pairs across adjacent sorted blocks: O(n log n) work in
    log(n / leaf) passes that serve all rows at once.
    """
    B, n = v.shape
    w, N = _blocks(n, leaf)
    big = int(v.max(initial=0)) + 1
    dt = np.int16 if 2 * big + 1 < np.iinfo(np.int16).max else np.int64
    a = np.full((B, N), big, dt)  # padding larger than everything at the end adds no inversion
    a[:, :n] = v
    blk = a.reshape(B, N // w, w)
    upper = np.triu(np.ones((w, w), bool), 1)  # i < j
    inv = np.empty(B, np.int64)
    g = max(1, _LEAF_BATCH_CELLS // (N * w))
    for i in range(0, B, g):
        inv[i:i + g] = ((blk[i:i + g, :, :, None] > blk[i:i + g, :, None, :]) & upper).sum(axis=(1, 2, 3),
                                                                                         dtype=np.int64)
    a = np.sort(blk, axis=-1).reshape(B, N)
    while w < N:
        blk = a.reshape(B, N // (2 * w), 2, w)
        # key 2v for the left half, 2v+1 for the right: an equal right value sorts after the left one
        # (the lowest bit tells the halves apart after the sort: no argsort, no gather)
        keys = np.concatenate([2 * blk[:, :, 0], 2 * blk[:, :, 1] + 1], axis=-1)
        keys.sort(axis=-1, kind="stable")
        is_right = (keys & 1).astype(bool)
        # a left element preceded by r right elements forms r inversions (those right values are smaller)
        inv += (np.cumsum(is_right, axis=-1, dtype=np.int32) * ~is_right).sum(axis=(1, 2), dtype=np.int64)
        a = (keys >> 1).reshape(B, N)
        w *= 2
    return inv


# Up to this many models, rows without a missing score divide τ-b by one root of the product of the two pair
# counts; above it, and on the complete pairs of rows with missing scores, by the two roots in turn as
# scipy.stats.kendalltau does. The two forms differ by an ulp at most; each case keeps the form its audits' tables
# were computed with, so that they reproduce bit for bit.
_ONE_ROOT_UP_TO = 700


def kendall_tau(reference: Any, resampled: Any) -> np.ndarray:
    """Kendall τ-b between a reference score vector and many score vectors, in O(n log n) per row.

    Parameters
    ----------
    reference : array-like of shape (n_models,)
        Reference scores; a NaN entry (model without a reference score) drops that model.
    resampled : array-like of shape (B, n_models)
        Scores to compare with the reference, one row per resample; NaN entries (undefined scores) drop the
        pairs they are in, so τ is computed on the complete pairs (a NaN is never read as agreement or
        disagreement).

    Returns
    -------
    ndarray of shape (B,)
        Equal to ``scipy.stats.kendalltau`` (τ-b) row by row; a resample with no ordered pair gets τ = 0 (no
        agreement information) rather than NaN.

    See Also
    --------
    scipy.stats.kendalltau : The same statistic for one pair of rankings.
    effstats.reliability.dior : Uses it as the ``"kendall"`` meta-metric.

    Notes
    -----
    Knight's algorithm vectorised across rows: sort by (reference, resampled), count the discordant pairs as
    the inversions of the resampled ranks (merge sort, log n passes over all rows at once) and correct for
    ties as ``scipy.stats.kendalltau`` does. The rows are read in the reference's order, sorted once. Rows with
    NaN are computed on their complete pairs, those with the same missing entries together.

    References
    ----------
    .. [1] Knight, W. R. "A computer method for calculating Kendall's tau with ungrouped data". Journal of the
       American Statistical Association 61(314), 436–439, 1966.
    .. [2] Perlitz, Y., Bandel, E., Gera, A., Arviv, O., Ein-Dor, L., Shnarch, E., Slonim, N.,
       Shmueli-Scheuer, M. and Choshen, L. "Efficient Benchmarking (of Language Models)". NAACL 2024
       (arXiv:2308.11696), Sect. 2.1.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.reliability import kendall_tau
    >>> ref = np.array([4.0, 3.0, 2.0, 1.0])
    >>> kendall_tau(ref, np.array([[4, 3, 2, 1], [3, 4, 2, 1], [1, 2, 3, 4.]])).round(3).tolist()
    [1.0, 0.667, -1.0]
    """
    ref = check_array(reference, "reference", ndim=1, allow_nan=True)
    X = check_array(resampled, "resampled", ndim=2, allow_nan=True, shape=(None, ref.shape[0]))
    keep = ~np.isnan(ref)
    ref, X = ref[keep], X[:, keep]
    out = np.zeros(X.shape[0])
    n = ref.shape[0]
    if n < 2 or X.shape[0] == 0:
        return out
    _by_missing_pattern(ref, X, out, lambda r, x, complete: _kendall_complete(r, x, complete and n <= _ONE_ROOT_UP_TO))
    return out


def kendall_tau_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall τ-b of each row of ``X`` (B, n) with the same row of ``Y``: ``kendall_tau(X[b], Y[b][None])[0]`` for
    every b, the same floating-point numbers, from one sort of every row at once.

    As :func:`kendall_tau` with ``X[b]`` the reference: its NaN entries drop those models, and the NaN entries of
    ``Y[b]`` the pairs they are in. Here each row's entries left out get ranks of their own above every other one,
    in position order, in both rows: they then tie with nothing and are discordant with nothing, and the pair
    counts are those of the complete entries alone.
    """
    B, n = X.shape
    out = np.zeros(B)
    if B == 0 or n < 2:
        return out
    step = max(1, _CHUNK_CELLS // (4 * n))
    after = np.arange(n, 2 * n)  # the ranks of the entries left out, above the dense ranks (< n)
    for a in range(0, B, step):
        x, y = X[a:a + step], Y[a:a + step]
        x_nan, y_nan = np.isnan(x), np.isnan(y)
        ok = ~x_nan & ~y_nan
        # kendall_tau's n is the reference's entries; a row with a NaN among them in Y divides as scipy does
        one_root = ~(y_nan & ~x_nan).any(axis=1) & ((~x_nan).sum(axis=1) <= _ONE_ROOT_UP_TO)
        xr = np.where(ok, _dense_ranks(np.where(ok, x, np.inf)), after)
        yr = np.where(ok, _dense_ranks(np.where(ok, y, np.inf)), after)
        key = xr * (2 * n) + yr
        order = np.argsort(key, axis=1, kind="stable")  # (reference, other) order: equal references, others ascending
        key = np.take_along_axis(key, order, axis=1)
        k = ok.sum(axis=1).astype(np.int64)
        n0 = k * (k - 1) // 2
        n1, n2, n3 = _tie_pairs(np.sort(xr, axis=1)), _tie_pairs(np.sort(yr, axis=1)), _tie_pairs(key)
        num = n0 - n1 - n2 + n3 - 2 * _inversions(np.take_along_axis(yr, order, axis=1))
        defined = (n0 - n1 > 0) & (n0 - n2 > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.where(one_root, num / np.sqrt((n0 - n1).astype(float) * (n0 - n2).astype(float)),
                           num / np.sqrt(n0 - n1) / np.sqrt(n0 - n2))
        out[a:a + step] = np.where(defined, np.clip(tau, -1.0, 1.0), 0.0)
    return out


def _by_missing_pattern(ref: np.ndarray, X: np.ndarray, out: np.ndarray, fn: Any) -> None:
    """``out[b] = fn(ref[ok], X[:, ok], one_root)[b]`` for the rows b whose complete entries are ``ok``, rows of one
    pattern of missing entries at once; fewer than 2 complete entries give 0. ``one_root`` is True for the rows
    without a missing entry only (see _ONE_ROOT_UP_TO)."""
    nan = np.isnan(X)
    nan_rows = nan.any(1)
    rows = np.flatnonzero(~nan_rows)
    if rows.size:
        out[rows] = fn(ref, X if rows.size == len(X) else X[rows], True)
    if nan_rows.any():  # undefined scores in a resample: τ on its complete pairs
        idx = np.flatnonzero(nan_rows)
        patterns, which = np.unique(nan[idx], axis=0, return_inverse=True)
        for p, miss in enumerate(patterns):
            r = idx[which.reshape(-1) == p]
            ok = ~miss
            out[r] = fn(ref[ok], X[np.ix_(r, ok)], False) if ok.sum() >= 2 else 0.0


def _kendall_complete(ref: np.ndarray, X: np.ndarray, one_root: bool) -> np.ndarray:
    """Kendall's τ-b of ``ref`` (n,) with each row of ``X`` (B, n), neither with NaN; 0 where undefined."""
    B, n = X.shape
    out = np.zeros(B)
    if n < 2:
        return out
    xr = _dense_ranks(ref[None])[0]
    o_x = np.argsort(xr, kind="stable")
    xs = xr[o_x]  # the reference's ranks ascending: the rows are read in this order
    x_ties = bool((xs[1:] == xs[:-1]).any())
    n0 = n * (n - 1) // 2
    n1 = int(_tie_pairs(xs[None])[0])
    step = max(1, _CHUNK_CELLS // (4 * n))
    for a in range(0, B, step):
        yr = _dense_ranks(X[a:a + step])
        b = len(yr)
        Q = yr[:, o_x]
        key = xs[None, :] * n + Q
        if x_ties:  # equal reference ranks: ascending resampled ranks among them, the (reference, resampled) order
            order = np.argsort(key, axis=1, kind="stable")
            key, Q = np.take_along_axis(key, order, axis=1), np.take_along_axis(Q, order, axis=1)
        n3 = _tie_pairs(key)
        cnt = np.bincount((yr + n * np.arange(b)[:, None]).ravel(), minlength=b * n).reshape(b, n)
        n2 = (cnt * (cnt - 1) // 2).sum(1)
        dis = _inversions(Q)
        num = n0 - n1 - n2 + n3 - 2 * dis
        ok = (n0 - n1 > 0) & (n0 - n2 > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            if one_root:
                tau = num / np.sqrt(float(n0 - n1) * (n0 - n2).astype(float))
            else:  # as scipy.stats.kendalltau divides: the same floating-point operations
                tau = num / np.sqrt(n0 - n1) / np.sqrt(n0 - n2)
        out[a:a + step] = np.where(ok, np.clip(tau, -1.0, 1.0), 0.0)
    return out


def _smaller_before(v: np.ndarray, leaf: int = 64) -> np.ndarray:
    """Per element of each row of the integer array v (B, n): how many earlier elements are strictly smaller.

    Same scheme as :func:`_inversions` (direct comparison in leaf blocks, then merge passes). Each element is one
    int64 key holding, from the highest bits, its block, value, half, position and its count so far: a pass is one
    sort of a row's keys (the count bits below the distinct positions never change the order) and an addition, and
    the counts are read back at their positions once, at the end. Values must be non-negative and below 2**20
    (dense ranks of fewer than a million models).
    """
    B, n = v.shape
    w, N = _blocks(n, leaf)
    big = int(v.max(initial=0)) + 1
    pos_bits = max(1, (N - 1).bit_length())  # also holds a count: at most N - 1 smaller elements
    half_shift = 2 * pos_bits
    val_shift = half_shift + 1
    blk_shift = val_shift + big.bit_length()
    if blk_shift + max(1, (N // w).bit_length()) > 62:
        raise ValueError(f"v: values below 2**20 expected in rows of fewer than 2**20, got {big - 1} and {n}")
    dt = np.int16 if big < np.iinfo(np.int16).max else np.int64  # the direct comparison on the narrowest type
    a = np.full((B, N), big, dt)  # padding after the real elements is counted only for itself, then dropped
    a[:, :n] = v
    blk = a.reshape(B, N // w, w)
    lower = np.tril(np.ones((w, w), bool), -1)  # j < i
    pos = np.arange(N, dtype=np.int64)
    keys = (a.astype(np.int64) << val_shift) | (pos << pos_bits)
    g = max(1, _LEAF_BATCH_CELLS // (N * w))
    for i in range(0, B, g):
        keys[i:i + g] += ((blk[i:i + g, :, None, :] < blk[i:i + g, :, :, None]) & lower).sum(-1).reshape(-1, N)
    keys.reshape(B, N // w, w).sort(axis=-1)  # the leaf blocks sorted by (value, position)
    keep = (np.int64(1) << blk_shift) - 1 - (np.int64(1) << half_shift)  # value, position and count
    while w < N:
        # the pair of blocks each key merges in, and the half bit set on the left: an equal left value sorts after
        # the right one, so the left elements before a right element are exactly its strictly smaller ones
        keys &= keep
        keys |= ((pos // (2 * w)) << blk_shift) | (((pos // w) % 2 == 0).astype(np.int64) << half_shift)
        # keys are distinct (positions); timsort ("stable") merges the two sorted runs of each pair in linear time
        keys.sort(axis=-1, kind="stable")
        m = keys.reshape(B, N // (2 * w), 2 * w)
        is_left = (m >> half_shift) & 1
        m += np.cumsum(is_left, axis=-1) * (1 - is_left)
        w *= 2
    out = np.empty((B, N), np.int32)
    low = (np.int64(1) << pos_bits) - 1
    np.put_along_axis(out, (keys >> pos_bits) & low, keys & low, axis=1)
    return out[:, :n]


def _run_lengths(first: np.ndarray) -> np.ndarray:
    """Length of the run each element belongs to, from the (B, n) flags marking the first element of each run."""
    B, n = first.shape
    pos = np.arange(n, dtype=np.int32)
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=1)
    last = np.ones(first.shape, bool)
    last[:, :-1] = first[:, 1:]
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, n - 1), 1), axis=1), 1)
    return end - start + 1


def _first_flags(*sorted_rows: np.ndarray) -> np.ndarray:
    """Flags (B, n) of positions where any of the sorted key rows changes value (a new run starts)."""
    f = np.ones(sorted_rows[0].shape, bool)
    f[:, 1:] = False
    for z in sorted_rows:
        f[:, 1:] |= z[:, 1:] != z[:, :-1]
    return f


def _wtau_from_counts(u: np.ndarray, t: np.ndarray, v: np.ndarray, D: np.ndarray, tot: float) -> np.ndarray:
    """Vigna's additive weighted τ from the weighted tie sums u (first key), v (second key), t (both) and the
    weighted discordance D, as ``scipy.stats._stats._weightedrankedtau`` forms it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = ((tot - (v + u - t)) - 2.0 * D) / np.sqrt(tot - u) / np.sqrt(tot - v)
    tau = np.where((u >= tot * (1 - 1e-12)) | (v >= tot * (1 - 1e-12)), np.nan, tau)
    return np.clip(tau, -1.0, 1.0)


def _wtau_both(xs: np.ndarray, o_x: np.ndarray, x_ties: bool, yr: np.ndarray) -> np.ndarray:
    """Mean of the additive hyperbolic weighted τ of (x, y) and of (y, x) per row, weights 1/(r+1) on the rank r
    of each element in decreasing lexicographic order — ``scipy.stats.weightedtau(x, y)`` with its defaults.

    xs: the reference's dense ranks sorted ascending, ``o_x`` their stable order (``xs = xr[o_x]``), ``x_ties``
    whether any two are equal; yr: dense integer ranks of the resamples (B, n), int16 when n < 2**15.

    Both directions weigh the same pairs: the discordant partners of an element (pairs with (x_i − x_j)(y_i − y_j)
    < 0) do not depend on which key ranks first, only the weight of its position does. So each element's count is
    computed once, in the (x, y) order, and read in the (y, x) order too.
    """
    B, n = yr.shape
    Q = yr[:, o_x]  # the resampled ranks in the (x, y) order: x ascending, then (below) y within equal x
    if x_ties:
        Q = np.take_along_axis(Q, np.argsort(xs.astype(np.int64) * n + Q, axis=1, kind="stable"), axis=1)
    w = 1.0 / (n - np.arange(n))  # position q in ascending order has rank n - 1 - q
    tot = w.sum() * (n - 1)
    pos = np.arange(n, dtype=np.int32)
    # the (y, x) order: a stable sort of Q keeps equal y in ascending x
    qo = np.argsort(Q, axis=1, kind="stable")
    qsorted = np.take_along_axis(Q, qo, axis=1)
    qf = _first_flags(qsorted)
    q_start = np.maximum.accumulate(np.where(qf, pos, 0), axis=1)
    q_len = _run_lengths(qf)
    # per position of the (x, y) order: b = smaller y values, eb = equal y values before, ln = y tie-run length
    b = np.empty((B, n), np.int32)
    eb = np.empty((B, n), np.int32)
    ln = np.empty((B, n), np.int32)
    np.put_along_axis(b, qo, q_start, axis=1)
    np.put_along_axis(eb, qo, pos[None, :] - q_start, axis=1)
    np.put_along_axis(ln, qo, q_len, axis=1)
    sb = _smaller_before(Q)
    d = pos[None, :] - 2 * sb - eb + b  # greater y before (pos − sb − eb) + smaller y after (b − sb): discordant
    xb = np.broadcast_to(xs, (B, n))
    x_len = _run_lengths(_first_flags(xb))
    # (x, y) order: x ties u, joint ties t, y ties v, weighted discordance D
    tau_xy = _wtau_from_counts((x_len - 1) @ w, (_run_lengths(_first_flags(xb, Q)) - 1) @ w, (ln - 1) @ w, d @ w,
                               tot)
    # (y, x) order: the same per-element quantities read in the order qo
    xq = xs[qo]
    x_len_q = np.bincount(xs, minlength=n).astype(np.int32)[xq]
    tau_yx = _wtau_from_counts((q_len - 1) @ w, (_run_lengths(_first_flags(qsorted, xq)) - 1) @ w,
                               (x_len_q - 1) @ w, np.take_along_axis(d, qo, axis=1) @ w, tot)
    return (tau_xy + tau_yx) / 2


def _weighted_tau(ref: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Vigna's weighted τ per resample, equal to ``scipy.stats.weightedtau(ref, x)`` with its defaults (hyperbolic
    weigher 1/(r+1), additive, ``rank=True``: the mean of the values obtained with the decreasing lexicographic
    ranks by (x, y) and by (y, x)), so swaps among the top models weigh most. Vectorised across resamples in
    O(n log n) per row (rows with NaN go to scipy on their complete entries); an undefined τ counts as 0."""
    ref = np.asarray(ref, dtype=float)
    X = np.asarray(X, dtype=float)
    keep = ~np.isnan(ref)
    ref, X = ref[keep], X[:, keep]
    out = np.zeros(X.shape[0])
    n = ref.size
    if n < 2 or X.shape[0] == 0:
        return out
    nan_rows = np.isnan(X).any(1)
    if nan_rows.any():
        # scipy's sequential sums, not the vectorised ones (equal to an ulp or two): the rows with missing scores
        # keep the values their audits' tables were computed with
        from scipy import stats
    for b in np.flatnonzero(nan_rows):
        ok = ~np.isnan(X[b])
        t = stats.weightedtau(ref[ok], X[b, ok]).statistic if ok.sum() >= 2 else np.nan
        out[b] = 0.0 if np.isnan(t) else t
    rows = np.flatnonzero(~nan_rows)
    if rows.size:
        out[rows] = _weighted_tau_complete(ref, X if rows.size == len(X) else X[rows])
    return out


def _weighted_tau_complete(ref: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Weighted τ of ``ref`` (n,) with each row of ``X`` (B, n), neither with NaN; 0 where undefined."""
    B, n = X.shape
    out = np.zeros(B)
    dt = np.int16 if n < np.iinfo(np.int16).max // 2 else np.int64
    xr = _dense_ranks(ref[None])[0].astype(dt)
    o_x = np.argsort(xr, kind="stable")
    xs = xr[o_x]
    x_ties = bool((xs[1:] == xs[:-1]).any())
    step = max(1, _CHUNK_CELLS // (8 * n))
    for a in range(0, B, step):
        t = _wtau_both(xs, o_x, x_ties, _dense_ranks(X[a:a + step]).astype(dt))
        out[a:a + step] = np.where(np.isnan(t), 0.0, t)
    return out


def _switch(s: np.ndarray, hi: Any, lo: Any) -> np.ndarray:
    """1 where the originally higher model ``hi`` falls below ``lo``, 0.5 on a tie, 1 if undefined."""
    a, b = s[..., hi], s[..., lo]
    out = np.where(a < b, 1.0, np.where(a == b, 0.5, 0.0))
    return np.where(np.isnan(a) | np.isnan(b), 1.0, out)  # an unscorable top model counts as an error


def _wilson(successes: float, n: int, ci: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion: ``statsmodels.stats.proportion.proportion_confint(successes, n,
    alpha=1 - ci, method="wilson")`` in the same floating-point steps (its normal quantile is ``-ndtri(alpha / 2)``,
    as ``scipy.stats.norm.isf`` computes it). Importing statsmodels' module imports scipy.stats: a fifth of a second
    of ``effstats audit``, whose best-model DIoR needs only this interval."""
    from scipy.special import ndtri

    crit = -ndtri((1 - ci) / 2.)
    crit2 = crit ** 2
    q = successes * 1. / n
    denom = 1 + crit2 / n
    center = (q + crit2 / (2 * n)) / denom
    dist = crit * np.sqrt(q * (1. - q) / n + crit2 / (4. * n ** 2))
    dist /= denom
    return float(center - dist), float(center + dist)
