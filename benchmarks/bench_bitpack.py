#!/usr/bin/env python3
"""Build a bit-packed 2PL response matrix (default 6,000 models × 1,700,000 items = 10^10 cells) with
``simulate_packed_responses`` and report build time, row/column-sum times, packed size and peak memory.

    .venv/bin/python benchmarks/bench_bitpack.py                       # the full 10^10 cells
    .venv/bin/python benchmarks/bench_bitpack.py --models 200 --items 50000
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from effstats.datasets import simulate_packed_responses  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=6000)
    ap.add_argument("--items", type=int, default=1_700_000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--block-rows", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    cells = args.models * args.items
    print(f"simulating {args.models:,} models × {args.items:,} items = {cells:.3g} cells (n_jobs={args.n_jobs})")
    tracemalloc.start()
    t0 = time.perf_counter()
    packed, params = simulate_packed_responses(
        args.models, args.items, rng=args.seed, n_jobs=args.n_jobs, block_rows=args.block_rows,
        progress=not args.no_progress, return_params=True,
    )
    t_build = time.perf_counter() - t0
    _, peak_build = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()

    t1 = time.perf_counter()
    rs = packed.row_sums()
    t_rows = time.perf_counter() - t1
    t2 = time.perf_counter()
    cs = packed.col_sums()
    t_cols = time.perf_counter() - t2
    _, peak_sums = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux

    # sanity: the first rows' sums against the model's expected number correct (Monte-Carlo, 5 sd)
    k = min(4, args.models)
    prob = params.probability(np.arange(k))
    z = (rs[:k] - prob.sum(1)) / np.sqrt((prob * (1 - prob)).sum(1))
    assert rs.sum() == cs.sum(), "row and column sums disagree"
    print(f"packed size      : {packed.nbytes / 2**30:.3f} GiB ({packed.nbytes / 1e9:.3f} GB; dense bool would be "
          f"{cells / 1e9:.1f} GB)")
    print(f"build            : {t_build:.1f} s ({t_build / cells * 1e9:.2f} ns/cell)")
    print(f"row sums         : {t_rows:.2f} s")
    print(f"column sums      : {t_cols:.2f} s")
    print(f"peak traced mem  : build {peak_build / 2**30:.3f} GiB, sums {peak_sums / 2**30:.3f} GiB (tracemalloc)")
    print(f"peak RSS         : {maxrss / 2**30:.3f} GiB (ru_maxrss)")
    print(f"mean correctness : {rs.sum() / cells:.4f}; first rows' z vs 2PL truth: {np.round(z, 2).tolist()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
