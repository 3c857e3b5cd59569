"""AIPW with predictors that learn few parameters from the target's labels, against the plain mean of random items.

Issue 32's target at 100 items: an MAE at most 0.65x the plain mean's in range and 0.75x out of range. Where
extrapolation.ipynb's limit section finds it missed although the leaked oracle reaches it (digits and AlpacaEval in
range), the ridge on the sources' responses cannot learn from ~80 labels a fold. The predictors below learn a handful
of numbers from the target's labels instead; each runs inside :class:`effstats.disco.AIPW` as its ``regressor``
(cloned per target and cross-fitting fold), so that it never sees the label of an item it corrects and the estimate
and its interval stay design-based.

- ``nearest k``: the mean response of the ``k`` sources that agree most with the target on the training items
  (agreement: ``n - sum (x - y)^2``, the count of equal responses on 0/1), ``k`` chosen by leave-one-out over the
  training items from 1, 2, 3, 5, 8, 13, 21 and all.
- ``nearest softmax``: every source weighted by ``exp(beta * agreement)``, ``beta`` chosen by leave-one-out (on 0/1
  responses these are the posterior weights of "the target answers as source s, each answer flipped with
  probability eps" with ``beta = log((1 - eps) / eps)``: log-likelihood weights).
- ``nearest softmax + logit``: the softmax prediction's logit as the one feature of a logistic regression (two
  parameters: the level follows a target better than its nearest sources).
- ``ridge to mean`` / ``ridge to nearest`` / ``ridge to difficulty``: a ridge regression on the sources' responses
  of the residual ``y - m`` around the sources' mean response ``m`` (or the softmax prediction, or AIPW's
  two-parameter difficulty curve fitted on the same labels), its penalty chosen by generalised
  cross-validation (``RidgeCV``): shrunk toward ``m`` instead of toward zero; ``ridge GCV`` is the same
  toward zero (AIPW's ridge with the penalty chosen instead of fixed at 10), to tell the two changes apart.
- ``low rank r``: a logistic regression on the item's logit difficulty and its loadings on the sources' first ``r``
  principal components (from the sources' responses on every item, no label), features standardised, ``C = 1``.

Baselines: the plain mean (``RandomDirect``), AIPW's ridge (``Ridge(alpha=10)``), AIPW's ``"difficulty"`` and
``StratifiedAIPW`` (its own stratified items). Datasets and splits are extrapolation.ipynb's (the limit section's:
a random fifth of the models as targets, the best fifth, the newest fifth on digits), 100 items, every seed drawing
the items (and the random split) anew. Reported per dataset, split and estimator: the MAE ratio to the plain mean's
(ratio of the seed means; the per-seed ratios' standard error), the 95 % interval coverage, and each new predictor's
paired difference of per-seed ratios from AIPW + ridge's (mean and standard error over seeds).

Run: ``.venv/bin/python benchmarks/aipw_predictors.py [--seeds 10] [--items 100] [--datasets digits,alpacaeval,...]
[--estimators "AIPW + ridge,ridge to mean"] [--out rows.csv] [--report rows.csv]``; ends with the tables as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LogisticRegression, RidgeCV

from effstats.disco import AIPW, RandomDirect, StratifiedAIPW, difficulty_regressor, run_protocol
from effstats.splits import chronological_split, performance_split, random_split

K_GRID = (1, 2, 3, 5, 8, 13, 21, None)  # None: every source
BETA_GRID = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def _agreement(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per training item and source, ``1 - (x - y)^2`` (items, M): 1 where they agree on 0/1 responses."""
    return 1.0 - (X - y[:, None]) ** 2


def _softmax_weights(counts: np.ndarray, beta: float) -> np.ndarray:
    z = beta * (counts - counts.max(axis=-1, keepdims=True))
    w = np.exp(z)
    return w / w.sum(axis=-1, keepdims=True)


def _topk_weights(counts: np.ndarray, k: int | None) -> np.ndarray:
    """Equal weights on the k largest counts of each row (ties to the first source), rows (..., M)."""
    m = counts.shape[-1]
    if k is None or k >= m:
        return np.full(counts.shape, 1.0 / m)
    order = np.argsort(-counts, axis=-1, kind="stable")[..., :k]
    w = np.zeros(counts.shape)
    np.put_along_axis(w, order, 1.0 / k, axis=-1)
    return w


class NearestSources(BaseEstimator, RegressorMixin):
    """The target's response predicted by the sources that agree most with it on the training items."""

    def __init__(self, weights: str = "softmax") -> None:
        self.weights = weights

    def _weights(self, counts: np.ndarray, param) -> np.ndarray:
        return _softmax_weights(counts, param) if self.weights == "softmax" else _topk_weights(counts, param)

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y, float)
        a = _agreement(X, y)
        total = a.sum(axis=0)
        loo = total[None, :] - a  # (n, M): each item's agreement counts without itself
        grid = BETA_GRID if self.weights == "softmax" else K_GRID
        errs = [(((self._weights(loo, g) * X).sum(axis=1) - y) ** 2).mean() for g in grid]
        self.param_ = grid[int(np.argmin(errs))]
        self.w_ = self._weights(total, self.param_)
        return self

    def predict(self, X):
        return np.asarray(X, float) @ self.w_


