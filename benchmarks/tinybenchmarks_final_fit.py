"""``TinyBenchmarks(100)`` with its defaults on real data: CPU s of a fit, the final IRT fit's sweeps, and the
held-out models' estimates over anchor seeds, saved to compare two versions of the code.

A random fifth of the models (seeded) is held out as targets; the rest are the sources. The first fit is timed in a
fresh process (CPU s of the process, ``bench_tinybenchmarks.process_cpu``); the other seeds reuse its IRT fits (the
fits are cached by data and settings) and differ in their anchors only. ``--compare`` reads two such files (the
same split, the same seeds) and prints, per data set, each estimate's MAE against the targets' true full scores
(mean over seeds ± its s.e.), the paired difference of the MAEs and the mean |difference| of the estimates.

Usage (each run in the checkout whose code it measures, from any directory)::

    EFFSTATS_DATA=/work/shared/data/predictions OPENBLAS_NUM_THREADS=1 nice -n 5 .venv/bin/python \\
        benchmarks/tinybenchmarks_final_fit.py --one imagenet --out new-imagenet.json [--seeds 10] [--n-jobs 1] \\
        [--dims-grid 2,5,10,15] [--final-tol 1e-6]
    .venv/bin/python benchmarks/tinybenchmarks_final_fit.py --compare old-imagenet.json new-imagenet.json
"""
from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

from effstats.datasets.predictions import load_alpacaeval, load_cifar10_predictions, load_imagenet_predictions
from effstats.irt import TinyBenchmarks
from bench_tinybenchmarks import process_cpu as cpu  # the sibling script's (run as a script from benchmarks/)

DATA = ("imagenet", "cifar10", "alpacaeval")
ESTIMATES = ("gp-irt", "p-irt")


def load(name: str) -> np.ndarray:
    """ImageNet 67 × 80,000 (val and the three V2 sets), CIFAR-10 30 × 14,021, AlpacaEval 58 × 805 (wins)."""
    if name == "imagenet":
        return load_imagenet_predictions().values.astype(bool)
    if name == "cifar10":
        return load_cifar10_predictions().values.astype(bool)
    return load_alpacaeval(outcome="win", exclude=None).values.astype(bool)


def final_tol(tol: float) -> None:
    """The final IRT fit (not the validation fits) stopped at ``tol`` instead of ``irt_params``' (default 1e-6)."""
    fit_irt = TinyBenchmarks._fit_irt

    def patched(self: TinyBenchmarks, Y: np.ndarray, d: int, what: str, *args: object, **kwargs: object) -> object:
        if what != "the final model":
            return fit_irt(self, Y, d, what, *args, **kwargs)
        saved = self.irt_params
        self.irt_params = {**(saved or {}), "tol": tol}
        try:
            return fit_irt(self, Y, d, what, *args, **kwargs)
        finally:
            self.irt_params = saved

    TinyBenchmarks._fit_irt = patched


def one(name: str, seeds: int, n_jobs: int | None, grid: tuple[int, ...]) -> dict:
    """The fits of one data set in this process: the first one timed, then one per further anchor seed."""
    Y = load(name)
    m = len(Y)
    perm = np.random.default_rng(0).permutation(m)
    tgt, src = np.sort(perm[:m // 5]), np.sort(perm[m // 5:])
    truth = Y[tgt].mean(1)
    out = {"data": name, "shape": list(Y.shape), "targets": tgt.tolist(), "truth": truth.tolist(), "seeds": []}
    for seed in range(seeds):
        c0 = cpu()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tb = TinyBenchmarks(100, dims_grid=grid, n_jobs=n_jobs, random_state=seed).fit(Y[src])
        c1 = cpu()
        est = tb.predict_all(Y[tgt][:, tb.selected_])
        row = {"seed": seed, "cpu_s": c1 - c0, "n_dims": tb.n_dims_, "lambda": tb.lambda_,
               "n_iter": int(tb.irt_.n_iter_), "converged": bool(tb.irt_.converged_),
               **{k: est[k].tolist() for k in ESTIMATES}}
        out["seeds"].append(row)
        print(f"{name} seed {seed}: {row['cpu_s']:.2f} CPU s, d = {row['n_dims']}, λ = {row['lambda']:.3f}, final "
              f"fit {row['n_iter']} sweeps, MAE gp-IRT "
              f"{100 * np.abs(np.array(row['gp-irt']) - truth).mean():.3f} points", flush=True)
    return out


def compare(old: dict, new: dict) -> None:
    truth = np.array(old["truth"])
    assert old["targets"] == new["targets"] and len(old["seeds"]) == len(new["seeds"])
    s = len(old["seeds"])
    print(f"{old['data']} {old['shape'][0]} x {old['shape'][1]}, {len(truth)} targets, {s} anchor seeds; first fit "
          f"{old['seeds'][0]['cpu_s']:.1f} -> {new['seeds'][0]['cpu_s']:.1f} CPU s, final fit "
          f"{old['seeds'][0]['n_iter']} -> {new['seeds'][0]['n_iter']} sweeps, d {old['seeds'][0]['n_dims']} -> "
          f"{new['seeds'][0]['n_dims']}, λ {old['seeds'][0]['lambda']:.4f} -> {new['seeds'][0]['lambda']:.4f}")
    for k in ESTIMATES:
        eo = np.array([r[k] for r in old["seeds"]])  # (seeds, targets)
        en = np.array([r[k] for r in new["seeds"]])
        mo, mn = 100 * np.abs(eo - truth).mean(1), 100 * np.abs(en - truth).mean(1)
        d = mn - mo
        diff = 100 * np.abs(en - eo)
        print(f"  {k}: MAE old {mo.mean():.3f} ± {mo.std(ddof=1) / np.sqrt(s):.3f}, new {mn.mean():.3f} ± "
              f"{mn.std(ddof=1) / np.sqrt(s):.3f}, new − old {d.mean():+.3f} ± {d.std(ddof=1) / np.sqrt(s):.3f} "
              f"points; mean |new − old| {diff.mean():.3f} (max {diff.max():.3f}) = "
              f"{diff.mean() / mo.mean():.2f} × old MAE")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", choices=DATA)
    ap.add_argument("--out")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n-jobs", type=int, default=1, help="0: the default (one process per core)")
    ap.add_argument("--dims-grid", default="2,5,10,15", help="the candidate IRT dimensions (default: the reference's)")
    ap.add_argument("--final-tol", type=float, help="stop the final IRT fit at this tol (default: irt_params')")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    args = ap.parse_args()
    if args.compare:
        with open(args.compare[0]) as f, open(args.compare[1]) as g:
            compare(json.load(f), json.load(g))
        return
    if not args.one or not args.out:
        ap.error("--one DATA --out FILE, or --compare OLD NEW")
    if args.final_tol is not None:
        final_tol(args.final_tol)
    res = one(args.one, args.seeds, args.n_jobs or None, tuple(int(d) for d in args.dims_grid.split(",")))
    with open(args.out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
