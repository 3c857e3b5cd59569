"""DISCO's random forest (``make_predictor("rf")``) against scikit-learn's own forest of the same settings.

Both grow the same 100 trees from the same seeds on the same signatures; the package's reads the tree class's
parameter names once instead of for every tree it makes. Source pools of the one-protocol comparison (CIFAR-10: 22
models, ImageNet: 50, digits: 150) and of Tables 1 and 2 (225), with PCA signatures of n - 1 columns; each fit timed
in CPU seconds of the process (its threads included), the two alternately, the median over ``--reps`` fits; the
predictions are checked to be equal.

Run: ``.venv/bin/python benchmarks/bench_forest_growth.py [--sizes 22 50 150 225] [--reps 7]``
"""
from __future__ import annotations

import argparse
import platform

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from effstats.disco import make_predictor
from bench_tinybenchmarks import process_cpu as cpu  # the sibling script's (run as a script from benchmarks/)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[22, 50, 150, 225])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    print(f"{platform.processor() or platform.machine()}, CPU ms per fit (median of {args.reps}), 100 trees, n_jobs=-1")
    print(f"{'sources':>8} {'scikit-learn':>13} {'effstats':>9} {'ratio':>6}  same predictions")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        X, y, Xt = rng.normal(size=(n, n - 1)), rng.random(n), rng.normal(size=(10, n - 1))
        times: dict[str, list[float]] = {"sklearn": [], "effstats": []}
        preds = {}
        for rep in range(args.reps):
            for kind in ("sklearn", "effstats") if rep % 2 == 0 else ("effstats", "sklearn"):
                est = (RandomForestRegressor(random_state=rep, n_jobs=-1) if kind == "sklearn"
                       else make_predictor("rf", random_state=None))
                est.set_params(random_state=rep)
                t = cpu()
                est.fit(X, y)
                times[kind].append(cpu() - t)
                preds[kind] = est.set_params(n_jobs=1).predict(Xt)
        a, b = np.median(times["sklearn"]) * 1e3, np.median(times["effstats"]) * 1e3
        print(f"{n:>8} {a:>13.1f} {b:>9.1f} {b / a:>6.2f}  {np.array_equal(preds['sklearn'], preds['effstats'])}")


if __name__ == "__main__":
    main()
