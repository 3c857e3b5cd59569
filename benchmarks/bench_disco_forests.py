"""Forest size in DISCO: scikit-learn's default 100 trees (the paper's setting) against fewer, on the digits zoo.

Most of disco.ipynb's time is random forests. Halving the trees would halve that time; this prints what it would
cost: the fit time and the 5-seed mean MAE and Spearman rank correlation of DISCO (PDS + RF) and of model
signatures on random items (random + RF), with the s.d. over seeds, on two of Table 1's digits benchmarks under
the notebook's chronological split (500 models, 800 images per domain, the 50 newest models as targets).

Run: ``.venv/bin/python benchmarks/bench_disco_forests.py [--trees 50 100] [--kinds clean noise]``
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

from effstats import chronological_split
from effstats._subset_results import prediction_metrics
from effstats.datasets import load_lifelong_digits
from effstats.disco import DISCO


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--kinds", nargs="+", default=["clean", "noise"])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="pca: ")
    full = load_lifelong_digits()  # the notebook's selection: 4 shift kinds, 800 images, 500 models
    keep = full.items["shift"].isin(["clean", "noise", "geometric", "photometric"]).to_numpy()
    keep &= full.items["source_image"].isin(np.sort(full.items["source_image"].unique())[:800]).to_numpy()
    models = np.sort(np.random.default_rng(0).choice(full.n_models, size=500, replace=False))
    digits = full.subset(models=models, items=keep)
    split = chronological_split(digits, n_newest=50)
    rows = []
    for kind in args.kinds:
        src, tgt = split.apply(digits.subset(items=(digits.items["shift"] == kind).to_numpy()))
        ys, yt = src.accuracy().to_numpy(), tgt.accuracy().to_numpy()
        for sel in ("pds", "random"):
            for trees in args.trees:
                for s in range(args.seeds):
                    rf = RandomForestRegressor(n_estimators=trees, n_jobs=-1, random_state=1000 + s)
                    t = time.perf_counter()
                    pred = DISCO(100, selection=sel, predictor=rf, random_state=s).fit(src, ys).predict(tgt)
                    m = prediction_metrics(yt, pred)
                    rows.append(dict(benchmark=kind, selection=sel, trees=trees, seed=s, mae=m.mae,
                                     spearman=m.spearman, fit_s=time.perf_counter() - t))
    df = pd.DataFrame(rows)
    tab = df.groupby(["benchmark", "selection", "trees"])[["mae", "spearman", "fit_s"]].agg(["mean", "std"])
    pd.set_option("display.width", 140)
    print(f"DISCO on digits, {args.seeds} seeds per cell (MAE in %-points; fit_s: fit + predict, seconds)")
    print(tab.round(4).to_string())
    base = max(args.trees)
    print(f"\nchange of the mean against {base} trees (negative Spearman = worse ranking):")
    means = df.groupby(["benchmark", "selection", "trees"])[["mae", "spearman", "fit_s"]].mean()
    for (kind, sel), g in means.groupby(level=[0, 1]):
        ref = g.xs(base, level="trees").iloc[0]
        for trees, r in g.droplevel([0, 1]).iterrows():
            if trees != base:
                print(f"  {kind:>6} {sel:>6} {trees:>4} trees: MAE {r.mae - ref.mae:+.4f}, Spearman "
                      f"{r.spearman - ref.spearman:+.4f}, time x{r.fit_s / ref.fit_s:.2f}")


if __name__ == "__main__":
    main()
