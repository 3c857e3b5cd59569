"""Speed of effstats.sequential: native design vs gsDesign through rpy2; 100,000 simulated sequential comparisons.

Targets (issue 3): native design for k <= 10 in <= 20 ms; 100,000 sequential comparisons in <= 10 s;
type-I error of efficacy stopping with 100,000 simulations.

Run: .venv/bin/python benchmarks/bench_sequential.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from effstats.sequential import Efficacy, SequentialEvaluator, design


def _time(f, repeat: int) -> float:
    f()  # warm up (imports, R package load)
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def bench_design(repeat: int) -> None:
    print("design(): best of", repeat, "runs (ms)")
    print(f"{'case':<42}{'native':>9}{'gsDesign':>10}{'ratio':>8}")
    cases = [
        ("k=3 two-sided LD Pocock", dict(k=3, alpha=0.05, spending="ld_pocock")),
        ("k=5 two-sided classic Pocock", dict(k=5, alpha=0.05, spending="pocock")),
        ("k=10 two-sided LD Pocock", dict(k=10, alpha=0.05, spending="ld_pocock")),
        ("k=10 one-sided LD OBF", dict(k=10, alpha=0.025, sided=1, spending="ld_obf")),
        ("k=10 two-sided classic OBF", dict(k=10, alpha=0.05, spending="obf")),
        ("k=10 test.type 4 HSD(-4)/HSD(-2)", dict(k=10, alpha=0.025, test_type=4, spending="hsd", spending_param=-4)),
        ("k=10 bounds at observed n (no power solve)", dict(alpha=0.05, information=np.arange(1, 11) * 100.0)),
    ]
    for name, kw in cases:
        tn = _time(lambda: design(**kw), repeat)
        try:
            tr = _time(lambda: design(**kw, backend="gsdesign"), repeat)
            print(f"{name:<42}{tn * 1e3:9.2f}{tr * 1e3:10.2f}{tr / tn:8.1f}")
        except Exception as exc:  # R not available: report native only
            print(f"{name:<42}{tn * 1e3:9.2f}   gsDesign unavailable ({type(exc).__name__})")


def bench_many_looks() -> None:
    """Bounds for hundreds of looks (batches of 100 on 50,000 ImageNet images): native only (gsDesign's
    classic bounds stop at k = 30; its r = 18 grid is too coarse beyond ~150 equally spaced looks)."""
    for k in (100, 500):
        for fam in ("ld_pocock", "pocock"):
            t = time.perf_counter()
            d = design(alpha=0.05, spending=fam, information=np.arange(1, k + 1) * 100.0)
            print(f"k={k:<4d} {fam:<10} bounds at observed n: {time.perf_counter() - t:6.2f} s  (grid r={d.r}, "
                  f"final bound {d.upper[-1]:.4f}, alpha spent {d.alpha_spent[-1]:.6f})")


def bench_simulation(n_runs: int) -> None:
    pop = 400_000
    a = np.concatenate([np.ones(60_000), np.zeros(60_000), np.ones(pop - 120_000)])
    b = np.concatenate([np.zeros(60_000), np.ones(60_000), np.ones(pop - 120_000)])
    for spending in ("ld_pocock", "pocock", "obf", "ld_obf"):
        ev = SequentialEvaluator([Efficacy()], spending=spending, initial=200, batch=200, max_n=2000, rng=0)
        ev.simulate(a, b, n_runs=10)  # warm the boundary cache
        t = time.perf_counter()
        sim = ev.simulate(a, b, n_runs=n_runs)
        dt = time.perf_counter() - t
        rej = np.mean(sim.reason == "efficacy")
        se = np.sqrt(0.05 * 0.95 / n_runs)
        cover = np.mean((sim.ci_low <= 0) & (sim.ci_high >= 0))
        print(f"{spending:<10} {n_runs:,} paired comparisons (10 looks) in {dt:5.2f} s; "
              f"type-I error {rej:.4f} (alpha 0.05, MC se {se:.4f}); repeated-CI coverage {cover:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats and 10,000 simulations")
    args = ap.parse_args()
    bench_design(3 if args.quick else 20)
    print()
    bench_many_looks()
    print()
    bench_simulation(10_000 if args.quick else 100_000)


if __name__ == "__main__":
    main()
