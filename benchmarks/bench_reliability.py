"""Speed of effstats.reliability.

Targets: DIoR with 1,000 bootstraps on the 67 × 16 HELM table in ≤ 0.5 s; examples-granularity DIoR on
40 models × 10,000 examples × 1,000 bootstraps in ≤ 10 s; the full ``effstats audit`` of a 2,000-model ×
50-scenario leaderboard with 1,000 bootstraps in ≤ 30 s (Kendall τ and weighted τ of 1,000 resampled
rankings of 2,000 models timed beside a scipy loop). Prints one line per measurement (best of 3).
Run: ``.venv/bin/python benchmarks/bench_reliability.py``.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from effstats import ResponseMatrix
from effstats import reliability as R
from effstats.reliability._metametrics import _weighted_tau


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def helm_table():
    try:
        from effstats.datasets import load_helm

        return load_helm()
    except Exception:  # loader not available: read the shared table directly
        import effstats

        bundled = Path(effstats.__file__).parent / "datasets" / "data" / "leaderboards" / "helm" / "accuracy.tsv"
        df = pd.read_csv(bundled, sep="\t", index_col=0)
        return df.drop(columns="Mean win rate")


def main() -> None:
    rows = []
    helm = R.Benchmark.from_data(helm_table())
    x = np.where(helm.observed, helm.values, np.nan)
    boots = x[:, np.random.default_rng(0).integers(0, 16, (1000, 16))].transpose(1, 0, 2)
    rows.append(("mean_win_rate, 1000 x 67 x 16 resamples", best_of(lambda: R.mean_win_rate(boots)), None))
    for obj in ("kendall", "weighted_tau", "best_model", "model_quality"):
        t = best_of(lambda: R.dior(helm, "scenarios", obj, n_boot=1000, rng=0))
        rows.append((f"DIoR HELM 67x16 scenarios, {obj}, 1000 boots", t, 0.5))

    rng = np.random.default_rng(0)
    M, n = 40, 10_000
    ability, diff = rng.normal(size=(M, 1)), rng.normal(size=(1, n))
    X = rng.random((M, n)) < 1 / (1 + np.exp(-(ability - diff)))
    rm = ResponseMatrix(X, kind="binary", items=pd.DataFrame({"scenario": np.repeat(np.arange(10), n // 10)}))
    bench = R.Benchmark.from_data(rm)
    for obj in ("kendall", "best_model", "model_quality"):
        t = best_of(lambda: R.dior(bench, "examples", obj, n_boot=1000, rng=0))
        rows.append((f"DIoR examples 40x10,000 (10 scenarios), {obj}, 1000 boots", t, 10.0))
    t = best_of(lambda: R.dior(bench, "examples", "kendall", size=100, n_boot=1000, rng=0))
    rows.append(("DIoR examples 40x10,000, 100 per scenario, kendall, 1000 boots", t, None))

    try:
        from effstats.datasets import load_imagenet_predictions

        im = R.Benchmark.from_data(load_imagenet_predictions(), scenario="domain", subscenario=None)
        t = best_of(lambda: R.dior(im, "examples", "kendall", score="mean_of_means", n_boot=1000, rng=0), repeat=1)
        rows.append(("DIoR ImageNet 67x80,000 (4 domains), kendall, 1000 boots", t, None))
        t = best_of(lambda: R.rank_switch_curve(im, [10, 100, 1000, 10000], score="mean_of_means", n_boot=1000, rng=0),
                    repeat=1)
        rows.append(("rank-switch curve ImageNet, 4 sizes x 1000 boots", t, None))
    except Exception as exc:  # per-item data optional
        print(f"(ImageNet predictions unavailable: {exc})")

    # Leaderboard scale: 2,000 models × 50 scenarios
    from scipy import stats

    g = np.random.default_rng(1)
    ref = g.random(2000)
    Xr = ref[None] + g.normal(0, 0.1, (1000, 2000))
    rows.append(("kendall_tau, 1000 rankings of 2,000 models", best_of(lambda: R.kendall_tau(ref, Xr), 1), None))
    rows.append(("  (scipy.stats.kendalltau loop, same)", best_of(lambda: [stats.kendalltau(ref, x) for x in Xr], 1),
                 None))
    rows.append(("weighted tau, 1000 rankings of 2,000 models", best_of(lambda: _weighted_tau(ref, Xr), 1), None))
    rows.append(("  (scipy.stats.weightedtau loop, same)",
                 best_of(lambda: [stats.weightedtau(ref, x) for x in Xr[:100]], 1) * 10, None))
    ab = g.normal(size=(2000, 1))
    big = pd.DataFrame(np.round(ab + g.normal(0, 0.5, (2000, 50)), 3), index=[f"model{i}" for i in range(2000)],
                       columns=[f"scenario{j}" for j in range(50)])
    import tempfile
    from effstats.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/big.csv"
        big.rename_axis("model").to_csv(path)
        t = best_of(lambda: cli(["audit", path, "--out", f"{tmp}/rep", "--n-boot", "1000", "--no-progress"]), 1)
        rows.append(("effstats audit 2,000 models x 50 scenarios, 1000 boots (mwr)", t, 30.0))
        t = best_of(lambda: cli(["audit", path, "--out", f"{tmp}/rep2", "--n-boot", "1000", "--no-progress",
                                 "--aggregate", "mean"]), 1)
        rows.append(("effstats audit 2,000 models x 50 scenarios, 1000 boots (mean)", t, 30.0))

    print(f"{'measurement':<66} {'seconds':>8}  target")
    for name, t, target in rows:
        flag = "" if target is None else (f"<= {target:g} s " + ("OK" if t <= target else "MISSED"))
        print(f"{name:<66} {t:8.3f}  {flag}")


if __name__ == "__main__":
    main()