class NearestLogit(BaseEstimator, RegressorMixin):
    """``expit(a + b logit(p))`` with ``p`` the softmax-nearest prediction (clipped), two parameters."""

    def __init__(self, C: float = 100.0) -> None:
        self.C = C

    def _z(self, X):
        p = np.clip(self.near_.predict(X), 0.01, 0.99)
        return special.logit(p)[:, None]

    def fit(self, X, y):
        self.near_ = NearestSources("softmax").fit(X, y)
        self.lr_ = LogisticRegression(C=self.C).fit(self._z(X), np.asarray(y).astype(int))
        return self

    def predict(self, X):
        return self.lr_.predict_proba(self._z(X))[:, 1]


class ShrunkRidge(BaseEstimator, RegressorMixin):
    """Ridge on the sources' responses of ``y - m(x)``, penalty by GCV: shrunk toward ``m``, the sources' mean
    response (``toward="mean"``), the softmax-nearest prediction (``toward="nearest"``), AIPW's two-parameter
    difficulty curve fitted on the same labels (``toward="difficulty"``) or 0 (``toward="zero"``:
    AIPW's ridge with its penalty chosen by GCV instead of fixed)."""

    def __init__(self, toward: str = "mean") -> None:
        self.toward = toward

    def _m(self, X):
        if self.toward == "zero":
            return np.zeros(len(X))
        if self.toward == "difficulty":
            return self.curve_.predict_proba(X)[:, 1]
        return X.mean(axis=1) if self.toward == "mean" else self.near_.predict(X)

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y, float)
        if self.toward == "nearest":
            self.near_ = NearestSources("softmax").fit(X, y)
        if self.toward == "difficulty":
            self.curve_ = difficulty_regressor().fit(X, y.astype(int))
        self.ridge_ = RidgeCV(alphas=(1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 1e4, 1e5)).fit(X, y - self._m(X))
        return self

    def predict(self, X):
        X = np.asarray(X, float)
        return np.clip(self._m(X) + self.ridge_.predict(X), 0.0, 1.0)


class LowRankLogistic(BaseEstimator, RegressorMixin):
    """Logistic regression on fixed, label-free item features: the logit difficulty and the loadings on the
    sources' first principal components (``components`` (M, r) from every item's source responses), standardised
    with ``center`` / ``scale`` of the features over every item."""

    def __init__(self, components=None, center=None, scale=None, C: float = 1.0) -> None:
        self.components = components
        self.center = center
        self.scale = scale
        self.C = C

    def transform(self, X):
        return (low_rank_raw(np.asarray(X, float), self.components) - self.center) / self.scale

    def fit(self, X, y):
        self.lr_ = LogisticRegression(C=self.C).fit(self.transform(X), np.asarray(y).astype(int))
        return self

    def predict(self, X):
        return self.lr_.predict_proba(self.transform(X))[:, 1]


