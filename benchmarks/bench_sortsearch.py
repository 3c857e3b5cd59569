"""Sort & Search at Lifelong-CIFAR10 scale: bit-packed sort and vectorised search vs the paper's dense listing.

Targets (issue 4): sort 6,000 sort models × 1,697,682 items within 10 s and 3 GB peak on a 2-core box; search
25,250 new models at n' = 2,048 within 2 s. The dense baseline is the App. D listing in plain numpy
(``A.sum(axis=0)`` on a bool matrix, ``np.flip(np.argsort(...))``; ``dp_search`` one row at a time), timed on the
same data where it fits in memory (by default on the first ``--dense-models`` rows; ``--dense-models 6000``
materialises the full 10 GB bool matrix).

Usage: python benchmarks/bench_sortsearch.py [--models 6000] [--items 1697682] [--new 25250] [--budget 2048]
       [--dense-models 1000] [--quick]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from effstats.bitpack import PackedBinaryMatrix  # noqa: E402
from effstats.sortsearch import SortSearch, dp_search, sort_by_sum  # noqa: E402


def synthetic_packed(n_models: int, n_items: int, seed: int = 0, block: int = 32) -> tuple[PackedBinaryMatrix, np.ndarray]:
    """IRT-like correctness, generated and packed in row blocks on threads (never dense in full).

    P(correct) = sigmoid(1.7 (theta - d)) quantised to 1/256 through a 64 × 64 level table, compared with random
    bytes: one byte of randomness per cell keeps 10^10 cells affordable.
    """
    rng = np.random.default_rng(seed)
    d_level = np.clip(((rng.normal(size=n_items) + 3) / 6 * 64).astype(int), 0, 63).astype(np.uint8)
    t_level = np.clip(((rng.normal(size=n_models) + 3) / 6 * 64).astype(int), 0, 63)
    grid = np.linspace(-3, 3, 64)
    lut = np.round(255 / (1 + np.exp(-1.7 * (grid[:, None] - grid[None, :])))).astype(np.uint8)
    nb = (n_items + 7) // 8
    out = np.empty((n_models, nb), np.uint8)
    seeds = np.random.SeedSequence(seed).spawn((n_models + block - 1) // block)

    def make(b: int) -> None:
        s, e = b * block, min(n_models, (b + 1) * block)
        g = np.random.default_rng(seeds[b])
        thr = lut[t_level[s:e]][:, d_level]  # (rows, items) uint8 thresholds
        out[s:e] = np.packbits(g.integers(0, 256, size=thr.shape, dtype=np.uint8) < thr, axis=1)

    with ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        list(ex.map(make, range(len(seeds))))
    return PackedBinaryMatrix(out, n_items), (t_level, d_level, lut)


def listing_sort_by_sum(A: np.ndarray) -> np.ndarray:
    """App. D ``sort_by_sum`` verbatim."""
    sum_ranking = A.sum(axis=0)
    return np.flip(np.argsort(sum_ranking))


def listing_dp_search(query: np.ndarray) -> float:
    """App. D ``dp_search`` verbatim (one row)."""
    query = query.astype(np.int64)
    query[query == 0] = -1
    cumsum = np.cumsum(query)
    idx = np.argmax(cumsum)
    return idx / len(query)


def measure(fn, *args, **kw):
    """(result, seconds, peak extra bytes allocated during the call, per tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak() if hasattr(tracemalloc, "reset_peak") else None
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return out, dt, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=6000)
    ap.add_argument("--items", type=int, default=1_697_682)
    ap.add_argument("--new", type=int, default=25_250)
    ap.add_argument("--budget", type=int, default=2048)
    ap.add_argument("--dense-models", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="a 600 × 200,000 run in a few seconds")
    args = ap.parse_args()
    if args.quick:
        args.models, args.items, args.new, args.dense_models = 600, 200_000, 2525, 600
    GB = 2**30
    print(f"effstats Sort & Search benchmark on {os.cpu_count()} cores, numpy {np.__version__}")
    t0 = time.perf_counter()
    pm, (t_level, d_level, lut) = synthetic_packed(args.models, args.items)
    print(f"generated {pm} in {time.perf_counter() - t0:.1f} s (bool would be {args.models * args.items / GB:.1f} GiB)")

    # ---- sort: packed column sums + stable argsort
    order, t_sort, peak_sort = measure(sort_by_sum, pm)
    print(f"\nSORT {args.models} × {args.items}")
    print(f"  effstats packed : {t_sort:6.2f} s, peak {(pm.nbytes + peak_sort) / GB:.2f} GiB (data {pm.nbytes / GB:.2f} + extra {peak_sort / GB:.2f})"
          f"  [target 10 s, 3 GB] {'OK' if t_sort <= 10 and pm.nbytes + peak_sort <= 3e9 else 'MISSED'}")

    md = min(args.dense_models, args.models)
    sub = pm.take_rows(np.arange(md))
    dense = np.empty((md, args.items), bool)  # filled block by block: no second full-size temporary
    for s, blk in sub.row_blocks(256):
        dense[s : s + len(blk)] = blk
    o_d, t_d, pk_d = measure(listing_sort_by_sum, dense)
    o_p, t_p, pk_p = measure(sort_by_sum, sub)
    same = np.array_equal(np.sort(dense.sum(0)[o_d])[::-1], dense.sum(0)[o_p])
    print(f"  same data, first {md} models: dense listing {t_d:6.2f} s (data {dense.nbytes / GB:.2f} GiB + extra {pk_d / GB:.2f})"
          f" vs packed {t_p:6.2f} s (data {sub.nbytes / GB:.2f} GiB + extra {pk_p / GB:.2f}):"
          f" time ratio dense/packed {t_d / t_p:.2f}, memory ratio {(dense.nbytes + pk_d) / (sub.nbytes + pk_p):.1f}; same sums order: {same}")
    del dense, sub

    # ---- search: 25,250 new models evaluated on n' = 2,048 selected items
    est = SortSearch().fit(pm)
    items = est.select(args.budget)
    g = np.random.default_rng(1)
    new_levels = np.clip(((g.normal(size=args.new) + 3) / 6 * 64).astype(int), 0, 63)
    thr = lut[new_levels][:, d_level[items]]
    resp = g.integers(0, 256, size=thr.shape, dtype=np.uint8) < thr  # (25,250, 2,048) correctness on the selected items
    res, t_search, pk_search = measure(est.predict, resp, items)
    acc = res.accuracy
    print(f"\nSEARCH {args.new} new models at n' = {args.budget}")
    print(f"  effstats vectorised: {t_search:6.3f} s, extra {pk_search / 2**20:.0f} MiB  [target 2 s] {'OK' if t_search <= 2 else 'MISSED'}")
    t0 = time.perf_counter()
    frac = np.array([listing_dp_search(r) for r in resp])
    t_loop = time.perf_counter() - t0
    print(f"  dense listing, one row at a time: {t_loop:6.3f} s -> ratio {t_loop / t_search:.1f}×")
    exact = dp_search(resp)
    idx = np.round(frac * args.budget).astype(int)
    print(f"  listing's threshold index idx vs the exact count k: idx == k for {np.mean(idx == exact):.1%} of models,"
          f" idx + 1 == k for {np.mean(idx + 1 == exact):.1%} (the listing counts from 0 and cannot predict 'all wrong')")
    print(f"  estimated accuracies: mean {acc.mean():.3f}, range [{acc.min():.3f}, {acc.max():.3f}]")
    print(f"\nprocess peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
