"""DISCO's defaults against random items at the same budget, on every benchmark effstats reads.

For each benchmark, 10 random model splits (the split's seed also seeds the estimator) and 100 items: the MAE
(percentage points) over the target models of :class:`~effstats.disco.RandomDirect` and of candidate DISCO
settings (selection × predictor × estimate × signature × PCA). Written to ``figures/disco_defaults.csv``, one row
per benchmark × setting:

* ``mae_mean``, ``mae_sd``: mean and standard deviation over the splits;
* ``diff_mean``, ``diff_sd``: the paired difference MAE(setting) − MAE(random + direct) on the same splits
  (negative: the setting is better), and ``wins``: the share of splits where the setting had the smaller MAE;
* ``seed_sd``: the standard deviation of the MAE over 10 ``random_state`` values on the first split alone (what
  the seed moves when the models are fixed).

DISCO's defaults are the setting with the smallest ``diff_mean`` that beats random items on every benchmark.

Benchmarks (n_models × n_items; target models per split): ImageNet val (67 × 50,000; 17), CIFAR-10 test
(30 × 10,000; 8), the bundled digits benchmark with class probabilities (500 × 30,400; 100), AlpacaEval 2.0 P(win)
(56 × 805; 14) and the per-class ImageNet accuracies of 112 torchvision weights (a leaderboard: 112 × 1,000;
28). The other bundled leaderboards have fewer than 100 columns (MMLU 57 subjects, HELM 16 scenarios, Open LLM 6
tasks), so a 100-item budget is the whole benchmark there.

Run: ``.venv/bin/python benchmarks/disco_defaults.py`` (about 10 minutes on 2 cores; ``--seeds 3 --datasets cifar10``
for a quick look).
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from effstats import datasets
from effstats.disco import DISCO, RandomDirect
from effstats.splits import random_split

K = 100
OUT = Path(__file__).resolve().parents[1] / "figures" / "disco_defaults.csv"

# name -> DISCO keyword arguments (None: RandomDirect)
SETTINGS: dict[str, dict | None] = {
    "random + direct": None,
    "random + difference ridge (default)": dict(),
    "random + difference ridge, no PCA": dict(pca=None),
    "random + difference ridge, 0/1 signature": dict(signature="correctness"),
    "random + difference RF": dict(predictor="rf"),
    "random + difference kNN-5": dict(predictor="knn", n_neighbors=5),
    "random + signature RF": dict(predictor="rf", estimate="signature"),
    "PDS + signature RF (paper)": dict(selection="pds", predictor="rf", estimate="signature"),
    "PDS + signature kNN": dict(selection="pds", predictor="knn", estimate="signature"),
    "PDS + difference ridge": dict(selection="pds"),
}


def load(name: str):
    """(responses, number of target models per split)."""
    if name == "imagenet":
        return datasets.load_imagenet_predictions(domains="imagenet_val"), 17
    if name == "cifar10":
        return datasets.load_cifar10_predictions(domains="cifar10"), 8
    if name == "digits":
        return datasets.load_lifelong_digits(), 100
    if name == "alpacaeval":
        return datasets.load_alpacaeval(), 14
    if name == "imagenet_classes":
        return datasets.load_imagenet_classes(), 28
    raise ValueError(f"datasets: unknown benchmark {name!r}")


def make(kw: dict | None, seed: int):
    if kw is None:
        return RandomDirect(K, random_state=seed)
    return DISCO(K, **{**kw, "random_state": seed})


def mae(est, src, tgt, s_src, s_tgt) -> float:
    return float(100 * np.abs(est.fit(src, s_src).predict(tgt) - s_tgt).mean())


def run(name: str, n_seeds: int) -> pd.DataFrame:
    rm, n_target = load(name)
    s = rm.accuracy().to_numpy()
    err = {k: [] for k in SETTINGS}
    seed_err = {k: [] for k in SETTINGS}
    for split_seed in range(n_seeds):
        sp = random_split(rm, n_target, rng=split_seed)
        src, tgt = sp.apply(rm)
        for k, kw in SETTINGS.items():
            err[k].append(mae(make(kw, split_seed), src, tgt, s[sp.source], s[sp.target]))
            if split_seed == 0:  # the first split again, under other random_state values
                seed_err[k] = [err[k][0]] + [mae(make(kw, r), src, tgt, s[sp.source], s[sp.target])
                                             for r in range(1, n_seeds)]
    ref = np.array(err["random + direct"])
    rows = []
    for k, kw in SETTINGS.items():
        e = np.array(err[k])
        d = e - ref
        rows.append({"dataset": name, "n_models": rm.n_models, "n_items": rm.n_items, "n_target": n_target, "budget": K,
                     "setting": k, "params": "RandomDirect" if kw is None else repr(kw), "n_splits": len(e),
                     "mae_mean": e.mean(), "mae_sd": e.std(ddof=1), "diff_mean": d.mean(), "diff_sd": d.std(ddof=1),
                     "wins": float(np.mean(d < 0)), "seed_sd": float(np.std(seed_err[k], ddof=1))})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--datasets", nargs="*",
                    default=["imagenet", "cifar10", "digits", "alpacaeval", "imagenet_classes"])
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    parts = []
    for name in args.datasets:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # missing AlpacaEval cells: reported by every fit
            parts.append(run(name, args.seeds))
        print(f"{name}: {time.perf_counter() - t:.0f} s", flush=True)
    table = pd.concat(parts, ignore_index=True)
    table.to_csv(args.out, index=False, float_format="%.4f")
    wide = table.assign(cell=[f"{m:.2f} ± {v:.2f}" for m, v in zip(table.mae_mean, table.mae_sd)]).pivot(
        index="setting", columns="dataset", values="cell").reindex(index=list(SETTINGS), columns=args.datasets)
    print(wide.to_string())
    everywhere = table.groupby("setting")["diff_mean"].max()
    print("\nlargest mean paired difference vs random + direct over the benchmarks "
          "(negative everywhere = never loses):")
    print(everywhere.reindex(list(SETTINGS)).round(2).to_string())


if __name__ == "__main__":
    main()
