"""Gain of the design-based estimators over the plain mean of random items, on real per-item data.

For each dataset and split (in range: 20 random targets; out of range: the best 20 % of the models held out as
targets, the rest as sources), each seed draws the items anew; every estimator is fitted on the sources and
estimates the targets' full-benchmark scores from ``n`` items. Reported per dataset, split and estimator: the MAE
(points, mean over seeds, ± its standard deviation over seeds), the ratio to the plain mean's MAE on random items
of the same seeds (ratio of the seed means, ± the standard error of the per-seed ratios), and the 95 % interval
coverage at each budget (share of target × seed intervals holding the true score). Two limits beside
StratifiedAIPW: the ratio its item features allow with every label (``_limit``), and the ratio a ridge regression on
every source model's responses reaches, cross-fitted on all of the target's labels (``_ridge_limit``).
"StratifiedAIPW by group" stratifies on the dataset's item groups as well (``GROUPS``: the true class, AlpacaEval's
source dataset).

Data: ``load_imagenet_predictions`` (67 models × 80,000 items), ``load_cifar10_predictions`` (30 × 14,021),
``load_alpacaeval(outcome="win")`` (56 × 805, 0/1 wins against the reference model) from the shared predictions folder
(:func:`effstats.datasets.data_root`), and the bundled ``load_lifelong_digits`` (500 × 30,400; 120 random
models of them, so that a run stays within minutes). A dataset whose files are absent is skipped, saying so.
``imagenet-classes`` is a family of tasks, each a set of ImageNet classes (as MMLU's subjects are tasks): the
images of ImageNet val (50 a class) whose true class is in the set, for the 67 models of ``imagenet``
(``CLASS_GROUPS``: the 118 dog breeds, class ids 151–268 in the sorted-wnid order, and ten blocks of 100
consecutive class ids, ``0-99`` to ``900-999``, which partition the 1,000 classes; ``--tasks`` runs some of
them); rows "pooled" over the tasks run follow them. Their images keep the release's true class, also the 2,384
of the 50,000 that no model gets right (305 not in any model's top five).

Run: ``.venv/bin/python benchmarks/estimator_gain.py [--seeds 10] [--items 100] [--coverage 50,100,300]
[--datasets imagenet,cifar10,alpacaeval,alpacaeval-pwin,digits,imagenet-classes] [--tasks dogs,0-99,...]
[--estimators ...] [--top K]``; ends with the table as Markdown. ``alpacaeval-pwin`` is AlpacaEval's graded P(win)
(``load_alpacaeval()``), as the loop reads its per-example release; ``--top K`` holds out the best K models instead
of the best 20 %.
The loop's ``sortsearch`` method (Sort & Search's stratified design through the chooser's estimator) is compared
at 500 items with ``--items 500 --coverage "" --estimators "plain mean,sortsearch,StratifiedAIPW"``.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_predict

from effstats.disco import AIPW, MethodChooser, RandomDirect, StratifiedAIPW, StratifiedHT, default_candidates
from effstats.disco._chooser import _SortSearchDesign
from effstats.disco._stratified_aipw import _LogitFit
from effstats.splits import performance_split, random_split


def _load(name: str):
    from effstats import datasets

    if name == "imagenet":
        return datasets.load_imagenet_predictions()
    if name == "cifar10":
        return datasets.load_cifar10_predictions()
    if name == "alpacaeval":
        return datasets.load_alpacaeval(outcome="win")
    if name == "alpacaeval-pwin":  # the judge's graded P(win), as the loop reads AlpacaEval's per-example release
        return datasets.load_alpacaeval()
    if name == "digits":
        rm = datasets.load_lifelong_digits(probabilities=False)
        keep = np.sort(np.random.default_rng(0).choice(rm.n_models, 120, replace=False))
        return rm.subset(models=keep)
    raise ValueError(f"datasets: unknown dataset {name!r}")


# ImageNet's class ids follow the sorted WordNet ids, so that related classes are neighbours: 151-268 are the dog
# breeds (86 % of the 67 models' wrong answers on their images name another class of that range; 20 % for the
# classes 500-617)
CLASS_GROUPS = {"dogs": range(151, 269), **{f"{a}-{a + 99}": range(a, a + 100) for a in range(0, 1000, 100)}}


def _tasks(name: str, tasks: list[str] | None = None):
    """The (task, responses) pairs of a dataset: one for most, one per class group for ``imagenet-classes``."""
    if name != "imagenet-classes":
        yield name, _load(name)
        return
    from effstats import datasets

    rm = datasets.load_imagenet_predictions(domains="imagenet_val")
    for group in tasks or CLASS_GROUPS:
        if group not in CLASS_GROUPS:
            raise ValueError(f"tasks: unknown class group {group!r}; expected some of {', '.join(CLASS_GROUPS)}")
        yield f"imagenet classes {group}", rm.subset(items=np.isin(rm.labels, CLASS_GROUPS[group]))


ESTIMATORS = {
    "plain mean": lambda n, s: RandomDirect(n, random_state=s),
    "AIPW difficulty": lambda n, s: AIPW(n, regressor="difficulty", random_state=s),
    "StratifiedHT": lambda n, s: StratifiedHT(n, random_state=s),
    "StratifiedAIPW": lambda n, s: StratifiedAIPW(n, random_state=s),
}
# the item groups StratifiedAIPW(stratify=...) is run with: the true class, AlpacaEval's source dataset (ImageNet's
# 1,000 classes are more groups than 100 items can stratify on; a class group's 100-118 classes need 200-236 items,
# two a class, and are left out, saying so, at fewer)
GROUPS = {"digits": "label", "cifar10": "label", "alpacaeval": "dataset", "imagenet-classes": "label"}
VARIANTS = {  # the allocation's share of the gain
    "StratifiedAIPW proportional": lambda n, s: StratifiedAIPW(n, allocation="proportional", random_state=s),
    # filled per dataset with its GROUPS column (main)
    "StratifiedAIPW by group": None,
    # the loop's Sort & Search method, ``effstats select --method sortsearch``: SortSearch(sampling="stratified"), one
    # random item per equal cell of the sources' easy-to-hard order, and its design-based accuracy and interval
    "sortsearch": lambda n, s: _SortSearchDesign(n, random_state=s),
    # the loop's "auto" (the chooser over the candidates that draw random items), with and without StratifiedAIPW
    "auto": lambda n, s: MethodChooser(default_candidates(n, irt=False, random_items=True), n_items=n,
                                       random_state=s),
    "auto without StratifiedAIPW": lambda n, s: MethodChooser(
        {k: v for k, v in default_candidates(n, irt=False, random_items=True).items()
         if k != "stratified AIPW + logistic"}, n_items=n, random_state=s),
}


# out of range: the best TOP models as targets (``--top``; None: the best 20 %)
TOP = None


def _splits(rm, seed: int):
    n_targets = min(20, rm.n_models // 3)
    yield "in range", random_split(rm, n_targets, rng=seed).apply(rm)
    yield ("out of range" if TOP is None else f"out of range, best {TOP}",
           performance_split(rm, top_fraction=0.2 if TOP is None else TOP / rm.n_models).apply(rm))


def run(rm, n_items: int, seeds: int, estimators: dict, coverage_only: bool = False) -> pd.DataFrame:
    rows = []
    for seed in range(seeds):
        for split, (src, tgt) in _splits(rm, seed):
            truth = tgt.values_with_nan()
            truth = np.nanmean(truth, axis=1)
            for name, make in estimators.items():
                if coverage_only and name == "plain mean":
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = make(n_items, 1000 + seed).fit(src)
                    p = est.predict_interval(tgt)
                ci = p.confidence_interval(0.95)
                err = np.abs(p.statistic - truth)
                first = name == "StratifiedAIPW" and not coverage_only
                rows.append({"split": split, "estimator": name, "seed": seed, "mae": 100 * err.mean(),
                             "covered": np.mean((ci.low <= truth) & (truth <= ci.high)), "n_targets": len(truth),
                             "limit": _limit(est, tgt) if first else np.nan,
                             "limit_all": _ridge_limit(src, tgt) if first else np.nan})
    return pd.DataFrame(rows)


def _limit(est, tgt) -> float:
    """The MAE ratio to the plain mean that the estimator's item features allow at best: the logistic model fitted
    on all of a target's items (no sampling error in the fit) leaves residuals e; with proportional allocation
    the variance ratio is the within-strata variance of e over the variance of y. Mean over targets of its root."""
    Y = tgt.values_with_nan()
    ok = ~np.isnan(Y).any(axis=0) & (est.strata_ >= 0)
    X, h, Yo = est.features_[ok], est.strata_[ok], Y[:, ok]
    f = _LogitFit(X, Yo, est.penalty, X, h, int(h.max()) + 1).at(X)
    e = Yo - f
    onehot = np.eye(int(h.max()) + 1)[h]
    within = ((e - (e @ onehot / onehot.sum(axis=0)) @ onehot.T) ** 2).sum(axis=1)
    total = ((Yo - Yo.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return float(np.mean(np.sqrt(within[total > 0] / total[total > 0])))


def _ridge_limit(src, tgt, folds: int = 5) -> float:
    """The MAE ratio to the plain mean of a difference estimator whose predictor is a ridge regression (penalty 1)
    on every source model's responses, fitted on all of the target's labels but the held-out fold's (cross-fitted
    over ``folds`` folds of all items, equal probabilities): what a predictor linear in the sources reaches without
    a budget. Root of the residual over the response variance, mean over targets."""
    S, Y = src.values_with_nan(), tgt.values_with_nan()
    S = np.where(np.isnan(S), np.nanmean(S, axis=0), S)
    ok = ~np.isnan(Y).any(axis=0) & ~np.isnan(S).any(axis=0)
    X, Yo = S[:, ok].T, Y[:, ok].T
    F = cross_val_predict(Ridge(alpha=1.0), X, Yo, cv=KFold(folds, shuffle=True, random_state=0))
    resid, total = ((Yo - F) ** 2).mean(axis=0), Yo.var(axis=0)
    return float(np.mean(np.sqrt(resid[total > 0] / total[total > 0])))


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    plain = df[df.estimator == "plain mean"].set_index(["split", "seed"])["mae"]
    out = []
    for (split, name), g in df.groupby(["split", "estimator"], sort=False):
        base = plain.loc[split].reindex(g.seed).to_numpy()
        ratio = g.mae.to_numpy() / base
        out.append({"split": split, "estimator": name, "mae": g.mae.mean(), "mae_sd": g.mae.std(ddof=1),
                    "ratio": g.mae.mean() / base.mean(), "ratio_se": ratio.std(ddof=1) / np.sqrt(len(ratio)),
                    "coverage": g.covered.mean(), "limit": g.limit.mean(), "limit_all": g.limit_all.mean()})
    return pd.DataFrame(out)


def _pooled(raws: list[pd.DataFrame], covs: list[pd.DataFrame]) -> pd.DataFrame:
    """A family's tasks as one row per split and estimator: each seed's MAE averaged over the tasks (which share
    the seeds), then summarised as one task's; coverages averaged over the tasks (equal numbers of targets)."""
    raw = pd.concat(raws)
    pooled = raw.groupby(["split", "estimator", "seed"], sort=False).agg(
        mae=("mae", "mean"), covered=("covered", "mean"), limit=("limit", "mean"),
        limit_all=("limit_all", "mean")).reset_index()
    s = summarize(pooled)
    cov = pd.concat(covs).groupby(["split", "estimator"], sort=False).mean(numeric_only=True)
    return s.join(cov, on=["split", "estimator"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--coverage", default="50,300", help="further budgets for the StratifiedAIPW coverage")
    ap.add_argument("--datasets", default="imagenet,cifar10,alpacaeval,digits")
    ap.add_argument("--tasks", default="", help="imagenet-classes: the class groups to run (default all)")
    ap.add_argument("--estimators", default=",".join([*ESTIMATORS, *VARIANTS]))
    ap.add_argument("--top", type=int, default=None, help="out of range: the best TOP models as targets (default: "
                                                             "the best 20 %%)")
    args = ap.parse_args()
    global TOP
    TOP = args.top
    ests = {k: {**ESTIMATORS, **VARIANTS}[k] for k in args.estimators.split(",")}
    budgets = [int(b) for b in args.coverage.split(",") if b]
    tables = []
    for name in args.datasets.split(","):
        raws, covs = [], []
        try:
            tasks = _tasks(name, [t for t in args.tasks.split(",") if t] or None)
            for task, rm in tasks:
                t0 = time.perf_counter()
                here = {k: v for k, v in ests.items() if v is not None}
                if "StratifiedAIPW by group" in ests and name in GROUPS:
                    col = GROUPS[name]
                    n_groups = rm.items[col].nunique()
                    if n_groups <= args.items // 2:
                        here["StratifiedAIPW by group"] = lambda n, s: StratifiedAIPW(n, stratify=col, random_state=s)
                    else:  # two sampled items a group
                        print(f"{task}: no StratifiedAIPW by group ({n_groups} groups need {2 * n_groups} items)")
                raw = run(rm, args.items, args.seeds, here)
                s = summarize(raw)
                s.insert(0, "dataset", f"{task} ({rm.n_models}×{rm.n_items:,})")
                for b in budgets:
                    if b >= rm.n_items:
                        continue
                    for e in ("StratifiedAIPW", "StratifiedAIPW by group"):
                        if e not in here or (e != "StratifiedAIPW" and n_groups > b // 2):
                            continue
                        c = run(rm, b, args.seeds, {"StratifiedAIPW": here[e]}, coverage_only=True)
                        cov = c.groupby("split").covered.mean()
                        s.loc[s.estimator == e, f"cov_{b}"] = s.split[s.estimator == e].map(cov)
                tables.append(s)
                raws.append(raw)
                covs.append(s[["split", "estimator", *(c for c in s.columns if c.startswith("cov_"))]])
                print(s.round(3).to_string(index=False), f"\n{task}: {time.perf_counter() - t0:.0f} s\n", flush=True)
        except (FileNotFoundError, OSError) as exc:
            print(f"{name}: skipped ({exc})")
            continue
        if len(raws) > 1:
            s = _pooled(raws, covs)
            s.insert(0, "dataset", f"{name}, pooled over {len(raws)} tasks")
            tables.append(s)
            print(s.round(3).to_string(index=False), "\n", flush=True)
    if tables:
        t = pd.concat(tables)
        cov = [c.replace("_", "@") for c in t.columns if c.startswith("cov_")]
        print("\n| dataset | split | estimator | MAE (pts) | × plain mean | limit, proportional | limit, all labels | "
              + " | ".join([f"coverage@{args.items}", *(c.replace("cov", "coverage") for c in cov)]) + " |")
        print("|---" * (8 + len(cov)) + "|")
        for r in t.itertuples(index=False):
            extra = ["" if np.isnan(getattr(r, c.replace("@", "_"), np.nan)) else
                     f"{getattr(r, c.replace('@', '_')):.3f}" for c in cov]
            print(f"| {r.dataset} | {r.split} | {r.estimator} | {r.mae:.2f} ± {r.mae_sd:.2f} | "
                  f"{r.ratio:.2f} ± {r.ratio_se:.2f} | {'' if np.isnan(r.limit) else f'{r.limit:.2f}'} | "
                  f"{'' if np.isnan(r.limit_all) else f'{r.limit_all:.2f}'} | "
                  + " | ".join([f"{r.coverage:.3f}", *extra]) + " |")

if __name__ == "__main__":
    main()
