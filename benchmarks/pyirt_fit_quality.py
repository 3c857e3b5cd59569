"""effstats' IRT fits against py-irt's on real per-item data: p-IRT / gp-IRT accuracy on held-out models.

TinyBenchmarks (Polo et al. 2024, arXiv:2402.14992) fits its IRT model with py-irt: the multidimensional 2PL with
hierarchical priors, by stochastic variational inference (Adam, lr 0.1, 2,000 epochs, learning-rate decay 0.9999,
seed 42). effstats fits the same 2PL likelihood by regularised joint ML (:class:`effstats.irt.IRT2PL`). This script
compares the two fits where it matters to a user: the estimates they give with the same anchor items and the same
estimator.

For each dataset and seed, ``--items`` random items (2,376 by default: the size of ARC-Easy) and a random fifth of
the models as targets; on the other (source) models, ``TinyBenchmarks(100, "anchor-corr", n_dims=d)`` selects the
anchor items (anchor-corr does not depend on the IRT fit, so both fits share them), effstats fits
``IRT2PL(d)`` and py-irt fits its ``multidim_2pl`` with tinyBenchmarks' settings. Either fit's item parameters
then give, for each target (abilities by maximum likelihood on its anchor answers, as the reference does):

* p-IRT and gp-IRT: mean absolute error of the full-benchmark score on the targets (points);
* the dimension-validation error: abilities from the even-numbered items, MAE of the predicted mean over the
  odd-numbered ones (the reference's criterion, with the targets as the held-out models). The dimension each fit
  would choose is the smallest whose error is within 0.0025 of the best (the reference's rule).

py-irt's difficulty is one per dimension, ``Σ_d a_d (θ_d − b_d)``: effstats' model with ``b = Σ_d a_d b_d``.

``--remedies`` adds effstats fits with other ``IRT2PL`` settings (``prior_sd_a``, ``tol`` / ``max_iter``) on the
same splits and anchors; these cost seconds. A py-irt fit whose variational parameters turn NaN (pyro then stops) is
run again with seed 43, then 44, and the rows say how often (``restarts``). ``--summary rows.json ...`` prints the
tables from the rows of earlier ``--json`` runs without fitting.

py-irt is not a dependency of effstats. The script runs where ``py_irt`` (with pyro and torch) imports, optionally
from the folder given by ``--pyirt-path`` (put first on ``sys.path``); elsewhere it says so and exits. It runs
with Debian's python3-torch (1.13), pyro 1.8.6 and py-irt 0.4 (the pydantic-1 releases tinyBenchmarks used); one
py-irt fit of 54 models × 2,376 items (2,000 epochs) takes about 30 CPU seconds.

    .venv/bin/python benchmarks/pyirt_fit_quality.py --pyirt-path DIR [--datasets imagenet cifar10 alpacaeval]
        [--seeds 3] [--first-seed 0] [--dims 2 5] [--epochs 2000] [--remedies] [--json rows.json]
    .venv/bin/python benchmarks/pyirt_fit_quality.py --summary rows.json [more.json ...]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core, before numpy loads its BLAS

import argparse
import contextlib
import copy
import io
import json
import sys
import time
import warnings

import numpy as np

from effstats import datasets
from effstats.irt import IRT2PL, TinyBenchmarks

ANCHORS = 100
DIMS_TOL = 0.0025  # the reference keeps the smallest dimension within this of the best validation error
REMEDIES = {
    "prior_sd_a=1": {"prior_sd_a": 1.0},
    "prior_sd_a=1.5": {"prior_sd_a": 1.5},
    "tol=1e-8": {"tol": 1e-8, "max_iter": 2000},
    "prior_sd_a=1, tol=1e-8": {"prior_sd_a": 1.0, "tol": 1e-8, "max_iter": 2000},
}


def load(name: str) -> np.ndarray:
    """The dataset's 0/1 matrix (models × items)."""
    if name == "imagenet":
        return datasets.load_imagenet_predictions(domains="imagenet_val").values.astype(bool)
    if name == "cifar10":
        return datasets.load_cifar10_predictions(domains="cifar10").values.astype(bool)
    if name == "alpacaeval":
        return datasets.load_alpacaeval(outcome="win").values.astype(bool)
    raise ValueError(f"datasets: unknown dataset {name!r}")


