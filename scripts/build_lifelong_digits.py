#!/usr/bin/env python3
"""Build the digits lifelong benchmark artifact (effstats/datasets/data/lifelong_digits.npz).

    .venv/bin/python scripts/build_lifelong_digits.py            # the committed artifact (seed 0)
    .venv/bin/python scripts/build_lifelong_digits.py --n-models 40 --out /tmp/small.npz

Trains every model of the zoo (scikit-learn, joblib processes), records quantised class probabilities
on every item and writes a compressed .npz; prints shapes, size, build time and accuracy ranges.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from effstats.datasets import _digits_build as build, digits  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-models", type=int, default=500)
    ap.add_argument("--n-test", type=int, default=800)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=digits.ARTIFACT)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    arrays = build._build(args.seed, args.n_models, n_test=args.n_test, n_jobs=args.n_jobs, progress=True)
    t_build = time.perf_counter() - t0
    path = build.save_lifelong_digits(arrays, args.out)
    t_total = time.perf_counter() - t0

    t1 = time.perf_counter()
    digits._load_arrays.cache_clear()
    digits._load_cached.cache_clear()
    rm = digits.load_lifelong_digits(path)
    t_load = time.perf_counter() - t1
    clean = rm.items["domain"].to_numpy() == "clean"
    acc_clean = rm.values[:, clean].mean(1)
    acc_all = rm.values.mean(1)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    print(f"{rm}")
    print(f"domains: {rm.items['domain'].nunique()}, families: {rm.models['family'].nunique()}")
    print(f"build {t_build:.0f} s, with saving {t_total:.0f} s, load {t_load:.2f} s (n_jobs={args.n_jobs})")
    print(f"clean accuracy: min {acc_clean.min():.3f}, median {float(sorted(acc_clean)[len(acc_clean) // 2]):.3f}, max "
          f"{acc_clean.max():.3f}")
    print(f"all-domain accuracy: min {acc_all.min():.3f}, max {acc_all.max():.3f}")
    print(rm.group_scores("domain").mean().sort_values().round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
