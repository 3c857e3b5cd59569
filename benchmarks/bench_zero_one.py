"""Reading 0/1 results: :class:`effstats.ResponseMatrix` and ``check_binary`` on a 90 x 80,000 float matrix.

Both snap 0/1 results off by floating-point noise (values within 1e-9 of 0 or 1, when every value is) and decide
whether the matrix is 0/1 from one scan of the data (``snap_zero_one_scan``). Three matrices: exact 0/1, 0/1 with
noise of 1e-13, and graded scores; ResponseMatrix also with every 7th item missing. Times are CPU seconds of this
process (the fastest of ``--repeats``: the machine may be shared); each result is checked against the rule written
out (round, then snap only when every value lies within 1e-9 of the 0 or 1 it rounds to).

Usage: python benchmarks/bench_zero_one.py [--models 90] [--items 80000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from effstats import ResponseMatrix
from effstats._validation import check_binary


def _rule(a: np.ndarray) -> np.ndarray:
    r = np.rint(a)
    near = ((r == 0) | (r == 1)) & (np.abs(a - r) <= 1e-9)
    return np.where(near, r + 0.0, a) if near.all() else a


def _cpu(f, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", type=int, default=90)
    ap.add_argument("--items", type=int, default=80_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    exact = (rng.random((args.models, args.items)) < 0.6).astype(float)
    noisy = exact + rng.normal(0, 1e-13, exact.shape)
    graded = rng.random(exact.shape)
    missing = np.broadcast_to(np.arange(args.items) % 7 == 0, exact.shape)
    print(f"{args.models} x {args.items:,} float matrix, CPU seconds (fastest of {args.repeats})")
    print("| matrix | ResponseMatrix | with missing cells | check_binary |")
    print("|---|---|---|---|")
    for name, a in (("exact 0/1", exact), ("0/1 with noise 1e-13", noisy), ("graded scores", graded)):
        want = _rule(a)
        binary = bool(np.isin(want, (0, 1)).all())
        rm = ResponseMatrix(a)
        assert rm.kind == ("binary" if binary else "score") and np.array_equal(rm.values, want == 1 if binary else
                                                                                 want)
        times = [_cpu(lambda: ResponseMatrix(a), args.repeats), _cpu(lambda: ResponseMatrix(a, missing=missing),
                                                                     args.repeats)]
        if binary:
            assert np.array_equal(check_binary(a, "y"), want == 1)
            times.append(_cpu(lambda: check_binary(a, "y"), args.repeats))
        print(f"| {name} | " + " | ".join(f"{t:.3f}" for t in times) + (" |" if binary else " | (refused) |"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