def fit_pyirt(Y: np.ndarray, dims: int, epochs: int, lr: float = 0.1,
              seed: int = 42) -> tuple[np.ndarray, np.ndarray, float]:
    """py-irt's multidim_2pl on Y as tinyBenchmarks calls it (hierarchical priors, seed 42, deterministic): the
    last epoch's item parameters as effstats' (a, b), and the CPU seconds. Raises ValueError when the variational
    parameters turn NaN (py-irt then stops with a distribution's argument check)."""
    import pyro
    import torch
    from py_irt.config import IrtConfig
    from py_irt.dataset import Dataset
    from py_irt.training import IrtModelTrainer

    m, n = Y.shape
    subj, item = np.nonzero(np.ones_like(Y))
    ds = Dataset(
        item_ids={str(i) for i in range(n)}, subject_ids={str(s) for s in range(m)},
        item_id_to_ix={str(i): i for i in range(n)}, ix_to_item_id={i: str(i) for i in range(n)},
        subject_id_to_ix={str(s): s for s in range(m)}, ix_to_subject_id={s: str(s) for s in range(m)},
        observation_subjects=subj.tolist(), observation_items=item.tolist(),
        observations=Y[subj, item].astype(float).tolist(), training_example=[True] * subj.size,
    )
    config = IrtConfig(model_type="multidim_2pl", epochs=epochs, priors="hierarchical", dims=dims, lr=lr,
                       seed=seed, deterministic=True, log_every=epochs)
    pyro.set_rng_seed(seed)
    torch.use_deterministic_algorithms(True)
    t0 = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        trainer = IrtModelTrainer(data_path=None, config=config, dataset=ds, verbose=False)
        trainer.best_params = None
        trainer.train(device="cpu")
    cpu = time.process_time() - t0
    disc = np.asarray(trainer.last_params["disc"], float).reshape(n, dims)
    diff = np.asarray(trainer.last_params["diff"], float).reshape(n, dims)
    return disc, (disc * diff).sum(1), cpu


def with_items(irt: IRT2PL, a: np.ndarray, b: np.ndarray) -> IRT2PL:
    """A fitted IRT2PL carrying other item parameters (same items, same dimension)."""
    out = copy.copy(irt)
    out.a_, out.b_ = a, b
    return out


