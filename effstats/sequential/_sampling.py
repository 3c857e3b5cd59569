"""The sampling of :class:`effstats.sequential.SequentialEvaluator`: the cumulative sums of an arm's scores at each
look, in the given order or in ``n_runs`` random orders at once (hypergeometric draws for few distinct values,
permutations otherwise)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MAX_LEVELS = 8  # values with at most this many distinct levels are simulated by hypergeometric draws
_PERM_ROWS = 64  # runs permuted at once on the shuffle path: (rows, items) stays in cache


@dataclass(frozen=True)
class _Arm:
    values: np.ndarray  # (N,)
    codes: np.ndarray  # (N,)
    sizes: np.ndarray  # (D,) items per stratum


def arm_sums(arm: _Arm, sched: np.ndarray, n_runs: int, rng: np.random.Generator | None, stratified: bool):
    """Per dataset: (s1, s2, sa, cnt) cumulative sums of x, x^2, |x| (n_runs, K) and counts, the items drawn within
    datasets (``stratified``) or from all of them; ``rng=None`` keeps the order."""
    K, D = sched.shape
    if not stratified:
        yield from pooled_sums(arm, sched.sum(1), n_runs, rng)
        return
    for d in range(D):
        v = arm.values[arm.codes == d]
        nd = sched[:, d]
        cnt = nd.astype(float)
        if rng is None:  # the given order
            cs = np.cumsum(np.stack([v, v * v, np.abs(v)]), axis=1)[:, nd - 1]
            yield cs[0][None], cs[1][None], cs[2][None], cnt
            continue
        levels, counts = np.unique(v, return_counts=True)
        # hypergeometric draws cost a Python step per (look, level); a shuffle costs per (run, item)
        cheap_draws = K * (levels.size - 1) * 2_000 < n_runs * v.size
        if levels.size <= _MAX_LEVELS and cheap_draws:
            # sequential multivariate hypergeometric draws: O(runs * looks), no permutations
            inc = np.diff(np.concatenate(([0], nd)))
            remaining = np.broadcast_to(counts, (n_runs, levels.size)).astype(np.int64).copy()
            c = np.zeros((n_runs, K, levels.size), np.int32)
            for k in range(K):
                left = np.full(n_runs, inc[k], np.int64)
                for lv in range(levels.size - 1):
                    rest = remaining[:, lv + 1:].sum(1)
                    draw = rng.hypergeometric(remaining[:, lv], rest, left) if inc[k] else np.zeros(n_runs,
                                                                                                    np.int64)
                    c[:, k, lv] = draw
                    remaining[:, lv] -= draw
                    left -= draw
                c[:, k, -1] = left
                remaining[:, -1] -= left
            cum = np.cumsum(c, axis=1, out=c)  # counts fit int32; in place keeps memory at one copy
            yield cum @ levels, cum @ (levels * levels), cum @ np.abs(levels), cnt
            del c, cum
        else:
            yield (*shuffled_sums(v, nd, n_runs, rng), cnt)

def shuffled_sums(v: np.ndarray, nd: np.ndarray, n_runs: int, rng: np.random.Generator):
    """Sums of x, x^2, |x| over the first ``nd[k]`` items of ``n_runs`` random orders of ``v``, each (n_runs, K).

    Any number of distinct values (continuous scores): one permutation per run, made ``_PERM_ROWS`` runs at a
    time so the block stays in cache (a whole (runs, items) permutation is bound by memory bandwidth), then
    summed per batch of items (``add.reduceat``, not a cumsum over all items) and cumulated over
    the batches. Only the items the last look reaches are summed."""
    ends, pos = np.unique(nd, return_inverse=True)  # distinct look sizes (increasing), index of each look
    starts = np.concatenate(([0], ends[:-1]))
    used = int(ends[-1])
    nonneg = bool(v.min() >= 0)  # then |x| = x: one reduction fewer
    out = np.empty((3, n_runs, ends.size))
    lens = ends - starts
    # batches of equal size between the first and the last (the usual schedule): a reshape and a contiguous sum,
    # which vectorises where reduceat's segment-by-segment loop does not
    mid = lens.size > 2 and bool((lens[1:-1] == lens[1]).all())

    def blocks(x, o):
        if not mid:
            o[:] = np.add.reduceat(x, starts, axis=1)
            return
        o[:, 0] = x[:, : ends[0]].sum(1)
        o[:, 1:-1] = x[:, ends[0]: ends[-2]].reshape(x.shape[0], -1, lens[1]).sum(2)
        o[:, -1] = x[:, ends[-2]: used].sum(1)

    for r0 in range(0, n_runs, _PERM_ROWS):
        r1 = min(r0 + _PERM_ROWS, n_runs)
        x = rng.permuted(np.broadcast_to(v, (r1 - r0, v.size)), axis=1)[:, :used]
        blocks(x, out[0, r0:r1])
        if not nonneg:
            blocks(np.abs(x), out[2, r0:r1])
        np.multiply(x, x, out=x)
        blocks(x, out[1, r0:r1])
    if nonneg:
        out[2] = out[0]
    np.cumsum(out, axis=2, out=out)
    return out[0][:, pos], out[1][:, pos], out[2][:, pos]

def pooled_sums(arm: _Arm, tot: np.ndarray, n_runs: int, rng: np.random.Generator | None):
    """:func:`arm_sums` of items drawn from all datasets at once (``tot[k]`` items at look ``k``)."""
    D = arm.sizes.size
    idx = np.broadcast_to(np.arange(arm.values.size), (n_runs, arm.values.size))
    if rng is not None:
        idx = rng.permuted(idx, axis=1)
    x = arm.values[idx]
    g = arm.codes[idx]
    for d in range(D):
        m = g == d
        xm = x * m
        yield (np.cumsum(xm, axis=1)[:, tot - 1], np.cumsum(xm * x, axis=1)[:, tot - 1],
               np.cumsum(np.abs(xm), axis=1)[:, tot - 1], np.cumsum(m, axis=1)[:, tot - 1].astype(float))
