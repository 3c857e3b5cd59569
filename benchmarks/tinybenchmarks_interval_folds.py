"""TinyBenchmarks' conformal interval with the validated IRT dimension refitted or kept in the folds: time, coverage.

``TinyBenchmarks.predict_interval`` takes cross-validated residuals of the source models: the estimator is fitted
again on each fold's sources (items and IRT model) and predicts the held-out ones. The folds keep the dimension the
fit on all sources validated, and gp-IRT's λ (``TinyBenchmarks._fold_params``); ``--folds validate`` instead keeps λ
alone, so every fold validates the dimension again among ``dims_grid`` (2/5/10/15: four IRT fits, joint ML).

``--time``: CPU seconds (this process and its child processes: the k-means process and the joint fit's workers) and
wall seconds of ``TinyBenchmarks(100, random_state=0).fit`` and of the first ``predict_interval`` (5 folds), each
configuration in a fresh process, on ImageNet val (50 random models of 67 × 50,000 images; the other 17 are the
targets), CIFAR-10 (30 × 14,021; every model a target) and AlpacaEval (58 × 805 wins, P(win) > 0.5; every model a
target).

``--coverage``: 95 % intervals of held-out targets against their true full scores, both fold rules on the same fit
(the fit on all sources does not depend on the rule): for each seed, a random fifth of the models held out (in
range) and the best fifth by full score held out (out of range), ``TinyBenchmarks(100, random_state=seed)``. Prints
per data set and scenario the coverage (all targets of all seeds), its Monte-Carlo standard error (s.d. of the
seeds' coverages / √seeds), the paired difference kept − validated with its standard error, and the mean width in
points. ``--items N`` takes N random items of each data set, for time (ImageNet val 1,000 and CIFAR-10 2,000 in
``benchmarks/README.md``); ``--targets random|best`` one of the two scenarios.

    EFFSTATS_DATA=../shared/data/predictions nice -n 5 .venv/bin/python benchmarks/tinybenchmarks_interval_folds.py \\
        --time [--data imagenet,cifar10,alpacaeval]
    EFFSTATS_DATA=../shared/data/predictions nice -n 5 .venv/bin/python benchmarks/tinybenchmarks_interval_folds.py \\
        --coverage [--seeds 10] [--data imagenet,cifar10,alpacaeval] [--items N] [--targets both]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np

from effstats.datasets.predictions import load_alpacaeval, load_cifar10_predictions, load_imagenet_predictions
from effstats.irt import TinyBenchmarks
from bench_tinybenchmarks import process_cpu as cpu  # the sibling script's (run as a script from benchmarks/)

DATA = ("imagenet", "cifar10", "alpacaeval")


def _lambda_only(self: TinyBenchmarks) -> dict:
    """The fold rule that validates the dimension again in every fold: only λ kept."""
    return {k: v for k, v in TinyBenchmarks._own_fold_params(self).items() if k == "gp_lambda"}


def use_rule(rule: str) -> None:
    """``kept``: the estimator's own fold parameters; ``validate``: λ alone, the dimension validated per fold."""
    if not hasattr(TinyBenchmarks, "_own_fold_params"):
        TinyBenchmarks._own_fold_params = TinyBenchmarks._fold_params
    TinyBenchmarks._fold_params = TinyBenchmarks._own_fold_params if rule == "kept" else _lambda_only


def load(name: str, n_items: int | None = None) -> np.ndarray:
    """The data set's 0/1 matrix; with ``n_items``, that many of its items at random (seeded)."""
    if name == "imagenet":
        Y = load_imagenet_predictions(domains="imagenet_val").values.astype(bool)
    elif name == "cifar10":
        Y = load_cifar10_predictions().values.astype(bool)
    else:
        Y = load_alpacaeval(outcome="win", exclude=None).values.astype(bool)
    if n_items and n_items < Y.shape[1]:
        Y = Y[:, np.sort(np.random.default_rng(0).choice(Y.shape[1], n_items, replace=False))]
    return Y


def time_one(name: str, rule: str) -> dict:
    """Fit and first interval of one data set under one fold rule, in this process."""
    use_rule(rule)
    Y = load(name)
    if name == "imagenet":
        perm = np.random.default_rng(0).permutation(len(Y))
        src, tgt = Y[perm[:50]], Y[perm[50:]]
    else:
        src, tgt = Y, Y
    TinyBenchmarks._fit_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c, t = cpu(), time.perf_counter()
        est = TinyBenchmarks(100, random_state=0).fit(src)
        c_fit, t_fit = cpu() - c, time.perf_counter() - t
        p = est.predict_interval(tgt[:, est.selected_])
        c_all, t_all = cpu() - c, time.perf_counter() - t
    ci = p.confidence_interval(0.95)
    return {"data": name, "shape": list(src.shape), "rule": rule, "n_dims": est.n_dims_, "lambda": est.lambda_,
            "fit_cpu": c_fit, "fit_wall": t_fit, "total_cpu": c_all, "total_wall": t_all,
            "width": float(100 * np.mean(ci.high - ci.low))}


