"""Coverage and width of StratifiedHT's 95 % interval on AlpacaEval's graded win probabilities, every model a target.

AlpacaEval 2.0's 56 chat models (the reference model and NullModel left out) × 805 instructions, scores the judge's
P(win) in [0, 1]. The models are dealt round-robin into folds of about ten; each fold's models are the targets and
the others the sources, for ``--draws`` seeds (``random_state``) of ``StratifiedHT(n_items)`` a fold: 10 and 20
items on each of AlpacaEval's five datasets (two items a stratum), 50 and 100 on all 805 instructions. Each row
gives the share of the intervals that hold the target's mean over every item, the lowest coverage of one model and
the model, and the mean width. Targets that score near 0 on most items and near 1 on a few are the hard case: their
few high scores may gather in one stratum, which two sampled items a stratum often miss.

Run: ``.venv/bin/python benchmarks/stratified_graded_coverage.py [--draws 200] [--items 10,20,50,100]``; reads the
predictions from ``$EFFSTATS_DATA`` or ``../shared/data`` (:func:`effstats.datasets.data_root`); ends with the table
as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from effstats.datasets import load_alpacaeval
from effstats.disco import StratifiedHT

DATASETS = ("helpful_base", "koala", "oasst", "selfinstruct", "vicuna")


def coverage(rm, n_items: int, draws: int) -> dict:
    """Every model a target once per draw (folds of about ten, the others the sources)."""
    y = rm.values_with_nan()
    truth = np.nanmean(y, axis=1)
    folds = np.arange(rm.n_models) % max(2, rm.n_models // 10)
    hits, width = np.zeros(rm.n_models), np.zeros(rm.n_models)
    for f in np.unique(folds):
        tgt, src = rm.subset(models=np.flatnonzero(folds == f)), rm.subset(models=np.flatnonzero(folds != f))
        for seed in range(draws):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # targets beyond the sources' range, missing cells
                ci = StratifiedHT(n_items, random_state=seed).fit(src).predict_interval(tgt).confidence_interval(0.95)
            t = truth[folds == f]
            hits[folds == f] += (ci.low <= t + 1e-12) & (t <= ci.high + 1e-12)
            width[folds == f] += ci.high - ci.low
    worst = int(np.argmin(hits))
    return {"coverage": hits.sum() / (draws * rm.n_models), "lowest model": hits[worst] / draws,
            "that model": f"{rm.model_ids[worst]} ({truth[worst]:.3f})", "width": width.sum() / (draws * rm.n_models)}


def print_markdown(table: pd.DataFrame) -> None:
    """The table as Markdown, floats to three decimals (pandas' ``to_markdown`` needs tabulate)."""
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + " |")


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--items", default="10,20,50,100", help="items per target; up to 20 per dataset, more on all")
    args = parser.parse_args(argv)
    rm = load_alpacaeval(outcome="p_win")
    dataset = np.asarray(rm.items["dataset"])
    rows = []
    start = time.process_time()
    for n_items in (int(n) for n in args.items.split(",")):
        parts = [(d, rm.subset(items=np.flatnonzero(dataset == d))) for d in DATASETS] if n_items <= 20 \
            else [("all 805", rm)]
        for name, part in parts:
            row = {"items": n_items, "data": f"{name} ({part.n_items})", **coverage(part, n_items, args.draws)}
            rows.append(row)
            print(", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()),
                  flush=True)
    table = pd.DataFrame(rows)
    print(f"\n{args.draws} draws × {rm.n_models} models a row; {time.process_time() - start:.0f} CPU s\n")
    print_markdown(table)
    return table


if __name__ == "__main__":
    main()
