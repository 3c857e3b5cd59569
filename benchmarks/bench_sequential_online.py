"""Online sequential runs: ``SequentialRun`` looks in batches, as the harness loop makes them.

A benchmark of 14,021 0/1 items (CIFAR-10's size) and 30 simulated models of accuracy 0.6-0.97; for each of the
first ``--models`` models a precision run (+-2 points, the finite-population correction: exact hypergeometric
intervals) and an efficacy run against the median model (paired: Tango's score intervals), batches of 200, until
each stops. Prints the CPU seconds of all runs (start and every update), the updates' number and the CPU ms per
update. Each update recomputes every look so far (the trace); what differs between versions of the code is how much
of that is searched again.

Usage: python benchmarks/bench_sequential_online.py [--models 12] [--repeats 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from effstats import ResponseMatrix
from effstats.workflow import SequentialRun


def _runs(truth: ResponseMatrix, new: list, median: str) -> int:
    ref = truth.subset(models=[m for m in truth.model_ids if m not in new])
    updates = 0
    for m in new:
        one = truth.subset(models=[m])
        for rule, kw in (("precision", dict(half_width=0.02)), ("efficacy", dict(against=median))):
            r = SequentialRun.start(ref, rule=rule, initial=200, batch=200, seed=0, **kw)
            while not r.stopped:
                r.update(one.subset(items=r.next_items))
                updates += 1
    return updates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ability = np.linspace(0.6, 0.97, 30)
    x = (rng.random((30, 14_021)) < ability[:, None]).astype(np.int8)
    truth = ResponseMatrix(x, model_ids=[f"m{k:02d}" for k in range(30)], item_ids=[f"i{j}" for j in range(14_021)])
    new = [f"m{k:02d}" for k in range(0, 30, 30 // args.models)][: args.models]
    median = next(f"m{k:02d}" for k in range(15, 30) if f"m{k:02d}" not in new)
    _runs(truth, new[:1], median)  # warm-up: imports, the boundaries' first computation
    best = np.inf
    for _ in range(args.repeats):
        t = time.process_time()
        updates = _runs(truth, new, median)
        best = min(best, time.process_time() - t)
    print(f"{2 * len(new)} runs, {updates} updates: {best:.2f} CPU s (best of {args.repeats}), "
          f"{1e3 * best / updates:.1f} ms an update")


if __name__ == "__main__":
    main()
