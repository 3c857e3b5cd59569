"""The mean of the task means from ``select(weights="items")`` (budget in proportion to task sizes) against
``select(weights="tasks")`` (Neyman allocation), on CIFAR-10 and CIFAR-10.1 as two tasks.

The score is the mean of the two task means (``estimate(weights="tasks")``). CIFAR-10's test set holds 10,000
images, CIFAR-10.1 (v6) 2,000, so the proportional split gives CIFAR-10 five sixths of the budget though both
tasks weigh alike and the models' results vary about as much on each. Each split holds ``--new`` random models out
of the 30 as new models, runs :func:`effstats.workflow.select` on the others under both allocations (the split's
seed; ``--methods``) and :func:`effstats.workflow.estimate` on the new models' results on the chosen items; the
truth is each new model's mean of its two task means over every image. Reported per budget, method and allocation:
CIFAR-10's items, the mean reported s.e., the root mean square error, and the s.d. over splits of the split's mean
s.e. and of its RMSE (the spread over seeds).

Data: ``load_cifar10_predictions(domains=["cifar10", "cifar10.1_v6"])``, read from ``$EFFSTATS_DATA`` or
``../shared/data`` (:func:`effstats.datasets.data_root`).

Run: ``.venv/bin/python benchmarks/select_weights.py [--budgets 100,150,300] [--splits 20] [--new 5]
[--methods random,stratified-aipw]``; ends with the table as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from effstats.datasets import load_cifar10_predictions
from effstats.workflow import estimate, select
from stratified_graded_coverage import print_markdown  # the sibling benchmark (run from benchmarks/ or the root)


def run(rm, budgets: list[int], methods: list[str], splits: int, n_new: int) -> pd.DataFrame:
    """One row per split, budget, method, allocation and new model: items of CIFAR-10, estimate, s.e., truth."""
    tasks = np.asarray([i.split("/")[0] for i in rm.item_ids])
    values = rm.values_with_nan()
    rows = []
    for seed in range(splits):
        held = np.sort(np.random.default_rng(seed).choice(rm.n_models, n_new, replace=False))
        ref, new = rm.subset(models=np.setdiff1d(np.arange(rm.n_models), held)), rm.subset(models=held)
        truth = np.mean([np.nanmean(values[held][:, tasks == t], axis=1) for t in np.unique(tasks)], axis=0)
        for budget in budgets:
            for method in methods:
                for weights in ("items", "tasks"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # new models beyond the references' range
                        sel = select(ref, budget, method=method, seed=seed, weights=weights)
                        est = estimate(sel, new.subset(items=sel.items), weights="tasks")
                    for j in range(n_new):
                        rows.append({"seed": seed, "budget": budget, "method": method, "allocation": weights,
                                     "cifar10 items": int(sel.tasks.loc["cifar10", "budget"]),
                                     "error": float(est.statistic[j] - truth[j]),
                                     "se": float(est.standard_error[j])})
    return pd.DataFrame(rows)


def summarise(out: pd.DataFrame) -> pd.DataFrame:
    per_split = out.groupby(["budget", "method", "allocation", "seed"]).agg(
        se=("se", "mean"), mse=("error", lambda e: float(np.mean(np.square(e)))))
    rows = []
    for (budget, method, allocation), g in per_split.groupby(level=[0, 1, 2]):
        all_rows = out[(out.budget == budget) & (out.method == method) & (out.allocation == allocation)]
        rows.append({"budget": int(budget), "method": method,
                     "allocation": "proportional" if allocation == "items" else "Neyman",
                     "CIFAR-10 items": f"{all_rows['cifar10 items'].min()}-{all_rows['cifar10 items'].max()}",
                     "mean s.e.": float(g["se"].mean()), "s.d. over splits": float(g["se"].std(ddof=1)),
                     "RMSE": float(np.sqrt(np.mean(np.square(all_rows["error"])))),
                     "RMSE s.d. over splits": float(np.sqrt(g["mse"]).std(ddof=1))})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="100,150,300")
    parser.add_argument("--methods", default="random,stratified-aipw")
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--new", type=int, default=5, help="new models a split")
    args = parser.parse_args(argv)
    try:
        rm = load_cifar10_predictions(domains=["cifar10", "cifar10.1_v6"])
    except FileNotFoundError as err:
        print(f"cifar10: skipped ({err})")
        return pd.DataFrame()
    start = time.process_time()
    out = run(rm, [int(b) for b in args.budgets.split(",")], args.methods.split(","), args.splits, args.new)
    table = summarise(out)
    print(f"{args.splits} splits, {args.new} new models each ({time.process_time() - start:.0f} CPU s)\n")
    print_markdown(table)
    return table


if __name__ == "__main__":
    main()
