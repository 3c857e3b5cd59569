"""The precision rule on stratified batches: coverage and items against random batches, on real predictions.

The sequential precision rule (:class:`effstats.sequential.Precision`, Chow & Robbins's fixed-width interval)
draws random items in batches. With reference models' outputs at hand, the items can be drawn within strata of
the reference models' difficulty order instead: ``StratifiedAIPW(...).fit(reference).strata_`` labels every item
with its stratum, and passing these labels as the evaluator's ``groups`` draws ``batch`` items from every stratum
at each look (a stratified random sample at every look) and estimates the mean of the stratum means with the
stratified variance (the finite-population correction within strata). The strata are of equal size when their
number divides the benchmark's (5 strata of the 80,000 ImageNet items; the 14,021 CIFAR-10 items give strata of
2,804 and 2,805), so the mean of the stratum means is the benchmark's score and every look's sample has the same
fraction of every stratum (proportional allocation).

``Precision(h, correction="logistic")`` with the evaluator's ``features=StratifiedAIPW(...).features_`` also
corrects every look's stratified estimate by a logistic model of the target's responses on the items' features
from the reference models (logit difficulty, first principal component's loading), cross-fitted on the look's
items (the "corrected" design).

For each benchmark, targets in the reference models' range (3 models held out at random, the rest the
reference) and the best models (the best 20 % held out; the best and the weakest of them as targets), ±1 and ±2
points, ``--runs`` random orders per cell (default 200): the final interval's coverage of the benchmark's score
and the mean items, random batches of 100 against stratified batches of 5 x 20, without and with the correction;
the worst-case fixed design (per item variance 1/4, with the finite-population correction) is the cap of all.

Run: .venv/bin/python benchmarks/sequential_strata.py [--runs 200] [--benchmarks cifar10 imagenet]
[--designs random stratified corrected]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from scipy import special

from effstats import datasets
from effstats.disco import StratifiedAIPW
from effstats.sequential import Precision, SequentialEvaluator
from effstats.splits import performance_split, random_split

N_STRATA = 5
BATCH = 100
DESIGNS = ("random", "stratified", "corrected")


def _worst_case(n: int, h: float) -> int:
    """Items of the fixed design at accuracy 1/2 with the finite-population correction."""
    n0 = (special.ndtri(0.975) / h) ** 2 / 4
    return int(np.ceil(n0 / (1 + n0 / n)))


def run(name: str, runs: int, designs: tuple = DESIGNS) -> pd.DataFrame:
    rm = datasets.load_cifar10_predictions() if name == "cifar10" else datasets.load_imagenet_predictions()
    rows = []
    for split, (ref, tgt) in (("in range", random_split(rm, 3, rng=0).apply(rm)),
                              ("best", performance_split(rm, top_fraction=0.2).apply(rm))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = StratifiedAIPW(n_items=2 * N_STRATA, n_strata=N_STRATA, allocation="proportional",
                                 random_state=0).fit(ref)
        strata, features = est.strata_, est.features_
        Y = tgt.values_with_nan()
        acc = np.nanmean(Y, axis=1)
        targets = range(len(acc)) if split == "in range" else (int(np.argmax(acc)), int(np.argmin(acc)))
        for i in targets:
            y = Y[i]
            for h in (0.01, 0.02):
                cell = {"benchmark": name, "targets": split, "accuracy": round(float(acc[i]), 3),
                        "half_width": h, "worst_case": _worst_case(y.size, h)}
                for design, groups, step, correction in (("random", None, BATCH, None),
                                                         ("stratified", strata, BATCH // N_STRATA, None),
                                                         ("corrected", strata, BATCH // N_STRATA, "logistic")):
                    if design not in designs:
                        continue
                    sim = SequentialEvaluator([Precision(h, correction=correction)], fpc=True, initial=step,
                                              batch=step).simulate(y, n_runs=runs, rng=1, groups=groups,
                                                                   features=features if correction else None)
                    cell[f"coverage {design}"] = np.mean((sim.ci_low <= acc[i]) & (acc[i] <= sim.ci_high))
                    cell[f"items {design}"] = sim.n.mean()
                    cell[f"max items {design}"] = sim.n.max()
                rows.append(cell)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--benchmarks", nargs="+", default=["cifar10", "imagenet"], choices=["cifar10", "imagenet"])
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=DESIGNS)
    args = parser.parse_args()
    table = pd.concat([run(name, args.runs, tuple(args.designs)) for name in args.benchmarks], ignore_index=True)
    designs = [d for d in DESIGNS if d in args.designs]
    for d in designs[1:]:
        table[f"{d} / random"] = table[f"items {d}"] / table["items random"] if "random" in designs else np.nan
    if {"stratified", "corrected"} <= set(designs):
        table["corrected / stratified"] = table["items corrected"] / table["items stratified"]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table.round(3).to_string(index=False))
    print()
    for d in designs:
        cov = table[f"coverage {d}"]
        above = int((table[f"max items {d}"] > table["worst_case"]).sum())
        print(f"{d}: coverage {cov.min():.3f}-{cov.max():.3f}, above the worst case in {above} cells")
    for col in [c for c in table.columns if " / " in c]:
        print(f"items {col}: {table[col].min():.2f}-{table[col].max():.2f} (mean {table[col].mean():.2f})")


if __name__ == "__main__":
    main()
