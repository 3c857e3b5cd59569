"""TinyBenchmarks' anchor k-means against the reference procedure, in accuracy and time, on ImageNet.

The reference (the tinyBenchmarks authors' code) runs scikit-learn's k-means (Lloyd, k-means++ starts, best of 5)
on all items' correctness vectors. effstats runs one k-means on the distinct correctness vectors weighted by their
counts (the same objective and start distribution; ``effstats._items._weighted_anchors``). For each seed, the
67 ImageNet models (80,000 items: ImageNet val and the three ImageNetV2 sets) are split at random into 50 sources
and 17 targets, and ``TinyBenchmarks(100, "anchor-corr", "gp-irt", n_dims=1)`` is fitted with either anchor
procedure (the IRT fits are shared); the script prints each seed's fit time and the mean absolute error (points)
of the weighted, p-IRT and gp-IRT estimates on the targets, then the mean ± s.d. over seeds and the paired
difference with its standard error.

With ``--steps`` it times instead one ``TinyBenchmarks(100)`` fit with its defaults (the dimension validated among
2/5/10/15 on a sample of 4,000 items) on simulated 2PL responses of 90 models × ``--items`` items (10,000; 2,000 with
``--quick``), step by step: the anchor k-means, the validation IRT fits (joint ML; each with its iterations), the
chosen dimension's error on all items (its item step) and the final fit, in wall-clock and CPU seconds (of the
process and its child processes) with one BLAS thread (on a shared machine the wall clock includes waiting for a
core), once in one process (``n_jobs=1``) and once with the default ``n_jobs`` (one process per core: the k-means in
a process of its own while the IRT fits run, and the final fit's passes over the items shared with worker
processes); ``--validation-items 0`` validates on all items (the reference's procedure); ``--imagenet`` fits
ImageNet's 67 × 80,000 instead of the simulated matrix.

With ``--agreement`` it runs the reference's dimension validation (``validation="reference"``) alone on all items
and on the default sample of 4,000, on CIFAR-10 (30 × 14,021), simulated 4-dimensional responses (90 × 20,000) and,
with ``--imagenet``, ImageNet (67 × 80,000; about two CPU minutes on all items), and prints each one's errors,
choice and CPU seconds.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tinybenchmarks.py [--seeds 10] [--n-init 1]
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tinybenchmarks.py --steps [--quick | --items 10000]
        [--validation-items 4000] [--n-jobs 1 0] [--imagenet]
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_tinybenchmarks.py --agreement [--imagenet]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import threading
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import effstats._items as sub
import effstats.irt._tinybenchmarks as tb
from effstats.datasets.predictions import load_imagenet_predictions
from effstats.datasets.simulate import simulate_responses
from effstats.irt import TinyBenchmarks

ESTIMATES = ("weighted", "p-irt", "gp-irt")


def reference_anchors(X: np.ndarray, k: int, rng: np.random.Generator,
                      n_init: int = 5) -> tuple[np.ndarray, np.ndarray]:
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
        # n_jobs=1: the k-means in this process, where the reference procedure replaces it
        est = TinyBenchmarks(100, "anchor-corr", "gp-irt", n_dims=1, n_init=n_init, n_jobs=1,
                             random_state=seed).fit(Y[src])
        el = time.perf_counter() - t
    finally:
        tb._weighted_anchors = own
    pred = est.predict_all(Y[tgt][:, est.selected_])
    return el, {m: float(100 * np.abs(pred[m] - acc[tgt]).mean()) for m in ESTIMATES}


def process_cpu() -> float:
    """CPU seconds of this process's threads and of its finished child processes (the joint fit's workers)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def steps(n_items: int, n_jobs: int | None, validation_items: int | None, imagenet: bool = False) -> None:
    """One default fit on simulated 90 x n_items responses (ImageNet's 67 x 80,000 with ``imagenet``), timed step by
    step (wall and CPU seconds)."""
    from effstats.irt import IRT2PL

    if imagenet:
        Y = load_imagenet_predictions().values.astype(bool)
        what = "ImageNet"
    else:
        Y = simulate_responses(90, n_items, rng=0).values.astype(bool)
        what = "simulated"
    TinyBenchmarks._fit_cache.clear()
    sub._ANCHORS.clear()  # from scratch: no IRT fit or k-means of an earlier run
    rows = []

    def clock(label, f):
        def g(*a, **k):
            # a step in a worker thread (a validation fit, the k-means beside the fits) counts its thread's CPU; a
            # step in the main thread the process's and its worker processes' (and any step running beside it)
            main = threading.current_thread() is threading.main_thread()
            cpu = process_cpu if main else time.thread_time
            t, c = time.perf_counter(), cpu()
            out = f(*a, **k)
            rows.append((label(a, out) + ("" if main else " *"), time.perf_counter() - t, cpu() - c))
            return out
        return g

    irt_fit, fit_irts, anchors, item_map = IRT2PL.fit, TinyBenchmarks._fit_irts, tb._weighted_anchors, tb._item_map
    started = tb._started_anchor_runs

    def start(*a, **k):  # the k-means runs in their own process: the waits for their results, where the fit needs them
        jobs = started(*a, **k)
        for n, job in enumerate(jobs):
            what = "the final" if n == len(jobs) - 1 else f"validation draw {n + 1}'s"
            job.result = clock(lambda a, out, what=what: f"{what} anchor k-means in its own process: the wait",
                               job.result)
        return jobs
    tb._started_anchor_runs = start
    IRT2PL.fit = clock(lambda a, irt: f"  IRT fit d={irt.n_dims} ({a[1].shape[0]} models, {irt.n_iter_} iterations)",
                       irt_fit)
    TinyBenchmarks._fit_irts = clock(lambda a, fits: f"IRT fits ({a[3]}) (d = {', '.join(map(str, fits))})",
                                     fit_irts)
    tb._weighted_anchors = clock(lambda a, out: f"anchor k-means ({a[0].shape[0]} items)", anchors)
    tb._item_map = clock(lambda a, out: f"chosen d's error on all items: item step ({a[0].shape[1]} items)", item_map)
    try:
        t, c = time.perf_counter(), process_cpu()
        est = TinyBenchmarks(100, n_jobs=n_jobs, validation_items=validation_items, random_state=0).fit(Y)
        t, c = time.perf_counter() - t, process_cpu() - c
    finally:
        IRT2PL.fit, TinyBenchmarks._fit_irts, tb._weighted_anchors, tb._item_map = irt_fit, fit_irts, anchors, item_map
        tb._started_anchor_runs = started
    print(f"TinyBenchmarks(100, n_jobs={n_jobs}, validation_items={validation_items}) on {what} "
          f"{Y.shape[0]} x {Y.shape[1]} "
          f"(d chosen: {est.n_dims_}; validation errors "
          + ", ".join(f"{d}: {e:.4f}" for d, e in est.validation_errors_.items())
          + f"; chosen d's error on all items {est.validation_error_:.4f}, lambda {est.lambda_:.3f})")
    print(f"{'step':<62} {'wall s':>7} {'CPU s':>7}")
    for name, w, cpu in rows:
        print(f"{name:<62} {w:7.2f} {cpu:7.2f}")
    top = [r for r in rows if not r[0].startswith(" ") and not r[0].endswith("*")]
    print(f"{'other (abilities, predictions, checks)':<62} {t - sum(r[1] for r in top):7.2f} "
          f"{c - sum(r[2] for r in top):7.2f}")
    print(f"{'total':<62} {t:7.2f} {c:7.2f}")
    if any(r[0].endswith("*") for r in rows):
        print("* in a worker thread beside the main thread's steps, which count its CPU seconds too", flush=True)


