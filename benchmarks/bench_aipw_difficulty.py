"""``AIPW(regressor="difficulty")`` on extrapolation.ipynb's limit section: its CPU seconds and its results.

The section's four data sets as the notebook reads them (ImageNet's first 10,000 validation images, CIFAR-10's
14,021 test images, 200 digits models on the clean images, AlpacaEval's complete items), its splits (a random
fifth of the models, the best fifth, the newest fifth where there are dates) and its 10 seeds, 100 items: the
difficulty regressor's ``run_protocol`` calls alone, timed in CPU seconds of this process (reading the data is
not timed). ``--out FILE`` writes the protocol's rows (CSV) to compare two checkouts' results, e.g. A/B:

    for i in 1 2; do for tree in /work/main "$PWD"; do PYTHONPATH=$tree OPENBLAS_NUM_THREADS=1 \\
        .venv/bin/python benchmarks/bench_aipw_difficulty.py --out /tmp/difficulty_$(basename $tree)_$i.csv; done; done

Run: ``.venv/bin/python benchmarks/bench_aipw_difficulty.py [--seeds 10] [--out FILE]``
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from effstats import chronological_split, performance_split, random_split
from effstats.datasets import load_alpacaeval, load_cifar10_predictions, load_imagenet_predictions
from effstats.datasets import load_lifelong_digits
from effstats.disco import AIPW, run_protocol


def limit_data() -> dict:
    """extrapolation.ipynb's LIMIT_DATA, read as its data cell reads it (full mode)."""
    inet = load_imagenet_predictions()
    inet = inet.subset(items=np.arange(min(10_000, inet.n_items)))
    c10 = load_cifar10_predictions()
    c10 = c10.subset(items=np.arange(min(14_021, c10.n_items)))
    dig = load_lifelong_digits()
    dig = dig.subset(items=(dig.items["shift"] == "clean").to_numpy())
    dig = dig.subset(models=np.sort(np.random.default_rng(0).choice(dig.n_models, 200, replace=False)))
    ae = load_alpacaeval(outcome="win")
    complete = ~ae.missing.any(axis=0) if ae.missing is not None else np.ones(ae.n_items, bool)
    ae = type(ae)(ae.values[:, complete], model_ids=ae.model_ids, item_ids=ae.item_ids[complete])
    return {"ImageNet": inet, "CIFAR-10": c10, "digits": dig, "AlpacaEval": ae}


def limit_splits(rm, seed: int) -> dict:
    """The section's splits (its ``limit_splits``)."""
    n_t = round(0.2 * rm.n_models)
    sp = {"in range": random_split(rm, n_t, rng=seed), "out of range": performance_split(rm, 0.2)}
    if "release_date" in rm.models:
        sp["chronological"] = chronological_split(rm, n_newest=n_t)
    return sp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--out", help="CSV of the protocol's rows")
    args = ap.parse_args()
    data = limit_data()
    rows, cpu = [], 0.0
    for name, rm in data.items():
        for seed in range(args.seeds):
            sp = limit_splits(rm, seed)
            t = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = run_protocol({"AIPW + difficulty": AIPW(100, regressor="difficulty")}, rm, sp, seeds=[seed])
            cpu += time.process_time() - t
            rows.append(r.assign(data=name))
    print(f"AIPW + difficulty, {len(data)} data sets x {args.seeds} seeds: {cpu:.2f} CPU s")
    if args.out:
        pd.concat(rows, ignore_index=True).to_csv(args.out, index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
