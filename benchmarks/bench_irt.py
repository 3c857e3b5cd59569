"""IRT fits before/after in one run: time, convergence and final objective of 1-, 5- and 10-dimensional fits on
50 models x 10,000 items (ImageNet val, the first 50 models and items, and the package's 2PL simulator), and a
default TinyBenchmarks fit (IRT dimension validated among 2/5/10/15). "own loss" is the objective the after-version
minimises (loss_curve_[-1]); "NLL/resp" the likelihood part alone, comparable across versions.

"Before" is effstats/irt.py as of commit f08de17 (L-BFGS joint ML from an accuracy-logit start, EM from a = 1),
loaded from git history; without git the figures measured before the rewrite are printed instead (1-D 1.3-2.6 s; 5-D/10-D 29-60 s,
not converged at 500 iterations). Timings on a shared machine vary by 2-3x; compare within one run.

    .venv/bin/python benchmarks/bench_irt.py [--quick]
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL, TinyBenchmarks

BEFORE = "f08de17"
ROOT = Path(__file__).resolve().parents[1]


def load_before():
    """The pre-rewrite IRT2PL from git history, or None."""
    return load_irt2pl(BEFORE, "effstats/irt.py")


def load_irt2pl(commit: str, path: str):
    """IRT2PL of the module at ``path`` in ``commit``, loaded from git history, or None without it."""
    try:
        src = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    file = Path(tempfile.mkdtemp()) / f"_irt_{commit}.py"
    file.write_text(src)
    # named inside the package that held the module, so that its relative imports resolve in the installed effstats
    spec = importlib.util.spec_from_file_location(".".join(Path(path).parent.parts + (f"_irt_{commit}",)), file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.IRT2PL


def nll(Y, irt):
    """Per-response negative log-likelihood at the returned parameters (θ̂ aᵀ − b̂; comparable across versions and
    unchanged by the after-version's standardisation). For mml, θ̂ are MAP abilities given the items."""
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
    Before = load_before()
    if Before is None:
        print("before: git history not available; figures measured before the rewrite: 1-D 1.3-2.6 s, 5-D/10-D 29-60 s, not converged at 500 its")
    print(f"{'data':>10} {'d':>3} {'version':>7} {'method':>6} {'time s':>7} {'conv':>5} {'iters':>6} {'NLL/resp':>9} {'own loss':>9}")
    for name, Y in data.items():
        for d in dims:
            if name.startswith("sim") and not name.startswith(f"sim-{d}D"):
                continue
            for label, cls in (("before", Before), ("after", IRT2PL)):
                if cls is None:
                    continue
                el, irt = timed_fit(cls, d, Y)
                meth = getattr(irt, "method_", getattr(irt, "method", "?"))
                own = f"{irt.loss_curve_[-1]:9.5f}" if hasattr(irt, "loss_curve_") else f"{'-':>9}"
                print(f"{name:>10} {d:>3} {label:>7} {meth:>6} {el:7.2f} {str(irt.converged_):>5} {irt.n_iter_:>6} "
                      f"{nll(Y, irt):9.5f} {own}", flush=True)
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