def low_rank_raw(X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Items' raw features from their source rows X (items, M): logit difficulty, loadings on V's columns."""
    m = X.shape[1]
    p = (X.sum(axis=1) + 0.5) / (m + 1.0)
    load = (X - X.mean(axis=1, keepdims=True)) @ V
    return np.column_stack([np.log(p / (1 - p)), load])


def low_rank(src_y: np.ndarray, r: int, C: float = 1.0) -> LowRankLogistic:
    """The low-rank regressor for sources' responses ``src_y`` (M, N) on every item (no label used)."""
    yc = src_y - src_y.mean(axis=0)
    vals, vecs = np.linalg.eigh(yc @ yc.T)
    V = vecs[:, np.argsort(vals)[::-1][:r]]
    raw = low_rank_raw(src_y.T.astype(float), V)
    sd = raw.std(axis=0)
    return LowRankLogistic(V, raw.mean(axis=0), np.where(sd > 0, sd, 1.0), C)


def load(name: str, fast: bool):
    """extrapolation.ipynb's datasets (full mode unless ``fast``)."""
    from effstats import datasets

    if name == "ImageNet":
        rm = datasets.load_imagenet_predictions()
        return rm.subset(items=np.arange(min(3_000 if fast else 10_000, rm.n_items)))
    if name == "CIFAR-10":
        rm = datasets.load_cifar10_predictions()
        return rm.subset(items=np.arange(min(3_000 if fast else 14_021, rm.n_items)))
    if name == "digits":
        dig = datasets.load_lifelong_digits()
        dig = dig.subset(items=(dig.items["shift"] == "clean").to_numpy())
        return dig.subset(models=np.sort(np.random.default_rng(0).choice(dig.n_models, 60 if fast else 200,
                                                                         replace=False)))
    if name == "AlpacaEval":
        ae = datasets.load_alpacaeval(outcome="win")
        complete = ~ae.missing.any(axis=0) if ae.missing is not None else np.ones(ae.n_items, bool)
        return type(ae)(ae.values[:, complete], model_ids=ae.model_ids, item_ids=ae.item_ids[complete])
    raise ValueError(f"--datasets: unknown {name!r}")


def limit_splits(rm, seed):
    """extrapolation.ipynb's limit splits: a random fifth, the best fifth, the newest fifth (with dates)."""
    n_t = round(0.2 * rm.n_models)
    sp = {"in range": random_split(rm, n_t, rng=seed), "out of range": performance_split(rm, 0.2)}
    if "release_date" in rm.models:
        sp["chronological"] = chronological_split(rm, n_newest=n_t)
    return sp


BASELINES = ["AIPW + ridge", "AIPW + difficulty", "StratifiedAIPW"]


def estimators(k: int, src_y: np.ndarray, names: list | None = None) -> dict:
    """The study's estimators at ``k`` items (those in ``names`` and the plain mean, when given)."""
    est = {"plain mean": RandomDirect(k), "AIPW + ridge": AIPW(k), "AIPW + difficulty": AIPW(k, regressor="difficulty"),
            "StratifiedAIPW": StratifiedAIPW(k),
            "nearest k": AIPW(k, regressor=NearestSources("topk")),
            "nearest softmax": AIPW(k, regressor=NearestSources("softmax")),
            "nearest softmax + logit": AIPW(k, regressor=NearestLogit()),
            "ridge to mean": AIPW(k, regressor=ShrunkRidge("mean")),
            "ridge to nearest": AIPW(k, regressor=ShrunkRidge("nearest")),
            "ridge to difficulty": AIPW(k, regressor=ShrunkRidge("difficulty")),
            "ridge GCV": AIPW(k, regressor=ShrunkRidge("zero")),
            "low rank 3": AIPW(k, regressor=low_rank(src_y, 3)),
            "low rank 8": AIPW(k, regressor=low_rank(src_y, 8))}
    return est if names is None else {m: e for m, e in est.items() if m == "plain mean" or m in names}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--datasets", default="digits,AlpacaEval,ImageNet,CIFAR-10")
    ap.add_argument("--estimators", default=None, help="comma-separated names (default: every one)")
    ap.add_argument("--fast", action="store_true", help="the notebook's FAST sizes")
    ap.add_argument("--out", default=None, help="CSV of the per-seed rows")
    ap.add_argument("--report", default=None, help="print the tables of a CSV written by --out, run nothing")
    args = ap.parse_args()
    if args.report:
        return report(pd.read_csv(args.report))
    rows = []
    for name in args.datasets.split(","):
        t = time.process_time()
        rm = load(name, args.fast)
        y = rm.values.astype(float)
        for seed in range(args.seeds):
            for kind, sp in limit_splits(rm, seed).items():
                est = estimators(args.items, y[sp.source], args.estimators and args.estimators.split(","))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = run_protocol(est, rm, {kind: sp}, seeds=[seed], confidence_level=0.95)
                rows.append(r.assign(data=name))
        print(f"{name}: {rm.n_models} models x {rm.n_items} items, {time.process_time() - t:.0f} CPU s", flush=True)
    R = pd.concat(rows, ignore_index=True)
    if args.out:
        R.to_csv(args.out, index=False)
    report(R)


def markdown(df: pd.DataFrame) -> str:
    """A Markdown table of ``df`` (index levels as the first columns), without the optional tabulate."""
    d = df.reset_index()
    lines = ["| " + " | ".join(map(str, d.columns)) + " |", "|" + "---|" * d.shape[1]]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in d.itertuples(index=False)]
    return "\n".join(lines)


def report(R: pd.DataFrame) -> None:
    mae = R.pivot_table(index=["data", "split", "seed"], columns="method", values="mae")
    cov = R.pivot_table(index=["data", "split"], columns="method", values="coverage")
    methods = [m for m in mae.columns if m != "plain mean"]
    ratio = mae[methods].div(mae["plain mean"], axis=0)
    g = ratio.groupby(level=["data", "split"], sort=False)
    mean_mae = mae.groupby(level=["data", "split"], sort=False).mean()
    tab = mean_mae[methods].div(mean_mae["plain mean"], axis=0)
    se = g.std() / np.sqrt(g.count())
    order = [m for m in BASELINES if m in methods] + [m for m in methods if m not in BASELINES]
    cells = tab[order].round(2).astype(str) + " ± " + se[order].round(2).astype(str)
    cells.insert(0, "plain mean (pts)", mean_mae["plain mean"].round(2))
    print(f"\nMAE ratio to the plain mean (ratio of seed means ± s.e. of the per-seed ratios; "
          f"{R['seed'].nunique()} seeds)\n")
    print(markdown(cells))
    print("\n95 % coverage\n")
    print(markdown(cov[["plain mean"] + order].round(3)))
    d = ratio[order].sub(ratio["AIPW + ridge"], axis=0).groupby(level=["data", "split"], sort=False)
    diff = d.mean().round(3).astype(str) + " ± " + (d.std() / np.sqrt(d.count())).round(3).astype(str)
    print("\nPaired by seed: per-seed ratio minus AIPW + ridge's (mean ± s.e.; < 0: better)\n")
    print(markdown(diff[[m for m in order if m != "AIPW + ridge"]]))


if __name__ == "__main__":
    main()
