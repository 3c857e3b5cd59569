"""IRT at the size users have: TinyBenchmarks and the method chooser on 90 x 80,000 binary responses, one core.

Targets: a TinyBenchmarks fit on 90 models x 80,000 items within 10 s, the method chooser (default candidates,
with the IRT one) on 80 x 80,000 within 60 s. IRT2PL fits on the validation fits' shape are timed per dimension
(their estimates are pinned to 1e-6 by ``tests/test_irt_pinned.py``). It also times TinyBenchmarks' stages
(IRT fits, k-means anchor selection) so that a MISSED verdict says where the time goes, and with
``--kmeans-reference`` the reference's anchor k-means (scikit-learn's Lloyd on all items, best of 5) on the same
embedding, side by side with effstats' (one run on the distinct rows, weighted by their counts).
``benchmarks/bench_tinybenchmarks.py`` compares the two anchor procedures' accuracy on ImageNet.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_irt_scale.py [--quick] [--dims 1 2 5] [--defaults]
    [--chooser]
        [--kmeans-reference]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import effstats._items as sub
from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL, TinyBenchmarks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tinybenchmarks import reference_anchors  # noqa: E402

TARGET_TB, TARGET_CHOOSER = 10.0, 60.0


def timed(f):
    """Wall-clock seconds and result of f(); the process's CPU seconds of the call go to ``CPU["last"]`` (on a
    shared machine the wall clock includes waiting for a core; with one BLAS and OpenMP thread, CPU time is the
    one-core time)."""
    t, c = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = f()
    CPU["last"] = time.process_time() - c
    return time.perf_counter() - t, out


CPU = {"last": 0.0}


def verdict(ok: bool) -> str:
    return "OK" if ok else "MISSED"


def time_fits(Y: np.ndarray, dims: list[int]) -> None:
    print(f"IRT2PL on {Y.shape[0]} x {Y.shape[1]} (the validation fits' shape):")
    print(f"{'d':>3} {'method':>6} {'time s':>7} {'CPU s':>7} {'iters':>6}")
    for d in dims:
        t, fit = timed(lambda: IRT2PL(d).fit(Y))
        print(f"{d:>3} {fit.method_:>6} {t:7.2f} {CPU['last']:7.2f} {fit.n_iter_:>6}", flush=True)


def tinybenchmarks_stages(Y: np.ndarray, **params) -> float:
    """One TinyBenchmarks fit, timed in total and by stage (IRT fits; k-means anchors)."""
    import effstats.irt._tinybenchmarks as tb

    TinyBenchmarks._fit_cache.clear()
    sub._ANCHORS.clear()  # timed from scratch: no k-means result of an earlier fit
    spent = {"IRT fits": 0.0, "anchor k-means": 0.0}

    def clock(name, f):
        def g(*a, **k):
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t
        return g

    fit_irts, anchors = TinyBenchmarks._fit_irts, tb._weighted_anchors
    TinyBenchmarks._fit_irts, tb._weighted_anchors = clock("IRT fits", fit_irts), clock("anchor k-means", anchors)
    try:
        el, est = timed(lambda: TinyBenchmarks(100, random_state=0, **params).fit(Y))
    finally:
        TinyBenchmarks._fit_irts, tb._weighted_anchors = fit_irts, anchors
    label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    cpu = CPU["last"]
    print(f"TinyBenchmarks(100, {label}) fit on {Y.shape[0]} x {Y.shape[1]}: {el:.1f} s (CPU {cpu:.1f} s) "
          f"(IRT fits {spent['IRT fits']:.1f} s, anchor k-means {spent['anchor k-means']:.1f} s, other "
          f"{el - sum(spent.values()):.1f} s; d = {est.n_dims_})  [target {TARGET_TB:g} s] "
          f"{verdict(min(el, cpu) <= TARGET_TB)}", flush=True)
    return el


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="90 x 20,000 instead of 90 x 80,000")
    ap.add_argument("--dims", type=int, nargs="*", default=[1, 2, 5], help="IRT dimensions timed")
    ap.add_argument("--defaults", action="store_true", help="also the default TinyBenchmarks fit (dimension validated "
                    "among 2/5/10/15: four joint-ML fits of up to 500 sweeps; many minutes)")
    ap.add_argument("--chooser", action="store_true", help="also the method chooser on 80 x n_items (many minutes)")
    ap.add_argument("--kmeans-reference", action="store_true", help="also the reference's anchor k-means (best of 5 "
                    "on all items; about a minute at 80,000 items)")
    args = ap.parse_args()
    n_items = 20_000 if args.quick else 80_000
    Y = simulate_responses(90, n_items, rng=0).values.astype(bool)
    with threadpool_limits(limits=1):
        time_fits(Y[np.setdiff1d(np.arange(90), np.arange(0, 90, 5))].astype(float), args.dims)
        tinybenchmarks_stages(Y, n_dims=1)
        if args.kmeans_reference:
            X = Y.T.astype(float)
            t_ref, _ = timed(lambda: reference_anchors(X, 100, np.random.default_rng(0)))
            c_ref = CPU["last"]
            sub._ANCHORS.clear()
            t_own, _ = timed(lambda: sub._weighted_anchors(X, 100, np.random.default_rng(0)))
            print(f"anchor k-means on {X.shape[0]} items x {X.shape[1]} models: reference (Lloyd on all items, best of "
                  "5) "
                  f"{t_ref:.1f} s (CPU {c_ref:.1f} s), effstats (one run on {len(sub._distinct_rows(X)[0])} distinct "
                  "rows) "
                  f"{t_own:.1f} s (CPU {CPU['last']:.1f} s)", flush=True)
        if args.defaults:
            tinybenchmarks_stages(Y)
        if args.chooser:
            from effstats.disco import MethodChooser

            TinyBenchmarks._fit_cache.clear()
            sub._ANCHORS.clear()
            el, ch = timed(lambda: MethodChooser(random_state=0).fit(Y[:80]))
            cpu = CPU["last"]
            print(f"MethodChooser (default candidates) on 80 x {n_items}: {el:.1f} s (CPU {cpu:.1f} s), chose "
                  f"{ch.best_}  "
                  f"[target {TARGET_CHOOSER:g} s] {verdict(min(el, cpu) <= TARGET_CHOOSER)}")


if __name__ == "__main__":
    main()
