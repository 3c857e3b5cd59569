"""Speed of DISCO at MMLU scale: 400 source models × 14,000 items × 4 classes.

Target: PDS/JSD selection of 100 items and the random-forest fit on the signatures in ≤ 30 s.
Also times the hard-label scores on an ImageNet-sized array (67 × 50,000 class ids), refits that reuse the cached
disagreement scores and PCA (protocols fit many variants on one source matrix), the 5-fold cross-validated prediction
intervals, the method chooser on a 50-source split, and the IRT baselines.

Run: ``.venv/bin/python benchmarks/bench_disco.py`` (after ``make setup``)
"""
from __future__ import annotations

import time

import numpy as np
from scipy.special import softmax

import warnings

from effstats.disco import DISCO, jsd, jsd_from_predictions, pds, pds_from_predictions

warnings.filterwarnings("ignore", message="pca: ")  # PCA 256 clipped to the source count, on purpose
from effstats.irt import IRT2PL


def timed(label: str, fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    print(f"{label:<58s} {dt:8.2f} s")
    return out, dt


def main() -> None:
    rng = np.random.default_rng(0)
    m, n, c = 400, 14_000, 4
    t = time.perf_counter()
    logits = rng.normal(size=(m, n, c)).astype(np.float64)
    labels = rng.integers(0, c, n)
    logits[:, np.arange(n), labels] += rng.normal(size=m)[:, None] - rng.normal(size=n)[None, :]
    proba = softmax(logits, axis=-1)
    del logits
    print(f"data: {m} × {n} × {c} probabilities ({proba.nbytes / 1e6:.0f} MB), "
          f"built in {time.perf_counter() - t:.1f} s")

    timed("pds (400 × 14,000 × 4)", pds, proba)
    timed("jsd (400 × 14,000 × 4)", jsd, proba)
    total = 0.0
    for sel in ("pds", "jsd"):
        est, dt = timed(f"DISCO fit: {sel} selection + PCA 256 + RF (100 items)",
                        DISCO(100, selection=sel, random_state=0).fit, proba, labels=labels)
        total = max(total, dt)
        timed("  predict 40 targets", est.predict, proba[:40])
    print(f"{'worst DISCO fit (target ≤ 30 s)':<58s} {total:8.2f} s  {'OK' if total <= 30 else 'SLOW'}")

    timed("DISCO refit, kNN (disagreement scores and PCA cached)", DISCO(100, predictor="knn", random_state=0).fit,
          proba, labels=labels)
    # the PCA of a variant that differs from a fitted one in the predictor alone is reused (same items, same seed)
    timed("DISCO fit, new seed: PCA 256 + RF", DISCO(100, random_state=1).fit, proba, labels=labels)
    timed("DISCO fit, same seed, kNN (PCA reused)", DISCO(100, predictor="knn", random_state=1).fit, proba,
          labels=labels)
    est = DISCO(100, predictor="knn", random_state=0).fit(proba[:50], labels=labels)
    timed("5-fold CV intervals, 50 sources (predict_interval)", est.predict_interval, proba[50:70])

    from effstats.disco import MethodChooser

    y50 = proba[:60].argmax(2) == labels
    timed("MethodChooser, 7 candidates × 5 folds (50 × 14,000)", MethodChooser(n_items=100, random_state=0).fit,
          y50[:50])

    pred = rng.integers(0, 1000, size=(67, 50_000)).astype(np.int16)
    timed("hard-label pds (67 × 50,000 class ids)", pds_from_predictions, pred)
    timed("hard-label jsd (67 × 50,000 class ids)", jsd_from_predictions, pred)
    top5 = np.argsort(rng.random((67, 5_000, 1000)), axis=2)[..., :5]
    timed("top-5 jsd (67 × 5,000 × 5 class ids)", jsd_from_predictions, top5)

    y = proba.argmax(2) == labels
    timed("IRT 2PL MML fit (400 × 14,000)", IRT2PL().fit, y)
    try:
        timed("IRT 2PL JML fit (400 × 14,000)", IRT2PL(method="jml", max_iter=200).fit, y)
    except TypeError as exc:  # the IRT module's options changed
        print("IRT 2PL JML fit skipped:", exc)


if __name__ == "__main__":
    main()