def scores(irt: IRT2PL, Yt: np.ndarray, sel: np.ndarray, weights: np.ndarray, lam: float) -> dict[str, np.ndarray]:
    """p-IRT and gp-IRT estimates of the targets' scores from their answers on the anchors ``sel``."""
    n, k = Yt.shape[1], len(sel)
    unseen = np.setdiff1d(np.arange(n), sel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        th = irt.abilities(Yt[:, sel], sel, method="mle")
    p_irt = (k / n) * Yt[:, sel].mean(1) + (1 - k / n) * irt.predict_proba(th, unseen).mean(1)
    return {"p-irt": p_irt, "gp-irt": lam * (Yt[:, sel] @ weights) + (1 - lam) * p_irt}


def validation_error(irt: IRT2PL, Yt: np.ndarray) -> float:
    """The reference's dimension-validation error on held-out models: abilities from the even-numbered items,
    MAE of the predicted mean over the odd-numbered ones."""
    n = Yt.shape[1]
    seen, unseen = np.arange(0, n, 2), np.arange(1, n, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        th = irt.abilities(Yt[:, seen], seen, method="mle")
    return float(np.abs(irt.predict_proba(th, unseen).mean(1) - Yt[:, unseen].mean(1)).mean())


def evaluate(irt: IRT2PL, Ys: np.ndarray, Yt: np.ndarray, tb: TinyBenchmarks) -> dict[str, float]:
    """Validation error, p-IRT and gp-IRT MAE (fractions) of one fit; λ from its own validation error, as the
    reference (anchor points: c = 4)."""
    err = validation_error(irt, Yt)
    v = Ys.var(axis=1).mean() / (4 * len(tb.selected_))
    lam = err**2 / (err**2 + v)
    est = scores(irt, Yt, tb.selected_, tb.weights_, lam)
    truth = Yt.mean(1)
    return {"val": err, **{key: float(np.abs(e - truth).mean()) for key, e in est.items()}}


def run(name: str, Y: np.ndarray, seed: int, args: argparse.Namespace) -> list[dict]:
    rng = np.random.default_rng(seed)
    m, n = Y.shape
    cols = np.sort(rng.choice(n, min(args.items, n), replace=False))
    targets = np.zeros(m, bool)
    targets[rng.choice(m, max(2, round(m / 5)), replace=False)] = True
    Ys, Yt = Y[np.ix_(~targets, cols)], Y[np.ix_(targets, cols)]
    rows = []
    for d in args.dims:
        tb = TinyBenchmarks(ANCHORS, "anchor-corr", "p-irt", n_dims=d, random_state=seed)
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tb.fit(Ys)
        cpu = time.process_time() - t0
        ours = evaluate(tb.irt_, Ys, Yt, tb)
        mine = tb.predict_all(Yt[:, tb.selected_])["p-irt"]  # the script's p-IRT is the estimator's
        assert abs(np.abs(mine - Yt.mean(1)).mean() - ours["p-irt"]) < 1e-9
        rows.append({"dataset": name, "seed": seed, "dims": d, "fit": "effstats", "cpu": cpu, **ours})
        if args.remedies:
            for label, params in REMEDIES.items():
                irt = IRT2PL(d, **params)
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    irt.fit(Ys)
                cpu = time.process_time() - t0
                rows.append({"dataset": name, "seed": seed, "dims": d, "fit": f"effstats {label}", "cpu": cpu,
                             **evaluate(irt, Ys, Yt, tb)})
        if args.epochs:
            # a fit whose parameters diverge (NaN) is run again with the next seed, and counted
            for attempt in range(3):
                try:
                    a, b, cpu = fit_pyirt(Ys, d, args.epochs, seed=42 + attempt)
                    break
                except ValueError as e:
                    print(f"{name:10s} seed {seed} d={d} py-irt diverged with seed {42 + attempt}: "
                          f"{str(e).splitlines()[0][:80]}", flush=True)
            else:
                continue
            rows.append({"dataset": name, "seed": seed, "dims": d, "fit": "py-irt", "cpu": cpu, "restarts": attempt,
                         **evaluate(with_items(tb.irt_, a, b), Ys, Yt, tb)})
        for r in rows[-(2 + len(REMEDIES) * args.remedies):]:
            if r["dims"] == d:
                print(f"{name:10s} seed {seed} d={d} {r['fit']:32s} val {100 * r['val']:6.3f}  "
                      f"p-IRT {100 * r['p-irt']:6.3f}  gp-IRT {100 * r['gp-irt']:6.3f}  ({r['cpu']:.1f} CPU s)",
                      flush=True)
    return rows


def chosen(errors: dict[int, float]) -> int:
    best = min(errors.values())
    return next(d for d in sorted(errors) if errors[d] - best < DIMS_TOL)


def summary(rows: list[dict]) -> None:
    """Per dataset and fit: mean (s.d.) over seeds of the errors (points), and effstats / py-irt ratios, at each
    dimension and at the dimension each fit chooses by its own validation error."""
    import pandas as pd

    cols = ["val", "p-irt", "gp-irt"]
    df = pd.DataFrame(rows)
    df[cols] *= 100
    df["dims"] = df["dims"].astype(str)
    # each fit at the dimension its own validation error chooses (seeds where every dimension was fitted)
    picked = []
    for _, g in df.groupby(["dataset", "seed", "fit"]):
        if len(g) == df.query("dataset == @g.dataset.iloc[0]")["dims"].nunique() > 1:
            d = str(chosen(dict(zip(g["dims"].astype(int), g["val"] / 100))))
            picked.append(g[g["dims"] == d].assign(dims="chosen", picked=int(d)))
    df = pd.concat([df, *picked], ignore_index=True)
    fmt = {c: lambda x: f"{x.mean():.3f} ({x.std():.3f})" for c in cols + ["cpu"]}
    print("\nmean (s.d.) over seeds, points; 'chosen': at the dimension the fit's validation error chooses")
    table = df.groupby(["dataset", "dims", "fit"]).agg({**fmt, "picked": lambda x: "/".join(
        str(int(v)) for v in x if v == v)})
    print(table.to_string())
    if "py-irt" not in set(df["fit"]):
        return
    keys = ["dataset", "seed", "dims"]
    ref = df[df["fit"] == "py-irt"].set_index(keys)[cols]
    out = []
    for fit, g in df[df["fit"] != "py-irt"].groupby("fit"):
        g = g.set_index(keys)[cols]
        both = g.index.intersection(ref.index)
        r = (g.loc[both] / ref.loc[both]).groupby(level=[0, 2]).agg(lambda x: f"{x.mean():.3f} ({x.std():.3f})")
        pooled = g.loc[both].groupby(level=[0, 2]).mean() / ref.loc[both].groupby(level=[0, 2]).mean()
        r = r.join(pooled.round(3).add_suffix(" pooled"))
        r["fit"], r["seeds"] = fit, g.loc[both].groupby(level=[0, 2]).size()
        out.append(r.reset_index())
    print("\neffstats / py-irt error ratio: per seed, mean (s.d.); 'pooled': ratio of the means over seeds")
    print(pd.concat(out).set_index(["dataset", "dims", "fit"]).sort_index().to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyirt-path", help="folder holding py_irt and pyro (put first on sys.path)")
    ap.add_argument("--datasets", nargs="+", default=["imagenet", "cifar10", "alpacaeval"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--items", type=int, default=2376)
    ap.add_argument("--dims", type=int, nargs="+", default=[2, 5])
    ap.add_argument("--epochs", type=int, default=2000, help="py-irt's epochs (0: effstats' fits only)")
    ap.add_argument("--remedies", action="store_true", help="also effstats fits with other IRT2PL settings")
    ap.add_argument("--json", help="write the per-seed rows here")
    ap.add_argument("--summary", nargs="+", metavar="JSON", help="summarise rows written by --json runs, fit nothing")
    args = ap.parse_args()
    if args.summary:
        rows = []
        for path in args.summary:
            with open(path) as f:
                rows += json.load(f)
        summary(rows)
        return
    if args.pyirt_path:
        sys.path.insert(0, os.path.abspath(args.pyirt_path))
    if args.epochs:
        try:
            import py_irt.training  # noqa: F401
        except ImportError as e:
            print(f"py-irt is not importable here ({e}): install it (with pyro and torch) or pass --pyirt-path; "
                  "--epochs 0 runs effstats' fits alone.")
            sys.exit(0)
    rows = []
    for name in args.datasets:
        Y = load(name)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            rows += run(name, Y, seed, args)
            if args.json:
                with open(args.json + ".tmp", "w") as f:
                    json.dump(rows, f)
                os.replace(args.json + ".tmp", args.json)
    summary(rows)


if __name__ == "__main__":
    main()
