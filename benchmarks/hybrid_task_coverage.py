"""Coverage of the loop's ``--method hybrid`` whole-benchmark interval over several tasks, and of its alternatives.

``hybrid``'s task estimates are model-based (Sort & Search's mean on the centres of its cells), so the loop adds
their weighted standard errors linearly, the bound for any correlation between the tasks' errors, not in quadrature
(``docs/guide/loop.rst``). Each split holds ``--new`` random models out as new models, runs
:func:`effstats.workflow.select` on the others with ``--budget`` items (``--method hybrid``, the split's seed) and
:func:`effstats.workflow.estimate` on the new models' results on the chosen items; the truth is the weighted sum of
each new model's task means over every item. Reported per dataset: the share of the reported 95 % intervals that
hold the truth, the share the interval of the same estimate would hold with the task standard errors added in
quadrature or linearly (``estimate ± z × se``), their mean ratio (over the intervals whose standard errors are
not all 0), the largest absolute correlation between two tasks' errors over the splits' models, and the range of
the tasks' own interval coverage.

Data (tasks: the part of the item id before ``/``): ``load_alpacaeval(outcome="win")``, 56 models × 805
instructions of 0/1 wins in its 5 source datasets; ``load_cifar10_predictions()``, 30 models on CIFAR-10's test set
and the two CIFAR-10.1 sets (3 tasks, 14,021 images); read from ``$EFFSTATS_DATA`` or ``../shared/data``
(:func:`effstats.datasets.data_root`). A dataset whose files are absent is skipped, saying so.

Run: ``.venv/bin/python benchmarks/hybrid_task_coverage.py [--datasets alpacaeval,cifar10]
[--splits alpacaeval=100,cifar10=40] [--budget 100] [--new 5]``; ends with the table as Markdown.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from effstats import ResponseMatrix
from effstats.datasets import load_alpacaeval, load_cifar10_predictions
from effstats.workflow import estimate, select
from stratified_graded_coverage import print_markdown  # the sibling benchmark (run from benchmarks/ or the root)

LOADERS = {"alpacaeval": lambda: load_alpacaeval(outcome="win"), "cifar10": load_cifar10_predictions}
ITEMS = {"alpacaeval": lambda rm: [f"{d}/{i}" for d, i in zip(rm.items["dataset"], rm.items["index"])],
         "cifar10": lambda rm: list(rm.item_ids)}


def run(frame: pd.DataFrame, splits: int, budget: int, n_new: int) -> pd.DataFrame:
    """One row per split and new model: truth, estimate, reported interval, the tasks' weighted errors and s.e."""
    task_of = np.array([c.split("/")[0] for c in frame.columns])
    rows = []
    for seed in range(splits):
        held = np.random.default_rng(seed).choice(len(frame), n_new, replace=False)
        ref, new = frame.drop(index=frame.index[held]), frame.iloc[held]
        ref_rm = ResponseMatrix(ref.to_numpy(), nan_as_missing=True, model_ids=ref.index, item_ids=ref.columns)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # new models beyond the references' range
            sel = select(ref_rm, budget, method="hybrid", seed=seed)
            chosen = new[list(sel.items)]
            new_rm = ResponseMatrix(chosen.to_numpy(), nan_as_missing=True, item_ids=chosen.columns,
                                    model_ids=[f"new_{m}" for m in chosen.index])
            est = estimate(sel, new_rm, reference=ref_rm)
        combined = est._combined
        ci = est.confidence_interval(0.95)
        for j, model in enumerate(new.index):
            row = {"seed": seed, "truth": 0.0, "estimate": float(est.statistic[j]), "low": float(ci.low[j]),
                   "high": float(ci.high[j])}
            for p in combined.parts:
                truth_t = float(np.nanmean(new.loc[model].to_numpy()[task_of == p.task]))
                row["truth"] += p.weight * truth_t
                row[f"err {p.task}"] = float(np.asarray(p.result.statistic, float)[j]) - truth_t
                row[f"se {p.task}"] = float(combined._task_se(p)[j])
                row[f"w {p.task}"] = p.weight
            rows.append(row)
    return pd.DataFrame(rows)


def summarise(name: str, out: pd.DataFrame) -> dict:
    tasks = [c[4:] for c in out.columns if c.startswith("err ")]
    w_se = np.column_stack([out[f"w {t}"] * out[f"se {t}"] for t in tasks])
    linear, quadrature = w_se.sum(axis=1), np.sqrt((w_se**2).sum(axis=1))
    z = stats.norm.ppf(0.975)
    err = out[[f"err {t}" for t in tasks]]
    r = err.corr().to_numpy()
    own = [(np.abs(out[f"err {t}"]) <= z * out[f"se {t}"]).mean() for t in tasks]
    miss = np.abs(out.truth - out.estimate)
    return {"data": f"{name} ({len(tasks)} tasks)", "intervals": len(out),
            "reported": ((out.low <= out.truth) & (out.truth <= out.high)).mean(),
            "linear sum": (miss <= z * linear).mean(), "quadrature": (miss <= z * quadrature).mean(),
            "linear / quadrature": float(np.mean(linear[quadrature > 0] / quadrature[quadrature > 0])),
            "largest correlation": float(np.abs(r[~np.eye(len(tasks), dtype=bool)]).max()),
            "task coverage": f"{min(own):.2f}-{max(own):.2f}"}


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="alpacaeval,cifar10")
    parser.add_argument("--splits", default="alpacaeval=100,cifar10=40", help="splits per dataset")
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--new", type=int, default=5, help="new models a split")
    args = parser.parse_args(argv)
    splits = {k: int(v) for k, v in (s.split("=") for s in args.splits.split(","))}
    rows = []
    for name in args.datasets.split(","):
        try:
            rm = LOADERS[name]()
        except FileNotFoundError as err:
            print(f"{name}: skipped ({err})")
            continue
        frame = pd.DataFrame(rm.values_with_nan(), index=rm.model_ids, columns=ITEMS[name](rm))
        start = time.process_time()
        row = summarise(name, run(frame, splits[name], args.budget, args.new))
        rows.append(row)
        print(", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
              + f" ({time.process_time() - start:.0f} CPU s)", flush=True)
    table = pd.DataFrame(rows)
    print()
    print_markdown(table)
    return table


if __name__ == "__main__":
    main()
