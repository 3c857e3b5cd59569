"""Coverage of StratifiedAIPW's 95 % interval for near-perfect targets, by the number of wrong items in the sample.

A target right on nearly every item gets, on most draws, a sample with none or a handful of wrong items; its interval
is then the exact stratified interval (none wrong) or Korn & Graubard's Clopper-Pearson interval at an effective
sample size estimated from those few wrong items, with one to five of them at least the limit of their worst
placement among the strata (``stratified_minority_limit``). Overall coverage hides how each case fares, so this
reports, per target set and budget, the coverage conditional on the number ``c`` of wrong items in the sample
(0, 1, 2, 3, 4, 5+), the share of draws with that ``c``, the share missed from below (true score above the interval)
and the mean width.

Target sets: ``far``, 30 simulated sources (``simulate_responses(30, 2000, rng=5)``) and targets at 0.98, 0.99 and
0.996 whose wrong items are among the best source's wrong ones; ``cifar10-400`` and ``cifar10``, the three best of
CIFAR-10's 30 models on the first 400 and on all 10,000 test images, the others as sources; ``imagenet``, the three
best of ImageNet's 67 models on the 50,000 val images.

Run: ``.venv/bin/python benchmarks/few_wrong_coverage.py [--draws 200] [--items 50,100,300]
[--sets far,cifar10-400,cifar10,imagenet]``; ends with the table as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from effstats import ResponseMatrix, datasets
from effstats.disco import StratifiedAIPW

BINS = ["0", "1", "2", "3", "4", "5+"]


def _far(n_items_total: int = 2000):
    rm = datasets.simulate_responses(30, n_items_total, rng=5)
    src = rm.values.astype(float)
    g = np.random.default_rng(0)
    rows = []
    for n_wrong in (40, 20, 8):
        y = np.ones(n_items_total)
        y[g.choice(np.flatnonzero(src[np.argmax(src.mean(axis=1))] == 0), n_wrong, replace=False)] = 0
        rows.append(y)
    return ResponseMatrix(src), ResponseMatrix(np.array(rows))


def _best(rm: ResponseMatrix, n_targets: int = 3):
    acc = np.nanmean(rm.values_with_nan(), axis=1)
    top = np.argsort(-acc)[:n_targets]
    rest = np.setdiff1d(np.arange(rm.n_models), top)
    return rm.subset(models=rest), rm.subset(models=top)


def _sets(names: list[str]):
    for name in names:
        if name == "far":
            yield name, *_far()
        elif name == "cifar10-400":
            rm = datasets.load_cifar10_predictions(domains="cifar10")
            yield name, *_best(rm.subset(items=np.arange(400)))
        elif name == "cifar10":
            yield name, *_best(datasets.load_cifar10_predictions(domains="cifar10"))
        elif name == "imagenet":
            yield name, *_best(datasets.load_imagenet_predictions(domains="imagenet_val"))
        else:
            raise ValueError(f"sets: unknown target set {name!r}")


def run(src: ResponseMatrix, tgt: ResponseMatrix, n_items: int, draws: int) -> pd.DataFrame:
    y = tgt.values_with_nan()
    truth = y.mean(axis=1)
    rows = []
    for seed in range(draws):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # targets beyond the sources' range
            est = StratifiedAIPW(n_items, random_state=seed).fit(src)
            ci = est.predict_interval(tgt).confidence_interval(0.95)
        wrong = (1 - y[:, est.selected_]).sum(axis=1)
        rows.append(pd.DataFrame({"target": np.arange(len(truth)), "c": wrong, "low": ci.low, "high": ci.high,
                                  "truth": truth}))
    out = pd.concat(rows, ignore_index=True)
    out["covered"] = (out.low <= out.truth + 1e-12) & (out.truth <= out.high + 1e-12)
    out["above"] = out.truth > out.high + 1e-12
    out["width"] = out.high - out.low
    return out


def summary(out: pd.DataFrame) -> pd.DataFrame:
    c = np.minimum(out.c.to_numpy(), 5).astype(int)
    out = out.assign(bin=np.array(BINS)[c])
    g = out.groupby("bin")
    tab = pd.DataFrame({"share": g.size() / len(out), "coverage": g.covered.mean(), "above": g.above.mean(),
                        "width": g.width.mean()}).reindex(BINS)
    tab.loc["all"] = [1.0, out.covered.mean(), out.above.mean(), out.width.mean()]
    return tab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--items", default="50,100,300")
    ap.add_argument("--sets", default="far,cifar10-400,cifar10,imagenet")
    args = ap.parse_args()
    rows = []
    for name, src, tgt in _sets(args.sets.split(",")):
        truth = np.nanmean(tgt.values_with_nan(), axis=1)
        for n in (int(v) for v in args.items.split(",")):
            if n >= src.n_items:
                continue
            t0 = time.process_time()
            tab = summary(run(src, tgt, n, args.draws))
            print(f"{name} (targets {', '.join(f'{t:.3f}' for t in truth)}), {n} items, {args.draws} draws "
                  f"({time.process_time() - t0:.0f} CPU s)")
            print(tab.round(3).to_string())
            for c, r in tab.iterrows():
                rows.append({"set": name, "items": n, "c": c, **r.to_dict()})
    df = pd.DataFrame(rows)
    wide = df.pivot_table(index=["set", "items"], columns="c", values="coverage", sort=False)[BINS + ["all"]]
    share = df.pivot_table(index=["set", "items"], columns="c", values="share", sort=False)[BINS]
    width = df[df.c == "all"].set_index(["set", "items"]).width
    cells = pd.DataFrame(index=wide.index)
    for b in BINS + ["all"]:
        cov = wide[b].to_numpy()
        part = share[b].to_numpy() if b in BINS else np.ones(len(cov))
        cells[b] = ["" if np.isnan(v) else f"{v:.3f}" + (f" ({100 * s:.1f} %)" if b in BINS else "")
                    for v, s in zip(cov, part)]
    cells["mean width"] = [f"{v:.4f}" for v in width.to_numpy()]
    print()
    cells = cells.reset_index()
    print("| " + " | ".join(cells.columns) + " |")
    print("|" + "---|" * len(cells.columns))
    for row in cells.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
