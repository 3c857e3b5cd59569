"""The harness loop at leaderboard scale: ``select`` and ``estimate`` on 90 models × 80,000 items.

Targets (one process, after imports; the reference matrix in memory, as ``select`` holds it after reading):
``select`` within 10 s for ``stratified-aipw`` (the default), ``aipw``, ``hybrid``, ``sortsearch``, ``disco`` and
``random``, within 60 s for ``auto``; ``estimate`` within 5 s (its refit included, from a saved manifest). The data
are 2PL IRT responses (``simulate_responses``) in three tasks of 40,000, 25,000 and 15,000 items; 80 reference
models, 10 new ones; budget 300.

Usage: python benchmarks/bench_workflow.py [--models 90] [--items 80000] [--budget 300] [--methods ...] [--quick]
"""
from __future__ import annotations

import argparse
import tempfile
import time
import warnings

import numpy as np

from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, select

TARGETS = {"stratified-aipw": 10.0, "aipw": 10.0, "sortsearch": 10.0, "hybrid": 10.0, "disco": 10.0, "random": 10.0,
           "auto": 60.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=90)
    ap.add_argument("--items", type=int, default=80_000)
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--methods", nargs="+", default=list(TARGETS))
    ap.add_argument("--quick", action="store_true", help="a tenth of the items (targets not judged)")
    args = ap.parse_args()
    n_items = args.items // 10 if args.quick else args.items
    d = simulate_responses(args.models, n_items, rng=0)
    sizes = np.array([0.5, 0.3125, 0.1875]) * n_items
    sizes = np.round(sizes).astype(int)
    sizes[-1] = n_items - sizes[:-1].sum()
    ids = [f"{t}/{k}" for t, n in zip(("task_a", "task_b", "task_c"), sizes) for k in range(n)]
    data = ResponseMatrix(d.values, model_ids=d.model_ids, item_ids=ids)
    n_ref = args.models - 10
    ref, new = data.subset(models=range(n_ref)), data.subset(models=range(n_ref, args.models))
    truth = new.accuracy().to_numpy()
    print(f"{n_ref} reference models x {n_items:,} items in 3 tasks; 10 new models; budget {args.budget}")
    print(f"{'method':<16}{'select s':>10}{'estimate s':>12}{'target s':>10}  verdict   MAE (points)")
    for method in args.methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            sel = select(ref, args.budget, method=method, seed=0)
            t_sel = time.perf_counter() - t
            out = tempfile.mkdtemp(prefix="effstats-bench-")
            sel.save(out)
            t = time.perf_counter()
            est = estimate(out, new.subset(items=sel.items), reference=ref)   # from the manifest: refit included
            t_est = time.perf_counter() - t
        mae = 100 * np.abs(est.statistic - truth).mean()
        target = TARGETS.get(method, float("nan"))
        ok = t_sel <= target and t_est <= 5.0
        verdict = "(quick)" if args.quick else ("OK" if ok else "MISSED")
        print(f"{method:<16}{t_sel:>10.2f}{t_est:>12.2f}{target:>10.0f}  {verdict:<8}  {mae:.2f}")


if __name__ == "__main__":
    main()
