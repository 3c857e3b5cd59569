"""TinyBenchmarks' IRT dimension validation: the reference's rule against the rule that scores each dimension as
the estimator is used (``validation="reference"`` / ``"selected"``), on held-out models of real data.

``--data NAME``: for each of ``--splits`` random model splits (split s: ``default_rng(s)``'s permutation, the first
fifth of the models the targets, or the first ``--holdout``, the rest the sources),
``TinyBenchmarks(100, validation=rule, random_state=s)`` with its other defaults (anchor-corr, gp-IRT, candidates
2/5/10/15, ``validation_items=4000``, one process) is fitted on the sources with either rule, and its gp-IRT and
p-IRT estimates of the targets' full scores are compared with the truth. Both rules' validation fits are the same
IRT fits (the reference's split of the sources), which the fit cache shares, and a final fit of a dimension both
choose is fitted once; so the CPU seconds recorded here are not the cost of one fit (``--time`` is). ``--fixed``
also fits every candidate dimension as ``n_dims`` (the best fixed dimension in hindsight). ``--report`` prints, per
data set, each rule's chosen dimensions, MAE (mean ± s.e. over splits) and the paired difference.

``--time NAME``: one ``TinyBenchmarks(100)`` fit on all of the data set's models with each rule, each in a fresh
process (CPU seconds of the process and its child processes, ``bench_tinybenchmarks.process_cpu``), its choice and
validation errors.

Data: ImageNet (67 models × 80,000 items: val and the three V2 sets; ``--items N`` keeps a random N of them, seeded),
CIFAR-10 (30 × 14,021), AlpacaEval 2.0 wins (58 × 805, the judge's P(win) > 0.5: binary; missing judgements stay
missing), lifelong digits (the bundled 500 classifiers × 30,400 images; ``--models`` keeps a random subset), and the
simulated 90 × 80,000 2PL matrix of ``bench_irt_scale.py`` (``sim``). The bundled leaderboards hold aggregate scores
per scenario or class, not per-item correctness, so there is nothing there for an IRT model of items.

    EFFSTATS_DATA=../shared/data/predictions OPENBLAS_NUM_THREADS=1 .venv/bin/python \\
        benchmarks/tinybenchmarks_dimension_validation.py --data cifar10 --splits 10 --fixed --out cifar10.json
    .venv/bin/python benchmarks/tinybenchmarks_dimension_validation.py --report cifar10.json imagenet.json ...
    .venv/bin/python benchmarks/tinybenchmarks_dimension_validation.py --time imagenet
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import json
import subprocess
import sys
import warnings

import numpy as np

from bench_tinybenchmarks import process_cpu  # the sibling script's (run as a script from benchmarks/)
from effstats.irt import TinyBenchmarks

RULES = ("reference", "selected")
GRID = (2, 5, 10, 15)


def load(name: str, items: int | None = None, models: int | None = None):
    """The data set as (Y bool, missing mask or None)."""
    from effstats.datasets.predictions import load_alpacaeval, load_cifar10_predictions, load_imagenet_predictions

    if name == "imagenet":
        rm = load_imagenet_predictions()
    elif name == "cifar10":
        rm = load_cifar10_predictions()
    elif name == "alpacaeval":
        rm = load_alpacaeval(outcome="win", exclude=None)
    elif name == "digits":
        from effstats.datasets import load_lifelong_digits

        rm = load_lifelong_digits(probabilities=False)
    else:
        from effstats.datasets.simulate import simulate_responses

        rm = simulate_responses(90, 80_000, rng=0)
    rng = np.random.default_rng(12345)
    if models is not None and models < rm.n_models:
        rm = rm.subset(models=np.sort(rng.choice(rm.n_models, models, replace=False)))
    if items is not None and items < rm.n_items:
        rm = rm.subset(items=np.sort(rng.choice(rm.n_items, items, replace=False)))
    miss = rm.missing if rm.missing is not None and rm.missing.any() else None
    Y = rm.values.astype(bool) if miss is None else (rm.values.astype(bool) & ~miss)
    return Y, miss


def _fit(Y, miss, **kw) -> TinyBenchmarks:
    X = Y if miss is None else np.where(miss, np.nan, Y.astype(float))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TinyBenchmarks(100, n_jobs=1, **kw).fit(X)


def _estimates(est: TinyBenchmarks, Y: np.ndarray, miss) -> dict:
    X = Y[:, est.selected_] if miss is None else np.where(miss[:, est.selected_], np.nan, Y[:, est.selected_])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = est.predict_all(X)
    return {k: out[k].tolist() for k in ("gp-irt", "p-irt")}


def run(name: str, splits: int, fixed: bool, items: int | None, models: int | None, holdout: int | None) -> dict:
    Y, miss = load(name, items, models)
    m = len(Y)
    n_t = m // 5 if holdout is None else holdout
    truth_all = Y.mean(1) if miss is None else (Y & ~miss).sum(1) / (~miss).sum(1)
    out = {"data": name, "shape": list(Y.shape), "splits": []}
    for s in range(splits):
        perm = np.random.default_rng(s).permutation(m)
        tgt, src = np.sort(perm[:n_t]), np.sort(perm[n_t:])
        ms, mt = (None, None) if miss is None else (miss[src], miss[tgt])
        row = {"split": s, "truth": truth_all[tgt].tolist(), "rules": {}, "fixed": {}}
        for rule in RULES:
            c = process_cpu()
            est = _fit(Y[src], ms, validation=rule, random_state=s)
            row["rules"][rule] = {"cpu_s": process_cpu() - c, "n_dims": est.n_dims_, "lambda": est.lambda_,
                                  "errors": {str(k): v for k, v in est.validation_errors_.items()},
                                  **_estimates(est, Y[tgt], mt)}
        if fixed:
            for d in GRID:
                est = _fit(Y[src], ms, n_dims=d, random_state=s)
                row["fixed"][str(d)] = {"lambda": est.lambda_, **_estimates(est, Y[tgt], mt)}
        truth = np.array(row["truth"])
        print(f"{name} split {s}: " + "; ".join(
            f"{r} d = {v['n_dims']} MAE gp-IRT {100 * np.abs(np.array(v['gp-irt']) - truth).mean():.2f}"
            for r, v in row["rules"].items())
            + ("; fixed " + ", ".join(f"{d}: {100 * np.abs(np.array(v['gp-irt']) - truth).mean():.2f}"
                                      for d, v in row["fixed"].items()) if fixed else ""), flush=True)
        out["splits"].append(row)
    return out


def _mae(rows: list, key) -> np.ndarray:
    """(splits,) MAE in points of the estimate picked by ``key(row)``."""
    return np.array([100 * np.abs(np.array(key(r)) - np.array(r["truth"])).mean() for r in rows])


def report(res: dict) -> None:
    rows = res["splits"]
    s = len(rows)
    print(f"\n{res['data']} {res['shape'][0]} x {res['shape'][1]}, {s} splits, {len(rows[0]['truth'])} targets each")
    for est in ("gp-irt", "p-irt"):
        maes = {r: _mae(rows, lambda x, r=r: x["rules"][r][est]) for r in RULES}
        parts = []
        for r in RULES:
            dims = [x["rules"][r]["n_dims"] for x in rows]
            parts.append(f"{r}: d {dict(sorted({d: dims.count(d) for d in set(dims)}.items()))}, MAE "
                         f"{maes[r].mean():.3f} ± {maes[r].std(ddof=1) / np.sqrt(s):.3f}")
        diff = maes["selected"] - maes["reference"]
        print(f"  {est}: " + "; ".join(parts) + f"; selected − reference {diff.mean():+.3f} ± "
              f"{diff.std(ddof=1) / np.sqrt(s):.3f} points")
        if rows[0]["fixed"]:
            fx = {d: _mae(rows, lambda x, d=d: x["fixed"][d][est]) for d in rows[0]["fixed"]}
            best = min(fx, key=lambda d: fx[d].mean())
            print("    fixed d: " + ", ".join(f"{d}: {v.mean():.3f} ± {v.std(ddof=1) / np.sqrt(s):.3f}"
                                              for d, v in fx.items())
                  + f"; selected − best fixed ({best}) {(maes['selected'] - fx[best]).mean():+.3f} ± "
                  f"{(maes['selected'] - fx[best]).std(ddof=1) / np.sqrt(s):.3f}")


def time_one(name: str, rule: str, items: int | None, models: int | None) -> None:
    Y, miss = load(name, items, models)
    c = process_cpu()
    est = _fit(Y, miss, validation=rule, random_state=0)
    print(json.dumps({"data": name, "shape": list(Y.shape), "rule": rule, "cpu_s": round(process_cpu() - c, 2),
                      "n_dims": est.n_dims_, "errors": {str(k): round(v, 5) for k, v in est.validation_errors_.items()},
                      "lambda": round(est.lambda_, 4)}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=("imagenet", "cifar10", "alpacaeval", "digits", "sim"))
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--items", type=int, help="a random subset of this many items (seeded)")
    ap.add_argument("--models", type=int, help="a random subset of this many models (seeded)")
    ap.add_argument("--holdout", type=int, help="targets per split (default: a fifth of the models)")
    ap.add_argument("--fixed", action="store_true", help="also every candidate dimension fixed")
    ap.add_argument("--out")
    ap.add_argument("--report", nargs="+")
    ap.add_argument("--time", choices=("imagenet", "cifar10", "alpacaeval", "digits", "sim"))
    ap.add_argument("--rule", choices=RULES, help=argparse.SUPPRESS)  # --time's child process
    args = ap.parse_args()
    if args.report:
        for f in args.report:
            with open(f) as fh:
                report(json.load(fh))
    elif args.time and args.rule:
        time_one(args.time, args.rule, args.items, args.models)
    elif args.time:
        extra = [a for a, v in (("--items", args.items), ("--models", args.models)) if v is not None]
        for rule in RULES:
            cmd = [sys.executable, __file__, "--time", args.time, "--rule", rule]
            for a in extra:
                cmd += [a, str(getattr(args, a[2:]))]
            subprocess.run(cmd, check=True)
    elif args.data and args.out:
        res = run(args.data, args.splits, args.fixed, args.items, args.models, args.holdout)
        with open(args.out, "w") as f:
            json.dump(res, f)
        report(res)
    else:
        ap.error("--data NAME --out FILE, --report FILE..., or --time NAME")


if __name__ == "__main__":
    main()