def agreement(imagenet: bool) -> None:
    """The reference's dimension validation on all items and on the default sample: errors, choice, CPU seconds."""
    from effstats.datasets.predictions import load_cifar10_predictions

    def four_dims() -> np.ndarray:
        # gamma(0.5) slopes: items lean on one or two of the four abilities
        disc = lambda rng, shape: rng.gamma(0.5, 2.0, shape) / np.sqrt(shape[-1])  # noqa: E731
        return simulate_responses(90, 20_000, n_dims=4, discrimination=disc, rng=4).values.astype(bool)

    data = {"CIFAR-10": lambda: load_cifar10_predictions().values.astype(bool), "simulated 4-D": four_dims}
    if imagenet:
        data["ImageNet"] = lambda: load_imagenet_predictions().values.astype(bool)
    default = TinyBenchmarks().validation_items
    for name, load in data.items():
        Y = load()
        for items in (None, default):
            TinyBenchmarks._fit_cache.clear()
            c = time.process_time()
            tb = TinyBenchmarks(100, n_jobs=1, validation="reference", validation_items=items)
            d, errors, err = tb._validate_dims(Y, (2, 5, 10, 15), "mle")
            c = time.process_time() - c
            print(f"{name} {Y.shape[0]} x {Y.shape[1]}, validation_items={items}: d = {d} ("
                  + ", ".join(f"{k}: {e:.4f}" for k, e in errors.items())
                  + f"), chosen d's error on all items {err:.4f}, {c:.1f} CPU s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10, help="number of random model splits (each also seeds k-means)")
    ap.add_argument("--n-init", type=int, default=1, help="k-means runs of effstats' procedure")
    ap.add_argument("--steps", action="store_true", help="time one default fit step by step on simulated responses")
    ap.add_argument("--items", type=int, default=10_000, help="items of the simulated matrix of --steps")
    ap.add_argument("--quick", action="store_true", help="--steps on 90 x 2,000")
    ap.add_argument("--n-jobs", type=int, nargs="*", default=[1, 0],
                    help="n_jobs of the fits of --steps, one fit each (0: TinyBenchmarks' default)")
    ap.add_argument("--validation-items", type=int, default=TinyBenchmarks().validation_items,
                    help="validation_items of --steps (0: all items)")
    ap.add_argument("--agreement", action="store_true",
                    help="the dimension validation on all items and on the sample, on CIFAR-10 and simulated data")
    ap.add_argument("--imagenet", action="store_true",
                    help="--agreement also on ImageNet (slow on all items); --steps on ImageNet's 67 x 80,000")
    args = ap.parse_args()
    if args.agreement:
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agreement(args.imagenet)
        return
    if args.steps or args.quick:
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for n_jobs in args.n_jobs:
                steps(2_000 if args.quick else args.items, n_jobs or None, args.validation_items or None,
                      args.imagenet)
        return
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
        print(f"{m:>9}: reference {ref[:, j].mean():.2f} ± {ref[:, j].std(ddof=1):.2f}, effstats "
              f"{own[:, j].mean():.2f} "
              f"± {own[:, j].std(ddof=1):.2f}, difference {d.mean():+.2f} ± {d.std(ddof=1) / np.sqrt(len(d)):.2f}")
    print(f"fit time (median): reference {np.median(times['reference']):.1f} s, "
          f"effstats {np.median(times['effstats']):.1f} s")


if __name__ == "__main__":
    main()
