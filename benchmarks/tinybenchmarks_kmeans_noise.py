"""TinyBenchmarks' anchor k-means iterations against the Monte-Carlo noise of its estimates.

Each anchor k-means run (``effstats._anchor_kmeans._weighted_kmeans``) stops after at most ``_KMEANS_ITER`` Elkan
iterations. This script fits ``TinyBenchmarks(100)`` with its defaults for each of ``--seeds`` anchor seeds
(``random_state``) and each cap of ``--iters`` (the first one the reference, the others the cheaper settings, the
seeds' loops outermost so that the settings alternate) and scores the held-out models' weighted (anchor), p-IRT
and gp-IRT estimates against their true full-benchmark scores. A seed fixes the k-means++ starts, so the settings
are paired by seed; the IRT fits are cached by data, so the fits differ in their anchors only (and, through the
validation's anchor draws, possibly in the dimension chosen).

The data: simulated 2PL responses of 110 models × 80,000 items (``simulate_responses(110, 80_000, rng=0)``; the
first 90 models are the sources, a 90 × 80,000 matrix as in issue 31's target, the last 20 the targets), or
ImageNet's 67 × 80,000 (val and the three V2 sets; a random fifth of the models held out, as
``tinybenchmarks_final_fit.py`` holds it out).

The test, per data set and estimate: with :math:`\\Delta_s` the MAE of a cheaper setting minus the reference's on
seed :math:`s` (paired by seed), the cheaper setting passes if the one-sided 95 % upper bound
:math:`\\bar\\Delta + t_{0.95, S-1}\\,\\mathrm{se}(\\bar\\Delta)` is at most the seed-to-seed standard deviation
of the reference's MAE (the Monte-Carlo noise of one fit's error): a non-inferiority test whose margin is that
noise. A margin of half the noise, also printed, cannot be met with 10 seeds even by a setting as good as the
reference when its anchors are as different from the reference's as another seed's: :math:`\\Delta_s` then has
about :math:`\\sqrt 2` times the noise's s.d., and the bound is expected at 0.82 times the noise. The paired
t-test's one-sided p-value (the cheaper setting worse) is printed beside.

    EFFSTATS_DATA=/work/shared/data/predictions OPENBLAS_NUM_THREADS=1 nice -n 5 .venv/bin/python \\
        benchmarks/tinybenchmarks_kmeans_noise.py --data simulated --out sim.json [--seeds 10] [--iters 30,15,10,5]
    .venv/bin/python benchmarks/tinybenchmarks_kmeans_noise.py --report sim.json imagenet.json
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import json
import time
import warnings

import numpy as np
from scipy import stats

import effstats._anchor_kmeans as ak
import effstats._items as items
from effstats.datasets.predictions import load_imagenet_predictions
from effstats.datasets.simulate import simulate_responses
from effstats.irt import TinyBenchmarks

ESTIMATES = ("weighted", "p-irt", "gp-irt")


def split(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The sources' and the targets' responses of data set ``name``."""
    if name == "simulated":
        Y = simulate_responses(110, 80_000, rng=0).values.astype(bool)
        return Y[:90], Y[90:]
    Y = load_imagenet_predictions().values.astype(bool)
    m = len(Y)
    perm = np.random.default_rng(0).permutation(m)
    return Y[np.sort(perm[m // 5:])], Y[np.sort(perm[:m // 5])]


def run(name: str, seeds: range, iters: list[int], path: str) -> dict:
    """Every seed's fit with every cap, in this process (one process: ``n_jobs=1``, the k-means in this process,
    where the cap is set; the estimates do not depend on ``n_jobs``), written to ``path`` after each fit."""
    src, tgt = split(name)
    truth = tgt.mean(1)
    out = {"data": name, "shape": list(src.shape), "targets": len(tgt), "iters": iters, "truth": truth.tolist(),
           "fits": []}
    kmeans_cpu = [0.0]
    anchors_of = items._anchors_of

    def timed(*a, **k):
        c = time.process_time()
        try:
            return anchors_of(*a, **k)
        finally:
            kmeans_cpu[0] += time.process_time() - c

    items._anchors_of = timed
    try:
        for seed in seeds:
            for it in iters:
                ak._KMEANS_ITER = it
                items._ANCHORS.clear()  # the anchors' cache is not keyed by the cap
                kmeans_cpu[0] = 0.0
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tb = TinyBenchmarks(100, n_jobs=1, random_state=seed).fit(src)
                est = tb.predict_all(tgt[:, tb.selected_])
                row = {"seed": seed, "iters": it, "kmeans_cpu_s": kmeans_cpu[0], "n_dims": int(tb.n_dims_),
                       "lambda": float(tb.lambda_), "selected": tb.selected_.tolist(),
                       "mae": {e: float(100 * np.abs(est[e] - truth).mean()) for e in ESTIMATES},
                       **{e: est[e].tolist() for e in ESTIMATES}}
                out["fits"].append(row)
                with open(path, "w") as f:
                    json.dump(out, f)
                mae = " ".join(f"{e} {row['mae'][e]:.3f}" for e in ESTIMATES)
                print(f"{name} seed {seed} iters {it}: d = {tb.n_dims_}, λ = {tb.lambda_:.3f}, k-means "
                      f"{kmeans_cpu[0]:.2f} CPU s; MAE (points) {mae}", flush=True)
    finally:
        items._anchors_of = anchors_of
    return out


def report(res: dict) -> None:
    """The reference's MAE and seed-to-seed noise, each cheaper setting's paired difference and the test (a fit's
    row may hold its MAE alone, without the estimates: then the moves of the estimates are over the others)."""
    iters = res["iters"]
    ref = iters[0]
    truth = np.array(res["truth"])
    for f in res["fits"]:
        f.setdefault("mae", {e: float(100 * np.abs(np.array(f[e]) - truth).mean()) for e in ESTIMATES if e in f})
    fits = {(f["seed"], f["iters"]): f for f in res["fits"]}
    seeds = sorted(s for s in {f["seed"] for f in res["fits"]} if all((s, it) in fits for it in iters))  # whole
    S = len(seeds)
    t95 = stats.t.ppf(0.95, S - 1)
    print(f"{res['data']}: sources {res['shape'][0]} x {res['shape'][1]}, {res['targets']} targets, {S} anchor "
          f"seeds; MAE in points, mean ± s.d. over seeds")
    for it in iters:
        cpu = np.median([fits[s, it]["kmeans_cpu_s"] for s in seeds])
        dims = sorted({fits[s, it]["n_dims"] for s in seeds})
        held = [s for s in seeds if "selected" in fits[s, it] and "selected" in fits[s, ref]]
        same = sum(fits[s, it]["selected"] == fits[s, ref]["selected"] for s in held)
        print(f"  at most {it:>2} iterations: k-means {cpu:.2f} CPU s (median), d chosen {dims}, anchors as the "
              f"reference's on {same} of {len(held)} seeds")
        for e in ESTIMATES:
            mae = np.array([fits[s, it]["mae"][e] for s in seeds])
            mae0 = np.array([fits[s, ref]["mae"][e] for s in seeds])
            est = 100 * np.array([fits[s, it][e] for s in held])  # (seeds, targets)
            base = 100 * np.array([fits[s, ref][e] for s in held])
            noise = mae0.std(ddof=1)
            # each target's estimate over the seeds (s.d., mean over the targets); how far the setting moves them
            spread = f"{base.std(0, ddof=1).mean():.3f}" if len(held) > 1 else "n/a"
            moved = f"{np.abs(est - base).mean():.3f}" if held else "n/a"
            if it == ref:
                print(f"    {e:>8}: MAE {mae.mean():.3f} ± {noise:.3f}; each target's estimate over the seeds "
                      f"± {spread} (s.d., mean over targets)")
                continue
            d = mae - mae0
            se = d.std(ddof=1) / np.sqrt(S)
            upper = d.mean() + t95 * se
            p = stats.t.sf(d.mean() / se, S - 1) if se > 0 else (0.0 if d.mean() > 0 else 1.0)
            print(f"    {e:>8}: MAE {mae.mean():.3f} ± {mae.std(ddof=1):.3f}; − reference {d.mean():+.3f} ± {se:.3f} "
                  f"(s.e.; worse: p = {p:.2f}), upper bound {upper:+.3f}: margin {noise:.3f} "
                  f"{'passes' if upper <= noise else 'FAILS'} (half: {'passes' if upper <= noise / 2 else 'fails'}); "
                  f"estimates moved {moved} on average")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=("simulated", "imagenet"))
    ap.add_argument("--out")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds --first-seed, ..., --first-seed + --seeds - 1")
    ap.add_argument("--iters", default="30,15,10,5", help="k-means iteration caps, the reference first")
    ap.add_argument("--report", nargs="+", metavar="FILE", help="files of one data set (their fits merged)")
    args = ap.parse_args()
    if args.report:
        res = None
        for path in args.report:
            with open(path) as f:
                part = json.load(f)
            if res is None:
                res = part
            else:
                assert part["data"] == res["data"] and part["iters"] == res["iters"]
                res["fits"] += part["fits"]
        report(res)
        return
    if not args.data or not args.out:
        ap.error("--data NAME --out FILE, or --report FILE...")
    run(args.data, range(args.first_seed, args.first_seed + args.seeds), [int(i) for i in args.iters.split(",")],
        args.out)


if __name__ == "__main__":
    main()