def timing(data: list[str]) -> None:
    print(f"{'data':<11} {'sources':>13} {'folds':>9} {'d':>3} {'fit CPU s':>10} {'+ interval CPU s':>17} "
          f"{'(wall s)':>9} {'width':>6}")
    rows = []
    for name in data:
        for rule in ("validate", "kept"):
            out = subprocess.run([sys.executable, __file__, "--time-one", name, rule], capture_output=True, text=True,
                                 check=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(r)
            print(f"{name:<11} {' x '.join(map(str, r['shape'])):>13} {rule:>9} {r['n_dims']:>3} {r['fit_cpu']:10.1f} "
                  f"{r['total_cpu']:17.1f} {r['total_wall']:9.1f} {r['width']:6.2f}", flush=True)
    print("\n| data | folds | d | fit CPU s | fit + first interval, CPU s (wall s) | mean width (points) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['data']} {' × '.join(f'{v:,}' for v in r['shape'])} | {r['rule']} | {r['n_dims']} | "
              f"{r['fit_cpu']:.1f} | {r['total_cpu']:.1f} ({r['total_wall']:.1f}) | {r['width']:.2f} |")


def coverage(data: list[str], seeds: int, n_items: int | None, scenarios: tuple[str, ...]) -> None:
    print(f"{'data':<11} {'targets':<12} {'seed':>4} {'d':>3} {'cover validate':>15} {'cover kept':>11} "
          f"{'width validate':>15} {'width kept':>11} {'CPU s validate / kept':>22}")
    table = []
    for name in data:
        Y = load(name, n_items)
        acc = Y.mean(axis=1)
        m = len(Y)
        n_t = max(1, round(m / 5))
        for scenario in scenarios:
            cov = {"validate": [], "kept": []}
            wid = {"validate": [], "kept": []}
            for seed in range(seeds):
                if scenario == "random":
                    tgt = np.sort(np.random.default_rng(seed).choice(m, n_t, replace=False))
                else:
                    tgt = np.argsort(-acc, kind="stable")[:n_t]
                src = np.setdiff1d(np.arange(m), tgt)
                TinyBenchmarks._fit_cache.clear()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = TinyBenchmarks(100, random_state=seed).fit(Y[src])
                    secs = {}
                    for rule in ("validate", "kept"):
                        use_rule(rule)
                        est._cv = None  # the fit on all sources is shared; the folds follow the rule
                        TinyBenchmarks._fit_cache.clear()  # and pay for their own IRT fits
                        c = cpu()
                        ci = est.predict_interval(Y[tgt][:, est.selected_]).confidence_interval(0.95)
                        secs[rule] = cpu() - c
                        inside = (acc[tgt] >= ci.low) & (acc[tgt] <= ci.high)
                        cov[rule].append(inside.mean())
                        wid[rule].append(100 * np.mean(ci.high - ci.low))
                print(f"{name:<11} {scenario:<12} {seed:>4} {est.n_dims_:>3} {cov['validate'][-1]:15.3f} "
                      f"{cov['kept'][-1]:11.3f} {wid['validate'][-1]:15.2f} {wid['kept'][-1]:11.2f} "
                      f"{secs['validate']:10.1f} / {secs['kept']:.1f}", flush=True)
            cv, ck = np.array(cov["validate"]), np.array(cov["kept"])
            se = lambda x: float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")  # noqa: E731
            table.append((f"{name} {m - n_t} sources / {n_t} targets, {Y.shape[1]:,} items", scenario,
                          cv.mean(), se(cv), ck.mean(), se(ck), (ck - cv).mean(), se(ck - cv),
                          np.mean(wid["validate"]), np.mean(wid["kept"])))
    print("\n| data | targets | coverage, dimension validated in each fold | coverage, kept | kept − validated | "
          "mean width (points), validated / kept |")
    print("|---|---|---|---|---|---|")
    for d, s, a, sa, b, sb, dd, sd, wa, wb in table:
        print(f"| {d} | {s} | {a:.3f} ± {sa:.3f} | {b:.3f} ± {sb:.3f} | {dd:+.3f} ± {sd:.3f} | {wa:.2f} / {wb:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", action="store_true", help="time fit + first interval, each rule in a fresh process")
    ap.add_argument("--time-one", nargs=2, metavar=("DATA", "RULE"), help=argparse.SUPPRESS)
    ap.add_argument("--coverage", action="store_true", help="coverage and width of the 95 %% intervals")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--data", default=",".join(DATA), help="comma-separated among " + ", ".join(DATA))
    ap.add_argument("--items", type=int, default=None, help="--coverage on that many random items of each data set")
    ap.add_argument("--targets", choices=("both", "random", "best"), default="both",
                    help="--coverage's targets: a random fifth, the best fifth, or both")
    args = ap.parse_args()
    data = [d for d in args.data.split(",") if d]
    if bad := sorted(set(data) - set(DATA)):
        ap.error(f"--data: unknown {bad}; expected among {list(DATA)}")
    if args.time_one:
        print(json.dumps(time_one(*args.time_one)))
    elif args.time:
        timing(data)
    elif args.coverage:
        scenarios = {"both": ("random", "best fifth"), "random": ("random",), "best": ("best fifth",)}[args.targets]
        coverage(data, args.seeds, args.items, scenarios)
    else:
        ap.error("give --time or --coverage")


if __name__ == "__main__":
    main()
