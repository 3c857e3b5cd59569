"""Speed of the AIPW / prediction-powered estimate at the harness's scale: 90 source models × 80,000 items.

Target: fit (100 random items) and ``predict_interval`` for 100 target models in ≤ 2 s (default: ridge,
5 folds: 5 ridge solves shared by all targets). Also times the targets' outputs given on all
80,000 items (read on the selected ones) and the authors' one-fold estimator, and the default and the power-tuned
AIPW of one draw (a budget comparison's pair) with their fold fits made apart and shared through ``ridge_fits``
(CPU s of the pair; the estimates are the same numbers). Prints OK or MISSED.

Run: ``.venv/bin/python benchmarks/bench_aipw.py`` (after ``make setup``)
"""
from __future__ import annotations

import platform
import time

import numpy as np

from effstats.disco._aipw import AIPW

TARGET_SECONDS = 2.0


def timed(label: str, fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    print(f"{label:<62s} {dt:8.3f} s")
    return out, dt


def main() -> None:
    rng = np.random.default_rng(0)
    m, t, n, k = 90, 100, 80_000, 100
    # 2PL responses: sources with abilities N(0, 1), targets shifted up by 1 (partly out of the sources' range)
    ability = np.r_[rng.normal(size=m), rng.normal(1.0, 1.0, size=t)]
    b, a = rng.normal(size=n), rng.lognormal(0, 0.3, size=n)
    p = 1 / (1 + np.exp(-(ability[:, None] - b[None, :]) * a[None, :]))
    y = rng.random(p.shape) < p
    src, tgt = y[:m], y[m:].astype(float)
    print(f"{platform.machine()} {platform.processor() or ''}; {m} sources × {n:,} items, {t} targets, {k} items")

    est, fit_s = timed(f"fit ({k} random items)", AIPW(k, random_state=0).fit, src)
    sel = tgt[:, est.selected_]
    res, pred_s = timed(f"predict_interval, {t} targets (outputs on the {k} items)", est.predict_interval, sel)
    timed(f"predict_interval, {t} targets (outputs on all {n:,} items)", est.predict_interval, tgt)
    timed("predict, authors' estimator (one fold, no tuning)",
          AIPW(k, n_folds=1, power_tuning=False, random_state=0).fit(src).predict, sel)
    pairs = {}
    for how in ("apart", "shared"):
        fits = {} if how == "shared" else None
        pair = [AIPW(k, power_tuning=tuned, random_state=0).fit(src, ridge_fits=fits) for tuned in (False, True)]
        reps, c = 20, time.process_time()
        for _ in range(reps):
            if fits is not None:
                fits.clear()  # every repetition fits the folds again
            pairs[how] = [e.predict_interval(sel) for e in pair]
        print(f"{'predict_interval, default + power-tuned AIPW, fold fits ' + how:<62s} "
              f"{(time.process_time() - c) / reps:8.3f} CPU s")
    assert all(np.array_equal(a.statistic, b.statistic) for a, b in zip(pairs["apart"], pairs["shared"]))
    ci = res.confidence_interval(confidence_level=0.95)
    truth = tgt.mean(axis=1)
    print(f"check: MAE {100 * np.abs(res.statistic - truth).mean():.2f} points, 95% coverage "
          f"{np.mean((ci.low <= truth) & (truth <= ci.high)):.2f} over the {t} targets")
    total = fit_s + pred_s
    verdict = "OK" if total <= TARGET_SECONDS else "MISSED"
    print(f"fit + predict_interval for {t} targets: {total:.3f} s (target ≤ {TARGET_SECONDS:g} s): {verdict}")


if __name__ == "__main__":
    main()
