"""TinyBenchmarks' anchor k-means against the reference procedure, in accuracy and time, on ImageNet.

The reference (the tinyBenchmarks authors' code) runs scikit-learn's k-means (Lloyd, k-means++ starts, best of 5)
on all items' correctness vectors. effstats runs one k-means on the distinct correctness vectors weighted by their
counts (the same objective and start distribution; ``effstats._subset._weighted_anchors``). For each seed, the
67 ImageNet models (80,000 items: ImageNet val and the three ImageNetV2 sets) are split at random into 50 sources
and 17 targets, and ``TinyBenchmarks(100, "anchor-corr", "gp-irt", n_dims=1)`` is fitted with either anchor
procedure (the IRT fits are shared); the script prints each seed's fit time and the mean absolute error (points)
of the weighted, p-IRT and gp-IRT estimates on the targets, then the mean ± s.d. over seeds and the paired
difference with its standard error.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tinybenchmarks.py [--seeds 10] [--n-init 1]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import effstats._subset as sub
import effstats.irt._tinybenchmarks as tb
from effstats.datasets.predictions import load_imagenet_predictions
from effstats.irt import TinyBenchmarks

ESTIMATES = ("weighted", "p-irt", "gp-irt")


def reference_anchors(X: np.ndarray, k: int, rng: np.random.Generator, n_init: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The reference procedure: scikit-learn's k-means (best of 5) on all rows, the item nearest each centroid,
    weighted by its cluster's share of the items."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import pairwise_distances_argmin

    with threadpool_limits(limits=1, user_api="openmp"):
        km = KMeans(n_clusters=k, n_init=5, random_state=int(rng.integers(2**31 - 1))).fit(X)
        anchors = pairwise_distances_argmin(km.cluster_centers_, X)
    shares = np.bincount(km.labels_, minlength=k) / X.shape[0]
    uniq, where = np.unique(anchors, return_inverse=True)
    return uniq, np.bincount(where, weights=shares)


def run(Y: np.ndarray, acc: np.ndarray, seed: int, n_init: int, reference: bool) -> tuple[float, dict[str, float]]:
    perm = np.random.default_rng(1000 + seed).permutation(len(Y))
    src, tgt = perm[:50], perm[50:]
    own = tb._weighted_anchors
    if reference:
        tb._weighted_anchors = reference_anchors
    TinyBenchmarks._fit_cache.clear()  # both procedures pay for their IRT fits
    sub._ANCHORS.clear()
    try:
        t = time.perf_counter()
        est = TinyBenchmarks(100, "anchor-corr", "gp-irt", n_dims=1, n_init=n_init, random_state=seed).fit(Y[src])
        el = time.perf_counter() - t
    finally:
        tb._weighted_anchors = own
    pred = est.predict_all(Y[tgt][:, est.selected_])
    return el, {m: float(100 * np.abs(pred[m] - acc[tgt]).mean()) for m in ESTIMATES}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10, help="number of random model splits (each also seeds k-means)")
    ap.add_argument("--n-init", type=int, default=1, help="k-means runs of effstats' procedure")
    args = ap.parse_args()
    Y = load_imagenet_predictions().values.astype(bool)
    acc = Y.mean(axis=1)
    rows = {"reference": [], "effstats": []}
    times = {"reference": [], "effstats": []}
    print(f"ImageNet {Y.shape[0]} x {Y.shape[1]}, 50 sources / 17 targets, TinyBenchmarks(100, anchor-corr, n_dims=1)")
    print(f"{'seed':>4} {'procedure':>10} {'fit s':>6} " + " ".join(f"{m:>9}" for m in ESTIMATES))
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(args.seeds):
            for name in ("reference", "effstats"):
                el, mae = run(Y, acc, seed, args.n_init, name == "reference")
                rows[name].append([mae[m] for m in ESTIMATES])
                times[name].append(el)
                print(f"{seed:>4} {name:>10} {el:6.1f} " + " ".join(f"{mae[m]:9.2f}" for m in ESTIMATES), flush=True)
    ref, own = np.array(rows["reference"]), np.array(rows["effstats"])
    print(f"\nMAE (points) over {args.seeds} seeds, mean ± s.d.; effstats − reference: mean ± standard error")
    for j, m in enumerate(ESTIMATES):
        d = own[:, j] - ref[:, j]
        print(f"{m:>9}: reference {ref[:, j].mean():.2f} ± {ref[:, j].std(ddof=1):.2f}, effstats {own[:, j].mean():.2f} "
              f"± {own[:, j].std(ddof=1):.2f}, difference {d.mean():+.2f} ± {d.std(ddof=1) / np.sqrt(len(d)):.2f}")
    print(f"fit time (median): reference {np.median(times['reference']):.1f} s, "
          f"effstats {np.median(times['effstats']):.1f} s")


if __name__ == "__main__":
    main()
