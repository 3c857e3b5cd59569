"""IRT fits: time, convergence and final objective of 1-, 5- and 10-dimensional fits on 50 models x 10,000 items
(ImageNet val, the first 50 models and items, and the package's 2PL simulator), and a default TinyBenchmarks fit
(IRT dimension validated among 2/5/10/15). "own loss" is the objective IRT2PL minimises (loss_curve_[-1]);
"NLL/resp" the likelihood part alone, comparable across methods. Timings on a shared machine vary by 2-3x;
compare within one run.

    .venv/bin/python benchmarks/bench_irt.py [--quick]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL, TinyBenchmarks

def nll(Y, irt):
    """Per-response negative log-likelihood at the returned parameters (θ̂ aᵀ − b̂; comparable across methods and
    unchanged by IRT2PL's standardisation). For mml, θ̂ are MAP abilities given the items."""
    z = irt.theta_ @ irt.a_.T - irt.b_
    return np.sum(np.logaddexp(0, z) - Y * z) / Y.size


def timed_fit(cls, d, Y):
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        irt = cls(d).fit(Y)
    return time.perf_counter() - t, irt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="1-D and 5-D only, no TinyBenchmarks")
    args = ap.parse_args()
    data = {}
    try:
        from effstats.datasets.predictions import load_imagenet_predictions

        data["imagenet"] = load_imagenet_predictions().values[:50, :10000].astype(float)
    except Exception as e:  # data not available here
        print(f"(ImageNet predictions not available: {e})")
    dims = (1, 5) if args.quick else (1, 5, 10)
    for d in dims:
        data[f"sim-{d}D"] = simulate_responses(50, 10000, n_dims=d, rng=0).values.astype(float)
    print(f"{'data':>10} {'d':>3} {'method':>6} {'time s':>7} {'conv':>5} {'iters':>6} {'NLL/resp':>9} {'own loss':>9}")
    for name, Y in data.items():
        for d in dims:
            if name.startswith("sim") and not name.startswith(f"sim-{d}D"):
                continue
            el, irt = timed_fit(IRT2PL, d, Y)
            print(f"{name:>10} {d:>3} {irt.method_:>6} {el:7.2f} {str(irt.converged_):>5} {irt.n_iter_:>6} "
                  f"{nll(Y, irt):9.5f} {irt.loss_curve_[-1]:9.5f}", flush=True)
    if not args.quick and "imagenet" in data:
        Y = data["imagenet"].astype(bool)
        t = time.perf_counter()
        est = TinyBenchmarks(100, "anchor-corr", "gp-irt", random_state=0).fit(Y)
        print(f"TinyBenchmarks default fit (dims validated among {est.dims_grid}) on imagenet 50 x 10,000: "
              f"{time.perf_counter() - t:.1f} s, chose d={est.n_dims_}, validation errors "
              + ", ".join(f"{k}: {v:.4f}" for k, v in est.validation_errors_.items()))
        t = time.perf_counter()
        TinyBenchmarks(100, "anchor-corr", "gp-irt", n_dims=1, random_state=0).fit(Y)
        print(f"TinyBenchmarks n_dims=1: {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
