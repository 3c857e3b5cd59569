"""Per new model coverage of the loop's ``--method sortsearch`` interval, the same new models over many draws.

A coverage over splits averages over the new models; a model whose errors do not follow the references' difficulty
order could be covered less often than the level on every draw of items. Here the new models stay fixed: each
seed runs :func:`effstats.workflow.select` (``method="sortsearch"``, the budget over the tasks) on the other models
and :func:`effstats.workflow.estimate` on the new models' results on the chosen items; the truth is each new
model's mean over every item. Reported per new model: the share of the seeds' 95 % intervals that hold the truth
(with its binomial 95 % interval), the standard deviation of ``(estimate - truth) / s.e.`` (about 1 where the
standard error is right), and the mean width.

Data: ``load_cifar10_predictions()`` (30 models; CIFAR-10 test and CIFAR-10.1 v4 / v6, 14,021 images, 3 tasks; the
new models by default the five held out in the twenty-fifth round's user report: darc, resnetv2_tf,
wrn_28_10_cutout16, nas, resnet_basic_110) and ``load_imagenet_predictions("imagenetv2_matched_frequency")`` (67
models, 10,000 images; five new models drawn with seed 0), read from ``$EFFSTATS_DATA`` or ``../shared/data``.

Run: ``.venv/bin/python benchmarks/sortsearch_model_coverage.py [--datasets cifar10,imagenet] [--seeds 300]
[--budget 300]``; ends with the table as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from effstats import ResponseMatrix
from effstats.datasets import load_cifar10_predictions, load_imagenet_predictions
from effstats.workflow import estimate, select
from stratified_graded_coverage import print_markdown  # the sibling benchmark (run from benchmarks/ or the root)

CIFAR_NEW = ["darc", "resnetv2_tf", "wrn_28_10_cutout16", "nas", "resnet_basic_110"]


def _data(name: str) -> tuple[ResponseMatrix, ResponseMatrix]:
    rm = (load_cifar10_predictions() if name == "cifar10"
          else load_imagenet_predictions(domains="imagenetv2_matched_frequency"))
    ids = [str(m) for m in rm.model_ids]
    new = (CIFAR_NEW if name == "cifar10"
           else [ids[j] for j in sorted(np.random.default_rng(0).choice(len(ids), 5, replace=False))])
    tasks = [str(i).split("/")[0] for i in rm.item_ids]
    full = ResponseMatrix(rm.values, model_ids=ids, item_ids=rm.item_ids, items={"task": tasks})
    return (full.subset(models=[m for m in ids if m not in new]), full.subset(models=new))


def run(name: str, seeds: int, budget: int) -> pd.DataFrame:
    ref, new = _data(name)
    truth = new.accuracy()
    rows = []
    for seed in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # new models beyond the references' range
            sel = select(ref, budget, method="sortsearch", seed=seed)
            f = estimate(sel, new.subset(items=sel.items)).to_frame()
        for m in new.model_ids:
            r = f.loc[m]
            rows.append({"model": m, "seed": seed, "truth": truth[m], "estimate": r["estimate"], "low": r["low"],
                         "high": r["high"], "se": r["standard_error"]})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for m, g in df.groupby("model", sort=False):
        hit = ((g["low"] <= g["truth"]) & (g["truth"] <= g["high"])).to_numpy()
        k, n = int(hit.sum()), len(hit)
        ci = stats.binomtest(k, n).proportion_ci(0.95)
        z = (g["estimate"] - g["truth"]) / g["se"].where(g["se"] > 0)
        out.append({"model": m, "accuracy": f"{g['truth'].iloc[0]:.4f}", "covered": f"{k}/{n}",
                    "coverage": k / n, "binomial 95 %": f"[{ci.low:.3f}, {ci.high:.3f}]",
                    "sd(z)": f"{z.std():.2f}", "width (points)": f"{(g['high'] - g['low']).mean() * 100:.2f}"})
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="cifar10,imagenet")
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--budget", type=int, default=300)
    args = ap.parse_args()
    for name in args.datasets.split(","):
        t0 = time.process_time()
        table = summary(run(name, args.seeds, args.budget))
        print(f"\n{name}: {args.seeds} seeds, {args.budget} items, {time.process_time() - t0:.0f} CPU s\n")
        print_markdown(table)


if __name__ == "__main__":
    main()
